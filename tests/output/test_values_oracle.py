"""Row values agree, value by value, with an independent decoder: `mariadb-binlog -vv`.

For every binlog of ../shared/corpus/mysql (real MySQL 5.0 to 8.0 files) and of samples/ (MariaDB
10.11), the row changes rows.py decodes are compared with the ones mariadb-binlog prints
(tests/helpers/oracle.py), change by change: the same number of changes, in the same order, with
the same op, database and table; each image with the same columns; and for each column
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

from binlog_grammar.errors import BinlogError
from binlog_grammar.binlog.rows import TYPE, iter_row_changes
from binlog_grammar.output.text import vv_type, vv_value

from helpers import oracle
from helpers.oracle import WORKLOAD_TYPES
from helpers.paths import CORPUS, ROOT, corpus_files
from helpers.services import need_mariadb_binlog

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
