import os
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
CORPUS = (ROOT.parent / "shared" / "corpus" / "mysql")
REQUIRE_SERVICES = os.environ.get("BINLOG_GRAMMAR_REQUIRE_SERVICES") == "1"


@pytest.fixture(scope="session")
def specs():
    from binlog_grammar.lang.loader import load_specs

    return load_specs()


def corpus_files():
    if not CORPUS.is_dir():
        return []
    return sorted(p for p in CORPUS.iterdir() if p.is_file())


needs_corpus = pytest.mark.corpus


# What a test needs beyond Python, as markers, so that `pytest -m "not server and not spark"`
# selects the fast part. A test that reaches a service without its marker fails (see
# need_marker): the markers cannot fall out of step with what the tests do.
MARKERS = {
    "server": "needs MariaDB installed (a mariadbd the test starts, or its mariadb-binlog)",
    "spark": "needs pyspark, pyarrow and Java (a local Spark session)",
    "corpus": "reads the binlogs of ../shared/corpus (skipped when it is absent)",
}

_running = None  # the test item being set up or run


def pytest_configure(config):
    for name, doc in MARKERS.items():
        config.addinivalue_line("markers", f"{name}: {doc}")


def pytest_runtest_setup(item):
    global _running
    _running = item


def pytest_collection_modifyitems(config, items):
    if not CORPUS.is_dir():
        skip = pytest.mark.skip(reason="../shared/corpus is absent")
        for item in items:
            if item.get_closest_marker("corpus"):
                item.add_marker(skip)


def need_marker(name: str):
    """Fail the running test (or the fixture it set up) when it lacks the marker `name`: a test
    that starts a server or Spark must say so, or `-m "not server"` would select it."""
    if _running is not None and _running.get_closest_marker(name) is None:
        pytest.fail(f"{_running.nodeid} uses what the marker `{name}` stands for "
                    f"({MARKERS[name]}) but is not marked: add @pytest.mark.{name} (or a "
                    f"module-level pytestmark)", pytrace=False)


def need_mariadb():
    """Skip a test that needs the MariaDB server when mariadbd is missing; under
    BINLOG_GRAMMAR_REQUIRE_SERVICES=1 (set by .ci/run) fail instead."""
    from binlog_grammar.testing import mariadb

    need_marker("server")
    if not mariadb.available():
        if REQUIRE_SERVICES:
            pytest.fail("mariadbd is not installed (apt-get install -y mariadb-server) and "
                        "BINLOG_GRAMMAR_REQUIRE_SERVICES=1")
        pytest.skip("mariadbd is not installed (apt-get install -y mariadb-server)")


def exact(v):
    """A parsed value with the type, name and padding of every part, for == between readers
    (construct's Containers and the generated readers' records)."""
    if isinstance(v, dict):
        return {k: exact(x) for k, x in v.items() if not str(k).startswith("_")}
    if isinstance(v, list):
        return (type(v).__name__ == "Bits", getattr(v, "pad", None), [exact(x) for x in v])
    return (type(v).__name__, v, getattr(v, "name", None), getattr(v, "names", None))


def need_mariadb_binlog():
    """Skip a test that compares with mariadb-binlog when it is missing; under
    BINLOG_GRAMMAR_REQUIRE_SERVICES=1 fail instead."""
    import shutil

    need_marker("server")
    if shutil.which("mariadb-binlog") is None:
        why = "mariadb-binlog is not installed (apt-get install -y mariadb-client)"
        if REQUIRE_SERVICES:
            pytest.fail(f"{why} and BINLOG_GRAMMAR_REQUIRE_SERVICES=1")
        pytest.skip(why)
