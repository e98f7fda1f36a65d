"""Fixtures and hooks for the whole suite. What test files import lives in tests/helpers/; the
markers (server, spark, corpus) are described in helpers/services.py and tests/README.md."""
import os
import time

import pytest

from helpers import services
from helpers.paths import CORPUS


# Event times print in the local zone and datetime options are read in it (cli/datetimes.py):
# the suite runs in UTC, whatever the machine's zone; a test of another zone sets TZ itself.
os.environ["TZ"] = "UTC"
time.tzset()
# the pipeline's JVM class archive (spark/jvm_archive.py) is not written into the user's cache by
# the suite; tests/spark/test_spark_jvm_archive.py gives it a folder of its own
os.environ["BINLOG_GRAMMAR_JVM_ARCHIVE"] = "off"


@pytest.fixture(scope="session", autouse=True)
def _temporary_folder():
    """The suite's own temporary folder, removed at its end: what the programs under test leave
    in the temporary folder on purpose (the SQL_LOAD_MB-* files of LOAD DATA that dump's replay
    script and mariadb-binlog write for the script's later run) goes there, not into /tmp for
    good. TMPDIR for the programs the tests start, tempfile.tempdir for this process; a short
    path, since a server's socket is made under it."""
    import shutil
    import tempfile

    folder = tempfile.mkdtemp(prefix="bg-tests-")
    before = os.environ.get("TMPDIR"), tempfile.tempdir
    os.environ["TMPDIR"] = tempfile.tempdir = folder
    try:
        yield folder
    finally:
        if before[0] is None:
            os.environ.pop("TMPDIR", None)
        else:
            os.environ["TMPDIR"] = before[0]
        tempfile.tempdir = before[1]
        shutil.rmtree(folder, ignore_errors=True)


@pytest.fixture(scope="session")
def specs():
    from binlog_grammar.lang.loader import load_specs

    return load_specs()


def pytest_configure(config):
    for name, doc in services.MARKERS.items():
        config.addinivalue_line("markers", f"{name}: {doc}")


def pytest_runtest_setup(item):
    services.running = item


def pytest_collection_modifyitems(config, items):
    if not CORPUS.is_dir():
        skip = pytest.mark.skip(reason="../shared/corpus is absent")
        for item in items:
            if item.get_closest_marker("corpus"):
                item.add_marker(skip)
