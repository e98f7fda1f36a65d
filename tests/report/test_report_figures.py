"""output/report_figures.py: the page's series stay bounded by tables and intervals, whatever the
events (a year of events, a million distinct keys), and splitting the input (Figures.merge) gives
the same figures as one pass."""
import random
from types import SimpleNamespace

from binlog_grammar.output import report_figures as R
from binlog_grammar.output.report_figures import Figures


def _ev(ts, i, name="WRITE_ROWS_EVENT_V1"):
    return SimpleNamespace(file="f", offset=i, inner=False, raw=b"x" * 20, name=name, data={},
                           header=SimpleNamespace(server_id=1 + i % 3, timestamp=ts),
                           type=SimpleNamespace(row_op="insert"))


_TABLE = SimpleNamespace(primary_key=["id"], full_metadata=True, columns=[
    SimpleNamespace(type_name="LONG"), SimpleNamespace(type_name="BLOB")], names=["id", "b"])


def _feed(figs, events):
    for ts, i, key in events:
        figs.event(_ev(ts, i), ts, f"db.t{i % 5}",
                   [SimpleNamespace(before=None, after={"id": key, "b": b""})], _TABLE)
        figs.transaction(100 + i, i % 7, f"{i % 2}-1-{i}")


def _events(n, span, keys, seed=1):
    rnd = random.Random(seed)
    return [(1_700_000_000 + span * i // n, i, rnd.randrange(keys)) for i in range(n)]


def test_a_year_of_events_stays_bounded():
    figs = Figures()
    _feed(figs, _events(60_000, 365 * 86400, 10))
    assert len(figs.buckets) <= R.MAX_BUCKETS
    d = figs.as_dict()
    assert len(d["intervals"]) <= R.MAX_SHOWN
    assert sum(i["events"] for i in d["intervals"]) == 60_000
    assert sum(i["changes"] for i in d["intervals"]) == 60_000
    assert len(d["gaps"]) == R.TOP_GAPS and len(d["hot_rows"]) <= R.TOP_HOT
    assert d["server_ids"] == {"1": 20_000, "2": 20_000, "3": 20_000}
    assert d["gtid_domains"] == {"0": 30_000, "1": 30_000}


def test_many_keys_keep_memory_bounded_and_say_so():
    figs = Figures()
    hot = [(1_700_000_000, i, -1) for i in range(3 * R.HOT_CAPACITY)]  # one key every row
    _feed(figs, [e for pair in zip(_events(3 * R.HOT_CAPACITY, 100, 10**9), hot) for e in pair])
    assert len(figs.hot) <= 2 * R.HOT_CAPACITY
    d = figs.as_dict()
    # the key changed in every other row leads in each of the five tables (3 * HOT_CAPACITY / 5
    # changes each), counted low by at most the undercount the figures give
    top = d["hot_rows"][:5]
    assert {h["key"] for h in top} == {"id=-1"} and len({h["table"] for h in top}) == 5
    assert d["hot_rows_undercount"] > 0
    true = 3 * R.HOT_CAPACITY // 5
    assert all(true - d["hot_rows_undercount"] <= h["changes"] <= true for h in top)


def test_merge_equals_one_pass():
    events = _events(20_000, 30 * 86400, 50)
    one = Figures()
    _feed(one, events)
    a, b = Figures(), Figures()
    _feed(a, events[:7_000])
    _feed(b, events[7_000:])
    a.merge(b)
    assert a.as_dict() == one.as_dict()


def test_interval_follows_the_span():
    assert R.width_for(10) == 1
    assert R.width_for(3600) == 30
    assert R.width_for(86400) == 600
    assert R.width_for(86400, 3600) == 3600
