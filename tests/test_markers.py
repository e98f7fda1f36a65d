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
