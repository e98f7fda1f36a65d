"""Column values a real MariaDB server writes, decoded from its binlogs and checked against the
server's own SELECT.

One throwaway MariaDB server (binlog_grammar.testing.mariadb) runs the same workload three times, each in
its own database and its own binlog files:

    v_full        binlog_row_metadata=FULL     binlog_row_image=FULL
    v_minmeta     binlog_row_metadata=MINIMAL  binlog_row_image=FULL     (columns are '@1', '@2', ...)
    v_minimage    binlog_row_metadata=FULL     binlog_row_image=MINIMAL

The workload creates one InnoDB table per family of types (integers, exact and approximate numbers
and BIT, temporal types, character and binary strings, ENUM and SET, JSON / spatial / INET6 / UUID /
compressed columns), inserts edge values and NULLs, updates some rows (one of them changes its
primary key) and deletes some. The expected values come from SELECT: every column is rendered as
unambiguous text (HEX() for strings and binaries, CAST(... AS CHAR) for numbers and temporals,
ST_SRID() and HEX(ST_AsBinary()) for geometry), snapshotted after the inserts and after the updates,
and turned into the Python value the decoder's contract gives (`expected_value`). Each decoded
change is compared with the snapshot row of its primary key: inserts and update before-images with
the first snapshot, update after-images and delete before-images with the second. With
binlog_row_image=MINIMAL the images hold only some columns, and which ones is checked exactly.
"""
from __future__ import annotations

import datetime as dt
import time
from dataclasses import dataclass, field
from decimal import Decimal

import pytest

from binlog_grammar.testing import mariadb
from binlog_grammar.testing import differential

from helpers.services import need_mariadb

pytestmark = pytest.mark.server

UTC = dt.timezone.utc

# -- the workload ------------------------------------------------------------------------------

ALL_BYTES = "UNHEX('" + "".join(f"{i:02X}" for i in range(256)) + "')"
ENUM300 = ",".join(f"'e{i}'" for i in range(300))
SET9 = ",".join(f"'n{i}'" for i in range(9))
SET64 = ",".join(f"'m{i}'" for i in range(64))
ALL9 = ",".join(f"n{i}" for i in range(9))
ALL64 = ",".join(f"m{i}" for i in range(64))


def _nulls(n):
    return ", ".join(["NULL"] * n)


def _temporal_row(id_, year, date, time_, datetime_, timestamp):
    """One row of `temporal`: the same literal in every precision of TIME, DATETIME, TIMESTAMP."""
    vals = [str(id_), year, date] + [time_] * 7 + [datetime_] * 7 + [timestamp] * 7
    return "(" + ", ".join(vals) + ")"


@dataclass
class Table:
    name: str
    create: str
    inserts: list  # INSERT statements (multi-row)
    updates: list  # (UPDATE statement, {old id: new id}); a row is updated at most once
    deletes: list  # ids deleted by one DELETE statement, after the updates (ascending)
    partial: dict = field(default_factory=dict)  # id -> columns an INSERT names (the others default)


