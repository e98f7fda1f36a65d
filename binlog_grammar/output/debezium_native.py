"""The row-change events of `--envelope debezium` written by the compiled backend: the records of
a rows event, each line what output/debezium.py's DebeziumWriter writes for it, byte for byte,
with the values written in C (binlog_grammar.native._rows with a DEBEZIUM plan: the forms of
FORMS["debezium"] in binlog_grammar/native/forms_debezium.h) straight from the event's bytes.

`NativeChanges(writer).lines(se)` gives the event's lines as one string (no newline after the
last), or None when the compiled backend does not write the event; DebeziumWriter then writes it
from `se.changes` as before. The text of each record around its images and row index (the
source block, op, timestamps) is made per event by the writer itself (`_source`, its encoder)
with marker numbers where the images and the row index go.

The compiled path runs for a run (the writer's options) without kafka.records, schemas.enable and
provide.transaction.metadata (their keys, wrappers, tombstones and transaction blocks are the
Python path's); every value option (decimal, time precision, binary, bigint, time adjuster) has
its C form. It leaves to the Python path (which also gives every error and its message):
- an event the compiled readers or forms refuse (see jsonl_native: damaged bytes, compressed
  columns, MySQL's binary JSON, text that does not decode, a POINT column), an update whose
  primary key changes (the connector's delete and create: C compares the key's JSON text of
  both images and refuses the event when it differs);
- a table whose rows hold only some columns (MINIMAL images), whose column names repeat, with
  more than DZ_MAX_KEYS key columns, or with DDL that says more than the binlog (BOOL, FLOAT(M,D),
  a NOT NULL temporal column's DEFAULT: DebeziumWriter._bools, _zero_defaults);
- a record whose text is not valid text (names that do not decode), or holds a marker's digits.
"""
from __future__ import annotations

from types import SimpleNamespace
from typing import Optional

from .. import native
from ..binlog.rows_native import column_inputs, shape_of
from ..binlog.rows import OPS
from ..runtime.values import CHARSET_CODECS, codec_of, errors_of
from .debezium_ddl import BOOL_TYPES
from .debezium_values import form_of, fsp_of, nullable
from .dump import is_text
from .jsonl_native import member_json, text_form

__all__ = ["NativeChanges"]

_MARK = 7 * 10 ** 40  # numbers no real field holds: where the images and the row index go
_DECIMAL = {"precise": 0, "string": 1, "double": 2}


