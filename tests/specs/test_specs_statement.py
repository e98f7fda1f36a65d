"""Targeted checks of the statement-based and control events (specs/events/statement/,
specs/events/control/).

Three kinds of vectors:
- real events of the MySQL corpus (../shared/corpus/mysql), with the values the servers wrote;
- events a local MariaDB 10.11 server wrote while these specs were written (labelled), for the
  MariaDB-only status variables and QUERY_COMPRESSED_EVENT;
- byte layouts written out by hand from the servers' own rules (the source named in each spec's
  doc-ref), for what neither corpus holds.
Every parsed value must build the same bytes again.
"""
import struct
import zlib

import pytest
from construct import ConstructError

from binlog_grammar.errors import BinlogError
from binlog_grammar.binlog.events import decompress
from binlog_grammar.generated import types as T
from binlog_grammar.generated.catalog import EVENTS
from binlog_grammar.binlog.reader import BinlogFile, FormatState, parse_event, update_state
from binlog_grammar.runtime.construct import version

from helpers.paths import CORPUS, needs_corpus
from helpers.vectors import event_type as by_name, fails, lenenc, u8, u16, u32, u64
from helpers.vectors import ctx_for as _ctx_for
from helpers.vectors import parse as _parse

MYSQL_80 = version("8.0.40")
MARIADB = version("10.11.19-MariaDB-log")


def ctx_for(et, **over):
    return _ctx_for(et.code, **dict({"server": MYSQL_80}, **over))


def parse(name, data, **over):
    return _parse(name, data, **dict({"server": MYSQL_80}, **over))


def query_data(status=b"", db=b"", query=b"", thread_id=7, exec_time=0, error_code=0):
    """A QUERY_EVENT's data as Query_log_event::write lays it out (13-byte post-header)."""
    return (u32(thread_id) + u32(exec_time) + u8(len(db)) + u16(error_code) + u16(len(status))
            + status + db + b"\x00" + query)


def svars(value):
    """The status variables of a parsed QUERY_EVENT as {id: value} (unknown tags as raw)."""
    out = {}
    for e in value.status_vars:
        out[e.id if e.id is not None else f"unknown_{int(e.tag)}"] = e.value if e.id else e.raw
    return out


# ---------------------------------------------------------------------------------------------
# the MySQL corpus

def corpus_event(name, offset):
    """The event at `offset` of a corpus file, parsed with the file's FORMAT_DESCRIPTION_EVENT.

    Events are reached directly (not by walking the file) so that an event another family's spec
    rejects earlier in the file does not hide the one under test."""
    path = CORPUS / name
    data = path.read_bytes()
    state = FormatState()

    def at(pos):
        head = T.common_header.parse(data[pos:pos + state.header_len], **state.context(0))
        return parse_event(data[pos:pos + head.event_length], state, file=str(path), offset=pos)

    update_state(state, at(4))
    return at(offset)


def corpus_error(name):
    """The first error the reader reports for a corpus file."""
    with pytest.raises(BinlogError) as exc:
        for _ in BinlogFile(CORPUS / name):
            pass
    return exc.value


@needs_corpus
def test_query_status_vars_mysql_80():
    ev = corpus_event("json.binlog.000001", 235)
    assert ev.name == "QUERY_EVENT"
    q = ev.data
    assert (q.thread_id, q.exec_time, q.error_code, q.db) == (8, 0, 0, "")
    assert q.query.startswith("ALTER USER 'root'@'localhost' IDENTIFIED WITH 'caching_sha2_password'")
    sv = svars(q)
    assert list(sv) == ["flags2", "sql_mode", "catalog", "charset", "time_zone", "invoker",
                        "updated_db_names", "microseconds", "ddl_xid",
                        "default_collation_for_utf8mb4"]
    assert sv["flags2"] == 0
    # the 8.0 default sql_mode
    assert sv["sql_mode"] == 0x45A00020
    assert set(sv["sql_mode"].names) == {
        "MODE_ONLY_FULL_GROUP_BY", "MODE_STRICT_TRANS_TABLES", "MODE_NO_ZERO_IN_DATE",
        "MODE_NO_ZERO_DATE", "MODE_ERROR_FOR_DIVISION_BY_ZERO", "MODE_NO_ENGINE_SUBSTITUTION"}
    assert sv["catalog"] == "std"
    cs = sv["charset"]
    assert (cs.character_set_client, cs.collation_connection, cs.collation_server) == (255, 255, 255)
    assert sv["time_zone"] == "SYSTEM"
    assert (sv["invoker"].user, sv["invoker"].host) == ("root", "localhost")
    assert (sv["updated_db_names"].count, list(sv["updated_db_names"].names)) == (1, ["mysql"])
    assert sv["microseconds"] == 669125
    assert sv["ddl_xid"] == 3
    assert sv["default_collation_for_utf8mb4"] == 255
    assert q.status_vars_len == len(T.query_status_vars.build(q.status_vars, **ev.context))


