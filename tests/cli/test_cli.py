"""The verify command: report keys, exit status, and no traceback for bad input."""
import json
import subprocess
import sys

import pytest

from helpers.paths import CORPUS, ROOT, needs_corpus


def run(*args):
    return subprocess.run([sys.executable, "-m", "binlog_grammar", *args], capture_output=True,
                          text=True)


@needs_corpus
def test_verify_json_reports_every_file():
    good = CORPUS / "json.binlog.000001"
    bad = CORPUS / "binlog_truncated_prev_gtid_event.000001"
    r = run("verify", "--json", str(good), str(bad))
    assert r.returncode == 1
    rows = [json.loads(line) for line in r.stdout.splitlines()]
    assert [row["file"] for row in rows] == [str(good), str(bad)]
    for row in rows:
        assert {"file", "events", "byte_identical", "checksum_failures", "errors"} <= set(row)
    assert rows[0]["errors"] == [] and rows[0]["byte_identical"] == rows[0]["events"] == 36
    assert rows[1]["errors"][0]["offset"] == 120
    assert rows[1]["errors"][0]["event_type"] == "PREVIOUS_GTIDS_LOG_EVENT"


@needs_corpus
def test_verify_exit_zero_when_all_good():
    r = run("verify", str(CORPUS / "json.binlog.000001"))
    assert r.returncode == 0 and "36 rebuilt byte-identical" in r.stdout


def test_missing_file_directory_and_garbage_are_clean_errors(tmp_path):
    garbage = tmp_path / "garbage.bin"
    garbage.write_bytes(b"not a binlog at all")
    for target in (tmp_path / "missing.000001", tmp_path, garbage):
        r = run("verify", str(target))
        assert r.returncode == 1
        assert "Traceback" not in r.stdout + r.stderr
        assert str(target) in r.stdout


SAMPLES = sorted((ROOT / "samples").glob("mariadb-*"))


def test_shipped_samples_verify(tmp_path):
    """The project's own binlogs (written by MariaDB 10.11 with tools/make_samples.py), so the
    suite means something without ../shared."""
    assert SAMPLES, "samples/ is missing"
    r = run("verify", "--json", *map(str, SAMPLES))
    rows = [json.loads(line) for line in r.stdout.splitlines()]
    assert r.returncode == 0, rows
    for row in rows:
        assert row["events"] >= 5 and row["byte_identical"] == row["events"]
        assert row["checksums_verified"] == row["events"]


def test_mariadb_compressed_rows_decompress():
    from binlog_grammar.binlog.events import decompress
    from binlog_grammar.binlog.reader import BinlogFile

    found = 0
    for path in SAMPLES:
        for ev in BinlogFile(path):
            for dec in ev.type.decode if ev.type else ():
                if "COMPRESSED" in ev.name:
                    rows = decompress(dec.codec, ev.data[dec.field])
                    assert len(rows) > 0
                    found += 1
    assert found >= 2


# ---------------------------------------------------------------------------------------------
# options that contradict each other or make no sense: refused as argparse refuses a bad type

def main_in_process(*argv):
    """cli.main in this process: (exit status, stdout, stderr)."""
    import contextlib
    import io

    from binlog_grammar import cli

    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        try:
            code = cli.main(list(argv))
        except SystemExit as e:
            code = e.code
    return code, out.getvalue(), err.getvalue()


