"""The progress bar of the long commands (issue 30): through a real pseudo-terminal as stderr it
shows bytes done, rate and time left (tqdm's bar); never with --quiet or --no-progress, never when
stderr is a pipe, never in the piped output, and not when a command that writes as it reads
(dump, sql) has the terminal as its stdout. BINLOG_GRAMMAR_PROGRESS_MIN_BYTES=1 lets the small
sample binlogs have a bar (a real run needs 8 MiB)."""
import os
import pty
import select
import subprocess
import sys

import pytest

from helpers.paths import ROOT

SAMPLES = [str(p) for p in sorted((ROOT / "samples").glob("mariadb-*"))]
ENV = dict(os.environ, BINLOG_GRAMMAR_PROGRESS_MIN_BYTES="1", COLUMNS="100")


def _run(args, stdout_tty=False):
    """(stdout bytes, what the terminal got) of the command with stderr on a pty."""
    master, slave = pty.openpty()
    out_master = out_slave = None
    if stdout_tty:
        out_master, out_slave = pty.openpty()
    p = subprocess.Popen([sys.executable, "-m", "binlog_grammar", *args], cwd=ROOT, env=ENV,
                         stdin=subprocess.DEVNULL, stderr=slave,
                         stdout=out_slave if stdout_tty else subprocess.PIPE)
    os.close(slave)
    if out_slave is not None:
        os.close(out_slave)
    term, out = b"", b""
    fds = [master] + ([out_master] if out_master is not None else [p.stdout.fileno()])
    while fds:
        ready, _, _ = select.select(fds, [], [], 120)  # Spark starts slowly under load
        if not ready:
            break
        for fd in ready:
            try:
                data = os.read(fd, 1 << 16)
            except OSError:  # the pty's other side is closed
                data = b""
            if not data:
                fds.remove(fd)
            elif fd == master:
                term += data
            else:
                out += data
    p.wait(timeout=300)
    os.close(master)
    if out_master is not None:
        os.close(out_master)
    return p.returncode, out, term


def _bar(term):
    return b"B/s" in term or b"?B/s" in term


@pytest.mark.parametrize("command", [["stats"], ["verify"], ["dump", "--format", "text"], ["sql"], ["flashback"],
                                     ["stats", "--figures", "--jobs", "1"]])
def test_bar_on_a_terminal_and_never_in_the_output(command):
    rc, out, term = _run(command + SAMPLES)
    assert rc == 0, term
    assert _bar(term), term
    assert b"%|" in term  # the bar itself, with its share done
    assert b"B/s" not in out and b"\r" not in out and b"%|" not in out


@pytest.mark.parametrize("option", ["--quiet", "--no-progress"])
@pytest.mark.parametrize("command", [["stats"], ["verify"], ["dump", "--format", "text"]])
def test_quiet(command, option):
    rc, _out, term = _run(command + [option] + SAMPLES)
    assert rc == 0 and not _bar(term), term


def test_no_bar_when_stderr_is_a_pipe():
    r = subprocess.run([sys.executable, "-m", "binlog_grammar", "stats", *SAMPLES], cwd=ROOT,
                       env=ENV, capture_output=True)
    assert r.returncode == 0 and r.stderr == b""


def test_no_bar_over_output_on_the_same_terminal():
    """dump writes as it reads: with stdout on a terminal the bar would cut its lines."""
    rc, out, term = _run(["dump", "--format", "text"] + SAMPLES, stdout_tty=True)
    assert rc == 0 and not _bar(term) and b"# at " in out


@pytest.mark.spark
def test_pipeline_bar(tmp_path):
    """pipeline: Spark reads the splits, so the bar is the input's bytes times the share of the
    running stages' tasks done (cli/pipeline.py's watcher of Spark's status tracker)."""
    from helpers.spark import need_spark

    need_spark()
    args = ["pipeline", "--input", SAMPLES[0], "--output", str(tmp_path / "out")]
    rc, out, term = _run(args)
    assert rc == 0, term
    assert b"pipeline:" in term and b"B/s" in term, term[-2000:]
    assert b"B/s" not in out and b"\r" not in out
    rc, _out, term = _run(args[:-1] + [str(tmp_path / "again"), "--quiet"])
    assert rc == 0 and b"pipeline:" not in term