@needs_corpus
def test_query_status_vars_sql_require_primary_key_and_table_map_for_update():
    sv = svars(corpus_event("rpl_unfiltered_hidden_gcol.000001", 448).data)
    assert sv["ddl_xid"] == 156
    assert sv["sql_require_primary_key"] == 0
    assert list(sv["updated_db_names"].names) == ["test"]
    sv = svars(corpus_event("json.binlog.000001", 2468).data)
    assert sv["table_map_for_update"] == 1


@needs_corpus
def test_query_status_vars_mysql_50_and_57():
    q = corpus_event("bug16266.000001", 98).data  # 5.0.16
    assert q.query == "CREATE TABLE t1(c INT)" and q.db == "test"
    sv = svars(q)
    assert list(sv) == ["flags2", "sql_mode", "catalog", "charset"]
    assert sv["flags2"] == 0x4000 and sv["flags2"].names == ["OPTION_AUTO_IS_NULL"]
    assert (sv["charset"].character_set_client, sv["charset"].collation_server) == (8, 8)
    sv = svars(corpus_event("rpl_atomic_ddl_rollback_full.000001", 219).data)  # 5.7.22
    assert "MODE_NO_AUTO_CREATE_USER" in sv["sql_mode"].names  # the 5.7 default


@needs_corpus
def test_every_corpus_query_reads_like_the_server():
    """Every QUERY_EVENT of the corpus but the damaged one parses and rebuilds."""
    count = 0
    for path in sorted(CORPUS.iterdir()):
        try:
            for ev in BinlogFile(path):
                if ev.name == "QUERY_EVENT":
                    count += 1
                    assert ev.type.build(ev.data, ev.context) == ev.raw[19:len(ev.raw) - (
                        4 if ev.footer else 0)]
                    assert all(e.id is not None for e in ev.data.status_vars)
        except BinlogError:
            continue  # damaged files and other families' rejections are checked elsewhere
    assert count > 400


@needs_corpus
def test_execute_load_query_and_its_file():
    name = "ver_trunk_row_v2.001"  # 5.6.4
    elq = corpus_event(name, 151433)
    assert elq.name == "EXECUTE_LOAD_QUERY_EVENT"
    d = elq.data
    assert (d.file_id, d.fn_pos_start, d.fn_pos_end) == (2, 9, 36)
    assert d.dup_handling == 0 and d.dup_handling.name == "LOAD_DUP_ERROR"
    # the part of the statement the replica rewrites to name its own copy of the file
    assert d.query[d.fn_pos_start:d.fn_pos_end] == " INFILE 'big_file.dat' INTO"
    begin = corpus_event(name, 2651)
    append = corpus_event(name, 133746)
    assert (begin.name, append.name) == ("BEGIN_LOAD_QUERY_EVENT", "APPEND_BLOCK_EVENT")
    assert begin.data.file_id == append.data.file_id == 2
    assert begin.data.block.startswith(b"Aarhus\nAaron\n")
    assert len(begin.data.block) == 131072


@needs_corpus
def test_user_var_with_and_without_flags_byte():
    uv = corpus_event("ver_trunk_row_v2.001", 1740).data  # 5.6.4: writes the flags byte
    assert (uv.name, uv.is_null, uv.value_type.name, uv.charset) == ("x", 0, "INT_RESULT", 33)
    assert struct.unpack("<q", uv.value)[0] == 4 and uv.flags == 0
    uv = corpus_event("ver_5_1-wl2325_s.001", 438).data  # pre-release 5.2: no flags byte
    assert uv.value_len == 8 and uv.flags is None
    uv = corpus_event("bug11747887-bin.000003", 422).data  # @`2` = NULL
    assert (uv.name, uv.is_null, uv.value_type, uv.value) == ("2", 1, None, None)


