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


needs_corpus = pytest.mark.skipif(not CORPUS.is_dir(), reason="../shared/corpus is absent")


def need_mariadb():
    """Skip a test that needs the MariaDB server when mariadbd is missing; under
    BINLOG_GRAMMAR_REQUIRE_SERVICES=1 (set by .ci/run) fail instead."""
    from binlog_grammar.testing import mariadb

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
