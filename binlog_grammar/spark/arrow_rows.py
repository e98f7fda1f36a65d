"""The `binlog` data source's change rows as Arrow record batches whose images the compiled
backend writes: the Python workers hand Spark columns made in C, not one map of strings per row
made in Python.

A batch (`NativeBatch`) gathers rows events one after another. The images of a rows event are
written by the row loop of binlog_grammar.native._rows into the buffers of Arrow arrays
(binlog_grammar/native/arrow_rows.h): for the map form, each image's entry offsets, the keys
(column names) and the values (their JSON texts); for image_format json, one JSON object text
per image; a validity bitmap each, and the row's index in its event. Each value's text is the
JSON lines form of dump --format jsonl (output/jsonl_native.py's plan of the table), made
compact as spark/typed.py's json_text writes it. pyarrow wraps the buffers as they are
(`Array.from_buffers`, no Python per row). The fields a rows event gives all its rows (op, the
source fields but `row`, ts_ms, db, table) are kept once per event and expanded by Arrow
(run_end_decode).

An event the C side refuses (a value it does not write, text that does not decode, a table
mapped without metadata, damaged bytes: see output/jsonl_native.py) has its row changes
decoded by the reader and its images written in Python (`add_changes`, the texts of
typed.json_text) into the same buffers; a rows event whose rows are not decoded is one row
without images (`add_raw`). Without the compiled backend (BINLOG_GRAMMAR_BACKEND=python, or
not built) `native_rows()` is None and the data source builds its batches in Python as before
(spark/batch.py); both give the same batches (tests/spark/test_spark_arrow.py).
"""
from __future__ import annotations

from .. import native
from ..binlog.reader import CHECKSUM_LEN
from ..binlog.rows import OPS
from ..output.jsonl_native import plan_for

__all__ = ["DefinitionRows", "FULL", "NativeBatch", "change_batch", "escaped", "json_object",
           "native_rows", "text_array"]

FULL = "full"  # NativeBatch.add_event: the batch holds too much for the event; build it first
_RUNS = 15  # op, the source fields but row (11), ts_ms, rows_raw, undecoded


def native_rows():
    """binlog_grammar.native._rows when the compiled backend runs and has the Arrow sink."""
    mod = native.rows()
    return mod if mod is not None and hasattr(mod, "arrow_new") else None


def json_object(img, json_text, prefixes: dict) -> str:
    """A row image as one JSON object text: the keys in image order, each value its json_text
    (`prefixes`: image keys -> the text before each value, kept between calls)."""
    keys = tuple(img)
    pre = prefixes.get(keys)
    if pre is None:
        pre = prefixes[keys] = [("," if i else "{") + json_text(k) + ":"
                                for i, k in enumerate(keys)]
    if not pre:
        return "{}"
    return "".join(map(str.__add__, pre, map(json_text, img.values()))) + "}"


def text_array(pa, values, t):
    """pa.array(values, t), with a name (database, table, column) whose bytes do not decode
    (kept as surrogate escapes by the decoder) written `\\xNN` as the dump writes it: Arrow's
    strings are UTF-8, and such a name from hostile bytes failed the whole read."""
    try:
        return pa.array(values, t)
    except UnicodeEncodeError:
        return pa.array([escaped(v) for v in values], t)


def escaped(v):
    """`v` with every text in it (in tuples, lists and dicts too) as escape_undecoded writes it."""
    from ..output.dump import escape_undecoded

    if isinstance(v, str):
        return escape_undecoded(v)
    if isinstance(v, (tuple, list)):
        return type(v)(escaped(x) for x in v)
    if isinstance(v, dict):
        return {escaped(k): escaped(x) for k, x in v.items()}
    return v


def change_batch(pa, types, pa_schema, ends, runs, row, before, after):
    """The record batch of the change rows: `ends` the rows after each event, `runs` the
    columns kept once per event (op, the source fields but row, ts_ms, rows_raw, undecoded),
    `row` the source's row column, `before` and `after` the image arrays."""
    import pyarrow.compute as pc

    ends = pa.array(ends, pa.int32())

    def expand(values, t):
        return pc.run_end_decode(pa.RunEndEncodedArray.from_arrays(ends, text_array(pa, values, t)))

    st = types[3]
    fields = [expand(runs[i + 1], st.field(i).type) for i in range(11)]
    fields.append(row)
    source = pa.StructArray.from_arrays(fields, fields=[st.field(i) for i in range(st.num_fields)])
    return pa.RecordBatch.from_arrays(
        [expand(runs[0], types[0]), before, after, source, expand(runs[12], types[4]),
         fields[6], fields[7], expand(runs[13], types[7]), expand(runs[14], types[8])],
        schema=pa_schema)