class NativeChanges:
    """The compiled writer of a DebeziumWriter's row changes (None from `of` when its options
    ask for what only the Python path writes)."""

    def __init__(self, writer, mod):
        self.w = writer
        self.mod = mod
        s = writer.settings
        self.base = mod.DZ_ADJUST if s.time_adjuster else 0
        self.base |= {"base64-url-safe": mod.DZ_URLSAFE, "hex": mod.DZ_HEX}.get(s.binary_mode, 0)
        self.key = ("debezium-native", s)
        self.events = 0  # rows events written here (the tests see that the compiled path ran)

    @classmethod
    def of(cls, writer) -> Optional["NativeChanges"]:
        mod = native.rows()
        if mod is None or not hasattr(mod, "DEBEZIUM") or writer.kafka or writer.schemas or \
                writer.tx_metadata:
            return None
        return cls(writer, mod)

    def lines(self, se, cs) -> Optional[str]:
        """The records of the rows event `se` (server charset `cs`), or None."""
        ev, t = se.event, se.table
        shape = shape_of(ev, t)
        if shape is None or se._decoder is None:
            return None
        op, present, after, _type_code = shape
        if not all(present) or (after is not None and not all(after)):
            return None  # MINIMAL images: the connector's struct has every column (_whole)
        if self._declared(t):
            return None
        key = (*self.key, *shape[1:], cs)
        plan = t.readers.get(key)
        if plan is None:
            plan = t.readers[key] = self._plan(t, op, cs)
        if plan is False:
            return None
        frame = self._frame(se, OPS[op])
        if frame is None:
            return None
        try:
            data = se._decoder.rows_bytes(ev)
        except Exception:  # noqa: BLE001 - the Python path meets the same bytes and says what is wrong
            return None
        text, _status = self.mod.rows(plan, data, self.mod.JSONL, frame)
        if not text:
            return None
        self.w.last_row = text.count("\n") - 1
        self.events += 1
        return text[:-1]

    def _declared(self, t) -> bool:
        """Does the binlog's DDL say more of the table than its TABLE_MAP (BOOL, FLOAT(M,D), a
        DEFAULT that a zero date becomes)?"""
        declared = self.w.declared.get(t.db, t.table)
        if not declared:
            return False
        if any(c.type in BOOL_TYPES or c.double_float for c in declared.values()):
            return True
        return bool(self.w._zero_defaults(SimpleNamespace(db=t.db, table=t.table,
                                                          columns=t.columns)))

    def _frame(self, se, op):
        """The pieces of the event's records around their images and row index (bytes: before
        the first image, (between an update's images,) before the index, after it)."""
        ev, t = se.event, se.table
        h = ev.header
        ch = SimpleNamespace(timestamp=int(h["timestamp"]), file=ev.file, db=t.db, table=t.table,
                             server_id=int(h["server_id"]), pos=int(ev.offset))
        w = self.w
        source = w._source(ch, se, _MARK + 2)
        ts = source["ts_ms"]
        value = {"before": _MARK if op != "c" else None, "after": _MARK + 1 if op != "d" else None,
                 "source": source, "transaction": None, "op": op, "ts_ms": ts,
                 "ts_us": ts * 1000, "ts_ns": ts * 1_000_000}
        line = w._encode(value)
        if not is_text(line):
            return None
        marks = [str(_MARK + k) for k in (0, 1, 2) if k == 2 or value[("before", "after")[k]]
                 is not None]
        pieces, rest = [], line
        for m in marks:
            if line.count(m) != 1:
                return None
            head, rest = rest.split(m)
            pieces.append(head.encode("utf-8"))
        pieces.append(rest.encode("utf-8") + b"\n")
        return tuple(pieces)

    def _plan(self, t, op, cs):
        names = list(t.names)
        pk = list(t.primary_key or ())
        if len(set(names)) != len(names) or len(pk) > self.mod.DZ_MAX_KEYS or \
                not all(isinstance(n, str) and is_text(n) for n in names):
            return False
        try:
            columns = tuple(self._column(c, n, cs, n in pk) for c, n in zip(t.columns, names))
        except Exception:  # noqa: BLE001 - metadata the Python forms cannot read: they say so per value
            return False
        images = [b"\x01" * len(names)] * (2 if op == "update" else 1)
        return self.mod.plan(columns, tuple(images), tuple(b"" for _ in images), self.mod.DEBEZIUM)

    def _column(self, col, name, cs, key) -> tuple:
        mod, s = self.mod, self.w.settings
        form = form_of(col)
        head = self.w._encode({name: 0})[1:-2].encode("utf-8")  # '"name": '
        flags = self.base | (mod.DZ_NULLABLE if nullable(col) else 0) | (mod.DZ_KEY if key else 0)
        arg, pad, table, members, masks = 0, 0, b"", None, ()
        if form == "decimal":
            arg = _DECIMAL[s.decimal_mode]
        elif form == "bigint":
            flags |= mod.DZ_PRECISE if col.get("unsigned") and s.bigint_mode == "precise" else 0
        elif form == "datetime":
            flags |= mod.DZ_MICROS if s.time_mode != "connect" and fsp_of(col) > 3 else 0
        elif form == "micro_time":
            millis = s.time_mode == "connect" or (s.time_mode == "adaptive" and fsp_of(col) <= 3)
            flags |= (0 if millis else mod.DZ_MICROS) | \
                (mod.DZ_CONNECT if s.time_mode == "connect" else 0)
            arg = int(col.get("fsp") or 0)  # MySQL's text of a TIME past 59 minutes or seconds
        elif form == "zoned_timestamp":
            arg = fsp_of(col)
            if arg < 0:
                arg = None
        elif form == "bits":
            meta = col.get("meta")
            arg = int(meta.get("bytes", 0)) * 8 + int(meta.get("bits", 0)) if hasattr(meta, "get") else 0
        elif form == "string":
            arg, pad, table = text_form(mod, col, cs)
            if codec_of(col) is None and col.get("charset") is None and arg is not None and \
                    errors_of(CHARSET_CODECS.get(cs or "", "utf-8")) != "surrogateescape":
                arg = None  # decoded with "replace" here, the table's bytes with another handler
        elif form == "enum":
            values = col.get("enum_values")
            if values is not None:
                members = tuple(member_json(m) for m in values)
        elif form == "enum_set":
            values = col.get("set_values")
            if values is not None:
                if len(set(values)) != len(values) or not all(isinstance(m, str) for m in values):
                    arg = None  # the Python form's order of repeated members: left to it
                else:
                    members = tuple(member_json(m) for m in values)
                    masks = tuple(1 << i if i < 64 else 0 for i in range(len(values)))
                    pad = len(values)
        elif form == "geometry" and col.get("geometry_type") == 1:
            arg = None  # a POINT column's x and y: the Python form's
        index = mod.DEBEZIUM_FORMS.index(form) if form in mod.DEBEZIUM_FORMS and arg is not None else -1
        return (column_inputs(col, mod.COLUMN_INPUTS), index, arg or 0, pad, head, table, members,
                masks, flags)