TABLES = [
    Table(
        "ints",
        """CREATE TABLE ints (id INT PRIMARY KEY,
             ti TINYINT, tu TINYINT UNSIGNED, si SMALLINT, su SMALLINT UNSIGNED,
             mi MEDIUMINT, mu MEDIUMINT UNSIGNED, i INT, iu INT UNSIGNED,
             bi BIGINT, bu BIGINT UNSIGNED, flag BOOL) ENGINE=InnoDB""",
        ["""INSERT INTO ints VALUES
             (1, -128, 0, -32768, 0, -8388608, 0, -2147483648, 0, -9223372036854775808, 0, 0),
             (2, 127, 255, 32767, 65535, 8388607, 16777215, 2147483647, 4294967295,
                 9223372036854775807, 18446744073709551615, 1),
             (3, -1, 1, -1, 1, -1, 1, -1, 1, -1, 1, -1),
             (4, 0, 128, 0, 32768, 0, 8388608, 0, 2147483648, 0, 9223372036854775808, 127),
             (5, """ + _nulls(11) + """),
             (6, 100, 200, -300, 40000, -4000000, 9000000, -123456789, 3000000000,
                 -1234567890123456789, 12345678901234567890, NULL)""",
         "INSERT INTO ints (id, ti, bu) VALUES (7, 5, 6)"],
        [("UPDATE ints SET ti = -127, bu = 1 WHERE id = 1", {1: 1}),
         ("UPDATE ints SET id = 102, iu = 7 WHERE id = 2", {2: 102}),
         ("UPDATE ints SET i = NULL, bi = 5 WHERE id = 3", {3: 3}),
         ("UPDATE ints SET ti = 1, bu = 18446744073709551615 WHERE id = 5", {5: 5}),
         ("UPDATE ints SET flag = 0, ti = ti + 1 WHERE id IN (6, 7)", {6: 6, 7: 7})],
        [4, 102],
        partial={7: ["id", "ti", "bu"]},
    ),
    Table(
        "nums",
        """CREATE TABLE nums (id INT PRIMARY KEY,
             d65 DECIMAL(65,30), d10 DECIMAL(10,0), d5 DECIMAL(5,2), d18 DECIMAL(18,9),
             d20u DECIMAL(20,4) UNSIGNED, d99 DECIMAL(9,9), d30 DECIMAL(30,0),
             f FLOAT, fu FLOAT UNSIGNED, dbl DOUBLE, du DOUBLE UNSIGNED,
             b1 BIT(1), b17 BIT(17), b64 BIT(64)) ENGINE=InnoDB""",
        ["""INSERT INTO nums VALUES
             (1, '12345678901234567890123456789012345.123456789012345678901234567890', 9999999999,
                 999.99, 123456789.123456789, 9999999999999999.9999, 0.999999999,
                 123456789012345678901234567890, 3.1415927, 3.4028234e38, 1.7976931348623157e308, 0.1,
                 1, 131071, 18446744073709551615),
             (2, '-12345678901234567890123456789012345.123456789012345678901234567890', -9999999999,
                 -999.99, -0.000000001, 0, -0.999999999, -123456789012345678901234567890,
                 -1.17549435e-38, 0, -2.2250738585072014e-308, 0, 0, 0, 0),
             (3, 0, 0, 0, 0, 0, 0, 0, 1e-45, 1e-45, 4.9e-324, 4.9e-324, 0, 65536, 9223372036854775808),
             (4, '-0.000000000000000000000000000001', 1, -0.01, 0.5, 1.5, 0.000000001, 1,
                 -16777217, 16777216, -123.456, 123.456, 1, 1, 1),
             (5, """ + _nulls(14) + """),
             (6, '99999999999999999999999999999999999.999999999999999999999999999999', -1, 12.34,
                 -123456789.987654321, 12345.6789, -0.5, 99999999999999999999999999999, 100, 0.5,
                 1e300, 1e-300, 0, 43690, 12297829382473034410)"""],
        [("UPDATE nums SET d65 = -d65, f = -f WHERE id = 1", {1: 1}),
         ("UPDATE nums SET id = 102, d5 = 0.01 WHERE id = 2", {2: 102}),
         ("UPDATE nums SET d65 = 1.5, b64 = 1, f = 2.5, b1 = 1 WHERE id = 5", {5: 5}),
         ("UPDATE nums SET b17 = 0, dbl = -dbl WHERE id = 6", {6: 6})],
        [3, 102],
    ),
    Table(
        "temporal",
        "CREATE TABLE temporal (id INT PRIMARY KEY, y YEAR, d DATE, "
        + ", ".join(f"t{n} TIME({n})" for n in range(7)) + ", "
        + ", ".join(f"dt{n} DATETIME({n})" for n in range(7)) + ", "
        + ", ".join(f"ts{n} TIMESTAMP({n}) NULL DEFAULT NULL" for n in range(7))
        + ") ENGINE=InnoDB",
        ["INSERT INTO temporal VALUES " + ",\n".join([
            _temporal_row(1, "0", "'0000-00-00'", "'00:00:00'", "'0000-00-00 00:00:00'",
                          "'0000-00-00 00:00:00'"),
            _temporal_row(2, "1901", "'1000-01-01'", "'-838:59:59'", "'1000-01-01 00:00:00'",
                          "'1970-01-01 00:00:01'"),
            _temporal_row(3, "2155", "'9999-12-31'", "'838:59:59.999999'",
                          "'9999-12-31 23:59:59.999999'", "'2038-01-19 03:14:07.999999'"),
            _temporal_row(4, "2000", "'2021-00-10'", "'-00:00:01.5'", "'2021-02-00 10:11:12.5'",
                          "'2021-06-15 12:34:56.654321'"),
            "(5, " + _nulls(23) + ")",
            _temporal_row(6, "1999", "'2024-02-29'", "'-00:00:00.000001'",
                          "'2024-02-29 12:34:56.789012'", "'1999-12-31 23:59:59.5'"),
            _temporal_row(7, "2069", "'0000-01-01'", "'12:34:56.789012'", "'0000-01-01 00:00:00'",
                          "'2001-09-09 01:46:40.123'"),
            _temporal_row(8, "1970", "'1970-01-01'", "'-12:00:00.000001'", "'2021-13-01 00:00:00'",
                          "'1970-01-01 00:00:00.5'"),
        ])],
        [("UPDATE temporal SET d = '2000-01-01', t1 = '-00:00:00.1', ts3 = '2000-01-01 00:00:00.001' "
          "WHERE id = 1", {1: 1}),
         ("UPDATE temporal SET id = 102, y = 2001 WHERE id = 2", {2: 102}),
         ("UPDATE temporal SET y = 0, d = '0000-00-00', dt6 = '2001-02-03 04:05:06.000007', "
          "ts6 = '0000-00-00 00:00:00', t6 = '-838:59:59.999999' WHERE id = 5", {5: 5}),
         ("UPDATE temporal SET t6 = '-00:00:00.5', ts0 = NULL WHERE id = 6", {6: 6})],
        [4, 7, 102],
    ),
    Table(
        "strs",
        """CREATE TABLE strs (id INT PRIMARY KEY,
             c_l1 CHAR(10) CHARACTER SET latin1, c_u4 CHAR(10) CHARACTER SET utf8mb4,
             c255 CHAR(255) CHARACTER SET utf8mb4,
             vc10 VARCHAR(10) CHARACTER SET utf8mb4, vc300 VARCHAR(300) CHARACTER SET utf8mb4,
             vl255 VARCHAR(255) CHARACTER SET latin1, vl256 VARCHAR(256) CHARACTER SET latin1,
             vu3 VARCHAR(20) CHARACTER SET utf8mb3,
             vbin VARCHAR(10) CHARACTER SET utf8mb4 COLLATE utf8mb4_bin,
             v1251 VARCHAR(10) CHARACTER SET cp1251, v16 VARCHAR(10) CHARACTER SET utf16,
             c16 CHAR(4) CHARACTER SET utf16,
             bn4 BINARY(4), vb VARBINARY(300), cb CHAR(5) CHARACTER SET binary,
             ttx TINYTEXT, tx TEXT, mtx MEDIUMTEXT, ltx LONGTEXT,
             tbl TINYBLOB, bl BLOB, mbl MEDIUMBLOB, lbl LONGBLOB
           ) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4""",
        ["""INSERT INTO strs VALUES
             (1, """ + ", ".join(["''"] * 23) + """),
             (2, 'Müller éà', '😀🎉', REPEAT('😀', 255), REPEAT('😀', 10), REPEAT('é', 300),
                 REPEAT('ÿ', 255), REPEAT('a', 256), 'Grüße', 'BinÄr', 'Привет', '𝄞z', '𝄞',
                 x'00FF0001', LEFT(REPEAT(""" + ALL_BYTES + """, 2), 300), x'0001',
                 REPEAT('ä', 127), 'text😀', REPEAT('m', 70000), REPEAT('€', 1000), x'00',
                 x'DEADBEEF', LEFT(REPEAT(""" + ALL_BYTES + """, 274), 70000), REPEAT(x'00FF', 40000)),
             (3, """ + _nulls(23) + """),
             (4, 'ab  ', 'ab  ', ' lead', 'ab  ', ' ', 'x ', ' ', 'a b ', 'A ', 'ё ', 'a ', 'a ',
                 'a', x'00', 'ab', ' ', '  ', 'tab\tnl\n', 'nul\\0', x'20', x'0000', x'', x'FF'),
             (5, 'ÀÉÎÕÜßàéîõ', 'Ωжか한😀Ωжか한😀', REPEAT('é', 255), 'ab', REPEAT('😀', 300),
                 'naïve café', REPEAT('ü', 256), 'Ωмега', 'ß', 'Ёлка', 'Ωμέγα', 'Ωμέγ', x'FFFFFFFF',
                 x'', x'FFFFFFFFFF', 'tiny', REPEAT('😀', 16383), 'medium', 'long', x'FF', x'',
                 x'', x'')"""],
        [("UPDATE strs SET bl = x'00', tbl = NULL, c255 = 'x' WHERE id = 1", {1: 1}),
         ("UPDATE strs SET id = 102, mtx = CONCAT(mtx, '!') WHERE id = 2", {2: 102}),
         ("UPDATE strs SET c_l1 = 'é', lbl = '', ttx = '' WHERE id = 3", {3: 3}),
         ("UPDATE strs SET vc300 = '', bn4 = x'01', mbl = x'AB' WHERE id = 5", {5: 5})],
        [4, 102],
    ),
    Table(
        "enums",
        f"""CREATE TABLE enums (id INT PRIMARY KEY,
             e ENUM('a','b','c'), e_u ENUM('ä','😀','x y') CHARACTER SET utf8mb4,
             e_l1 ENUM('é','ü') CHARACTER SET latin1, e300 ENUM({ENUM300}),
             s SET('a','b','c'), s9 SET({SET9}), s64 SET({SET64}),
             s_l1 SET('é','ü') CHARACTER SET latin1) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4""",
        [f"""INSERT INTO enums VALUES
             (1, 'a', 'ä', 'é', 'e0', '', '', '', ''),
             (2, 'c', '😀', 'ü', 'e299', 'a,b,c', '{ALL9}', '{ALL64}', 'é,ü'),
             (3, 'zz', 'zz', 'zz', 'zz', 'a', 'n8', 'm63', 'ü'),
             (4, {_nulls(8)}),
             (5, 'b', 'x y', 'é', 'e255', 'c', 'n0,n7', 'm0,m31,m32', 'é')"""],
        [("UPDATE enums SET s = 'b', s64 = 'm1,m62' WHERE id = 1", {1: 1}),
         ("UPDATE enums SET id = 102, e = 'a' WHERE id = 2", {2: 102}),
         ("UPDATE enums SET e = 'b', s = '' WHERE id = 3", {3: 3}),
         ("UPDATE enums SET e300 = 'e256', s9 = '' WHERE id = 5", {5: 5})],
        [4, 102],
    ),
    Table(
        "others",
        """CREATE TABLE others (id INT PRIMARY KEY,
             j JSON, g GEOMETRY, p POINT, ls LINESTRING, poly POLYGON, gc GEOMETRYCOLLECTION,
             ip INET6, u UUID,
             vz VARCHAR(200) COMPRESSED, bz BLOB COMPRESSED, tz TEXT COMPRESSED
           ) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4""",
        ["""INSERT INTO others VALUES
             (1, '{"a": [1, 2.5, "x", null, true, false], "b": {"c": "😀"}}',
                 ST_GeomFromText('POINT(1 2)'), ST_GeomFromText('POINT(0 0)'),
                 ST_GeomFromText('LINESTRING(0 0,1 1,2 0)'),
                 ST_GeomFromText('POLYGON((0 0,4 0,4 4,0 4,0 0),(1 1,2 1,2 2,1 1))'),
                 ST_GeomFromText('GEOMETRYCOLLECTION(POINT(1 1),LINESTRING(0 0,1 1))'),
                 '::', '00000000-0000-0000-0000-000000000000', 'abc', 'xyz', 'short'),
             (2, '[]', ST_GeomFromText('POINT(-1.5 1e10)', 4326),
                 ST_GeomFromText('POINT(3 4)', 3857), ST_GeomFromText('LINESTRING(-1 -1,1e-10 5)'),
                 ST_GeomFromText('POLYGON((0 0,1 0,0 1,0 0))', 4326),
                 ST_GeomFromText('GEOMETRYCOLLECTION EMPTY'),
                 '2001:db8::ff00:42:8329', 'f47ac10b-58cc-4372-a567-0e02b2c3d479',
                 REPEAT('abcd', 50), REPEAT(x'00010203', 5000), REPEAT('Grüße ', 100)),
             (3, """ + _nulls(11) + """),
             (4, '"😀"', ST_GeomFromText('MULTIPOINT(1 1,2 2)'), ST_GeomFromText('POINT(-0.5 0.25)'),
                 NULL, NULL, NULL, '::ffff:192.0.2.1', '6ccd780c-baba-1026-9564-5b8c656024db',
                 '', '', ''),
             (5, '{"n": 12345678901234567890, "f": -1.5e-7, "s": "a\\\\"b"}', NULL, NULL, NULL, NULL,
                 NULL, 'ffff:ffff:ffff:ffff:ffff:ffff:ffff:ffff', 'ffffffff-ffff-ffff-ffff-ffffffffffff',
                 REPEAT('é', 200), REPEAT('z', 99), REPEAT('😀', 1000))"""],
        [("UPDATE others SET j = '{\"b\": 1}', g = ST_GeomFromText('LINESTRING(1 1,2 2)') "
          "WHERE id = 1", {1: 1}),
         ("UPDATE others SET id = 102, vz = 'changed' WHERE id = 2", {2: 102}),
         ("UPDATE others SET ip = '::1', u = '01234567-89ab-4def-8123-456789abcdef', "
          "bz = REPEAT('z', 1000) WHERE id = 3", {3: 3}),
         ("UPDATE others SET tz = NULL, p = ST_GeomFromText('POINT(7 8)', 4326) WHERE id = 5", {5: 5})],
        [4, 102],
    ),
]
TABLE_NAMES = [t.name for t in TABLES]

