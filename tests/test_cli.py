"""The verify command: report keys, exit status, and no traceback for bad input."""
import json
import subprocess
import sys

from conftest import CORPUS, ROOT, needs_corpus


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
    from binlog_grammar.events import decompress
    from binlog_grammar.reader import BinlogFile

    found = 0
    for path in SAMPLES:
        for ev in BinlogFile(path):
            for dec in ev.type.decode if ev.type else ():
                if "COMPRESSED" in ev.name:
                    rows = decompress(dec.codec, ev.data[dec.field])
                    assert len(rows) > 0
                    found += 1
    assert found >= 2