SAMPLE = str(ROOT / "samples" / "mariadb-10.11-sample.000001")
UUID = "3E11FA47-71CA-11E1-9E33-C80AA9429562"
REFUSED = [
    (["dump", "--format", "text", "--start-position", "500", "--stop-position", "100", SAMPLE], "dump",
     "--stop-position 100 is not after --start-position 500"),
    (["sql", "--start-position", "500", "--stop-position", "500", SAMPLE], "sql",
     "--stop-position 500 is not after --start-position 500"),
    (["stats", "--start-datetime", "2030-01-01", "--stop-datetime", "2020-01-01 12:00", SAMPLE],
     "stats", "--stop-datetime 2020-01-01 12:00 (2020-01-01 12:00:00+00:00) is not after "
              "--start-datetime 2030-01-01"),
    (["dump", "--format", "text", "--start-position", "-5", SAMPLE], "dump", "argument --start-position: a position "
                                                        "is 0 or more, not -5"),
    (["flashback", "--stop-position", "-1", SAMPLE], "flashback", "argument --stop-position"),
    (["dump", "--format", "text", "--include-gtids", f"{UUID}:5-1", SAMPLE], "dump", "the interval 5-1 of"),
    (["dump", "--format", "text", "--exclude-gtids", f"{UUID}:1-3:9-7", SAMPLE], "dump", "the interval 9-7 of"),
    (["dump", "--format", "text", "--include-gtids", f"{UUID}:0-3", SAMPLE], "dump", "from 1, not 0"),
    (["dump", "--format", "text", "--include-gtids", "0-1-5-1", SAMPLE], "dump", "the interval 5-1 of 0-1"),
    (["stats", "--top", "-1", SAMPLE], "stats", "argument --top: a number of transactions is 0 "
                                                "or more, not -1"),
    (["dump", "--format", "text", "--rows-only", SAMPLE], "dump", "--rows-only applies to --format jsonl"),
    (["dump", "--hexdump", "--format", "jsonl", SAMPLE], "dump", "--hexdump (-H) is mysqlbinlog's"),
    (["stream", "--pos", "-1"], "stream", "argument --pos: a binlog position is from 4"),
    (["stream", "--pos", "3"], "stream", "argument --pos"),
    (["stream", "--server-id", "0"], "stream", "argument --server-id: a server id is from 1 to "
                                               "4294967295, not 0"),
    (["stream", "--server-id", str(1 << 32)], "stream", "argument --server-id"),
    (["stream", "--port", "0"], "stream", "argument --port"),
    (["stream", "--port", "65536"], "stream", "argument --port"),
    (["stream", "--gtid", f"{UUID}:7-3"], "stream", "the interval 7-3 of"),
    (["stream", "--gtid", "0-1-x"], "stream", "argument --gtid"),
    (["stream", "--gtid", "0-1-5", "--file", "mariadb-bin.000001"], "stream",
     "either --file (and --pos) or --gtid"),
    (["stream", "--gtid", "0-1-5", "--pos", "100"], "stream", "--pos is a position in --file"),
    (["stream", "--heartbeat", "0"], "stream", "argument --heartbeat"),
    (["stream", "--read-timeout", "-3"], "stream", "argument --read-timeout"),
    (["stream", "--connect-timeout", "nan"], "stream", "argument --connect-timeout"),
    (["stream", "--reconnect-timeout", "-1"], "stream", "argument --reconnect-timeout"),
    (["stream", "--rows-only"], "stream", "--rows-only applies to --format jsonl"),
    (["pipeline", "--input", SAMPLE, "--output", "/nonexistent/out", "--split-bytes", "-1"],
     "pipeline", "argument --split-bytes"),
]


@pytest.mark.parametrize("argv, command, message", REFUSED,
                         ids=[" ".join(a[:3]) for a, _c, _m in REFUSED])
def test_contradictory_or_senseless_options_are_refused(argv, command, message):
    """Each of these ran silently with exit 0 (or failed later with a traceback): now the
    command refuses it before reading anything, in argparse's own format: the usage, then one
    line `binlog-grammar COMMAND: error: ...`, exit 2."""
    code, out, err = main_in_process(*argv)
    assert code == 2, (code, out, err)
    assert out == ""
    lines = err.splitlines()
    assert lines[0].startswith(f"usage: binlog-grammar {command}")
    assert lines[-1].startswith(f"binlog-grammar {command}: error: "), lines[-1]
    assert message in lines[-1], lines[-1]
    assert "Traceback" not in err


