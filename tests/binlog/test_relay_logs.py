"""Relay logs read like binlogs, by every reading command and by `verify` (issue 22, item 1).

A MariaDB replica on loopback writes real relay logs (rotated every 4 KiB, the primary's binlog
rotated once, a transaction that stops replication on a conflict): they are copied with their
index and read as a DBA would read them. Each test failed before relay logs were handled:

- `dump` printed relay-file offsets as end_log_pos, where mariadb-binlog prints the primary's
  position from the event header (the one error messages and SHOW SLAVE STATUS name);
- `verify relay-bin.index` said "not a binlog file (magic ...)" of the index;
- `--start-position N` with an index applied to the first listed relay log (often one already
  applied) without a word; FILE:N and the primary's coordinates were not understood;
- positions past the end of a file, or inside an event, were accepted silently.

Skipped when mariadbd is absent, unless BINLOG_GRAMMAR_REQUIRE_SERVICES=1 (then they fail).
"""
from __future__ import annotations

import contextlib
import io
import re
import shutil
import subprocess
from pathlib import Path

import pytest

from helpers.paths import ROOT
from helpers.services import need_mariadb

pytestmark = pytest.mark.server

SAMPLE = str(ROOT / "samples" / "mariadb-10.11-sample.000001")


def run(*argv):
    from binlog_grammar import cli

    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        try:
            code = cli.main([str(a) for a in argv])
        except SystemExit as e:
            code = e.code
    return code, out.getvalue(), err.getvalue()


@pytest.fixture(scope="module")
def relay(tmp_path_factory):
    """Copies of a stopped replica's relay logs and index, and its status."""
    need_mariadb()
    from binlog_grammar.testing.replicas import ReplicaPair

    pair = ReplicaPair(replica_options=["--max-relay-log-size=4096"]).start()
    try:
        pair.configure(gtid=False, metadata="FULL")
        pair.primary.sql("CREATE DATABASE rp_relay; CREATE TABLE rp_relay.t (id INT PRIMARY KEY, "
                         "pad VARCHAR(600)) ENGINE=InnoDB;")
        for i in range(12):
            pair.primary.sql(f"INSERT INTO rp_relay.t VALUES ({i}, REPEAT('x', 500))")
            if i == 5:
                pair.primary.sql("FLUSH BINARY LOGS")
        pair.wait_caught_up()
        pair.replica.sql("SET sql_log_bin=0; DELETE FROM rp_relay.t WHERE id=7")
        pair.primary.sql("BEGIN; UPDATE rp_relay.t SET pad='y' WHERE id IN (6, 7); "
                         "INSERT INTO rp_relay.t VALUES (20, 'z'); COMMIT;")
        for i in range(21, 25):
            pair.primary.sql(f"INSERT INTO rp_relay.t VALUES ({i}, REPEAT('w', 300))")
        status = pair.wait_stopped()
        pair.replica.sql("STOP SLAVE")
        out = tmp_path_factory.mktemp("relay")
        index = pair.replica.datadir / "relay-bin.index"
        names = [Path(n.strip()).name for n in index.read_text().splitlines() if n.strip()]
        for n in names:
            shutil.copy(pair.replica.datadir / n, out / n)
        shutil.copy(index, out / "relay-bin.index")
        yield {"dir": out, "index": out / "relay-bin.index", "files": [out / n for n in names],
               "status": status}
    finally:
        pair.cleanup()


# ---------------------------------------------------------------------------------------------
# dump: the primary's end_log_pos

_HEAD = re.compile(r"^#\d{6} +\d+:\d\d:\d\d server id (\d+)\s+end_log_pos (\d+)")


def _positions(text):
    """{`# at` offset: end_log_pos} of mysqlbinlog-style output (mariadb-binlog prints an
    ANNOTATE_ROWS event's header after the next event's `# at` line: headers take the `# at`
    offsets in order)."""
    out, pending = {}, []
    for line in text.splitlines():
        m = re.match(r"^# at (\d+)$", line)
        if m:
            pending.append(int(m[1]))
            continue
        m = _HEAD.match(line)
        if m and pending:
            out[pending.pop(0)] = int(m[2])
    return out


