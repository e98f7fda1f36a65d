"""Which columns each list of a TABLE_MAP_EVENT's optional metadata counts: the named sets of
specs/types/column_classes.yaml, per server line and version.

- A real MariaDB 10.11 with binlog_row_metadata=FULL: a YEAR column has a SIGNEDNESS bit there, so
  every numeric column after it must take the bit after YEAR's; spatial, JSON, INET6, UUID and
  compressed columns have a collation in DEFAULT_CHARSET. The decoded values are checked against
  the server's SELECT.
- MySQL, which no server here can produce: binlogs built with the generated structs (an FDE, a
  TABLE_MAP_EVENT and a WRITE_ROWS_EVENT) as MySQL writes them (8.0.40: YEAR has a bit, GEOMETRY and
  JSON no collation; 8.0.20: YEAR has no bit; 9.1: VECTOR has a collation), read back through the
  reader, which picks the rules from the FDE's server version or from --server-version.
- The spec language: a set's mistakes name the file and the line.
"""
from __future__ import annotations

import zlib

import pytest

from binlog_grammar.testing import mariadb
from binlog_grammar.errors import SpecError
from binlog_grammar.generated import enums
from binlog_grammar.generated import types as T
from binlog_grammar.generated.catalog import EVENTS
from binlog_grammar.runtime.values import Geometry
from binlog_grammar.binlog.rows import column_class, iter_row_changes, table_from_event
from binlog_grammar.runtime.construct import Version, server_version, set_members
from binlog_grammar.lang.loader import load_specs
from binlog_grammar.binlog.stream import open_stream

from helpers.services import need_mariadb

CODE = {e.name: c for c, e in EVENTS.items()}
TYPE = {name: code for code, name in enums.COLUMN_TYPE.items()}
# post-header lengths of a MySQL 8.0.40 FORMAT_DESCRIPTION_EVENT (one per type code from 1)
PHL = [0, 13, 0, 8, 0, 0, 0, 0, 4, 0, 4, 0, 0, 0, 98, 0, 4, 26, 8, 0, 0, 0, 8, 8, 8, 2, 0, 0, 0, 10,
       10, 10, 42, 42, 0, 18, 52, 0, 10, 40, 0]


# -- the sets themselves ------------------------------------------------------------------------

def _names(name, server):
    return {enums.COLUMN_TYPE[c] for c in column_class(name, server)}


def test_signedness_columns_per_line_and_version():
    base = {"DECIMAL", "TINY", "SHORT", "INT24", "LONG", "LONGLONG", "FLOAT", "DOUBLE", "NEWDECIMAL"}
    assert _names("signedness_columns", Version("mysql", (8, 0, 20))) == base
    assert _names("signedness_columns", Version("mysql", (8, 0, 40))) == base | {"YEAR"}
    assert _names("signedness_columns", Version("mariadb", (10, 5, 2))) == base | {"YEAR"}
    assert _names("signedness_columns", None) == base  # no version known: the common entries
    assert "BIT" not in _names("signedness_columns", Version("mariadb", (11, 4, 3)))


def test_charset_columns_per_line_and_version():
    base = {"STRING", "VAR_STRING", "VARCHAR", "BLOB"}
    assert _names("charset_columns", Version("mysql", (8, 4, 3))) == base
    assert _names("charset_columns", Version("mysql", (9, 1, 0))) == base | {"VECTOR"}
    assert _names("charset_columns", Version("mariadb", (10, 11, 6))) == \
        base | {"GEOMETRY", "VARCHAR_COMPRESSED", "BLOB_COMPRESSED"}
    assert _names("enum_and_set_columns", Version("mysql", (8, 0, 40))) == {"ENUM", "SET"}
    assert _names("vector_columns", Version("mysql", (8, 4, 3))) == set()


def test_set_members_is_the_union_of_the_entries_that_apply():
    entries = ((None, None, None, frozenset({1})), ("mariadb", None, None, frozenset({2})),
               ("mysql", Version("mysql", (8, 0, 22)), Version("mysql", (9, 0, 0)), frozenset({3})))
    assert set_members(entries, Version("mysql", (8, 0, 21))) == {1}
    assert set_members(entries, Version("mysql", (8, 0, 22))) == {1, 3}
    assert set_members(entries, Version("mysql", (9, 0, 0))) == {1}
    assert set_members(entries, Version("mariadb", (8, 0, 30))) == {1, 2}
    assert set_members(entries, None) == {1}


# -- MySQL rules on binlogs built from the specs ---------------------------------------------

def _ctx(name, server):
    code = CODE[name]
    return {"binlog_version": 4, "header_len": 19, "checksum_alg": 1, "server": server,
            "type_code": code, "post_header_len": PHL[code - 1]}