@pytest.mark.parametrize("argv", [
    ["dump", "--format", "text", "--start-position", "100", "--stop-position", "5000", SAMPLE],
    ["dump", "--format", "text", "--start-position", "5000", "--stop-position", "100", SAMPLE,  # two files: the stop
     str(ROOT / "samples" / "mariadb-10.11-sample.000002")],            # is in the second
    ["dump", "--format", "text", "--start-position", "0", SAMPLE],
    ["stats", "--top", "0", SAMPLE],
    ["dump", "--format", "text", "--include-gtids", "0-1-3-3,0-1-5", "--format", "jsonl", "--rows-only", SAMPLE],
    ["dump", "--format", "text", "--start-datetime", "2020-01-01", "--stop-datetime", "2020-01-01 00:00:01", SAMPLE],
])
def test_sensible_options_still_run(argv):
    code, _out, err = main_in_process(*argv)
    assert code == 0, err


def test_schema_that_is_not_a_schema_file_is_one_line(tmp_path):
    """--schema README.md printed a yaml ParserError traceback: now one line naming the file and
    the line of the parse error, exit 2; a file that parses but is no schema mapping, a missing
    file and a folder are refused the same way."""
    readme = str(ROOT / "README.md")
    code, _out, err = main_in_process("dump", "--format", "text", "--schema", readme, SAMPLE)
    assert code == 2 and "Traceback" not in err and "ParserError" not in err
    last = err.splitlines()[-1]
    assert last.startswith(f"binlog-grammar dump: error: argument --schema: {readme}:13: "), last
    not_schema = tmp_path / "list.yaml"
    not_schema.write_text("- a\n- b\n")
    bad_table = tmp_path / "bad.json"
    bad_table.write_text('{"shop.orders": ["id", "note"]}')
    bad_json = tmp_path / "broken.json"
    bad_json.write_text('{"shop.orders": {"columns": [\n  "id",\n  }\n')
    for path, what in ((not_schema, "not a schema file"), (bad_table, "shop.orders"),
                       (bad_json, f"{bad_json}:3: "), (tmp_path / "missing.yaml", "No such file"),
                       (tmp_path, str(tmp_path))):
        for argv in (["stats", "--schema", str(path), SAMPLE], ["stream", "--schema", str(path)]):
            code, _out, err = main_in_process(*argv)
            assert code == 2 and "Traceback" not in err, (path, err)
            last = err.splitlines()[-1]
            assert "error: argument --schema: " in last and what in last, (path, last)
            assert str(path) in last
    good = tmp_path / "schema.yaml"
    good.write_text("shop.orders:\n  columns: [id, {name: note, charset: utf8mb4}]\n"
                    "  primary_key: [id]\n")
    assert main_in_process("dump", "--format", "text", "--schema", str(good), SAMPLE)[0] == 0


def test_specs_folder_that_is_missing_or_a_file_is_refused(tmp_path):
    """--specs naming a missing folder or a regular file was silently ignored (and `generate
    --specs` of a missing folder wrote an empty grammar): now one line naming it, exit 2."""
    empty = tmp_path / "empty"
    empty.mkdir()
    readme = str(ROOT / "README.md")
    for argv, command in (
            (["--specs", str(tmp_path / "missing"), "dump", SAMPLE], ""),
            (["--specs", readme, "verify", SAMPLE], ""),
            (["--specs", str(empty), "stats", SAMPLE], ""),
            (["generate", "--specs", str(tmp_path / "missing"), "--output", str(tmp_path / "o")],
             " generate"),
            (["generate", "--extra-specs", readme, "--output", str(tmp_path / "o")], " generate"),
            (["docs", "--specs", readme, "--output", str(tmp_path / "o")], " docs")):
        code, out, err = main_in_process(*argv)
        assert code == 2 and out == "" and "Traceback" not in err, (argv, err)
        last = err.splitlines()[-1]
        assert last.startswith(f"binlog-grammar{command}: error: argument --"), last
        assert argv[argv.index(next(a for a in argv if a.endswith("specs"))) + 1] in last
    assert not (tmp_path / "o").exists()


def test_spec_file_parse_error_names_file_and_line(tmp_path):
    (tmp_path / "x.yaml").write_text("event: FOO\ncode: [\n")
    code, _out, err = main_in_process("--specs", str(tmp_path), "verify", SAMPLE)
    assert code == 2 and "Traceback" not in err
    assert f"{tmp_path / 'x.yaml'}:3: not valid YAML" in err.strip().splitlines()[-1]
