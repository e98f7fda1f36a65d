"""--jobs by default (issue 26, item 4): the cores the command may run on, or $BINLOG_GRAMMAR_JOBS;
and the pool's spool in /dev/shm is removed when the command is ended by SIGTERM or SIGHUP.

test_jobs.py checks that any job count writes what --jobs 1 writes; here, which count runs when
none is given, and what a stopped run leaves behind.
"""
import fcntl
import glob
import os
import signal
import subprocess
import sys
import tempfile
import time

import pytest

from binlog_grammar.cli import parallel

from helpers.paths import MARIADB_SAMPLES as SAMPLES, ROOT

from helpers.jobs import SPLIT, run


@pytest.fixture
def pools(monkeypatch):
    """The job counts of the pools the runs start (the real pool, recorded)."""
    made = []
    real = parallel.Executor

    def executor(jobs, backend, user_specs):
        made.append(jobs)
        return real(jobs, backend, user_specs)

    monkeypatch.setattr(parallel, "Executor", executor)
    monkeypatch.setattr(parallel, "EXECUTOR", None)
    monkeypatch.setenv(parallel.ENV_SPLIT, SPLIT)
    monkeypatch.delenv(parallel.ENV_JOBS, raising=False)
    return made


def test_default_is_the_cores_the_process_may_use(pools, monkeypatch):
    monkeypatch.setattr(os, "sched_getaffinity", lambda pid: {0, 2, 5})
    many = run(["dump", "--format", "text", *SAMPLES])
    assert pools == [3]
    assert many == run(["dump", "--format", "text", "--jobs", "1", *SAMPLES])
    assert pools == [3]  # --jobs 1 starts no pool


def test_environment_sets_the_default(pools, monkeypatch):
    monkeypatch.setenv(parallel.ENV_JOBS, "1")
    run(["stats", "--backend", "python", *SAMPLES])
    assert pools == []
    monkeypatch.setenv(parallel.ENV_JOBS, "2")
    run(["dump", "--format", "jsonl", *SAMPLES])
    assert pools == [2]
    run(["dump", "--format", "text", "--jobs", "3", *SAMPLES])  # the option wins
    assert pools == [2, 3]


def test_a_bad_environment_value_is_a_usage_error(pools, monkeypatch):
    monkeypatch.setenv(parallel.ENV_JOBS, "many")
    code, out, err = run(["dump", "--format", "text", *SAMPLES])
    assert code == 2 and out == b""
    assert err.strip() == ("binlog-grammar: BINLOG_GRAMMAR_JOBS: a number of processes of at "
                           "least 1, not 'many'")


def test_small_files_start_no_pool(pools, monkeypatch):
    monkeypatch.delenv(parallel.ENV_SPLIT)
    monkeypatch.setattr(os, "sched_getaffinity", lambda pid: {0, 1})
    run(["dump", "--format", "text", *SAMPLES])
    assert pools == []


@pytest.mark.skipif(not os.path.isdir("/dev/shm"), reason="the spool is elsewhere without /dev/shm")
@pytest.mark.parametrize("sig", [signal.SIGTERM, signal.SIGHUP])
def test_a_terminated_run_removes_its_spool(sig):
    """The parent blocks on a full 4 KiB pipe while its workers' text waits in the spool; the
    signal then ends it with status 128 + signal and no folder of its process id is left."""
    env = dict(os.environ, **{parallel.ENV_SPLIT: SPLIT, parallel.ENV_JOBS: "2"})
    r, w = os.pipe()
    fcntl.fcntl(w, fcntl.F_SETPIPE_SZ, 4096)
    with tempfile.TemporaryFile() as err:
        # the signal's default disposition in the command, whatever this test runs under
        # (nohup ignores SIGHUP, and an ignored signal stays ignored in a child)
        proc = subprocess.Popen([sys.executable, "-m", "binlog_grammar", "dump", "--format", "text", *SAMPLES],
                                stdout=w, stderr=err, stdin=subprocess.DEVNULL, cwd=ROOT, env=env,
                                preexec_fn=lambda: signal.signal(sig, signal.SIG_DFL))
        os.close(w)
        with os.fdopen(r, "rb") as out:
            assert out.read(100)
            spools = f"/dev/shm/binlog-grammar-jobs-{proc.pid}-*"
            deadline = time.monotonic() + 30
            while not glob.glob(spools) and time.monotonic() < deadline:
                time.sleep(0.01)
            assert glob.glob(spools), "the run spools its workers' text"
            time.sleep(0.2)  # blocked on the pipe by now
            proc.send_signal(sig)
            assert proc.wait(timeout=30) == 128 + sig
        err.seek(0)
        assert b"Traceback" not in err.read()
    assert glob.glob(spools) == []