def _event(name, value, server, pos):
    """One event with its common header and CRC32, built by the generated struct."""
    c = _ctx(name, server)
    data = EVENTS[c["type_code"]].build(value, c)
    fde = name == "FORMAT_DESCRIPTION_EVENT"  # its checksum is the last field of its data
    length = 19 + len(data) + (0 if fde else 4)
    raw = T.common_header.build({"timestamp": 1700000000, "type_code": c["type_code"], "server_id": 1,
                                 "event_length": length, "log_pos": pos + length, "flags": 0},
                                **c) + data
    if fde:
        raw = raw[:-4]
    return raw + zlib.crc32(raw).to_bytes(4, "little")


def _binlog(version_text, columns, optional, row, truth):
    """A binlog written the way `version_text` writes one row of a table: `columns` are
    (name, type name, metadata), `optional` the optional-metadata entries as that server writes
    them, `row` the values; the row image is built with `truth` ({name: (unsigned, charset)}),
    what the server knows of each column, so the bytes do not depend on the reader under test."""
    server = server_version(f"mysql-{version_text}")
    fde = {"binlog_version": 4, "server_version": version_text, "create_timestamp": 0,
           "common_header_len": 19, "post_header_lengths": PHL, "checksum_alg": 1, "checksum": 0}
    names = [n for n, _t, _m in columns]
    tm = {"table_id": 7, "flags": 1, "db": "d", "db_end": 0, "table": "t", "table_end": 0,
          "column_types": [TYPE[t] for _n, t, _m in columns],
          "column_info": {"metadata": [m for _n, _t, m in columns],
                          "null_bitmap": [True] * len(columns)},
          "optional_metadata": optional + [{"tag": 4, "id": "column_name", "value": names}]}
    blob = b"\xfebin"
    blob += _event("FORMAT_DESCRIPTION_EVENT", fde, server, len(blob))
    tm_raw = _event("TABLE_MAP_EVENT", tm, server, len(blob))
    blob += tm_raw
    table = table_from_event(EVENTS[CODE["TABLE_MAP_EVENT"]].parse(tm_raw[19:-4],
                                                                   _ctx("TABLE_MAP_EVENT", server)))
    for c in table.columns:
        c.unsigned, c.charset = truth.get(c.name, (False, None))
    present = [True] * len(columns)
    rctx = dict(_ctx("WRITE_ROWS_EVENT", server), columns=table.columns, images=[present],
                json_columns=table.json_columns)
    image = {"present": present, "value_options": None, "partial_bits": None,
             "null_bits": [False] * len(columns), "cells": [row[n] for n in names]}
    rows = T.row_images.build({"rows": [{"images": [image]}]}, **rctx)
    write = {"table_id": 7, "flags": 1, "extra_info": [],
             "columns": {"column_count": len(columns), "columns_present": present,
                         "columns_present_after": None}, "rows": rows}
    blob += _event("WRITE_ROWS_EVENT", write, server, len(blob))
    return blob


def _signedness(*bits):
    padded = list(bits) + [False] * (-len(bits) % 8)
    return {"tag": 1, "id": "signedness", "value": [padded[i:i + 8] for i in range(0, len(padded), 8)]}


def _collations(*numbers):
    return {"tag": 3, "id": "column_charset", "value": list(numbers)}


POINT = Geometry(0, bytes.fromhex("0101000000000000000000f03f0000000000000040"))
# id INT, y YEAR, tu TINYINT UNSIGNED, ts TINYINT, g POINT, j JSON, c CHAR(3) latin1,
# v VARCHAR(10) utf8mb4, b BLOB
COLUMNS = [("id", "LONG", None), ("y", "YEAR", None), ("tu", "TINY", None), ("ts", "TINY", None),
           ("g", "GEOMETRY", 4), ("j", "JSON", 4), ("c", "STRING", {"real_type": 254, "length": 3}),
           ("v", "VARCHAR", 40), ("b", "BLOB", 2)]
ROW = {"id": 1, "y": 2024, "tu": 200, "ts": -5, "g": POINT, "j": {"a": 1}, "c": "é", "v": "ü",
       "b": b"\x00\xff"}
TRUTH = {"tu": (True, None), "c": (False, "latin1"), "v": (False, "utf8mb4"), "b": (False, "binary")}


def _changes(path, **kw):
    if kw:
        return [c for se in open_stream([path], **kw).events() for c in se.changes]
    return list(iter_row_changes(path))


def _check(change, **expected):
    got = {k: change.after[k] for k in expected}
    assert got == expected