def test_dump_prints_the_primarys_end_log_pos_and_marks_the_relay_offset(relay):
    st = relay["status"]
    for path in relay["files"]:
        code, ours, err = run("dump", "--format", "text", path)
        assert code == 0, err
        theirs = subprocess.run(["mariadb-binlog", "--base64-output=decode-rows", str(path)],
                                capture_output=True).stdout.decode("utf-8", "replace")
        mine, oracle = _positions(ours), _positions(theirs)
        assert mine and set(mine) <= set(oracle)
        assert {at: oracle[at] for at in mine} == mine, path.name
        # where the primary's position is not the relay offset, the relay offset is shown too
        for line in ours.splitlines():
            m = re.search(r"end_log_pos (\d+) \(relay log: ends at (\d+)\)", line)
            if m:
                assert m[1] != m[2]
    # the failing event can be found in the output by the position the error names
    end = re.search(r"end_log_pos (\d+)", st["Last_SQL_Error"])[1]
    code, ours, _ = run("dump", "--format", "text", relay["index"])
    assert re.search(rf"end_log_pos {end} \(relay log: ends at \d+\).*\tUpdate_rows", ours)


# ---------------------------------------------------------------------------------------------
# verify: index files

def test_verify_reads_a_relay_log_index(relay):
    code, out, err = run("verify", "--json", relay["index"])
    assert code == 0, out + err
    import json

    reports = [json.loads(line) for line in out.splitlines()]
    assert [Path(r["file"]).name for r in reports] == [p.name for p in relay["files"]]
    assert all(r["ok"] and r["events"] == r["byte_identical"] for r in reports)


# ---------------------------------------------------------------------------------------------
# positions

def test_a_bare_position_with_an_index_of_several_files_is_refused(relay):
    for command in ("dump", "sql", "stats"):
        code, out, err = run(command, "--start-position", "4", relay["index"])
        assert code == 2 and out == "", (command, err)
        last = err.splitlines()[-1]
        assert "relay-bin.index lists" in last and "give FILE:4" in last, last


def test_file_colon_offset_starts_in_that_file(relay):
    files = relay["files"]
    target = files[-2]
    starts = [int(m) for m in re.findall(r"^# at (\d+)$", run("dump", "--format", "text", target)[1], re.M)]
    offset = starts[len(starts) // 2]
    code, out, err = run("dump", "--format", "text", "--start-position", f"{target.name}:{offset}", relay["index"])
    assert code == 0, err
    printed = [int(m) for m in re.findall(r"^# at (\d+)$", out, re.M)]
    assert printed[0] == offset
    code, alone, _ = run("dump", "--format", "text", "--start-position", offset, target, files[-1])
    assert out == alone


def test_the_primarys_coordinates_select_the_failing_transaction(relay):
    st = relay["status"]
    primary_file, start = st["Relay_Master_Log_File"], int(st["Exec_Master_Log_Pos"])
    end = int(re.search(r"end_log_pos (\d+)", st["Last_SQL_Error"])[1])
    code, out, err = run("sql", "--start-position", f"{primary_file}:{start}",
                         "--stop-position", f"{primary_file}:{end + 1}", relay["index"])
    assert code == 0, err
    statements = [ln for ln in out.splitlines() if ln.startswith(("UPDATE", "INSERT", "DELETE"))]
    assert statements and statements[0].startswith("UPDATE `rp_relay`.`t`"), out
    # the stop falls inside the failing transaction, which sql takes whole (binlog/window.py)
    assert all("`rp_relay`.`t`" in s for s in statements) and "--stop-position" in err, out
    code, out, err = run("dump", "--format", "text", "--start-position", f"{primary_file}:{start}", relay["index"])
    assert code == 0, err
    first = re.search(r"end_log_pos (\d+)", out)
    assert int(first[1]) > start
    code, out, err = run("dump", "--format", "text", "--start-position", "mariadb-bin.000099:4", relay["index"])
    assert code == 2 and "nor a binlog of the primary" in err.splitlines()[-1]


def test_positions_past_the_end_are_refused_and_inside_an_event_warned():
    code, out, err = run("dump", "--format", "text", "--start-position", "999999", SAMPLE)
    assert code == 2 and out == ""
    assert "lies past the end of" in err.splitlines()[-1]
    code, out, err = run("dump", "--format", "text", "--stop-position", "999999", SAMPLE)
    assert code == 2 and "lies past the end of" in err.splitlines()[-1]
    code, out, err = run("dump", "--format", "text", "--start-position", "100", SAMPLE)
    assert code == 0
    warning = [ln for ln in err.splitlines() if "inside the FORMAT_DESCRIPTION_EVENT at 4" in ln]
    assert len(warning) == 1 and "reading starts at the next event, at 256" in warning[0], err
    assert re.findall(r"^# at (\d+)$", out, re.M)[0] == "256"
    code, out, err = run("dump", "--format", "text", "--start-position", "256", SAMPLE)
    assert code == 0 and err == ""