@needs_corpus
def test_intvar_rand_rotate_stop_from_corpus():
    r = corpus_event("ver_5_1-wl2325_s.001", 577).data
    assert (r.seed1, r.seed2) == (772351849, 669803438)
    kinds = set()
    for ev in BinlogFile(CORPUS / "bug33029-slave-relay-bin.000001"):
        if ev.name == "INTVAR_EVENT":
            kinds.add(ev.data.type.name)
        if ev.name == "ROTATE_EVENT":
            assert ev.data.position == 4 and ev.data.new_log_ident
    assert kinds <= {"LAST_INSERT_ID_EVENT", "INSERT_ID_EVENT"} and kinds


@needs_corpus
def test_incident_bug40482_is_invalid():
    # The event's data is 42 00 00: incident number 0x42 (66) and an empty message. MySQL
    # (Incident_event::Incident_event) and MariaDB (Incident_log_event) accept only numbers in
    # 1..INCIDENT_COUNT-1, i.e. INCIDENT_LOST_EVENTS; MySQL's test bug#40482 keeps this file to
    # check that readers refuse it without crashing. So it is rejected, not read as LOST_EVENTS.
    err = corpus_error("bug40482-bin.000001")
    assert (err.offset, err.event_type) == (106, "INCIDENT_EVENT")
    assert parse("INCIDENT_EVENT", u16(1) + u8(0)).incident.name == "INCIDENT_LOST_EVENTS"
    fails("INCIDENT_EVENT", u16(0x42) + u8(0))


@needs_corpus
def test_xid_layout_rejects_the_38_byte_events_of_the_wl2325_tree():
    # The pre-release 5.2 tree of ver_5_1-wl2325_r.001 numbered TABLE_MAP 16: its 38-byte events
    # typed 16 hold a table map, not an XID (the reader maps those codes as MySQL does). Read as
    # XID_EVENT, their 19 data bytes do not fit the 8-byte XID and are rejected.
    data = (CORPUS / "ver_5_1-wl2325_r.001").read_bytes()[428 + 19:428 + 38]
    assert len(data) == 19
    fails("XID_EVENT", data)
    assert parse("XID_EVENT", u64(2**64 - 2)).xid == 2**64 - 2


@needs_corpus
def test_damaged_query_in_relay_log_is_rejected():
    err = corpus_error("corrupt-relay-bin.000624")
    assert (err.offset, err.event_type) == (91204, "QUERY_EVENT")


# ---------------------------------------------------------------------------------------------
# QUERY_EVENT status variables, by hand

def test_unknown_status_var_ends_the_list_and_keeps_the_rest():
    # Both servers stop at the first code they do not know and skip the rest of the block; the
    # spec keeps the unknown code and every byte after it, so the event rebuilds exactly.
    status = b"\x00" + u32(0) + b"\x63" + b"\x01\x02\x03" + b"\x08" + u16(33)
    q = parse("QUERY_EVENT", query_data(status, b"db", b"SELECT 1"))
    assert [e.id for e in q.status_vars] == ["flags2", None]
    unknown = q.status_vars[1]
    assert int(unknown.tag) == 0x63 and unknown.raw == b"\x01\x02\x03\x08" + u16(33)
    assert unknown.unknown is True  # flagged, so a reader can tell the list was cut short
    assert (q.db, q.query) == ("db", "SELECT 1")


def test_commit_ts_codes_are_unknown_to_released_servers():
    # Q_COMMIT_TS (14) and Q_COMMIT_TS2 (15) are named in the enum but no GA server reads them:
    # libbinlogevents' switch has no case for them, so they end the list like any unknown code.
    status = b"\x0e" + u64(5)
    q = parse("QUERY_EVENT", query_data(status, b"", b"x"))
    (e,) = q.status_vars
    assert e.id is None and e.tag.name == "Q_COMMIT_TS" and e.raw == u64(5)


def test_catalog_with_nul_and_without():
    status = b"\x02" + u8(3) + b"std\x00" + b"\x06" + u8(3) + b"std"
    sv = svars(parse("QUERY_EVENT", query_data(status, b"", b"x")))
    assert sv["catalog_nul"].name == "std" and sv["catalog_nul"].length == 3
    assert sv["catalog"] == "std"