CONFIGS = {
    "full": ("v_full", "FULL", "FULL"),
    "minimal_metadata": ("v_minmeta", "MINIMAL", "FULL"),
    "minimal_image": ("v_minimage", "FULL", "MINIMAL"),
}

# -- SELECT side: how each column is rendered, and the Python value the text stands for --------

INTEGER_TYPES = differential.INTEGER_TYPES


@dataclass
class Col:
    name: str
    position: int  # 1-based
    data_type: str  # information_schema DATA_TYPE
    column_type: str
    charset: str | None  # information_schema CHARACTER_SET_NAME


# what SELECT shows of a column and the Python value that text stands for: shared with the
# randomized differential suite (binlog_grammar.testing.differential)
render = differential.render
expected_value = differential.expected_value


def same(expected, got) -> bool:
    if type(expected) is not type(got):
        return False
    if isinstance(expected, Decimal):
        return str(expected) == str(got)  # the same digits, the same scale
    if isinstance(expected, dt.datetime):
        return expected == got and expected.tzinfo == got.tzinfo
    return expected == got


def _short(v):
    r = repr(v)
    return r if len(r) <= 120 else f"{r[:100]}... ({len(v) if hasattr(v, '__len__') else '?'} long)"


# -- the server run -----------------------------------------------------------------------------

