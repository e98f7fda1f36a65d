"""Row values agree, value by value, with an independent decoder: `mariadb-binlog -vv`.

For every binlog of ../shared/corpus/mysql (real MySQL 5.0 to 8.0 files) and of samples/ (MariaDB
10.11), the row changes rows.py decodes are compared with the ones mariadb-binlog prints
(tests/oracle.py), change by change: the same number of changes, in the same order, with the same
op, database and table; each image with the same columns; and for each column
`textfmt.vv_value(our value) == the text mariadb-binlog prints` and `textfmt.vv_type(column) == its
type comment`. Every mismatch of a file is reported with the file, the rows event's offset, the
column, what mariadb-binlog printed and what we made.

The corpus and samples hold few column types, so test_every_column_type_agrees_with_mariadb_binlog
also has a throwaway MariaDB (binlog_grammar.testing.mariadb) write every type it has at its edges, with
full and with minimal row metadata, and compares those binlogs the same way (skipped without
mariadbd unless BINLOG_GRAMMAR_REQUIRE_SERVICES=1).

What mariadb-binlog cannot print is left out, and only that (ORACLE_GAPS says why, file by file,
and test_oracle_gaps checks each gap is still there and reports it as a skip):
- it stops at the first rows event of a table with a MySQL JSON column (type 245), printing
  nothing for that statement or after it;
- it stops at a MySQL 8 TRANSACTION_PAYLOAD_EVENT (compressed transaction);
- it stops at an event it finds invalid: the files damaged on purpose (MANIFEST.md), where the
  changes before the damage are compared, and the events of the 5.1 development trees, whose
  rows our reader cannot size either (their TABLE_MAPs carry no column metadata).
A change mariadb-binlog leaves out for any other reason fails the test. Collations do not matter
here: mariadb-binlog prints a string's stored bytes whatever its charset (its "Character set '#255'
is not a compiled character set" warning concerns statements, not row values), and so does
vv_value.
"""

from dataclasses import dataclass

import pytest

import oracle
from binlog_grammar.errors import BinlogError
from binlog_grammar.binlog.rows import TYPE, iter_row_changes
from binlog_grammar.output.text import vv_type, vv_value

from conftest import CORPUS, ROOT, corpus_files, need_mariadb, need_mariadb_binlog

SAMPLES = sorted(p for p in (ROOT / "samples").iterdir() if p.is_file())
FILES = [*corpus_files(), *SAMPLES]

# Files where mariadb-binlog prints fewer changes than the binlog holds: why, and the evidence
# that this is the cause (test_oracle_gaps checks it is still there and reports the gap as a skip).
def _stopped_at_json_table(run, left_out):
    """It stopped at the first rows event of a table with a MySQL JSON column."""
    return any(c.type == TYPE["JSON"] for c in left_out[0].columns)


def _stopped_at_payload(run, left_out):
    """It stopped, saying why, at the TRANSACTION_PAYLOAD_EVENT our change came from."""
    return ("TRANSACTION_PAYLOAD_EVENT" in run.stderr and run.stopped_at == left_out[0].pos
            and left_out[0].pos == left_out[-1].pos)


ORACLE_GAPS = {
    "json.binlog.000001": (
        "mariadb-binlog cannot print MySQL's binary JSON column type (245): it stops at the first "
        "rows event of mysql.t (id INT, json_col JSON and two generated columns) and prints none "
        "of the file's rows, its PARTIAL_UPDATE_ROWS_EVENT included", _stopped_at_json_table),
    "transaction_compression.000001": (
        "mariadb-binlog cannot read MySQL 8's TRANSACTION_PAYLOAD_EVENT, the compressed "
        "transaction holding this file's only rows event", _stopped_at_payload),
}
# Files our reader stops in, with mariadb-binlog stopping at or before the same point: the
# changes before it are compared. Damaged on purpose (../shared/corpus/MANIFEST.md; bug #40482's
# INCIDENT_EVENT carries incident number 66, which both servers refuse, see test_corpus.py):
DAMAGED = {"binlog_truncated_event.000001", "binlog_truncated_prev_gtid_event.000001",
           "bug40482-bin.000001", "corrupt-relay-bin.000624"}
