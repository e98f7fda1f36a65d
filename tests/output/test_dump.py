"""`binlog-grammar dump`, `stats` and the reading options, end to end through the command.

The `###` lines of dump's own text (`--format text`) are compared with what `mariadb-binlog -vv
--base64-output=decode-rows` prints for the same files (tests/helpers/oracle.py parses both): the same changes, in the same
order, with the same values and type comments, on the samples, the corpus files that tool can read,
and binlogs a real MariaDB writes with every column type (the fixture server_binlogs of
tests/output/conftest.py).
"""
import json

import pytest

from binlog_grammar.cli import main

from helpers import oracle
from helpers.paths import CORPUS, ROOT, needs_corpus
from helpers.services import need_mariadb_binlog

SAMPLES = sorted(p for p in (ROOT / "samples").iterdir() if p.is_file())
ORACLE_READS = ["mysql-enum-string-set.000001", "minimal_row_metadata.000001", "bug32407.001",
                "update-full-row.binlog", "write-full-row.binlog", "write-partial-row.binlog",
                "ver_trunk_row_v2.001", "binlog_56_gtid_reserved_word.000001"]


def run(capsysbinary, *argv):
    """Run the command; its output as text (bytes that are not UTF-8 kept as surrogates)."""
    code = main(list(map(str, argv)))
    out = capsysbinary.readouterr()
    return code, out.out.decode("utf-8", "surrogateescape"), out.err.decode("utf-8", "replace")


def _agree(capsysbinary, path):
    need_mariadb_binlog()
    code, out, err = run(capsysbinary, "dump", "--format", "text", path)
    assert code == 0, err
    ours = oracle.parse(out, str(path))
    theirs = oracle.run(path)
    assert not ours.problems, ours.problems[:3]
    assert len(ours.changes) == len(theirs.changes)
    for a, b in zip(ours.changes, theirs.changes):
        assert (a.op, a.db, a.table, a.before, a.after) == (b.op, b.db, b.table, b.before, b.after), \
            (path, b.at)
    return len(ours.changes)


@pytest.mark.server
@pytest.mark.parametrize("path", SAMPLES, ids=lambda p: p.name)
def test_dump_agrees_with_mariadb_binlog_on_samples(capsysbinary, path):
    assert _agree(capsysbinary, path) > 0


@pytest.mark.server
@needs_corpus
@pytest.mark.parametrize("name", ORACLE_READS)
def test_dump_agrees_with_mariadb_binlog_on_corpus(capsysbinary, name):
    assert _agree(capsysbinary, CORPUS / name) > 0


@pytest.mark.server
def test_dump_agrees_with_mariadb_binlog_on_every_type(capsysbinary, server_binlogs):
    assert sum(_agree(capsysbinary, p) for p in server_binlogs) >= 50


def test_jsonl_is_one_object_per_line_with_the_envelope(capsysbinary):
    code, out, _ = run(capsysbinary, "dump", "--format", "jsonl", *SAMPLES)
    assert code == 0
    records = [json.loads(line) for line in out.splitlines()]
    changes = [r for r in records if "op" in r]
    events = [r for r in records if "event" in r]
    assert len(changes) + len(events) == len(records) and changes and events
    for r in changes:
        assert set(r) == {"op", "before", "after", "source", "ts_ms"}
        assert set(r["source"]) == {"file", "pos", "end_log_pos", "server_id", "gtid", "timestamp",
                                    "db", "table", "table_id", "event_type", "tx_seq", "row"}
        assert (r["before"] is None) == (r["op"] == "c") and (r["after"] is None) == (r["op"] == "d")
    ada = next(r["after"] for r in changes if r["after"] and r["after"].get("name") == "Ada")
    assert ada["balance"] == "1200.50" and ada["born"] == "1815-12-10"
    assert ada["seen"] == "2024-03-01T10:00:00.123456" and ada["flags"] == ["a", "c"]
    assert ada["big"] == -9223372036854775808 and ada["small"] == 255