SESSION = "SET time_zone = '+00:00'; SET sql_mode = '';\n"


@dataclass
class TableRun:
    """One table of one configuration: its columns, the two snapshots, the decoded changes."""

    db: str
    metadata: str
    image: str
    table: str
    columns: list  # [Col]
    first: dict  # {id: {column: SELECT text}}, after the inserts
    second: dict  # {id: {column: SELECT text}}, after the updates
    files: list  # the binlog files holding this table's workload, and nothing else
    changes: list = field(default_factory=list)
    error: BaseException | None = None
    jsonl: list = field(default_factory=list)  # `binlog-grammar dump --format jsonl --rows-only` of files


def _columns(db, schema, table):
    rows = db.sql("SELECT COLUMN_NAME, ORDINAL_POSITION, DATA_TYPE, COLUMN_TYPE, "
                  "IFNULL(CHARACTER_SET_NAME, 'NULL') FROM information_schema.COLUMNS "
                  f"WHERE TABLE_SCHEMA = '{schema}' AND TABLE_NAME = '{table}' "
                  "ORDER BY ORDINAL_POSITION")
    out = []
    for line in rows.splitlines():
        name, pos, dtype, ctype, cs = line.split("\t")
        out.append(Col(name, int(pos), dtype, ctype, None if cs == "NULL" else cs))
    return out