# Written by a 5.1 development tree whose TABLE_MAPs carry no column metadata, so the row values
# cannot be sized (test_corpus_rows.py); mariadb-binlog prints no rows of it either.
NO_METADATA = {"ver_5_1-wl2325_r.001"}
# Column types whose printed text cannot be made from the decoded value: MariaDB's compressed
# columns print as their stored, compressed bytes; rows.py gives the inflated value.
UNCOMPARABLE_TYPES = {TYPE["VARCHAR_COMPRESSED"]: "mariadb-binlog prints the compressed bytes",
                      TYPE["BLOB_COMPRESSED"]: "mariadb-binlog prints the compressed bytes"}


def _need_tool():
    need_mariadb_binlog()


def _ours(path):
    """Our changes of one file, and the error that stopped the reader (None when it read all)."""
    changes = []
    try:
        for ch in iter_row_changes(path):
            changes.append(ch)
    except BinlogError as e:
        return changes, e
    return changes, None


def _covered(ours, run):
    """Split our changes into those mariadb-binlog printed and those it did not reach.

    When it read the whole file it printed them all; when it stopped, it printed the groups it
    flushed, so our changes up to its last group's offset are expected and the rest are not."""
    if run.stopped_at is None:
        return ours, []
    last = run.last_flush
    n = sum(1 for ch in ours if last is not None and ch.pos <= last)
    return ours[:n], ours[n:]


def _image_problems(where, ours, theirs, columns, types):
    """Mismatches between one of our images (name -> value) and the oracle's (number -> text);
    adds the type comment of each value compared to `types`."""
    by_name = {c.name: c for c in columns}
    ours_by_number = {by_name[n].index + 1: (by_name[n], value) for n, value in ours.items()}
    problems = []
    if set(ours_by_number) != set(theirs):
        problems.append(f"{where}: columns present differ: mariadb-binlog @{sorted(theirs)}, "
                        f"ours @{sorted(ours_by_number)}")
    compared = 0
    for number in sorted(set(ours_by_number) & set(theirs)):
        col, value = ours_by_number[number]
        text, comment = theirs[number]
        label = f"{where} column @{number}" + (f" ({col.name})" if col.name != f"@{number}" else "")
        got_type = vv_type(col, value is None)
        if got_type != comment:
            problems.append(f"{label}: type comment expected {comment!r}, got {got_type!r}")
        if col.type in UNCOMPARABLE_TYPES and value is not None:
            continue  # the type comment is compared, the value cannot be (UNCOMPARABLE_TYPES)
        try:
            got = vv_value(value, col)
        except Exception as e:  # noqa: BLE001 - report any formatting failure as a mismatch
            got = f"<{type(e).__name__}: {e}>"
        if got != text:
            problems.append(f"{label} {col.type_name}: expected {text!r}, got {got!r} "
                            f"(decoded value {value!r})")
        types.add(comment.split(" meta=")[0])
        compared += 1
    return problems, compared


@dataclass
class Comparison:
    problems: list  # every mismatch, as text
    changes: int  # changes compared
    values: int  # values compared
    types: set  # the type names (as mariadb-binlog prints them) of the values compared
    left_out: list  # our changes mariadb-binlog did not print (it stopped before them)
    run: oracle.OracleRun


def compare(path) -> Comparison:
    """Compare our changes of one file with mariadb-binlog's."""
    run = oracle.run(path)
    ours, err = _ours(path)
    problems = [f"mariadb-binlog line {n}: {why}: {line!r}" for n, line, why in run.problems]
    if err is not None and path.name not in DAMAGED | NO_METADATA:
        problems.append(f"our reader stopped: {err}")
    covered, left_out = _covered(ours, run)
    if len(covered) != len(run.changes):
        problems.append(f"{len(run.changes)} changes printed by mariadb-binlog, {len(covered)} "
                        f"decoded by us before the point where it stopped ({run.stopped_at})")
    values = 0
    types = set()
    previous_group = None
    for i, (ch, oc) in enumerate(zip(covered, run.changes)):
        where = f"{path.name} change {i} (rows event at {ch.pos}, mariadb-binlog line {oc.line})"
        if (ch.op, ch.db, ch.table) != (oc.op, oc.db, oc.table):
            problems.append(f"{where}: expected {oc.op} {oc.db}.{oc.table}, got {ch.op} "
                            f"{ch.db}.{ch.table}")
            continue
        if oc.at is not None and not (ch.pos <= oc.at and (previous_group is None
                                                           or ch.pos > previous_group)):
            problems.append(f"{where}: mariadb-binlog printed it with the event at {oc.at}, after "
                            f"the group at {previous_group}")
        if i + 1 < len(run.changes) and run.changes[i + 1].at != oc.at:
            previous_group = oc.at
        for side in ("before", "after"):
            mine, theirs = getattr(ch, side), getattr(oc, side)
            if (mine is None) != (theirs is None):
                problems.append(f"{where}: {side} image: mariadb-binlog "
                                f"{'has none' if theirs is None else 'has one'}, ours "
                                f"{'has none' if mine is None else 'has one'}")
                continue
            if mine is None:
                continue
            p, n = _image_problems(f"{where} {side}", mine, theirs, ch.columns, types)
            problems += p
            values += n
    return Comparison(problems, len(covered), values, types, left_out, run)


