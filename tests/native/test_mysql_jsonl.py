"""MySQL's GTID_LOG_EVENT, ANONYMOUS_GTID_LOG_EVENT and QUERY_EVENT in the compiled JSON-lines
lane (binlog_grammar.native._jsonl_lane): the GTIDs' data written by C generated from their
fields (codegen/c_json.py), a QUERY's data JSON the Python path wrote for the same bytes;
`dump --format jsonl` prints the same bytes on both backends over the MySQL corpus (--jobs 1 and
2), transactions with GTIDs, with ANONYMOUS_GTIDs and with both in turn (each record's "gtid"),
hostile statements each twice in a row, GTID bodies of every length and damaged copies; and the
lane writes MySQL's transactions instead of stopping at each GTID and BEGIN."""
import random

import pytest

from binlog_grammar import native
from binlog_grammar.output import jsonl_lane
from helpers.mysql_binlog import MYSQL8, event, events, mysql_file, query_data
from helpers.native import cli_dump, damage, same_jsonl
from helpers.paths import corpus_files, needs_corpus

pytestmark = pytest.mark.skipif(
    native.unavailable() is not None or native._extension("_jsonl_lane")[0] is None,
    reason="the compiled extensions are not built")
CORPUS_FILES = corpus_files()
JSONL = ("--format", "jsonl")


@needs_corpus
@pytest.mark.parametrize("path", CORPUS_FILES, ids=[p.name for p in CORPUS_FILES])
def test_the_mysql_corpus_writes_the_same(path):
    same_jsonl(path)
    same_jsonl(path, "--jobs", "2")


@needs_corpus
@pytest.mark.parametrize("gtid_code", [33, 34], ids=["gtid", "anonymous"])
def test_the_lane_writes_mysql_transactions(tmp_path, stops, gtid_code):
    """100 transactions: the lane stops at a GTID or a BEGIN at most once each (the Python path
    reads the first transaction); before, it stopped at every one."""
    path = tmp_path / "tx.000001"
    path.write_bytes(mysql_file(repeat=100, gtid_code=gtid_code))
    same_jsonl(path)
    assert stops.get(gtid_code, 0) + stops.get(2, 0) <= 2, stops


def _joined(*parts) -> bytes:
    """The first file's bytes, then the transactions of the others (their events after the
    PREVIOUS_GTIDS), each event placed again (its end_log_pos and CRC32 made right)."""
    out = bytearray(parts[0])
    for data in parts[1:]:
        pos = 4
        while pos < len(data):
            raw = data[pos:pos + int.from_bytes(data[pos + 9:pos + 13], "little")]
            if raw[4] not in (15, 35):  # FORMAT_DESCRIPTION, PREVIOUS_GTIDS
                out += event(raw, raw[19:-4], len(out))
            pos += len(raw)
    return bytes(out)


@needs_corpus
def test_gtids_and_anonymous_gtids_in_turn_write_the_same(tmp_path):
    """GTIDs, then ANONYMOUS_GTIDs, then GTIDs, then a statement the Python path reads (DDL):
    each record's "gtid" is the GTID of its transaction, null after an ANONYMOUS_GTID."""
    ddl = [(query_data(b"CREATE TABLE t2 (a INT)"), 0)]
    data = _joined(mysql_file(repeat=5), mysql_file(ddl, repeat=5, gtid_code=34),
                   mysql_file(repeat=3), mysql_file(ddl, repeat=4, gtid_code=34))
    path = tmp_path / "turns.000001"
    path.write_bytes(data)
    out = same_jsonl(path)[1]
    assert '"gtid": null' in out and '"gtid": "93e95066' in out


_STATEMENTS = [b"BEGIN", b"COMMIT", b"x\ny", b"\xff\xfe not UTF-8", b"*/ a \x00 b", b"a;b", b"",
               b"SELECT '\\u00e9'", "caf\u00e9 \u2028".encode()]