def _snapshot(db, schema, table, cols):
    exprs = ", ".join(render(c) for c in cols)
    text = db.sql(SESSION + f"SELECT {exprs} FROM `{table}` ORDER BY id", database=schema)
    rows = {}
    for line in text.splitlines():
        fields = line.split("\t")
        assert len(fields) == len(cols), line[:200]
        rows[int(fields[0])] = {c.name: f for c, f in zip(cols, fields)}
    return rows


def _run_table(db, schema, metadata, image, spec: Table) -> TableRun:
    """Create, fill, update and delete one table in binlog files of its own, then decode them."""
    from binlog_grammar.binlog.rows import iter_row_changes

    session = SESSION + f"SET SESSION binlog_row_image = {image};\n"
    before = set(db.binlogs())
    db.sql("FLUSH BINARY LOGS")
    db.sql(session + spec.create + ";\n" + ";\n".join(spec.inserts) + ";\n", database=schema)
    cols = _columns(db, schema, spec.name)
    first = _snapshot(db, schema, spec.name, cols)
    db.sql(session + ";\n".join(u for u, _ in spec.updates) + ";\n", database=schema)
    second = _snapshot(db, schema, spec.name, cols)
    db.sql(session + f"DELETE FROM {spec.name} WHERE id IN ({', '.join(map(str, spec.deletes))})",
           database=schema)
    db.sql("FLUSH BINARY LOGS")
    files = [f for f in db.binlogs() if f not in before][:-1]  # the last one was just opened
    run = TableRun(schema, metadata, image, spec.name, cols, first, second, files)
    try:
        for ch in iter_row_changes(files):
            run.changes.append(ch)
    except Exception as e:  # noqa: BLE001 - reported by the tests of this table
        run.error = e
    run.jsonl = _dump_jsonl(files)
    return run