def test_mysql_8_0_40_year_has_a_bit_geometry_and_json_have_no_collation(tmp_path):
    # MySQL 8.0.40 writes bits for id, y (YEAR, unset), tu, ts and collations for c, v, b only
    path = tmp_path / "mysql-8.0.40.000001"
    path.write_bytes(_binlog("8.0.40", COLUMNS, [_signedness(False, False, True, False),
                                                 _collations(8, 45, 63)], ROW, TRUTH))
    (change,) = _changes(path)
    _check(change, id=1, y=2024, tu=200, ts=-5, c="é", v="ü", b=b"\x00\xff", g=POINT)
    assert [c.unsigned for c in change.columns][:4] == [False, False, True, False]
    assert [c.charset for c in change.columns][4:] == [None, None, "latin1", "utf8mb4", "binary"]


def test_mysql_8_0_20_year_has_no_bit(tmp_path):
    path = tmp_path / "mysql-8.0.20.000001"
    path.write_bytes(_binlog("8.0.20", COLUMNS, [_signedness(False, True, False),
                                                 _collations(8, 45, 63)], ROW, TRUTH))
    (change,) = _changes(path)
    _check(change, tu=200, ts=-5, c="é")


def test_server_version_override_picks_the_rules(tmp_path):
    # the bytes of 8.0.40 (a bit for YEAR) read as if 8.0.20 wrote them: YEAR's bit goes to tu
    path = tmp_path / "mysql-8.0.40.000001"
    path.write_bytes(_binlog("8.0.40", COLUMNS, [_signedness(False, False, True, False),
                                                 _collations(8, 45, 63)], ROW, TRUTH))
    (change,) = _changes(path, server_version="mysql-8.0.20")
    _check(change, tu=-56, ts=251)
    (change,) = _changes(path, server_version="mysql-8.0.40")
    _check(change, tu=200, ts=-5)


def test_mysql_9_vector_has_a_collation(tmp_path):
    # MySQL 9 counts VECTOR (binary) in the charset list: c and v come after its entry
    columns = [("id", "LONG", None), ("vec", "VECTOR", 4), ("c", "STRING", {"real_type": 254, "length": 3}),
               ("v", "VARCHAR", 40)]
    row = {"id": 3, "vec": [1.5, -2.0], "c": "é", "v": "ü"}
    truth = {"c": (False, "latin1"), "v": (False, "utf8mb4")}
    path = tmp_path / "mysql-9.1.0.000001"
    path.write_bytes(_binlog("9.1.0", columns, [_signedness(False), _collations(63, 8, 45)], row, truth))
    (change,) = _changes(path)
    _check(change, id=3, vec=[1.5, -2.0], c="é", v="ü")


# -- a real MariaDB -------------------------------------------------------------------------

MARIADB_TABLE = """CREATE TABLE cls (id INT PRIMARY KEY, y YEAR, tu TINYINT UNSIGNED, ts TINYINT,
  bt BIT(5), su SMALLINT UNSIGNED, d DECIMAL(5,1) UNSIGNED, g POINT, j JSON, i6 INET6, u UUID,
  vz VARCHAR(20) COMPRESSED CHARACTER SET utf8mb3, bz BLOB COMPRESSED,
  e ENUM('é','x') CHARACTER SET latin1, s SET('a','ü') CHARACTER SET utf8mb4,
  bu BIGINT UNSIGNED, mi MEDIUMINT, c CHAR(3) CHARACTER SET cp1251) ENGINE=InnoDB"""
MARIADB_ROWS = """INSERT INTO cls VALUES
  (1, 2024, 200, -5, b'10101', 65535, 12.5, POINT(1, 2), '{"a": 1}', '::1',
   '123e4567-e89b-12d3-a456-426655440000', 'zip', 'blob', 'é', 'a,ü', 18446744073709551615, -7,
   'абв'),
  (2, 1999, 128, 127, b'1', 32768, 0.5, POINT(3, 4), '[]', '::ffff:10.0.0.1',
   '00000000-0000-0000-0000-000000000001', 'zap', 'bl', 'x', 'ü', 9223372036854775808, 8388607,
   'где')"""


@pytest.fixture(scope="module")
def mariadb_binlog():
    need_mariadb()
    with mariadb.MariaDB(["--binlog-row-metadata=FULL"]) as db:
        db.sql(f"CREATE DATABASE cc CHARACTER SET utf8mb4; USE cc; {MARIADB_TABLE}; {MARIADB_ROWS};")
        expected = db.sql("SELECT id, y, tu, ts, su, d, bu, mi, HEX(c), e, s FROM cls ORDER BY id", "cc")
        version = db.sql("SELECT VERSION()").strip()
        db.sql("FLUSH BINARY LOGS")
        yield list(db.binlogs()), expected, version


