"""The figures of `stats --figures` and `stats --html` (output/report_html.py draws them): what the
text tables of output/stats.py do not hold, counted on the same pass over the same events and
serialised by the same `Stats.as_dict()` under "figures", so the page and `stats --json` show one
computation.

Every series is bounded by the number of tables and intervals, never by the number of events:
- writes over time: events, bytes and row changes (by table) per interval of the events' header
  timestamps (UTC). Counting starts at one-second intervals; when more than MAX_BUCKETS intervals
  hold events, the interval grows to the next width of WIDTHS (each a multiple of the one before,
  aligned on the epoch, so coarsening adds whole intervals and any split of the input ends with
  the same figures); as_dict coarsens further until the span fits MAX_SHOWN intervals;
- transactions by size (powers of two of bytes) and by duration (powers of two of seconds);
- rows events by row image kind (FULL: every column in every image; NOBLOB: only BLOB, TEXT, JSON
  or GEOMETRY columns missing; MINIMAL: others missing), TABLE_MAPs by metadata level (FULL: the
  columns' names; MINIMAL: other optional metadata; NONE), events by server id, transactions by
  GTID domain (MariaDB's domain, MySQL's source uuid), the longest gaps between events;
- hot rows: row changes by primary key value, where the binlog names the key columns. Counted
  exactly until HOT_CAPACITY keys are held; past that, Misra-Gries pruning keeps the memory
  bounded and `hot_rows_undercount` says by how much any count may be low.
"""
from __future__ import annotations

import heapq
from collections import Counter, defaultdict

WIDTHS = (1, 5, 10, 30, 60, 300, 600, 1800, 3600, 10800, 21600, 43200, 86400, 604800, 2419200,
          31449600)
MAX_BUCKETS = 4096
MAX_SHOWN = 150
HOT_CAPACITY = 20000
TOP_HOT = 20
TOP_GAPS = 10
BLOBISH = frozenset({"BLOB", "TINY_BLOB", "MEDIUM_BLOB", "LONG_BLOB", "JSON", "GEOMETRY"})


def width_for(span: int, width: int = 1) -> int:
    """The first width of WIDTHS, at least `width`, that shows `span` seconds in MAX_SHOWN
    intervals at most (the last width when none does)."""
    for w in WIDTHS:
        if w >= width and span // w < MAX_SHOWN:
            return w
    return WIDTHS[-1]


def key_text(value) -> str:
    """A key column's value as text (bytes as 0x hex)."""
    if isinstance(value, (bytes, bytearray)):
        return "0x" + bytes(value).hex()
    return str(value)


