"""What `binlog-grammar stats` counts: events and bytes by type, row changes and bytes by table,
transactions by size, and the largest and longest transactions."""
from __future__ import annotations

from collections import Counter, defaultdict

from .. import native
from .report_figures import Figures
from .stats_span import local_text

SIZE_BUCKETS = [(1 << 10, "< 1 KiB"), (1 << 14, "1-16 KiB"), (1 << 17, "16-128 KiB"),
                (1 << 20, "128 KiB-1 MiB"), (1 << 24, "1-16 MiB"), (None, ">= 16 MiB")]


class Stats:
    def __init__(self, top=10, figures=False):
        """figures: also count what the report page draws (output/report_figures.py), and give
        each listed transaction its first event's timestamp."""
        self.top = top
        self.figures = Figures() if figures else None
        self.filters = None  # the run's filters (cli/stats.py), shown by as_dict when set
        self.events = Counter()
        self.event_bytes = Counter()
        self.table_ops = defaultdict(Counter)  # db.table -> {c, u, d, bytes}
        self.tx_count = 0
        self.tx_ends = Counter()
        self.tx_sizes = Counter()
        self.largest = []  # (size, tx summary)
        self.longest = []  # (seconds, tx summary)
        self.files = set()
        self.fallbacks = {}  # file -> Counter: events the fast readers refused (Stream.fallbacks)
        self.span = None  # the time span read (output/stats_span.py), set by cli/stats.py

    def add_transaction(self, tx):
        size = tx.size
        changes = 0
        for se in tx.events:
            self.add_event(se)
            changes += len(se.changes) if se.event.type is not None and se.event.type.row_op else 0
        stamps = [int(se.event.header.timestamp) for se in tx.events]
        summary = {"gtid": tx.gtid, "file": tx.file, "pos": tx.start_pos, "end_pos": tx.end_pos,
                   "bytes": size, "changes": changes, "seconds": max(stamps) - min(stamps),
                   "end": tx.end}
        if self.figures is not None:
            summary["timestamp"] = stamps[0]
            self.figures.transaction(size, summary["seconds"], tx.gtid)
        self.add_summary(summary)

    def add_summary(self, summary):
        """Count one transaction by its summary (its events are counted by add_event, or by
        output/stats_fast.py)."""
        size, secs = summary["bytes"], summary["seconds"]
        self.tx_count += 1
        self.tx_ends[summary["end"]] += 1
        for limit, label in SIZE_BUCKETS:
            if limit is None or size < limit:
                self.tx_sizes[label] += 1
                break
        if self.top == 0:
            return
        if len(self.largest) < self.top or size > self.largest[-1][0]:
            self.largest = sorted(self.largest + [(size, summary)], key=lambda x: -x[0])[:self.top]
        if len(self.longest) < self.top or secs > self.longest[-1][0]:
            self.longest = sorted(self.longest + [(secs, summary)],
                                  key=lambda x: -x[0])[:self.top]

    def add_event(self, se):
        ev = se.event
        self.files.add(ev.file)
        self.events[ev.name] += 1
        if not ev.inner:
            self.event_bytes[ev.name] += len(ev.raw)
        if ev.type is not None and ev.type.row_op:
            changes = se.changes  # [] for rows shown raw (se.undecoded says why)
            key = f"{se.table.db}.{se.table.table}" if se.table is not None else \
                f"(unmapped table id {int(ev.data['table_id'])})"
            t = self.table_ops[key]
            t["bytes"] += len(ev.raw)
            for ch in changes:
                t[ch.op] += 1
            if getattr(se, "undecoded", None) is not None:
                t["undecoded"] += 1
            if self.figures is not None:
                self.figures.event(ev, int(ev.header.timestamp), key, changes, se.table)
        elif self.figures is not None:
            self.figures.event(ev, int(ev.header.timestamp), None, (), None)

    def merge(self, other: "Stats"):
        """Add the counts of `other`, made of the input after this one's (--jobs N: the splits'
        partial counts, merged in input order): the same figures, and the same largest and
        longest transactions in the same order, as one Stats that read both."""
        self.events.update(other.events)
        self.event_bytes.update(other.event_bytes)
        for k, c in other.table_ops.items():
            self.table_ops[k].update(c)
        self.tx_count += other.tx_count
        self.tx_ends.update(other.tx_ends)
        self.tx_sizes.update(other.tx_sizes)
        # a stable sort of the earlier ones followed by the later ones keeps ties in input order
        self.largest = sorted(self.largest + other.largest, key=lambda x: -x[0])[:self.top]
        self.longest = sorted(self.longest + other.longest, key=lambda x: -x[0])[:self.top]
        self.files |= other.files
        if self.figures is not None and other.figures is not None:
            self.figures.merge(other.figures)

    def as_dict(self) -> dict:
        return {
            **({"filters": self.filters} if self.filters is not None else {}),
            "backend": native.backend(),  # which readers ran: "c" or "python" (binlog_grammar.native)
            "files": sorted(self.files),
            **({"time_span": self.span} if self.span is not None else {}),
            "events": {k: {"count": v, "bytes": self.event_bytes[k]}
                       for k, v in sorted(self.events.items(), key=lambda x: -x[1])},
            "tables": {k: {"insert": v["c"], "update": v["u"], "delete": v["d"], "bytes": v["bytes"],
                           **({"rows_events_not_decoded": v["undecoded"]} if v["undecoded"] else {})}
                       for k, v in sorted(self.table_ops.items())},
            "transactions": {"count": self.tx_count, "by_end": dict(self.tx_ends),
                             "by_size": {label: self.tx_sizes[label] for _l, label in SIZE_BUCKETS}},
            "largest_transactions": [s for _n, s in self.largest],
            "longest_transactions": [s for _n, s in self.longest],
            # events the generated fast readers refused, parsed again by the construct structs
            "fast_path_fallbacks": {
                "count": sum(sum(c.values()) for c in self.fallbacks.values()),
                "by_file": {f: dict(sorted(c.items())) for f, c in self.fallbacks.items()}},
            **({"figures": self.figures.as_dict()} if self.figures is not None else {}),
        }

    def text(self) -> str:
        d = self.as_dict()
        out = [f"backend: {native.describe()}", f"files: {len(d['files'])}"]
        span = d.get("time_span")
        if span:
            out.append(f"time span: {local_text(span['first'])} to {local_text(span['last'])} "
                       f"({span['seconds']} s; {span['first_utc']} to {span['last_utc']})")
        out += ["", "events by type:", f"  {'type':<32} {'count':>10} {'bytes':>14}"]
        for k, v in d["events"].items():
            out.append(f"  {k:<32} {v['count']:>10} {v['bytes']:>14}")
        out += ["", "row changes by table:",
                f"  {'table':<40} {'insert':>9} {'update':>9} {'delete':>9} {'bytes':>12}"]
        for k, v in d["tables"].items():
            out.append(f"  {k:<40} {v['insert']:>9} {v['update']:>9} {v['delete']:>9} {v['bytes']:>12}"
                       + (f"  (rows not decoded: {v['rows_events_not_decoded']} events)"
                          if v.get("rows_events_not_decoded") else ""))
        t = d["transactions"]
        out += ["", f"transactions: {t['count']} ("
                + ", ".join(f"{k} {v}" for k, v in sorted(t["by_end"].items())) + ")"]
        for label, n in t["by_size"].items():
            out.append(f"  {label:<16} {n:>10}")
        for title, key in (("largest transactions", "largest_transactions"),
                           ("longest transactions (seconds between first and last event)",
                            "longest_transactions")):
            out += ["", f"{title}:"]
            for s in d[key]:
                out.append(f"  {s['bytes']:>12} bytes {s['seconds']:>6} s {s['changes']:>8} changes  "
                           f"{s['file']}:{s['pos']}  {s['gtid'] or '-'}  {s['end']}"
                           + (f"  at {local_text(s['timestamp'])}" if "timestamp" in s else "")
                           + (f"  tables: {', '.join(s['tables'])}" if s.get("tables") else ""))
        fb = d["fast_path_fallbacks"]
        out += ["", f"fast-path fallbacks (events parsed again by construct): {fb['count']}"]
        for f, by_reader in fb["by_file"].items():
            for reader, n in by_reader.items():
                out.append(f"  {f}  {reader:<32} {n:>10}")
        return "\n".join(out)