def _dump_jsonl(files):
    import contextlib
    import io
    import json

    from binlog_grammar.cli import main

    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        code = main(["dump", "--format", "jsonl", "--rows-only", *map(str, files)])
    return [json.loads(line) for line in out.getvalue().splitlines()] if code == 0 else [code]


def _run_config(db, schema, metadata, image):
    db.sql(f"SET GLOBAL binlog_row_metadata = {metadata}; "
           f"CREATE DATABASE {schema} CHARACTER SET utf8mb4")
    return {t.name: _run_table(db, schema, metadata, image, t) for t in TABLES}


@pytest.fixture(scope="module")
def server_runs():
    need_mariadb()
    started = time.monotonic()
    with mariadb.MariaDB(["--binlog-row-metadata=FULL", "--default-time-zone=+00:00",
                          "--max-allowed-packet=64M"]) as db:
        runs = {name: _run_config(db, *cfg) for name, cfg in CONFIGS.items()}
    runs["_seconds"] = time.monotonic() - started
    return runs


def _decoded(server_runs, config, table) -> TableRun:
    run = server_runs[config][table]
    if run.error is not None:
        pytest.fail(f"decoding the {config} binlogs of {table} failed: "
                    f"{type(run.error).__name__}: {run.error}")
    return run


# -- comparing ------------------------------------------------------------------------------------

def _key(run, c: Col):
    return c.name if run.metadata == "FULL" else f"@{c.position}"


def _compare_image(run, what, row_id, image, snap_row, mismatches, present=None):
    """Compare one decoded image with a snapshot row; `present` is the exact set of columns the
    image must hold (None: all of them)."""
    want = {c.name for c in run.columns} if present is None else set(present)
    keys = {_key(run, c): c for c in run.columns}
    got_names = {keys[k].name if k in keys else k for k in image}
    if got_names != want:
        mismatches.append(f"{run.table} id={row_id} {what}: columns {sorted(got_names)}, "
                          f"expected {sorted(want)}")
    for k, got in image.items():
        c = keys.get(k)
        if c is None:
            continue
        text = snap_row[c.name]
        exp = expected_value(c, text, run.metadata == "FULL")
        if not same(exp, got):
            mismatches.append(
                f"{run.table} id={row_id} {what} {c.name} ({c.column_type}): SQL {_short(text)} -> "
                f"expected {_short(exp)} ({type(exp).__name__}), decoded {_short(got)} "
                f"({type(got).__name__})")