class NativeBatch:
    """The change rows of a batch, their images in C (see the module docstring). `n` is the
    number of rows; `build` makes the record batch and empties it for the next."""

    def __init__(self, mod, json_images: bool):
        self.mod = mod
        self.json = json_images
        self.acc = mod.arrow_new(json_images)
        self.prefixes = {}
        self.names = {}
        self._clear()

    def _clear(self):
        self.n = 0
        self.ends = []
        self.events = []  # per event, its value of each run (turned into columns by build)

    def _event(self, n, values):
        self.n += n
        self.ends.append(self.n)
        self.events.append(values)

    def add_event(self, se, server_charset):
        """The rows of the rows event `se` written by the compiled backend: True, False when it
        does not write them (the caller then adds its changes or its raw row), FULL when the
        batch must be built first."""
        ev, t = se.event, se.table
        if t is None:
            return False
        mod = self.mod
        head = getattr(ev, "_head", None)  # what rows_head() read of it (binlog/batch.py)
        try:
            if head and not ev.type.decode:
                key = ("arrow-jsonl", head[1], ev.context["type_code"], server_charset)
                plan = t.readers.get(key)
                if plan is None:
                    plan = t.readers[key] = plan_for(se, server_charset, mod) or False
                raw = ev.raw
                data = memoryview(raw)[head[2]:len(raw) - CHECKSUM_LEN * ev.footer]
            else:
                plan = plan_for(se, server_charset, mod) or False
                data = se._decoder.rows_bytes(ev) if plan and se._decoder is not None else None
        except Exception:  # noqa: BLE001 - the reader meets the same bytes and says what is wrong
            return False
        if plan is False or data is None:
            return False
        keys = None
        if not self.json:
            keys = t.readers.get("arrow-keys")
            if keys is None:
                try:
                    keys = t.readers["arrow-keys"] = tuple(n.encode("utf-8") for n in t.names)
                except UnicodeEncodeError:  # a name that is not text: the reader's path
                    keys = t.readers["arrow-keys"] = False
            if keys is False:
                return False
        op = ev.type.row_op
        r = mod.arrow_rows(self.acc, plan, data, 1 if op == "insert" else 0, keys)
        if r == mod.ARROW_FULL:
            return FULL
        if r < 0:
            return False
        if r:
            stamp = getattr(ev, "_stamp", None)
            if stamp is None:
                h = ev.header
                stamp = (h["timestamp"], h["server_id"])
            ts = int(stamp[0])
            self._event(r, (OPS[op], ev.file, ev.offset, ev.end, int(stamp[1]), se.gtid, ts,
                            t.db, t.table, t.table_id, ev.name, se.tx_seq, ts * 1000, None, None))
        return True

    def add_changes(self, changes, gtid, seq, json_text):
        """The rows of one rows event as the reader decoded them (RowChanges whose images are in
        their JSON forms: dump.with_image_forms), their texts made in Python."""
        ch = changes[0]
        self._event(len(changes), (ch.op, ch.file, ch.pos, ch.end_pos, ch.server_id, gtid,
                                   ch.timestamp, ch.db, ch.table, ch.table_id, ch.event_type,
                                   seq, ch.timestamp * 1000, None, None))
        put, acc = self.mod.arrow_put, self.acc
        if self.json:
            pre = self.prefixes

            def image(img):
                return None if img is None else json_object(img, json_text, pre)
        else:
            from ..output.dump import escape_undecoded

            names = self.names  # an image's keys -> the map's keys: names that do not decode \xNN

            def image(img):
                if img is None:
                    return None
                keys = tuple(img)
                k = names.get(keys)
                if k is None:
                    k = names[keys] = tuple(map(escape_undecoded, keys))
                return k, [json_text(v) for v in img.values()]
        for i, ch in enumerate(changes):
            put(acc, image(ch.before), image(ch.after), i)

    def add_raw(self, row):
        """The one row of a rows event whose rows were not decoded (batch.raw_row's tuple)."""
        op, _b, _a, source, ts_ms, _db, _t, raw, why = row
        self._event(1, (op, *source[:11], ts_ms, raw, why))
        self.mod.arrow_put(self.acc, None, None, 0)

    def build(self, pa, types, pa_schema):
        rows, row, before, after = self.mod.arrow_take(self.acc)
        buf = pa.py_buffer

        def image(parts, t):
            if self.json:
                nulls, valid, off, data = parts
                return pa.Array.from_buffers(t, rows, [valid and buf(valid), buf(off), buf(data)],
                                             null_count=nulls)
            nulls, valid, off, entries, koff, keys, voff, values = parts
            k = pa.Array.from_buffers(t.key_type, entries, [None, buf(koff), buf(keys)],
                                      null_count=0)
            v = pa.Array.from_buffers(t.item_type, entries, [None, buf(voff), buf(values)],
                                      null_count=0)
            kv = pa.StructArray.from_arrays([k, v], fields=[t.key_field, t.item_field])
            return pa.Array.from_buffers(t, rows, [valid and buf(valid), buf(off)],
                                         null_count=nulls, children=[kv])

        runs = [list(run) for run in zip(*self.events)] if self.events else [[]] * _RUNS
        out = change_batch(pa, types, pa_schema, self.ends, runs,
                           pa.Array.from_buffers(pa.int32(), rows, [None, buf(row)], null_count=0),
                           image(before, types[1]), image(after, types[2]))
        self._clear()
        return out


class DefinitionRows:
    """The read's option with_tables (the pipeline's): among a split's change rows, a row each
    time a table takes a definition (typed.Definitions: content `tables`' rule), told from the
    table of each rows event: op "t", no images, the rows event's source, and in `undecoded`
    the definition as JSON (columns: the JSON text of content tables' column `columns`,
    primary_key, full_metadata)."""

    def __init__(self):
        from .typed import Definitions

        self.defs = Definitions()

    def row(self, se):
        import json

        t = se.table
        key = None if t is None else self.defs.new(t)
        if key is None:
            return None
        ev = se.event
        ts = int(ev.header.timestamp)
        text = json.dumps({"columns": key[0], "primary_key": list(key[1]),
                           "full_metadata": bool(t.full_metadata)})
        return ("t", None, None, (ev.file, ev.offset, ev.end, int(ev.header.server_id), se.gtid,
                                  ts, t.db, t.table, int(t.table_id), ev.name, se.tx_seq, 0),
                ts * 1000, t.db, t.table, None, text)