def test_filters_select_tables_positions_and_gtids(capsysbinary):
    def changes(*opts):
        code, out, err = run(capsysbinary, "dump", "--format", "jsonl", "--rows-only", *opts, *SAMPLES)
        assert code == 0, err
        return [json.loads(line) for line in out.splitlines()]

    every = changes()
    assert {(c["source"]["db"], c["source"]["table"]) for c in every} == {
        ("shop", "customers"), ("shop", "orders")}
    only = changes("--table", "shop.orders")
    assert only == [c for c in every if c["source"]["table"] == "orders"]
    assert changes("--exclude-table", "shop.ord*") == [c for c in every
                                                     if c["source"]["table"] != "orders"]
    assert changes("--database", "nope") == []
    gtid = every[0]["source"]["gtid"]
    assert changes("--include-gtids", gtid) == [c for c in every if c["source"]["gtid"] == gtid]
    assert changes("--exclude-gtids", gtid) == [c for c in every if c["source"]["gtid"] != gtid]
    first_file = [c for c in every if c["source"]["file"] == str(SAMPLES[0])]
    cut = first_file[-1]["source"]["pos"]
    # the cut falls inside the first file's last transaction: JSON lines keep or drop whole
    # transactions, by their first event (binlog/window.py), so that one is left out
    assert changes("--start-position", cut) == [c for c in every
                                                if c["source"]["file"] != str(SAMPLES[0])]


def test_index_file_reads_the_files_it_lists(tmp_path, capsysbinary):
    for p in SAMPLES:
        (tmp_path / p.name).write_bytes(p.read_bytes())
    index = tmp_path / "mariadb-bin.index"
    index.write_text("".join(f"./{p.name}\n" for p in SAMPLES))
    _, via_index, _ = run(capsysbinary, "dump", "--format", "jsonl", index)
    _, direct, _ = run(capsysbinary, "dump", "--format", "jsonl", *[tmp_path / p.name for p in SAMPLES])
    assert via_index == direct and via_index


def test_stats_counts_every_event(capsysbinary):
    code, out, _ = run(capsysbinary, "stats", "--json", *SAMPLES)
    assert code == 0
    s = json.loads(out)
    _, dumped, _ = run(capsysbinary, "dump", "--format", "text", *SAMPLES)
    assert sum(v["count"] for v in s["events"].values()) == dumped.count("\n# at ")
    assert s["tables"]["shop.customers"] == {**s["tables"]["shop.customers"], "insert": 4}
    assert s["transactions"]["count"] == sum(s["transactions"]["by_size"].values())


@needs_corpus
def test_damaged_file_prints_everything_before_then_one_line(capsysbinary):
    code, out, err = run(capsysbinary, "dump", "--format", "text", CORPUS / "corrupt-relay-bin.000624")
    assert code == 1
    assert out.count("# at ") > 800 and "# at 91204" not in out
    lines = err.strip().splitlines()
    assert len(lines) == 1 and "91204" in lines[0] and "QUERY_EVENT" in lines[0]
    assert "Traceback" not in err


@pytest.mark.parametrize("bad", ["missing.000001", "DIR"])
def test_missing_file_or_directory_is_one_line(tmp_path, capsysbinary, bad):
    path = tmp_path if bad == "DIR" else tmp_path / bad
    code, out, err = run(capsysbinary, "dump", "--format", "text", path)
    assert code == 1 and "Traceback" not in err and len(err.strip().splitlines()) == 1


def test_bad_option_values_are_usage_errors(capsysbinary):
    with pytest.raises(SystemExit) as e:
        main(["dump", "--format", "text", "--include-gtids", "not-a-gtid", str(SAMPLES[0])])
    assert e.value.code == 2
    assert "not a GTID" in capsysbinary.readouterr().err.decode()


def test_follow_rotate_goes_on_into_the_next_file(tmp_path, capsysbinary):
    # under the names the server gave them: the first file's ROTATE names mariadb-bin.000002
    names = [tmp_path / f"mariadb-bin.00000{i + 1}" for i in range(len(SAMPLES))]
    for p, n in zip(SAMPLES, names):
        n.write_bytes(p.read_bytes())
    _, alone, _ = run(capsysbinary, "dump", "--format", "jsonl", names[0])
    _, followed, _ = run(capsysbinary, "dump", "--format", "jsonl", "--follow-rotate", names[0])
    _, both, _ = run(capsysbinary, "dump", "--format", "jsonl", *names)
    assert followed == both and len(followed) > len(alone)