class Figures:
    def __init__(self):
        self.width = 1
        self.buckets = defaultdict(lambda: [0, 0, 0, Counter()])  # start -> events, bytes, changes, by table
        self.tx_bytes = Counter()  # bit length of the size: 2**(n-1) <= bytes < 2**n
        self.tx_seconds = Counter()  # bit length of the duration in seconds
        self.image_kinds = Counter()
        self.metadata = Counter()
        self.server_ids = Counter()
        self.domains = Counter()
        self.op_bytes = defaultdict(Counter)  # table -> {insert, update, delete}: bytes
        self.gaps = []  # heap of (seconds, from, to, file, pos)
        self.first = self.last = None  # the first and the last event's timestamp, in input order
        self.first_at = ("", 0)  # the first event's file and offset
        self.hot = Counter()
        self.hot_undercount = 0

    # -- counting ---------------------------------------------------------------------------
    def event(self, ev, ts, table_name, changes, table):
        """One event: its header timestamp, and for a rows event its table's name, its row
        changes and rows.Table."""
        if self.first is None:
            self.first, self.first_at = ts, (ev.file, ev.offset)
        elif self.last is not None and ts > self.last:
            self._gap(ts - self.last, self.last, ts, ev.file, ev.offset)
        self.last = ts
        self.server_ids[str(int(ev.header.server_id))] += 1
        b = self.buckets[ts - ts % self.width]
        b[0] += 1
        if not ev.inner:
            b[1] += len(ev.raw)
        if ev.name == "TABLE_MAP_EVENT":
            meta = ev.data.get("optional_metadata") or []
            ids = {m.get("id") for m in meta}
            self.metadata["FULL" if "column_name" in ids else "MINIMAL" if ids else "NONE"] += 1
        if table_name is not None:
            b[2] += len(changes)
            b[3][table_name] += len(changes)
            self.op_bytes[table_name][ev.type.row_op] += len(ev.raw)
            if changes and table is not None:
                self.image_kinds[_image_kind(changes[0], table)] += 1
                if table.primary_key:
                    self._hot(table_name, table.primary_key, changes)
        if len(self.buckets) > MAX_BUCKETS:
            self._coarsen(WIDTHS[WIDTHS.index(self.width) + 1])

    def transaction(self, size, seconds, gtid):
        self.tx_bytes[int(size).bit_length()] += 1
        self.tx_seconds[int(max(seconds, 0)).bit_length()] += 1
        if gtid:
            domain = gtid.split(":")[0] if ":" in gtid else gtid.split("-")[0]
            self.domains[domain] += 1

    def _gap(self, secs, frm, to, file, pos):
        item = (secs, -frm, to, file, pos)
        if len(self.gaps) < TOP_GAPS:
            heapq.heappush(self.gaps, item)
        elif item > self.gaps[0]:
            heapq.heapreplace(self.gaps, item)

    def _hot(self, table_name, key, changes):
        hot = self.hot
        for ch in changes:
            image = ch.before if ch.before is not None else ch.after
            if image is None or any(k not in image for k in key):
                continue
            hot[(table_name, ", ".join(f"{k}={key_text(image[k])}" for k in key))] += 1
        if len(hot) > 2 * HOT_CAPACITY:
            # Misra-Gries, in one step: take the HOT_CAPACITY-th count off every key
            cut = sorted(hot.values(), reverse=True)[HOT_CAPACITY]
            self.hot_undercount += cut
            self.hot = Counter({k: v - cut for k, v in hot.items() if v > cut})

    def _coarsen(self, width):
        if width == self.width:
            return
        old, self.width = self.buckets, width
        self.buckets = defaultdict(lambda: [0, 0, 0, Counter()])
        for start, (e, b, c, t) in old.items():
            nb = self.buckets[start - start % width]
            nb[0] += e
            nb[1] += b
            nb[2] += c
            nb[3].update(t)

    def merge(self, other: "Figures"):
        """Add `other`'s figures, made of the input after this one's."""
        width = max(self.width, other.width)
        self._coarsen(width)
        other._coarsen(width)
        for start, (e, b, c, t) in other.buckets.items():
            nb = self.buckets[start]
            nb[0] += e
            nb[1] += b
            nb[2] += c
            nb[3].update(t)
        for mine, theirs in ((self.tx_bytes, other.tx_bytes), (self.tx_seconds, other.tx_seconds),
                             (self.image_kinds, other.image_kinds), (self.metadata, other.metadata),
                             (self.server_ids, other.server_ids), (self.domains, other.domains),
                             (self.hot, other.hot)):
            mine.update(theirs)
        for t, c in other.op_bytes.items():
            self.op_bytes[t].update(c)
        self.hot_undercount += other.hot_undercount
        for g in other.gaps:
            self._gap(g[0], -g[1], *g[2:])
        if self.last is not None and other.first is not None and other.first > self.last:
            self._gap(other.first - self.last, self.last, other.first, *other.first_at)
        if other.first is not None:
            if self.first is None:
                self.first, self.first_at = other.first, other.first_at
            self.last = other.last

    # -- the figures ------------------------------------------------------------------------
    def as_dict(self) -> dict:
        starts = sorted(self.buckets)
        width = width_for(starts[-1] - starts[0], self.width) if starts else self.width
        self._coarsen(width)
        starts = sorted(self.buckets)
        totals = Counter()
        for s in starts:
            totals.update(self.buckets[s][3])
        return {
            "time_zone": "UTC",
            "interval_seconds": width,
            "intervals": [{"start": s, "events": self.buckets[s][0], "bytes": self.buckets[s][1],
                           "changes": self.buckets[s][2],
                           "changes_by_table": dict(sorted(self.buckets[s][3].items()))}
                          for s in starts],
            "tables_by_changes": [t for t, _n in sorted(totals.items(), key=lambda x: (-x[1], x[0]))],
            "bytes_by_table_and_operation": {t: dict(sorted(c.items()))
                                             for t, c in sorted(self.op_bytes.items())},
            "transaction_bytes_log2": _powers(self.tx_bytes),
            "transaction_seconds_log2": _powers(self.tx_seconds),
            "row_image_kinds": dict(sorted(self.image_kinds.items())),
            "metadata_levels": dict(sorted(self.metadata.items())),
            "server_ids": dict(sorted(self.server_ids.items(), key=lambda x: -x[1])),
            "gtid_domains": dict(sorted(self.domains.items(), key=lambda x: -x[1])),
            "gaps": [{"seconds": g[0], "from": -g[1], "to": g[2], "file": g[3], "pos": g[4]}
                     for g in sorted(self.gaps, key=lambda g: (-g[0], -g[1]))],
            "hot_rows": [{"table": t, "key": k, "changes": n}
                         for (t, k), n in sorted(self.hot.items(), key=lambda x: (-x[1], x[0]))[:TOP_HOT]],
            "hot_rows_undercount": self.hot_undercount,
        }


def _powers(counter) -> list:
    """[{"from": lo, "below": hi, "count": n}] for bit lengths 0.. of a Counter, in order."""
    return [{"from": 0 if n == 0 else 1 << (n - 1), "below": 1 << n, "count": counter[n]}
            for n in sorted(counter)]


def _image_kind(change, table) -> str:
    n = len(table.columns)
    if not table.full_metadata:  # no column names: only whole images can be told apart
        images = [i for i in (change.before, change.after) if i is not None]
        return "FULL" if all(len(i) >= n for i in images) else "MINIMAL"
    missing = set()
    for image in (change.before, change.after):
        if image is not None and len(image) < n:
            names = table.names
            missing.update(i for i, name in enumerate(names) if name not in image)
    if not missing:
        return "FULL"
    if all(str(table.columns[i].type_name) in BLOBISH for i in missing):
        return "NOBLOB"
    return "MINIMAL"