def test_updated_db_names_over_max_has_no_names():
    status = b"\x0c" + u8(254) + b"\x04" + u16(1) + u16(2) + u16(3)
    sv = svars(parse("QUERY_EVENT", query_data(status, b"", b"x")))
    assert sv["updated_db_names"].count == 254 and sv["updated_db_names"].names is None
    assert sv["charset"].collation_server == 3
    status = b"\x0c" + u8(2) + b"a\x00bc\x00"
    sv = svars(parse("QUERY_EVENT", query_data(status, b"", b"x")))
    assert list(sv["updated_db_names"].names) == ["a", "bc"]


def test_every_fixed_size_status_var():
    status = (b"\x00" + u32(0x0C084000) + b"\x01" + u64(1 << 32) + b"\x03" + u16(5) + u16(2)
              + b"\x04" + u16(33) + u16(33) + u16(8) + b"\x05" + u8(6) + b"+03:00"
              + b"\x07" + u16(5) + b"\x08" + u16(224) + b"\x09" + u64(6) + b"\x0a" + u32(1234)
              + b"\x0b" + u8(4) + b"root" + u8(0) + b"\x0d" + (999999).to_bytes(3, "little")
              + b"\x10" + u8(1) + b"\x11" + u64(77) + b"\x12" + u16(255) + b"\x13" + u8(1)
              + b"\x14" + u8(0))
    sv = svars(parse("QUERY_EVENT", query_data(status, b"d", b"x")))
    assert set(sv["flags2"].names) == {"OPTION_AUTO_IS_NULL", "OPTION_NOT_AUTOCOMMIT",
                                       "OPTION_NO_FOREIGN_KEY_CHECKS", "OPTION_RELAXED_UNIQUE_CHECKS"}
    assert sv["sql_mode"].names == ["MODE_TIME_TRUNCATE_FRACTIONAL"]  # a MySQL server
    assert (sv["auto_increment"].increment, sv["auto_increment"].offset) == (5, 2)
    assert sv["time_zone"] == "+03:00" and sv["lc_time_names"] == 5
    assert sv["charset_database"] == 224 and sv["table_map_for_update"] == 6
    assert sv["master_data_written"] == 1234
    assert (sv["invoker"].user, sv["invoker"].host) == ("root", "")
    assert sv["microseconds"] == 999999 and sv["explicit_defaults_for_timestamp"] == 1
    assert sv["ddl_xid"] == 77 and sv["default_collation_for_utf8mb4"] == 255
    assert sv["sql_require_primary_key"] == 1 and sv["default_table_encryption"] == 0


def test_sql_mode_bits_are_named_after_the_server():
    status = b"\x01" + u64((1 << 32) | (1 << 34) | 0x10)
    mysql = svars(parse("QUERY_EVENT", query_data(status, b"", b"x"), server=MYSQL_80))
    maria = svars(parse("QUERY_EVENT", query_data(status, b"", b"x"), server=MARIADB))
    assert "MODE_TIME_TRUNCATE_FRACTIONAL" in mysql["sql_mode"].names
    assert set(maria["sql_mode"].names) == {"MODE_EMPTY_STRING_IS_NULL",
                                            "MODE_TIME_ROUND_FRACTIONAL",
                                            "MODE_IGNORE_BAD_TABLE_OPTIONS"}


def test_mariadb_status_vars_by_hand():
    status = (b"\x80" + (123456).to_bytes(3, "little") + b"\x81" + u64(42)
              + b"\x82" + u8(0x08) + u64(13)
              + b"\x83" + u8(2) + u16(45) + u16(46) + u16(33) + u16(83))
    sv = svars(parse("QUERY_EVENT", query_data(status, b"", b"x"), server=MARIADB))
    assert sv["hrnow"] == 123456 and sv["xid"] == 42
    assert sv["gtid_flags3"].flags_extra.names == ["FL_ROLLBACK_ALTER_E1"]
    assert sv["gtid_flags3"].sa_seq_no == 13
    pairs = sv["character_set_collations"].pairs
    assert [(p.charset_id, p.collation_id) for p in pairs] == [(45, 46), (33, 83)]
    # START ALTER carries no sequence number
    sv = svars(parse("QUERY_EVENT", query_data(b"\x82" + u8(0x02), b"", b"x")))
    assert sv["gtid_flags3"].sa_seq_no is None


