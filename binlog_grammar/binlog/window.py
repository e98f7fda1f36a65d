"""What a window keeps: --start-position/--stop-position and --start-datetime/--stop-datetime.

Two rules, one for each kind of output:

- Whole transactions (replayable output: `sql`, `flashback`, `stats`, `dump --format jsonl`; the
  default of binlog.stream.Stream). A transaction is in the window when its first event (the GTID
  event, else BEGIN, else its only statement) is: its offset at or after the start position in the
  first file and before the stop position in the last file, its timestamp at or after the start
  time and before the stop time. Then every event of it is kept, whatever its own offset or
  timestamp; otherwise none is. This is what a point-in-time recovery expects: replaying the
  output applies whole transactions that the server committed, in order, and nothing else. Events
  between transactions (ROTATE, FORMAT_DESCRIPTION, GTID_LIST ...) are judged by their own offset
  and timestamp. A boundary that falls inside a transaction (events of it on both sides) moves to
  the transaction's edge; `Window.notes()` says so, one line per boundary.
- mysqlbinlog's rule (reading output: `dump` text, decode-rows and `--format hexdump`; Stream(cut="events")): events
  from the first one at or after the start time (a FORMAT_DESCRIPTION_EVENT before it is shown,
  as mysqlbinlog shows it) up to, not including, the first one at or after the stop time; nothing
  after that, and nothing in between is dropped for its own timestamp (MariaDB writes a GTID event
  with the commit's time, before statements with earlier and later times). Positions cut event by
  event. This is what `mariadb-binlog --start-datetime/--stop-datetime` prints.

Timestamps are whole seconds (the common header's), compared with the window's times in UTC.
"""
from __future__ import annotations

import datetime as _dt
import os
from typing import Callable, Optional


def epoch(d: Optional[_dt.datetime]) -> Optional[int]:
    if d is None:
        return None
    if d.tzinfo is None:
        d = d.replace(tzinfo=_dt.timezone.utc)
    return int(d.timestamp())


def _when(ts: int) -> str:
    return _dt.datetime.fromtimestamp(ts, _dt.timezone.utc).strftime("%Y-%m-%d %H:%M:%S UTC")


class Window:
    """The window of `flt` (a stream.Filters) over the inputs; last() is the index of the last
    input file (it grows when the stream follows a ROTATE_EVENT)."""

    def __init__(self, flt, last: Callable[[], int]):
        self.start_pos, self.stop_pos = flt.start_position, flt.stop_position
        self.start_ts, self.stop_ts = epoch(flt.start_datetime), epoch(flt.stop_datetime)
        self.given = {"--start-position": flt.start_position, "--stop-position": flt.stop_position,
                      "--start-datetime": flt.start_datetime, "--stop-datetime": flt.stop_datetime}
        self.last = last
        self.crossed: dict = {}  # option -> [kept, left out, the first transaction's description]

    @property
    def positions(self) -> bool:
        return self.start_pos is not None or self.stop_pos is not None

    @property
    def active(self) -> bool:
        return self.positions or self.start_ts is not None or self.stop_ts is not None

    # -- one event, by its own offset and time

    def position_ok(self, i: int, offset: int) -> bool:
        if i == 0 and self.start_pos is not None and offset < self.start_pos:
            return False
        return not (i == self.last() and self.stop_pos is not None and offset >= self.stop_pos)

    def time_ok(self, ts: int) -> bool:
        if self.start_ts is not None and ts < self.start_ts:
            return False
        return not (self.stop_ts is not None and ts >= self.stop_ts)

    def event_ok(self, i: int, ev) -> bool:
        return self.position_ok(i, ev.offset) and self.time_ok(int(ev.header.timestamp))

    # -- whole transactions

    def transaction_ok(self, i: int, tx) -> bool:
        """The transaction (stream.Transaction, read from input file i) is in the window by its
        first event; a boundary that falls inside it is counted for notes()."""
        events = [se.event for se in tx.events if not se.event.inner]
        if not events:
            return True
        first = events[0]
        keep = self.event_ok(i, first)
        offsets = [e.offset for e in events]
        times = [int(e.header.timestamp) for e in events]
        for option, inside in (
                ("--start-position", i == 0 and self.start_pos is not None
                 and min(offsets) < self.start_pos <= max(offsets)),
                ("--stop-position", i == self.last() and self.stop_pos is not None
                 and min(offsets) < self.stop_pos <= max(offsets)),
                ("--start-datetime", self.start_ts is not None
                 and min(times) < self.start_ts <= max(times)),
                ("--stop-datetime", self.stop_ts is not None
                 and min(times) < self.stop_ts <= max(times))):
            if inside:
                seen = self.crossed.setdefault(option, [0, 0, None])
                seen[0 if keep else 1] += 1
                if seen[2] is None:
                    gtid = f"GTID {tx.gtid}, " if tx.gtid else ""
                    seen[2] = (f"{gtid}{os.path.basename(os.fspath(tx.file))}:{tx.start_pos}-"
                               f"{tx.end_pos}, first event at {_when(times[0])}")
        return keep

    def notes(self) -> list:
        """One line per boundary the user gave that fell inside a transaction."""
        out = []
        for option, (kept, dropped, first) in self.crossed.items():
            value = self.given[option]
            shown = value.isoformat(" ") if isinstance(value, _dt.datetime) else value
            n = kept + dropped
            what = ", ".join(p for p in (f"{kept} taken whole" if kept else "",
                                         f"{dropped} left out" if dropped else "") if p)
            out.append(f"{option} {shown} falls inside {n} transaction{'s' * (n != 1)} ({what}; "
                       f"the first: {first}): a transaction is in the window when its first "
                       "event (GTID or BEGIN) is, and is kept or left out whole")
        return out

    # -- mysqlbinlog's rule

    def cut(self, items):
        """(index, StreamEvent) pairs as mysqlbinlog cuts them: see the module's docstring."""
        started = self.start_ts is None
        kept = False  # the decision of the last outer event, for the events inside it
        for i, se in items:
            ev = se.event
            if ev.inner:
                if kept:
                    yield i, se
                continue
            kept = False
            if not self.position_ok(i, ev.offset):
                continue
            ts = int(ev.header.timestamp)
            if self.stop_ts is not None and ts >= self.stop_ts:
                return
            if not started:
                if ev.type is None or ev.type.name != "FORMAT_DESCRIPTION_EVENT":
                    if ts < self.start_ts:
                        continue
                    started = True
            kept = True
            yield i, se


__all__ = ["Window", "epoch"]
