"""The fixtures of the `--jobs N` tests (tests/helpers/jobs.py has their helpers)."""
import pytest

from binlog_grammar.cli import parallel

from helpers.jobs import SPLIT


@pytest.fixture(scope="module")
def pool():
    """One process pool for every run of the module (cli.parallel.EXECUTOR)."""
    parallel.EXECUTOR = parallel.Executor(2, None, None)
    try:
        yield parallel.EXECUTOR
    finally:
        parallel.EXECUTOR.close()
        parallel.EXECUTOR = None


@pytest.fixture
def cut(monkeypatch, pool):
    """Small splits (BINLOG_GRAMMAR_SPLIT_BYTES), so that even the samples are cut."""
    monkeypatch.setenv(parallel.ENV_SPLIT, SPLIT)