def test_status_var_running_past_its_block_is_an_error():
    # Q_SQL_MODE needs 8 bytes but the block (status_vars_len) holds 3 after the code.
    fails("QUERY_EVENT", query_data(b"\x01" + b"\x00" * 3, b"", b"x"))


def test_query_binlog_v3_has_no_status_vars():
    # MySQL 4.x: 11-byte post-header, no status_vars_len, no status variables.
    data = u32(3) + u32(1) + u8(4) + u16(0) + b"test\x00" + b"DROP TABLE t"
    q = parse("QUERY_EVENT", data, binlog_version=3, post_header_len=11)
    assert q.status_vars_len is None and q.status_vars is None
    assert (q.thread_id, q.exec_time, q.db, q.query) == (3, 1, "test", "DROP TABLE t")


def test_query_extra_post_header_bytes_are_kept():
    data = u32(1) + u32(0) + u8(0) + u16(0) + u16(0) + b"\xaa\xbb" + b"\x00" + b"BEGIN"
    q = parse("QUERY_EVENT", data, post_header_len=15)
    assert q.extra_post_header == b"\xaa\xbb" and q.query == "BEGIN"


def test_query_text_that_is_not_utf8_round_trips():
    # character_set_client latin1: the text is latin1 bytes
    data = query_data(b"\x04" + u16(8) + u16(8) + u16(8), b"d", "INSERT 'café'".encode("latin-1"))
    parse("QUERY_EVENT", data)


def test_missing_nul_after_db_is_an_error():
    fails("QUERY_EVENT", u32(1) + u32(0) + u8(1) + u16(0) + u16(0) + b"dX" + b"SELECT 1")


# ---------------------------------------------------------------------------------------------
# MariaDB 10.11 events (written by a local server while the specs were written)

MARIADB_START_ALTER = bytes.fromhex(
    "04000000000000000200002400000000000101000020540000000006037374640305000200042100210008"
    "000705008202643100811f789c73f409710d52087174f271552831547074715170f6f709f5f5534856f0f4"
    "0b0100825b082b")
MARIADB_COMMIT_ALTER = bytes.fromhex(
    "040000000000000002000035000000000001010000205400000000060373746403050002000421002100080007"
    "050081160000000000000082040d00000000000000643100811f789c73f409710d52087174f271552831547074"
    "715170f6f709f5f5534856f0f40b0100825b082b")
MARIADB_HRNOW = bytes.fromhex(
    "04000000000000000200002e000000000001010000205400000000060373746403050002000421002100080005"
    "062b30333a3030070500804d01076431008131789cf3f40b760d0a51f0f40bf157283154d048d45148d2512829"
    "d6540873f409750d56d050af50d75130d451f0f30fd730d3d404003f1e0c13")
MARIADB_ORACLE_MODE = bytes.fromhex(
    "04000000000000000200002b000000000001010ee2001007000000060373746403050002000421002100080007"
    "0500811d000000000000006431008117789c730e72750c7155087174f27155283152d04854f0f40bd10400486505e0")


def test_mariadb_query_compressed_split_alter():
    q = parse("QUERY_COMPRESSED_EVENT", MARIADB_START_ALTER, server=MARIADB)
    sv = svars(q)
    assert sv["flags2"].names == ["OPTION_EXPLICIT_DEF_TIMESTAMP"]
    assert (sv["auto_increment"].increment, sv["auto_increment"].offset) == (5, 2)
    assert sv["lc_time_names"] == 5
    assert sv["gtid_flags3"].flags_extra.names == ["FL_START_ALTER_E1"]
    assert sv["gtid_flags3"].sa_seq_no is None
    assert decompress("mariadb_zlib", q.query) == b"ALTER TABLE t1 ADD COLUMN c INT"
    sv = svars(parse("QUERY_COMPRESSED_EVENT", MARIADB_COMMIT_ALTER, server=MARIADB))
    assert sv["xid"] == 22
    assert sv["gtid_flags3"].flags_extra.names == ["FL_COMMIT_ALTER_E1"]
    assert sv["gtid_flags3"].sa_seq_no == 13


