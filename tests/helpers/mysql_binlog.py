"""MySQL binlogs made for the compiled loops' tests (tests/native/test_mysql_*.py): a MySQL 8.0
corpus file's transaction repeated, QUERY events of chosen statements, databases and status
variables, each event's length, end_log_pos and CRC32 made right."""
import struct
import zlib
from pathlib import Path

from binlog_grammar.binlog.framing import scan
from helpers.paths import CORPUS

MYSQL8 = CORPUS / "mysql-enum-string-set.000001"  # 8.0.28: GTIDs, BEGIN, rows events, XIDs


def events(path):
    data = Path(path).read_bytes()
    return data, [(pos, code, bytes(data[pos:pos + length])) for pos, code, length in scan(path)]


def event(template: bytes, data: bytes, at: int, code=None, flags=None) -> bytes:
    """An event with template's header (CRC32 footer), `data` after it, placed at offset `at`."""
    head = bytearray(template[:19])
    if code is not None:
        head[4] = code
    if flags is not None:
        head[17:19] = flags.to_bytes(2, "little")
    length = 19 + len(data) + 4
    head[9:13] = length.to_bytes(4, "little")
    head[13:17] = (at + length).to_bytes(4, "little")
    ev = bytes(head) + data
    return ev + zlib.crc32(ev).to_bytes(4, "little")


def query_data(query: bytes, db: bytes = b"test", status: bytes = None, thread_id=9,
                error_code=0) -> bytes:
    if status is None:
        status = b"\x00" + bytes(4) + b"\x01" + struct.pack("<Q", 0x40000000) + \
            b"\x06\x03std" + b"\x04" + struct.pack("<HHH", 255, 255, 255)
    return struct.pack("<IIBHH", thread_id, 0, len(db), error_code, len(status)) + status + \
        db + b"\x00" + query


def mysql_file(statements=(), repeat=3, gtid_code=33, begin=None) -> bytes:
    """MYSQL8's events to its first transaction, then its third transaction (GTID, BEGIN,
    TABLE_MAP, WRITE_ROWS, XID) `repeat` times with new GNOs and xids (ANONYMOUS_GTIDs with
    gtid_code 34; their BEGIN's data replaced by `begin`), then for each of
    `statements` ((query data, header flags) pairs) a GTID and that QUERY_EVENT twice."""
    data, evs = events(MYSQL8)
    gtids = [k for k, e in enumerate(evs) if e[1] == 33]
    out = bytearray(data[:evs[gtids[0]][0]])
    tx = [e[2] for e in evs[gtids[2]:gtids[3]]]
    gtid, query = tx[0], tx[1]
    gno = 100
    for _ in range(repeat):
        for raw in tx:
            body = bytearray(raw[19:-4])
            code = None
            if raw[4] == 33:
                gno += 1
                body[17:25] = struct.pack("<q", gno)
                if gtid_code == 34:
                    code, body[1:25] = 34, bytes(24)
            elif raw[4] == 16:
                body[0:8] = struct.pack("<Q", gno)
            elif raw[4] == 2 and begin is not None:
                body = bytearray(begin)
            out += event(raw, bytes(body), len(out), code=code)
    for qdata, flags in statements:
        gno += 1
        body = bytearray(gtid[19:-4])
        body[17:25] = struct.pack("<q", gno)
        if gtid_code == 34:
            body[1:25] = bytes(24)
        out += event(gtid, bytes(body), len(out), code=gtid_code)
        for _ in range(2):
            out += event(query, qdata, len(out), flags=flags)
    return bytes(out)
