"""The compiled lane of `dump --format jsonl --envelope debezium`: output/jsonl_lane.py's lane
(binlog_grammar.native._jsonl_lane) in its Debezium mode, which writes runs of events straight
from the file's bytes: the row changes of rows events in the connector's records, by the
DEBEZIUM plans output/debezium_native.py made (their values in C: native/forms_debezium.h), and
nothing for the other events it passes over (GTIDs, XIDs, TABLE_MAPs it knows, ANNOTATE_ROWS,
MySQL 8's payloads), as DebeziumWriter writes nothing for them. The text of a record around
its images and row index is DebeziumWriter's own (`_source`, its encoder), made once per table
and event shape with marker values where the event's position, timestamps, server id and GTID
go, which the lane fills in (its fields; ts_us and ts_ns are the Debezium envelope's).

The lane stops (the Python path reads the event, and the lane learns from it) at every QUERY
event (a statement may be a BEGIN whose thread the records name, a commit, DDL that changes what
the records say of a table: the plans are forgotten when what the DDL declared changes), at a
rows event whose table
and shape have no plan (the Python path wrote it: a changed key, a refused value, ...), and at
every event the JSON-lines lane stops at. It runs only when DebeziumWriter's records do not
depend on what it passes over: no transaction metadata, Kafka records, schemas, schema-change
records or include.query, no snapshot, and no thread set by a BEGIN (the MySQL connector's
source.thread); otherwise dump reads every event in Python, as before.
"""
from __future__ import annotations

import json
import re
from types import SimpleNamespace

from .. import native
from ..binlog.rows import OPS
from ..binlog.rows_native import shape_of
from .dump import is_text
from .jsonl_lane import JsonlLane, lane_frame

__all__ = ["DebeziumLane", "attach"]

_MARK = 7 * 10 ** 40  # numbers (and a GTID) no real value holds
_QUERIES = ("QUERY_EVENT", "QUERY_COMPRESSED_EVENT")


def attach(stream, writer):
    """The lane (also set as stream.lane) when the compiled backend runs, the stream reads every
    event as it is and the writer's options leave nothing to the events it passes over; None
    otherwise. `writer`: the run's DebeziumWriter."""
    mod = native.jsonl_lane()
    if mod is None or native.rows() is None or not stream.filters.keeps_all \
            or stream.window.active or stream.skip_damaged or stream.server is not None:
        return None
    if writer.kafka or writer.schemas or writer.tx_metadata or writer.schema_changes or \
            writer.include_query or writer.snapshot_mode != "no_data":
        return None
    lane = stream.lane = DebeziumLane(mod, writer, stream.verify_checksum)
    return lane


class DebeziumLane(JsonlLane):
    """JsonlLane writing the Debezium records of rows events only (its config's rows_only)."""

    def _config(self, f):
        cfg = super()._config(f)
        if cfg is None:
            return None
        # every record but the rows' is left out (rows_only); the lane passes over the other
        # events it knows, and stops at QUERY events (no statement is learned: _learn)
        self.cfg = cfg[:4] + (True,) + cfg[5:]
        return self.cfg

    declared = None  # what the DDL the writer followed declared, when the plans were made

    def after(self, ev, f, decoder, stop=None):
        w = self.writer
        if w.thread is not None or w.native is False or w.native is None:
            self.last, self.inner = None, []
            return None
        if w.declared.tables != self.declared:  # DDL that may change what a table's records say
            self.declared = {k: dict(v) for k, v in w.declared.tables.items()}
            self.plans = {}
        return super().after(ev, f, decoder, stop)

    def go_on(self, f, pos, stop=None):
        if self.writer.thread is not None:
            return None
        return super().go_on(f, pos, stop)

    def _learn(self, se, f):
        ev = se.event
        if ev.type is None or ev.name in _QUERIES:
            return
        if not (ev.type.row_op and ev.type.code in self.mod.ROWS.values()):
            super()._learn(se, f)
            return
        t = se.table
        reg = self.ids.get(t.table_id) if t is not None else None
        shape = shape_of(ev, t) if reg is not None else None
        if shape is None:
            return
        hl, phl = ev.context.get("header_len"), ev.context.get("post_header_len", 0)
        key = self.mod.shape_key(ev.raw, reg, phl, 4 if ev.footer else 0)
        if key is None or key in self.plans:
            return
        w = self.writer
        cs = w.charsets.charset(ev.file, t.db)
        plan = t.readers.get((*w.native.key, *shape[1:], cs))
        if plan is None or plan is False or w.native._declared(t):
            return
        template = self._template(se, OPS[shape[0]])
        frame = lane_frame(template) if template else None
        if frame is not None:
            self.plans[key] = (plan, frame)

    def _template(self, se, op):
        """The pieces of this event's records around their images and row index, as format
        strings of the lane's fields; None when they cannot be made."""
        ev, t, w = se.event, se.table, self.writer
        m = {k: _MARK + n for n, k in enumerate(("pos", "timestamp", "server_id", "row"))}
        ch = SimpleNamespace(timestamp=m["timestamp"], file=ev.file, db=t.db, table=t.table,
                             server_id=m["server_id"], pos=m["pos"])
        gtid, w.gtid = w.gtid, f"g{_MARK + 9}"
        try:
            source = w._source(ch, se, m["row"])
        finally:
            w.gtid = gtid
        ts = source["ts_ms"]
        value = {"before": "\0b" if op != "c" else None, "after": "\0a" if op != "d" else None,
                 "source": source, "transaction": None, "op": op, "ts_ms": ts,
                 "ts_us": ts * 1000, "ts_ns": ts * 1_000_000}
        line = w._encode(value)
        if not is_text(line):
            return None
        line = line.replace("{", "{{").replace("}", "}}")
        gmark = json.dumps(f"g{_MARK + 9}")
        if line.count(gmark) > 1:
            return None
        line = line.replace(gmark, "{gtid}")
        names = {str(m["pos"]): "{pos}", str(m["server_id"]): "{server_id}",
                 str(m["timestamp"] * 1000): "{ts_ms}", str(m["timestamp"] * 10 ** 6): "{ts_us}",
                 str(m["timestamp"] * 10 ** 9): "{ts_ns}", str(m["row"]): "\0row"}
        seen = []

        def field(tok):
            name = names.get(tok.group())
            seen.append(name)
            return tok.group() if name is None else name

        line = re.sub(r"\d+", field, line)
        want = ["{pos}", "{server_id}", "\0row"] + ["{ts_ms}", "{ts_us}", "{ts_ns}"] * 2
        if sorted(n for n in seen if n) != sorted(want) or str(_MARK)[:12] in line:
            return None  # a field more or less than the record has, a marker's digits in a name
        cuts = [json.dumps(x) for x in ("\0b", "\0a") if x in (value["before"], value["after"])]
        cuts.append("\0row")
        pieces, rest = [], line
        for cut in cuts:
            if rest.count(cut) != 1:
                return None
            head, rest = rest.split(cut)
            pieces.append(head)
        pieces.append(rest + "\n")
        return tuple(pieces)
