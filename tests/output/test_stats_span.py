"""`stats` says what time span its input covers (first and last event time: the local zone in the
text, UTC in --json) and, for the largest and longest transactions, their time and the tables
they touch (issue 28 item 1), the same on both backends and with --jobs 2; each figure is checked
against the events read through the reading API."""
from __future__ import annotations

import datetime as dt
import json
import os
import subprocess
import sys

import pytest

from helpers.paths import corpus_files

pytestmark = pytest.mark.corpus
ROWS = ("json.binlog.000001", "mysql-enum-string-set.000001", "ver_trunk_row_v2.001")


def stats(*argv, tz="UTC", backend=None):
    env = {**os.environ, "TZ": tz}
    if backend:
        env["BINLOG_GRAMMAR_BACKEND"] = backend
    r = subprocess.run([sys.executable, "-m", "binlog_grammar", "stats", *map(str, argv)],
                       capture_output=True, text=True, env=env)
    return r


def files():
    found = [p for p in corpus_files() if p.name in ROWS]
    if not found:
        pytest.skip("the corpus is not here")
    return found


def truth(path):
    """The times and the transactions (start offset -> first time, tables) of the reading API."""
    from binlog_grammar import open_stream

    stamps = [int(se.event.header.timestamp) for se in open_stream(str(path)).events()
              if int(se.event.header.timestamp) and not se.event.inner]
    txs = {}
    for tx in open_stream(str(path)).transactions():
        ts = [int(se.event.header.timestamp) for se in tx.events if int(se.event.header.timestamp)]
        names = []
        for se in tx.events:
            if se.table is not None and f"{se.table.db}.{se.table.table}" not in names:
                names.append(f"{se.table.db}.{se.table.table}")
        txs[tx.start_pos] = (ts[0] if ts else None, names)
    return stamps, txs


@pytest.mark.parametrize("name", ROWS)
def test_time_span_and_transactions(name):
    path = next((p for p in files() if p.name == name), None)
    if path is None:
        pytest.skip(f"{name} is not in the corpus")
    stamps, txs = truth(path)
    r = stats("--json", "--top", "10", path)
    assert r.returncode == 0, r.stderr
    d = json.loads(r.stdout)
    span = d["time_span"]
    assert (span["first"], span["last"]) == (min(stamps), max(stamps))
    assert span["first_utc"] == dt.datetime.fromtimestamp(min(stamps), dt.timezone.utc) \
        .strftime("%Y-%m-%dT%H:%M:%SZ")
    listed = d["largest_transactions"] + d["longest_transactions"]
    assert listed
    for s in listed:
        first, tables = txs[s["pos"]]
        assert s.get("timestamp") == first and s["tables"] == tables, s
    assert any(s["tables"] for s in listed)
    # the same on the other backend and with --jobs 2
    for argv, backend in (((), "python"), (("--jobs", "2"), None)):
        other = stats("--json", "--top", "10", *argv, path, backend=backend)
        o = json.loads(other.stdout)
        assert (o["time_span"], o["largest_transactions"], o["longest_transactions"]) == \
            (span, d["largest_transactions"], d["longest_transactions"])


def test_text_in_the_local_zone():
    path = files()[0]
    stamps, _ = truth(path)
    seoul = stats("--top", "1", path, tz="Asia/Seoul").stdout
    first = dt.datetime.fromtimestamp(min(stamps), dt.timezone(dt.timedelta(hours=9)))
    assert f"time span: {first:%Y-%m-%d %H:%M:%S} KST" in seoul
    assert f"at {first:%Y-%m-%d}" in seoul or " at " in seoul.split("largest transactions:")[1]
    utc = stats("--top", "1", "--utc", path, tz="Asia/Seoul").stdout
    assert stats("--top", "1", path, tz="UTC").stdout == utc


def test_window_narrows_the_span():
    path = next((p for p in files() if p.name == "ver_trunk_row_v2.001"), None)
    if path is None:
        pytest.skip("ver_trunk_row_v2.001 is not in the corpus")
    stamps, _ = truth(path)
    later = sorted(set(stamps))
    if len(later) < 2:
        pytest.skip("one time only")
    start = dt.datetime.fromtimestamp(later[1], dt.timezone.utc).strftime("%Y-%m-%d %H:%M:%S")
    d = json.loads(stats("--json", "--utc", "--start-datetime", start, path).stdout)
    assert d["time_span"]["first"] == later[1]