def _changed_columns(run, old, new):
    return {c.name for c in run.columns if run.first[old][c.name] != run.second[new][c.name]}


def _check_table(run: TableRun):
    spec = next(t for t in TABLES if t.name == run.table)
    minimal = run.image == "MINIMAL"
    changes = [ch for ch in run.changes if ch.table == run.table and ch.db == run.db]
    idcol = _key(run, run.columns[0])
    mismatches = []
    if len(changes) != len(run.changes):
        mismatches.append(f"changes of other tables: {[(c.db, c.table) for c in run.changes]}")
    inserts = [ch for ch in changes if ch.op == "c"]
    updates = [ch for ch in changes if ch.op == "u"]
    deletes = [ch for ch in changes if ch.op == "d"]
    first, second = run.first, run.second
    # every row once, in statement order
    got = [ch.after.get(idcol) for ch in inserts]
    if got != sorted(first):
        mismatches.append(f"{run.table}: inserted ids {got}, expected {sorted(first)}")
    moves = [m for _, mv in spec.updates for m in mv.items()]
    got = [(ch.before.get(idcol), ch.after.get(idcol, ch.before.get(idcol))) for ch in updates]
    if got != moves:
        mismatches.append(f"{run.table}: updates (old id, new id) {got}, expected {moves}")
    got = [ch.before.get(idcol) for ch in deletes]
    if got != spec.deletes:
        mismatches.append(f"{run.table}: deleted ids {got}, expected {spec.deletes}")
    for ch in inserts:
        assert ch.before is None
        rid = ch.after.get(idcol)
        if rid in first:
            present = spec.partial.get(rid) if minimal else None
            _compare_image(run, "insert", rid, ch.after, first[rid], mismatches, present)
    for ch in updates:
        old = ch.before.get(idcol)
        new = ch.after.get(idcol, old)
        if old not in first or new not in second:
            continue
        _compare_image(run, "update before", old, ch.before, first[old], mismatches,
                       ["id"] if minimal else None)
        _compare_image(run, "update after", new, ch.after, second[new], mismatches,
                       _changed_columns(run, old, new) if minimal else None)
    for ch in deletes:
        assert ch.after is None
        rid = ch.before.get(idcol)
        if rid in second:
            _compare_image(run, "delete", rid, ch.before, second[rid], mismatches,
                           ["id"] if minimal else None)
    return changes, mismatches


# -- tests ----------------------------------------------------------------------------------------

@pytest.mark.parametrize("table", TABLE_NAMES)
@pytest.mark.parametrize("config", CONFIGS)
def test_values_match_select(server_runs, config, table):
    run = _decoded(server_runs, config, table)
    changes, mismatches = _check_table(run)
    assert changes, f"no row changes of {run.db}.{table} decoded"
    assert not mismatches, f"{len(mismatches)} mismatches ({config}):\n" + "\n".join(mismatches)


@pytest.mark.parametrize("config", CONFIGS)
def test_columns_as_metadata_gives_them(server_runs, config):
    """FULL metadata names the columns; MINIMAL numbers them '@1', '@2', ... (signedness and
    charsets, which MINIMAL still carries, are checked by the values)."""
    for table in TABLE_NAMES:
        run = server_runs[config][table]
        if not run.changes:
            continue  # reported by test_values_match_select
        ch = run.changes[0]
        assert [c.name for c in ch.columns] == [_key(run, c) for c in run.columns], table
        files = {str(f) for f in run.files}
        assert all(str(ch.file) in files and ch.pos >= 4 for ch in run.changes), table


BINARY_STRING_TYPES = {"binary", "varbinary", "tinyblob", "blob", "mediumblob", "longblob"}
NUMERIC_TYPES = INTEGER_TYPES | {"decimal", "float", "double"}