@pytest.mark.server
@pytest.mark.parametrize("path", FILES, ids=lambda p: p.name)
def test_values_agree_with_mariadb_binlog(path):
    _need_tool()
    _assert_agree(path, compare(path))


def _assert_agree(path, c: Comparison):
    problems = list(c.problems)
    known = path.name in DAMAGED | NO_METADATA or (path.name in ORACLE_GAPS
                                                   and ORACLE_GAPS[path.name][1](c.run, c.left_out))
    if c.left_out and not known:
        problems.append(f"mariadb-binlog stopped at {c.run.stopped_at} and printed none of our "
                        f"{len(c.left_out)} changes from offset {c.left_out[0].pos} on, for no "
                        f"known reason (stderr: {c.run.stderr.strip()[-300:]!r})")
    assert not problems, f"{path.name}: {len(problems)} mismatches:\n" + "\n".join(problems[:200])


@pytest.mark.server
@pytest.mark.parametrize("name", sorted(ORACLE_GAPS))
def test_oracle_gaps(name):
    """The changes mariadb-binlog cannot print are still out of its reach, and only those."""
    _need_tool()
    path = CORPUS / name
    if not path.is_file():
        pytest.skip("../shared/corpus is absent")
    reason, evidence = ORACLE_GAPS[name]
    c = compare(path)
    assert not c.problems, "\n".join(c.problems)
    assert c.run.stopped_at is not None, f"mariadb-binlog now reads all of {name}: compare it"
    assert c.left_out, f"mariadb-binlog now prints every change of {name}"
    assert evidence(c.run, c.left_out), f"{name}: mariadb-binlog stops for another reason: " \
                                        f"{c.run.stderr}"
    pytest.skip(f"{len(c.left_out)} changes from offset {c.left_out[0].pos} not compared: {reason}")