@pytest.mark.server
def test_mariadb_year_before_numerics_and_every_charset_column(mariadb_binlog):
    paths, expected, version = mariadb_binlog
    changes = [c for p in paths for c in iter_row_changes(p) if c.table == "cls"]
    assert len(changes) == 2
    for change, line in zip(sorted(changes, key=lambda c: c.after["id"]), expected.splitlines()):
        want = line.split("\t")
        a = change.after
        got = [str(a["id"]), str(a["y"]), str(a["tu"]), str(a["ts"]), str(a["su"]), str(a["d"]),
               str(a["bu"]), str(a["mi"]), a["c"].encode("cp1251").hex().upper(), a["e"],
               ",".join(sorted(a["s"], key=["a", "ü"].index))]
        assert got == want, version
    cols = {c.name: c for c in changes[0].columns}
    assert cols["y"].unsigned and cols["tu"].unsigned and not cols["ts"].unsigned
    assert not cols["bt"].unsigned  # BIT has no bit
    # every column MariaDB counts has a collation, in order; the last one (cp1251) proves the count
    assert [cols[n].charset for n in ("g", "i6", "u", "bz")] == ["binary"] * 4
    assert cols["j"].charset == "utf8mb4" and cols["vz"].charset == "utf8mb3"
    assert cols["c"].charset == "cp1251"
    assert cols["e"].charset == "latin1" and cols["s"].charset == "utf8mb4"


# -- the spec language: sets --------------------------------------------------------------------

GOOD_SET = """\
sets:
  test_columns:
    enum: column_type
    doc: A test set.
    applies-to: [TABLE_MAP_EVENT.optional_metadata.signedness]
    entries:
      - members: [TINY, SHORT]
        doc: Both lines.
      - members:
          - YEAR
          - LONG
        since: mysql-8.0.1
        until: mysql-9.0.0
"""


def _load(tmp_path, text):
    d = tmp_path / "extra"
    d.mkdir(exist_ok=True)
    (d / "bad.yaml").write_text(text)
    return load_specs(None, [d])


def test_a_good_set_loads(tmp_path):
    specs = _load(tmp_path, GOOD_SET)
    s = specs.sets["test_columns"]
    assert s.members(Version("mysql", (8, 0, 40))) == {1, 2, 3, 13}
    assert s.members(Version("mysql", (9, 0, 0))) == {1, 2}
    assert s.members(Version("mariadb", (10, 11, 6))) == {1, 2}


@pytest.mark.parametrize("bad, line, words", [
    (GOOD_SET.replace("          - LONG", "          - LONGG"), 11, "'LONGG' is not a member of enum column_type"),
    (GOOD_SET.replace("[TINY, SHORT]", "[TINY, SHORTT]"), 7, "'SHORTT' is not a member"),
    (GOOD_SET.replace("enum: column_type", "enum: no_such_enum"), 3, "must name an enum"),
    (GOOD_SET.replace("until: mysql-9.0.0", "until: mysql-8.0.1"), 13, "is not before"),
    (GOOD_SET.replace("until: mysql-9.0.0", "until: mariadb-11.0.0"), 13, "is not a mysql version"),
    (GOOD_SET.replace("        doc: Both lines.", "        flavor: mysqll"), 8, "flavor must be"),
    (GOOD_SET.replace("        doc: Both lines.", "        colour: red"), 8, "unknown key 'colour'"),
    (GOOD_SET.replace(".signedness]", ".signedsness]"), 5, "no field 'signedsness'"),
    (GOOD_SET.replace("    doc: A test set.\n", ""), 2, "needs a doc"),
])
def test_set_mistakes_name_the_file_and_line(tmp_path, bad, line, words):
    with pytest.raises(SpecError) as info:
        _load(tmp_path, bad)
    err = info.value
    assert err.file.endswith("bad.yaml")
    assert err.line == line
    assert words in err.message


def test_an_overlay_adds_members_from_its_version(tmp_path):
    d = tmp_path / "extra"
    d.mkdir()
    (d / "mysql-99.0.0.yaml").write_text(
        "overlay: mysql-99.0.0\ndoc: A future version.\nextend:\n"
        "  - target: charset_columns\n    members: [JSON]\n    doc: JSON becomes a character column.\n")
    specs = load_specs(None, [d])
    s = specs.sets["charset_columns"]
    assert TYPE["JSON"] in s.members(Version("mysql", (99, 0, 0)))
    assert TYPE["JSON"] not in s.members(Version("mysql", (98, 0, 0)))
    assert TYPE["JSON"] not in s.members(Version("mariadb", (99, 0, 0)))
    (d / "mysql-99.0.0.yaml").write_text(
        "overlay: mysql-99.0.0\ndoc: A future version.\nextend:\n"
        "  - target: charset_columns\n    members: [JSONN]\n")
    with pytest.raises(SpecError) as info:
        load_specs(None, [d])
    assert info.value.file.endswith("mysql-99.0.0.yaml") and info.value.line == 5