def test_mariadb_hrnow_time_zone_and_compressed_text():
    q = parse("QUERY_COMPRESSED_EVENT", MARIADB_HRNOW, server=MARIADB)
    sv = svars(q)
    assert sv["time_zone"] == "+03:00" and sv["hrnow"] == 459085
    assert q.db == "d1"
    assert decompress("mariadb_zlib", q.query) == b"INSERT INTO t1 (a, b, ts) VALUES ('x', 1, NOW(6))"


def test_mariadb_sql_mode_names():
    sv = svars(parse("QUERY_COMPRESSED_EVENT", MARIADB_ORACLE_MODE, server=MARIADB))
    assert {"MODE_ORACLE", "MODE_EMPTY_STRING_IS_NULL", "MODE_SIMULTANEOUS_ASSIGNMENT",
            "MODE_TIME_ROUND_FRACTIONAL"} <= set(sv["sql_mode"].names)
    assert sv["xid"] == 29


def test_query_compressed_by_hand():
    text = b"INSERT INTO t VALUES (1)"
    body = bytes([0x80 | 1, len(text)]) + zlib.compress(text)  # binlog_buf_compress
    q = parse("QUERY_COMPRESSED_EVENT", query_data(b"", b"test", body), server=MARIADB)
    assert decompress("mariadb_zlib", q.query) == text


def test_mariadb_execute_load_query_and_xa_prepare():
    elq = parse("EXECUTE_LOAD_QUERY_EVENT", bytes.fromhex(
        "0400000000000000020000220001000000090000003900000001000000000101000020540000000006037374"
        "640305000200042100210008000705006431004c4f41442044415441204c4f43414c20494e46494c4520272f"
        "746d702f68312f6d64622f6c6f61642e637376272049474e4f524520494e544f205441424c45206074316020"
        "4649454c4453205445524d494e4154454420425920272c2720454e434c4f534544204259202727204553434150"
        "454420425920275c5c27204c494e4553205445524d494e4154454420425920275c6e2720286061602c206062"
        "6029"), server=MARIADB)
    assert (elq.file_id, elq.dup_handling.name) == (1, "LOAD_DUP_IGNORE")
    assert elq.query[elq.fn_pos_start:elq.fn_pos_end] == " LOCAL INFILE '/tmp/h1/mdb/load.csv' IGNORE INTO"
    xa = parse("XA_PREPARE_LOG_EVENT", bytes.fromhex("004d000000020000000200000067316231"))
    assert (xa.one_phase, xa.format_id, xa.gtrid, xa.bqual) == (0, 77, b"g1", b"b1")


def test_mariadb_user_var_unsigned():
    uv = parse("USER_VAR_EVENT", bytes.fromhex("02000000763600020800000008000000ffffffffffffffff01"))
    assert uv.name == "v6" and uv.value == b"\xff" * 8 and uv.flags.names == ["UNSIGNED_F"]


# ---------------------------------------------------------------------------------------------
# other events, by hand

def test_heartbeat_v2_as_mysql_encodes_it():
    name = b"binlog.000041"
    pos = 5_000_000_000
    data = (lenenc(1) + lenenc(len(name)) + name + lenenc(2) + lenenc(len(lenenc(pos)))
            + lenenc(pos) + lenenc(0))
    hb = parse("HEARTBEAT_LOG_EVENT_V2", data)
    assert [e.id for e in hb.fields] == ["log_filename", "log_position"]
    assert hb.fields[0].value == "binlog.000041" and hb.fields[1].value == pos
    # an unknown field is skipped by its length, like Heartbeat::decode does
    hb = parse("HEARTBEAT_LOG_EVENT_V2", lenenc(9) + lenenc(2) + b"zz" + data)
    assert hb.fields[0].id is None and hb.fields[0].raw == b"zz"
    # the end mark is required, and nothing may follow it
    fails("HEARTBEAT_LOG_EVENT_V2", data[:-1])
    fails("HEARTBEAT_LOG_EVENT_V2", data + b"\x00")


def test_heartbeat_v1_and_rotate():
    assert parse("HEARTBEAT_LOG_EVENT", b"mysql-bin.000003").log_ident == "mysql-bin.000003"
    r = parse("ROTATE_EVENT", u64(4) + b"mysql-bin.000002")
    assert (r.position, r.new_log_ident) == (4, "mysql-bin.000002")
    # binlog v1 (3.23): no position in a Rotate event
    r = parse("ROTATE_EVENT", b"master-bin.002", binlog_version=1, header_len=13,
              post_header_len=0)
    assert (r.position, r.new_log_ident) == (None, "master-bin.002")