# Every column type MariaDB writes, at its edges, so that the rules of textfmt are checked against
# mariadb-binlog for types the corpus and samples lack (FLOAT, BIT, TIME, YEAR, multi-byte ENUM
# and SET, control bytes and quotes in strings, GEOMETRY, the pre-5.6 temporal formats).
TYPES_WORKLOAD = r"""
SET time_zone = '+00:00';
SET sql_mode = '';
CREATE TABLE ints (a TINYINT, b TINYINT UNSIGNED, c SMALLINT, d SMALLINT UNSIGNED, e MEDIUMINT,
  f MEDIUMINT UNSIGNED, g INT, h INT UNSIGNED, i BIGINT, j BIGINT UNSIGNED);
INSERT INTO ints VALUES (-128, 255, -32768, 65535, -8388608, 16777215, -2147483648, 4294967295,
  -9223372036854775808, 18446744073709551615), (127, 0, 32767, 0, 8388607, 0, 2147483647, 0,
  9223372036854775807, 0), (-1, 128, -1, 32768, -1, 8388608, -1, 2147483648, -1, 9223372036854775808);
CREATE TABLE nums (f FLOAT, d DOUBLE, f2 FLOAT, d2 DOUBLE, a DECIMAL(10,2), b DECIMAL(65,30),
  c DECIMAL(5,0), e DECIMAL(4,4), u DECIMAL(18,9) UNSIGNED);
INSERT INTO nums VALUES (1.5, 0.1, -3.4e38, 1e-300, -12345678.99,
  -12345678901234567890123456789012345.123456789012345678901234567890, -99999, -0.9999, 999999999.999999999),
  (0, -0, 123456789, 123456789012345678, 0, 0, 0, 0, 0),
  (0.1, 2.5e-5, 1e-40, 1.7976931348623157e308, 0.01, 0.000000000000000000000000000001, 1, 0.0001, 0.000000001),
  (-1.17549e-38, 3.141592653589793, 100000, 1e16, -0.01, -1, -1, -0.0001, 1);
CREATE TABLE temporal (y YEAR, d DATE, dt DATETIME, dt3 DATETIME(3), dt6 DATETIME(6), ts TIMESTAMP NULL,
  ts1 TIMESTAMP(1) NULL, ts6 TIMESTAMP(6) NULL, t TIME, t2 TIME(2), t6 TIME(6), t5 TIME(5));
INSERT INTO temporal VALUES (2024, '2024-02-29', '2024-02-29 23:59:59', '1000-01-01 00:00:00.999',
  '9999-12-31 23:59:59.999999', '1970-01-01 00:00:01', '2038-01-19 03:14:07.9',
  '2001-09-09 01:46:40.000001', '-838:59:59', '-00:00:00.01', '838:59:59.999999', '-12:34:56.78901'),
  (0, '0000-00-00', '0000-00-00 00:00:00', '0000-00-00 00:00:00.000', '2024-00-00 00:00:00',
  '0000-00-00 00:00:00', '0000-00-00 00:00:00.0', NULL, '00:00:00', '00:00:00.5', '-00:00:01.000001',
  '100:00:00.00001'),
  (1901, '2024-13-01', '2024-02-30 10:00:00', NULL, '0001-01-01 00:00:00.1', NULL, NULL, NULL,
  '-01:00:00', NULL, '-838:59:59.000000', NULL);
SET GLOBAL mysql56_temporal_format = OFF;
CREATE TABLE old_temporal (dt DATETIME, t TIME, ts TIMESTAMP NULL);
SET GLOBAL mysql56_temporal_format = ON;
INSERT INTO old_temporal VALUES ('2024-02-29 23:59:59', '-838:59:59', '2038-01-19 03:14:07'),
  ('0000-00-00 00:00:00', '00:00:00', '0000-00-00 00:00:00'), ('2024-00-15 01:02:03', '-00:00:01', NULL);
CREATE TABLE bits (a BIT(1), b BIT(7), c BIT(8), d BIT(10), e BIT(64), f BIT(17));
INSERT INTO bits VALUES (b'1', b'1010101', b'11111111', b'1000000001', 0xFFFFFFFFFFFFFFFF,
  b'10000000000000001'), (b'0', 0, 0, 0, 0, 0), (b'1', 1, 1, 1, 1, 1);
CREATE TABLE enum_set (e ENUM('a','b','c'), s SET('a','b','c','d','e','f','g','h','i','j'),
  s3 SET('x','y','z','w','v','u','t','s','r','q','p','o','n','m','l','k','j'));
INSERT INTO enum_set VALUES ('c', 'a,j', 'x,j'), ('', '', ''), (NULL, 'b,c,d,e,f,g,h,i', 'q,p,o');
CREATE TABLE strs (c CHAR(10) CHARACTER SET latin1, vc VARCHAR(300) CHARACTER SET utf8mb4,
  b BINARY(5), vb VARBINARY(10), bl BLOB, tx TINYTEXT CHARACTER SET latin1, mt MEDIUMTEXT,
  lb LONGBLOB, c2 CHAR(100) CHARACTER SET utf8mb4, c3 CHAR(255) CHARACTER SET utf8mb3);
INSERT INTO strs VALUES ('it''s', 'back\\slash \'q\' "dq"', 'ab', 0x00FF0A0D, 0x000102031F207F80FF,
  'café', 'tab\there\nnew\rline', REPEAT('z', 70000), 'ünï 😀 ', 'trailing   '),
  ('', '', '', '', '', '', '', '', '', ''),
  ('é€', 'a/* b */c', 0x6162000000, 0x00, 0x27, CONCAT('x', CHAR(0), 'y'), '\\', 0x5C27, 'x', 'y'),
  (' lead', REPEAT('ä', 300), 0x0000000001, 0x0A, 0x0d0a, CHAR(0x80, 0x81, 0x9F, 0xFF), NULL, NULL,
  NULL, NULL);
CREATE TABLE geo (g GEOMETRY, p POINT);
INSERT INTO geo VALUES (ST_GeomFromText('LINESTRING(0 0, 1 1)'), ST_GeomFromText('POINT(1 2)', 4326)),
  (NULL, ST_GeomFromText('POINT(-1.5 1e300)'));
UPDATE ints SET a = a + 1 WHERE a < 0;
UPDATE strs SET vc = CONCAT(vc, '!') WHERE c = 'it''s';
DELETE FROM strs WHERE c = '';
""" + (  # an ENUM stored in two bytes and a SET in eight
    "CREATE TABLE wide (e ENUM(" + ", ".join(f"'v{i}'" for i in range(300)) + "), s SET("
    + ", ".join(f"'m{i}'" for i in range(64)) + "));\n"
    "INSERT INTO wide VALUES ('v0', 'm0,m63'), ('v299', ''), ('v255', 'm8,m9,m31,m32');\n")