@pytest.mark.parametrize("config", CONFIGS)
def test_column_charset_and_signedness(server_runs, config):
    """Each column's charset and signedness, as the decoder reads them from the TABLE_MAP, are
    the ones information_schema.COLUMNS states (FULL and MINIMAL metadata both carry them, but
    MariaDB's MINIMAL has no ENUM/SET charsets: their values are then numbers anyway)."""
    wrong = []
    for table in TABLE_NAMES:
        run = server_runs[config][table]
        if not run.changes:
            continue  # reported by test_values_match_select
        for c, dc in zip(run.columns, run.changes[0].columns):
            if c.data_type in ("enum", "set") and run.metadata == "MINIMAL":
                want = dc.charset  # MariaDB writes ENUM/SET charsets with FULL metadata only
            elif c.charset is not None:
                want = c.charset
            elif c.data_type in BINARY_STRING_TYPES:
                want = "binary"
            else:
                want = dc.charset  # no charset to check (numbers, temporals, spatial, INET6, UUID)
            if dc.charset != want:
                wrong.append(f"{table}.{c.name} ({c.column_type}): charset {dc.charset!r}, "
                             f"expected {want!r}")
            if c.data_type in NUMERIC_TYPES and dc.unsigned != ("unsigned" in c.column_type):
                wrong.append(f"{table}.{c.name} ({c.column_type}): unsigned {dc.unsigned!r}")
    assert not wrong, "\n".join(wrong)


def _one(server_runs, config, table, row_id):
    run = _decoded(server_runs, config, table)
    idcol = _key(run, run.columns[0])
    for ch in run.changes:
        if ch.op == "c" and ch.after.get(idcol) == row_id:
            return ch.after
    raise AssertionError(f"no insert of {table} id={row_id}")


def test_values_other_decoders_get_wrong(server_runs):
    """Named here because python-mysql-replication gets them wrong: a negative TIME with a
    fraction, YEAR 0000, an empty BLOB (b'' not ''), a zero date, an empty SET (not None)."""
    row = _one(server_runs, "full", "temporal", 4)
    assert row["t1"] == dt.timedelta(seconds=-1.5) and row["t6"] == dt.timedelta(seconds=-1.5)
    assert _one(server_runs, "full", "temporal", 6)["t6"] == dt.timedelta(microseconds=-1)
    zero = _one(server_runs, "full", "temporal", 1)
    assert zero["y"] == 0 and zero["d"] == "0000-00-00"
    assert zero["dt3"] == "0000-00-00 00:00:00.000" and zero["ts0"] == "0000-00-00 00:00:00"
    empty = _one(server_runs, "full", "strs", 1)
    assert empty["tbl"] == b"" and empty["bl"] == b"" and empty["lbl"] == b"" and empty["tx"] == ""
    sets = _one(server_runs, "full", "enums", 1)
    assert sets["s"] == frozenset() and sets["s64"] == frozenset()
    assert _one(server_runs, "full", "enums", 3)["e"] == ""
    msets = _one(server_runs, "minimal_metadata", "enums", 1)
    assert msets["@6"] == 0 and msets["@8"] == 0
    assert _one(server_runs, "minimal_metadata", "temporal", 1)["@2"] == 0


def test_runs_fast_enough(server_runs):
    """The server, three workloads and their decoding stay well inside the CI budget."""
    assert server_runs["_seconds"] < 120, server_runs["_seconds"]


@pytest.mark.parametrize("table", TABLE_NAMES)
def test_dump_jsonl_matches_select(server_runs, table):
    """`dump --format jsonl` of the FULL-metadata run: every inserted row's `after` is the SELECT
    snapshot in the documented JSON forms (binlog_grammar.output.dump.json_value)."""
    from binlog_grammar.output.dump import json_value

    run = _decoded(server_runs, "full", table)
    inserts = [r for r in run.jsonl if isinstance(r, dict) and r["op"] == "c"]
    assert inserts and len(inserts) == len([c for c in run.changes if c.op == "c"]), run.jsonl[:1]
    compared = 0
    for rec in inserts:
        rid = rec["after"]["id"]
        if rid not in run.first:
            continue
        want = {c.name: json_value(expected_value(c, run.first[rid][c.name], True))
                for c in run.columns}
        assert rec["after"] == want, (table, rid)
        assert rec["source"]["db"] == run.db and rec["source"]["table"] == run.table
        compared += 1
    assert compared > 0
