"""What a test needs beyond Python, as markers, so that `pytest -m "not server and not spark"`
selects the fast part. A test that reaches a service without its marker fails (need_marker): the
markers cannot fall out of step with what the tests do."""
import os

import pytest

REQUIRE_SERVICES = os.environ.get("BINLOG_GRAMMAR_REQUIRE_SERVICES") == "1"

MARKERS = {
    "server": "needs MariaDB installed (a mariadbd the test starts, or its mariadb-binlog)",
    "spark": "needs pyspark, pyarrow and Java (a local Spark session)",
    "corpus": "reads the binlogs of ../shared/corpus (skipped when it is absent)",
}

running = None  # the test item being set up or run (set by tests/conftest.py)


def need_marker(name: str):
    """Fail the running test (or the fixture it set up) when it lacks the marker `name`: a test
    that starts a server or Spark must say so, or `-m "not server"` would select it."""
    if running is not None and running.get_closest_marker(name) is None:
        pytest.fail(f"{running.nodeid} uses what the marker `{name}` stands for "
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
