"""Fixtures of the compiled backend's tests (tests/native/)."""
import pytest

from binlog_grammar.output import jsonl_lane, stats_loop


@pytest.fixture
def stops(monkeypatch):
    """The runs of the lane that stopped at an event, by the event's type code."""
    got = {}
    real = jsonl_lane.JsonlLane.go_on

    def go_on(self, f, pos, stop=None):
        mod = self.mod

        class Spy:
            def __getattr__(_s, name):
                return getattr(mod, name)

            def lines(_s, buf, base, pos, *a):
                r = mod.lines(buf, base, pos, *a)
                at = r[1] - base
                if r[5] == mod.EVENT and at + 4 < len(buf):
                    got[buf[at + 4]] = got.get(buf[at + 4], 0) + 1
                return r

        self.mod = Spy()
        try:
            return real(self, f, pos, stop)
        finally:
            self.mod = mod

    monkeypatch.setattr(jsonl_lane.JsonlLane, "go_on", go_on)
    return got


@pytest.fixture
def counted(monkeypatch):
    """How many transactions the compiled loop counted."""
    got = [0]
    real = stats_loop.Loop.run

    def run(self, mm, pos, size):
        before = self.seq
        r = real(self, mm, pos, size)
        got[0] += self.seq - before
        return r

    monkeypatch.setattr(stats_loop.Loop, "run", run)
    return got