def test_start_event_v3():
    data = u16(3) + b"4.0.27-log".ljust(50, b"\x00") + u32(0)
    s = parse("START_EVENT_V3", data, binlog_version=3)
    assert (s.binlog_version, s.server_version, s.create_timestamp) == (3, "4.0.27-log", 0)


def test_load_events_old_protocol():
    head = u32(5) + u32(0) + u32(1) + u8(2) + u8(4) + u32(2)
    names = u8(1) + u8(2) + b"a\x00" + b"bb\x00"
    tail = b"t1\x00" + b"test\x00"
    # LOAD_EVENT: one byte per separator, then which ones are empty
    old_ex = b",\"\n\x00\\" + u8(0x02) + u8(0x08)
    ld = parse("LOAD_EVENT", head + old_ex + names + tail + b"/tmp/x.txt")
    assert (ld.skip_lines, ld.table_name, ld.db, ld.file_name) == (1, "t1", "test", "/tmp/x.txt")
    assert [f.name for f in ld.field_names] == ["a", "bb"]
    assert ld.sql_ex.empty_flags.names == ["LINE_START_EMPTY"]
    assert ld.sql_ex.opt_flags.names == ["OPT_ENCLOSED_FLAG"]
    # NEW_LOAD_EVENT: length-prefixed separators
    new_ex = u8(2) + b",," + u8(0) + u8(1) + b"\n" + u8(0) + u8(1) + b"\\" + u8(0x04)
    nl = parse("NEW_LOAD_EVENT", head + new_ex + names + tail + b"/tmp/x.txt")
    assert (nl.sql_ex.field_term, nl.sql_ex.enclosed) == (b",,", b"")
    # CREATE_FILE_EVENT: file id after the load post-header; NUL-terminated name, then the block
    cf = parse("CREATE_FILE_EVENT", head + u32(9) + new_ex + names + tail + b"/tmp/x.txt\x00" + b"1,2\n",
               post_header_len=4)
    assert (cf.file_id, cf.file_name, cf.block) == (9, "/tmp/x.txt", b"1,2\n")
    assert parse("EXEC_LOAD_EVENT", u32(9)).file_id == 9
    assert parse("DELETE_FILE_EVENT", u32(9)).file_id == 9
    assert parse("APPEND_BLOCK_EVENT", u32(9) + b"3,4\n").block == b"3,4\n"


def test_slave_rows_query_raw_events():
    s = parse("SLAVE_EVENT", u64(4) + u16(3306) + b"master\x00" + b"master-bin.001")
    assert (s.master_pos, s.master_port, s.master_host, s.master_log) == (
        4, 3306, "master", "master-bin.001")
    text = b"INSERT INTO t VALUES (1)"
    rq = parse("ROWS_QUERY_LOG_EVENT", u8(len(text) % 256) + text)
    assert rq.query == text.decode()
    assert parse("IGNORABLE_LOG_EVENT", b"\x01\x02").data == b"\x01\x02"
    assert parse("UNKNOWN_EVENT", b"").data == b""
    assert parse("STOP_EVENT", b"") is not None
    fails("STOP_EVENT", b"\x00")


def test_user_var_value_kinds():
    def uv(kind, value, flags=b""):
        return u32(1) + b"v" + u8(0) + u8(kind) + u32(63) + u32(len(value)) + value + flags

    assert parse("USER_VAR_EVENT", uv(1, struct.pack("<d", 1.5), b"\x00")).value_type.name == "REAL_RESULT"
    assert parse("USER_VAR_EVENT", uv(4, b"\x05\x03\x8c\x01Y", b"\x00")).value_len == 5
    # NULL: nothing after is_null
    null = parse("USER_VAR_EVENT", u32(1) + b"v" + u8(1))
    assert null.value_type is None
    fails("USER_VAR_EVENT", u32(1) + b"v" + u8(1) + b"\x00")


def test_xa_prepare_by_hand():
    data = u8(1) + struct.pack("<i", -1) + u32(3) + u32(0) + b"abc"
    xa = parse("XA_PREPARE_LOG_EVENT", data)
    assert (xa.one_phase, xa.format_id, xa.gtrid, xa.bqual) == (1, -1, b"abc", b"")