# What mariadb-binlog calls the types TYPES_WORKLOAD writes: each must be compared at least once.
WORKLOAD_TYPES = {
    "TINYINT", "SHORTINT", "MEDIUMINT", "INT", "LONGINT", "FLOAT", "DOUBLE", "DECIMAL(10,2)",
    "DECIMAL(65,30)", "DECIMAL(5,0)", "DECIMAL(4,4)", "DECIMAL(18,9)", "YEAR", "DATE", "DATETIME",
    "DATETIME(0)", "DATETIME(3)", "DATETIME(6)", "TIMESTAMP", "TIMESTAMP(0)", "TIMESTAMP(1)",
    "TIMESTAMP(6)", "TIME", "TIME(0)", "TIME(2)", "TIME(5)", "TIME(6)", "BIT(1)", "BIT(7)",
    "BIT(8)", "BIT(10)", "BIT(64)", "BIT(17)", "ENUM(1 byte)", "ENUM(2 bytes)", "SET(2 bytes)",
    "SET(3 bytes)", "SET(8 bytes)",
    "STRING(10)", "STRING(5)", "STRING(400)", "STRING(765)", "VARSTRING(1200)", "VARSTRING(10)",
    "BLOB/TEXT", "TINYBLOB/TINYTEXT", "MEDIUMBLOB/MEDIUMTEXT", "LONGBLOB/LONGTEXT", "GEOMETRY",
}


@pytest.fixture(scope="module")
def server_binlogs(tmp_path_factory):
    """TYPES_WORKLOAD written by a throwaway MariaDB twice: with FULL row metadata (names, ENUM and
    SET members) and with MINIMAL metadata and MINIMAL row images."""
    _need_tool()
    from binlog_grammar.testing import mariadb

    need_mariadb()
    out = tmp_path_factory.mktemp("oracle-binlogs")
    with mariadb.MariaDB(["--default-time-zone=+00:00"]) as db:
        for name, metadata, image in (("full", "FULL", "FULL"), ("minimal", "MINIMAL", "MINIMAL")):
            db.sql(f"SET GLOBAL binlog_row_metadata = {metadata}; "
                   f"SET GLOBAL binlog_row_image = {image};")
            db.sql(f"CREATE DATABASE {name};")
            db.sql(TYPES_WORKLOAD, database=name)
        db.sql("FLUSH BINARY LOGS;")
        paths = []
        for p in db.binlogs():
            paths.append(out / p.name)
            paths[-1].write_bytes(p.read_bytes())
    return paths


@pytest.mark.server
def test_every_column_type_agrees_with_mariadb_binlog(server_binlogs):
    types, changes = set(), 0
    for path in server_binlogs:
        c = compare(path)
        _assert_agree(path, c)
        types |= c.types
        changes += c.changes
    assert changes >= 50
    assert WORKLOAD_TYPES <= types, f"never compared: {sorted(WORKLOAD_TYPES - types)}"


def test_oracle_parser_joins_multiline_values():
    """A value spanning lines (not printed by mariadb-binlog 10.x, which escapes control bytes)
    is joined back; names with backquotes are unquoted."""
    out = "\n".join([
        "# at 100",
        "### INSERT INTO `d``b`.`t`",
        "### SET",
        "###   @1='a",
        "b /* c */' /* VARSTRING(10) meta=10 nullable=1 is_null=0 */",
        "###   @2=1.5                  /* FLOAT meta=4 nullable=1 is_null=0 */",
        "# at 200",
    ])
    run = oracle.parse(out)
    assert not run.problems
    (ch,) = run.changes
    assert (ch.op, ch.db, ch.table, ch.at, ch.before) == ("c", "d`b", "t", 100, None)
    assert ch.after == {1: ("'a\nb /* c */'", "VARSTRING(10) meta=10 nullable=1 is_null=0"),
                        2: ("1.5                 ", "FLOAT meta=4 nullable=1 is_null=0")}
    assert run.positions == [100, 200] and run.stopped_at is None
