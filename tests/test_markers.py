"""The service markers hold: a test that reaches a server without the `server` marker fails, and
this test, marked, passes the same check (helpers.services.need_marker)."""
import pytest

from helpers import services


def test_an_unmarked_test_that_reaches_a_server_fails(request):
    assert services.running is request.node  # the conftest hook records the running test
    with pytest.raises(pytest.fail.Exception, match="not marked: add @pytest.mark.server"):
        services.need_marker("server")


@pytest.mark.server
def test_a_marked_test_passes_the_check(request):
    assert services.running is request.node
    services.need_marker("server")  # no failure


@pytest.mark.server
def test_a_server_whose_port_was_taken_starts_on_another():
    """Two test processes start servers side by side (tools/test.sh): a port taken between its
    pick and mariadbd's bind is picked again on a first start; a restart keeps its port."""
    import socket

    from binlog_grammar.testing.mariadb import MariaDB, PortTaken

    services.need_mariadb()
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = taken.getsockname()[1]
        db = MariaDB()
        db.port = port
        with db:
            assert db.port != port and db.sql("SELECT 1").strip() == "1"
            db.stop()
            db.port = port  # as if a restart's port had been taken meanwhile
            with pytest.raises(PortTaken):
                db.start()