@needs_corpus
def test_hostile_statements_write_the_same(tmp_path):
    """Each statement twice after a GTID: the second from the data JSON the Python path wrote
    for the first, when it wrote it as text."""
    dbs = [b"test", b"", b"\xff", b"a\nb"]
    statements = [(query_data(q, db), flags) for q in _STATEMENTS for db in dbs
                  for flags in (0, 0x8)]
    statements += [(query_data(b"BEGIN", status=s), 0) for s in
                   (b"", b"\x01" + bytes(8) + b"\xc8 unknown", b"\x01" + bytes(7),
                    b"\x0c\x02a\x00b\x00", b"\x05\x03UTC\x0b\x01a\x01b")]
    path = tmp_path / "hostile.000001"
    path.write_bytes(mysql_file(statements, repeat=2))
    same_jsonl(path)


@needs_corpus
def test_gtid_bodies_of_every_length_write_the_same(tmp_path):
    data, evs = events(MYSQL8)
    gtid = next(e[2] for e in evs if e[1] == 33)
    body = gtid[19:-4]
    bodies = [body[:k] for k in range(len(body) + 1)] + [body + bytes(k) for k in (1, 9)]
    full = bytearray(body)
    full[48] |= 0x80
    sv = bytearray(body)
    sv[-1] |= 0x80
    bodies += [bytes(full), bytes(full) + bytes(7), bytes(body[:49]) + b"\xfc\x01",
               bytes(body[:49]) + b"\xfb" + bytes(4), bytes(body[:25]) + b"\x01legacy",
               bytes(sv), bytes(sv) + bytes(4), bytes(sv) + bytes(12)]
    head = data[:evs[2][0]]
    for k, b in enumerate(bodies):
        for code in (33, 34):
            ev = event(gtid, b, len(head), code=code)
            path = tmp_path / f"gtid-{k}-{code}.000001"
            path.write_bytes(head + ev + event(gtid, body, len(head) + len(ev)))
            same_jsonl(path)


@needs_corpus
def test_damaged_mysql_copies_write_the_same(tmp_path):
    data = mysql_file([(query_data(q), 0) for q in _STATEMENTS[:4]], repeat=4)
    rnd = random.Random(2635)
    for k in range(30):
        path = tmp_path / f"damaged-{k}.000001"
        path.write_bytes(data[:1000] + damage(data[1000:], rnd))
        assert cli_dump(path, "c", *JSONL) == cli_dump(path, "python", *JSONL), k


@needs_corpus
def test_long_statements_are_not_kept(tmp_path, monkeypatch):
    """A QUERY of more than jsonl_lane.MAX_STATEMENT_DATA bytes is written by the Python path
    each time (the lane keeps no copy of its data JSON); both backends write the same."""
    kept = []
    real = jsonl_lane.JsonlLane._learn

    def spy(self, se, f):
        real(self, se, f)
        kept.append(self.queries)

    monkeypatch.setattr(jsonl_lane.JsonlLane, "_learn", spy)
    long = b"INSERT INTO t VALUES ('" + b"x" * 3000 + b"')"
    path = tmp_path / "long.000001"
    path.write_bytes(mysql_file([(query_data(long), 0), (query_data(b"BEGIN"), 0)], repeat=1))
    same_jsonl(path)
    assert kept and max(kept) <= 2


@needs_corpus
@pytest.mark.parametrize("client", [8, 54, 35, 51, 255])  # latin1, utf16, ucs2, cp1251, utf8mb4
def test_statements_in_other_client_charsets_write_the_same(tmp_path, client):
    """A record's statement is text in its character_set_client (output/dump.py), not the bytes
    as UTF-8: the lane repeats the record's data JSON, which the Python path made so. (Even
    lengths: an odd one in UTF-16 makes output/dump.py raise on both backends.)"""
    status = b"\x01" + bytes(8) + b"\x04" + bytes([client, 0, client, 0, client, 0])
    statements = [(query_data(q, status=status), 0) for q in
                  (b"BEGIN!", b"caf\xe9 \xe9t\xe9!!", b"\x00B\x00E\x00G\x00I\x00N", b"abcd")]
    path = tmp_path / f"charset-{client}.000001"
    path.write_bytes(mysql_file(statements, repeat=2))
    same_jsonl(path)
