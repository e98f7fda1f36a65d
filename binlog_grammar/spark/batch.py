"""Reading the `binlog` data source's splits in Spark's Python workers: a split's row changes as
Arrow batches (map, JSON or typed images), or its table definitions. The plan and the split reader
are plain Python (binlog_grammar.spark.split), the values' forms binlog_grammar.spark.typed; the
streaming source reads a replication stream through the same BinlogReader."""
from __future__ import annotations

import os
import sys
from typing import Iterator

from pyspark.sql import types as S
from pyspark.sql.datasource import DataSourceReader, InputPartition

from ..output.dump import escape_undecoded
from .arrow_rows import (FULL, DefinitionRows, NativeBatch, change_batch, json_object,
                         native_rows, text_array)
from .options import ERROR_MARK, ReadOptions, bad_input

BATCH_ROWS = 4096
IGNORE_CORRUPT = "spark.sql.files.ignoreCorruptFiles"
_OPS = {"insert": "c", "update": "u", "delete": "d"}  # rows.OPS: a raw rows event's op


def _in_spark_worker() -> bool:
    """Is this a Python worker Spark started (pyspark.daemon, pyspark.worker, the data source
    planners of pyspark.sql.worker), not a user's driver or a test?"""
    spec = getattr(sys.modules.get("__main__"), "__spec__", None)
    return getattr(spec, "name", "").startswith("pyspark.")


def task_error(message) -> RuntimeError:
    """The error of a data source call about its input, for Spark to show with the message
    first: Spark prints a Python worker's exception as "An exception was thrown from the Python
    worker:" and the traceback, the message last. The worker exits once it has sent the error
    (pyspark.worker, pyspark.sql.worker.utils), so it may format this one without the traceback,
    as spark.sql.execution.pyspark.udf.hideTraceback.enabled does for a session:
    `RuntimeError: [binlog-grammar] FILE: offset N: EVENT_TYPE: what` is the line after it."""
    if _in_spark_worker():
        os.environ["SPARK_HIDE_TRACEBACK"] = "1"
    return bad_input(message)


def report(line: str) -> None:
    """One line on the worker's standard error (the executor's log; the console in local mode),
    where Spark's file sources log the corrupt files they skip."""
    print(f"binlog-grammar: {line}", file=sys.stderr, flush=True)


def corrupt_files_ignored() -> bool:
    """spark.sql.files.ignoreCorruptFiles of the query's session: Spark hands the SQL settings a
    session sets to its tasks as local properties."""
    try:
        from pyspark import TaskContext

        tc = TaskContext.get()
        v = tc.getLocalProperty(IGNORE_CORRUPT) if tc is not None else None
    except Exception:  # pragma: no cover - outside a task
        v = None
    return str(v).strip().lower() == "true"


_GRAMMAR = None


def use_grammar(specs: list):
    """Read with the project's specs plus `specs` folders (binlog_grammar.codegen.grammar), once per
    Python process; a process that already read with other specs refuses."""
    global _GRAMMAR
    key = tuple(specs)
    if _GRAMMAR == key:
        return
    if _GRAMMAR is not None or (key and _generated_loaded()):
        raise RuntimeError(f"{ERROR_MARK}this Python worker already reads with other specs; use "
                           "a new Spark application (or spark.python.worker.reuse=false) to "
                           "change the `specs` option")
    if key:
        from ..codegen.grammar import use_specs

        use_specs(list(key))
    _GRAMMAR = key


_TASKS = 0  # reads begun in this process


def _freeze_after_first_task():
    """At the start of a worker's second read, move what survived the first (modules, the
    grammar, the generated readers and their caches) out of the cyclic garbage collector's sight
    (gc.freeze). PySpark's daemon runs a full gc.collect() after every task, which otherwise
    walks all of them each time: 10-20 ms of the worker's CPU per task, while the task slot
    waits. Objects made later are collected as usual."""
    global _TASKS
    _TASKS += 1
    if _TASKS == 2:
        import gc

        gc.freeze()


def _generated_loaded() -> bool:
    import sys

    return any(m.startswith("binlog_grammar.generated.") for m in sys.modules)



def storage_settings(options) -> dict:
    from .fs import resolve

    return resolve(options)


def configure_storage(settings) -> None:
    from .fs import configure

    configure(settings)


class SplitPartition(InputPartition):
    def __init__(self, split: dict, paths: list):
        super().__init__(split)
        self.paths = paths


class BinlogReader(DataSourceReader):
    def __init__(self, options, schema, also=()):
        self.o = ReadOptions(options, also)  # also: the streaming source's own options
        # object storage's endpoint and credentials, resolved on the driver and pickled with the
        # reader, so the executors need none of their own (spark/fs.py)
        self.storage = storage_settings(options)
        self.schema = schema
        self.typed_defs = None
        if self.o.table and self.o.content == "changes":
            after = schema["after"].dataType
            self.typed_defs = [f.metadata.get("binlog_column") or {"name": f.name, "type": None}
                               for f in after.fields]

    def partitions(self):
        use_grammar(self.o.specs)
        configure_storage(self.storage)
        if self.o.plan is not None:
            paths = self.o.plan["paths"]
            return [SplitPartition(s, paths) for s in self.o.plan["splits"]]
        from ..errors import BinlogError
        from .split import expand_paths, plan

        try:
            paths = expand_paths(self.o.paths)
            splits, _ = plan(paths, self.o.split_bytes, self.o.min_partitions,
                             tx_seq_base=self.o.tx_seq_base)
        except BinlogError as e:
            raise task_error(e) from None
        out = []
        last = len(paths) - 1
        for s in splits:
            if self.o.start_position is not None and s.file_index == 0 and s.stop is not None \
                    and s.stop <= self.o.start_position:
                continue  # every event of it is before the start position
            if self.o.stop_position is not None and s.file_index == last \
                    and s.start >= self.o.stop_position:
                continue  # every event of it is at or after the stop position
            out.append(SplitPartition(s.to_json(), paths))
        return out or [SplitPartition(None, paths)]

    def read(self, partition):
        use_grammar(self.o.specs)
        configure_storage(getattr(self, "storage", None))
        _freeze_after_first_task()
        from ..errors import BinlogError
        from .split import Split

        if partition.value is None:
            return
        split = Split.from_json(partition.value)
        self.ignore_corrupt = corrupt_files_ignored()
        try:
            if self.o.content == "tables":
                yield from self._tables(split, partition.paths)
            else:
                yield from self.change_batches(split, partition.paths)
        except BinlogError as e:
            raise task_error(e) from None
        except (OSError, ValueError) as e:
            raise task_error(f"{split.path}: {e}") from None

    # -- change rows ---------------------------------------------------------------------------
    def change_batches(self, split, paths, stream=None) -> Iterator:
        """Arrow batches of the split's row changes, or of `stream`'s (the streaming reader passes
        a stream over a replication source)."""
        import pyarrow as pa
        from pyspark.sql.pandas.types import to_arrow_schema

        from .split import split_stream
        from .typed import converter, same_table, typed_image, typed_keys

        pa_schema = to_arrow_schema(self.schema, timezone="UTC")
        types = [f.type for f in pa_schema]
        o = self.o
        if stream is None:  # the streaming reader passes a stream over a replication source
            # raw rows as the commands show them (the pipeline keeps them in its undecoded/)
            stream = split_stream(split, paths, o.filters(), o.verify_checksum, o.schemas(),
                                  o.skip_damaged, raw_rows=True)
        if o.envelope == "debezium":
            yield from self._debezium_batches(stream, pa, pa_schema)
            return
        if self.typed_defs is None:
            yield from self._map_batches(stream, pa, types, pa_schema)
            return
        events = self._row_events(stream)
        convs = [(d["name"], converter(d)) for d in self.typed_defs]
        keyed = {}  # a layout's column names -> (field name, the image's key, converter)

        def image(img):
            return typed_image(img, cols_of)

        cols = [[] for _ in range(9)]
        op_c, before_c, after_c, source_c, ts_c, db_c, table_c, raw_c, why_c = cols
        n = 0
        for se, changes in events:
            t = se.table
            if t is None or not same_table(t, o.table_name):
                continue
            if changes is not None:
                names = tuple(c.name for c in t.columns)
                cols_of = keyed.get(names)
                if cols_of is None:
                    cols_of = keyed[names] = typed_keys(convs, names)
            gtid = se.gtid
            seq = se.tx_seq
            if changes is None:  # rows not decoded: one row with the event's bytes
                row = raw_row(se)
                for c, v in zip(cols, row):
                    c.append(v)
                n += 1
                continue
            for i, ch in enumerate(changes):
                op_c.append(ch.op)
                before_c.append(image(ch.before))
                after_c.append(image(ch.after))
                source_c.append((ch.file, ch.pos, ch.end_pos, ch.server_id, gtid, ch.timestamp,
                                 ch.db, ch.table, ch.table_id, ch.event_type, seq, i))
                ts_c.append(ch.timestamp * 1000)
                db_c.append(ch.db)
                table_c.append(ch.table)
                raw_c.append(None)
                why_c.append(None)
                n += 1
            if n >= BATCH_ROWS:
                yield _batch(pa, cols, types, pa_schema)
                for c in cols:
                    c.clear()
                n = 0
        if n:
            yield _batch(pa, cols, types, pa_schema)

    def _debezium_batches(self, stream, pa, pa_schema) -> Iterator:
        """envelope debezium: the split's lines of the registry's debezium format (one writer
        for the split, as dump's for a file), each with the event it comes from."""
        from ..output.formats import get

        w = get("debezium").writer(options=self.o.debezium)
        cols = ([], [], [], [], [], [], [])

        def put(se):
            """The lines of event `se` (None: the split's end), each with the event's file,
            offset and time and, for a change record, its table: a transaction's BEGIN record
            comes first among the lines of its first rows event (the writer's `tx` starts)."""
            tx = w.tx
            texts = list(w.lines(se) if se is not None else w.end())
            ev = se.event if se is not None else None
            t = se.table if ev is not None and ev.type is not None and ev.type.row_op else None
            at = (None, None, None) if ev is None else \
                (ev.file, ev.offset, int(ev.header.timestamp) * 1000)
            named = (None, None) if t is None else (t.db, t.table)
            begun = tx is None and w.tx is not None
            i = 0
            for text in texts:
                for line in text.split("\n"):  # the compiled backend joins an event's lines
                    db, table = (None, None) if begun and i == 0 else named
                    for c, v in zip(cols, (line, at[0], at[1], i, db, table, at[2])):
                        c.append(v)
                    i += 1

        def batch():
            return pa.RecordBatch.from_arrays([text_array(pa, c, f.type) for c, f in
                                               zip(cols, pa_schema)], schema=pa_schema)

        events = self._row_events(stream, every=True)
        for se, _ in events:
            put(se)
            if len(cols[0]) >= BATCH_ROWS:
                yield batch()
                for c in cols:
                    c.clear()
        put(None)
        if cols[0]:
            yield batch()

    def _row_events(self, stream, every=False, take=None) -> Iterator:
        """_row_events of the stream (`every`: all its events; `take`: see _row_events), then
        its damage reported; with ignoreCorruptFiles, the split ends at an error about its bytes
        (the rows before it are kept), reported."""
        from ..errors import BinlogError

        try:
            if every:  # every event, (se, None)
                yield from ((se, None) for se in stream.events())
            else:
                yield from _row_events(stream, getattr(self, "see", None), take)
        except BinlogError as e:
            if not getattr(self, "ignore_corrupt", False):
                raise
            report(f"{IGNORE_CORRUPT}: skipped the rest of a split at the damage: {e}")
        for d in getattr(stream, "damage", ()):
            report(damage_line(d))
        for u in getattr(stream, "undecoded", ()):
            report(f"{'damaged rows event' if u.damaged else 'note: rows not decoded'} of "
                   f"{u.file} at offset {u.offset} ({u.event_type}), shown raw: {u.message}")

    def _native_batches(self, stream, batch, charsets, pa, types, pa_schema) -> Iterator:
        """_map_batches with the images in C (arrow_rows.NativeBatch); the events the C side
        does not write are decoded by the reader and written in Python into the same batch."""
        from ..output.dump import with_image_forms
        from .typed import json_text

        def charset(se):
            t = se.table
            return charsets.charset(se.event.file, t.db if t else None)

        defs = DefinitionRows() if self.o.with_tables else None

        def take(se):
            if defs is not None:
                row = defs.row(se)
                if row is not None:
                    batch.add_raw(row)
            return batch.add_event(se, charset(se))

        for se, changes in self._row_events(stream, take=take):
            if changes is FULL:  # the batch's buffers are full: build them, then the event
                if batch.n:
                    yield batch.build(pa, types, pa_schema)
                if batch.add_event(se, charset(se)) is not True:
                    changes = se.changes  # more than a batch holds: its texts made in Python
            if changes is True or changes is FULL:
                pass
            elif changes is None:
                batch.add_raw(raw_row(se))
            else:
                batch.add_changes(with_image_forms(changes, charset(se)), se.gtid, se.tx_seq,
                                  json_text)
            if batch.n >= BATCH_ROWS:
                yield batch.build(pa, types, pa_schema)
        if batch.n:
            yield batch.build(pa, types, pa_schema)

    def _map_batches(self, stream, pa, types, pa_schema) -> Iterator:
        """The map (or JSON) form, built column by column (flat key and value lists for the
        maps, one value per rows event for the fields its rows share): what Arrow converts
        fastest. The form is the schema's (a string image: image_format json)."""
        from ..output.dump import ServerCharsets, with_image_forms
        from .typed import json_text

        json_images = not isinstance(self.schema["before"].dataType, S.MapType)
        charsets = ServerCharsets()  # the dump's forms: JSON columns, text without charsets
        self.see = charsets.see
        mod = native_rows()
        if mod is not None:  # the images written by the compiled backend (spark/arrow_rows.py)
            yield from self._native_batches(stream, NativeBatch(mod, json_images), charsets,
                                            pa, types, pa_schema)
            return
        events = self._row_events(stream)
        batch = _MapBatch(json_images)
        defs = DefinitionRows() if self.o.with_tables else None
        for se, changes in events:
            row = defs.row(se) if defs is not None else None
            if row is not None:
                batch.add_row(row)
            if changes is None:
                batch.add_raw(se)
                continue
            t = se.table
            changes = with_image_forms(changes, charsets.charset(se.event.file, t.db if t else None))
            batch.add(changes, se.gtid, se.tx_seq, json_text)
            if batch.n >= BATCH_ROWS:
                yield batch.build(pa, types, pa_schema)
                batch = _MapBatch(json_images)
        if batch.n:
            yield batch.build(pa, types, pa_schema)

    # -- table definitions ---------------------------------------------------------------------
    def _tables(self, split, paths) -> Iterator:
        from .split import table_maps
        from .typed import Definitions

        o = self.o
        flt = o.filters()
        defs = Definitions()  # a row each time a table takes a definition
        rows = []
        for table, ev in table_maps(split, o.schemas()):
            if not flt.table_ok(table.db, table.table):
                continue
            key = defs.new(table)
            if key is None:
                continue
            rows.append((table.db, table.table, key[0], list(key[1]),
                         bool(table.full_metadata), split.path, split.file_index, ev.offset))
        yield from map(_text_row, rows)


def _text_row(row) -> tuple:
    """A row of content tables with a database or table name whose bytes do not decode (kept as
    surrogate escapes) written \\xNN, as text_array writes them in the change rows: Spark's
    strings are UTF-8 (the column names come so from typed.Definitions)."""
    db, table, *rest = row
    return (escape_undecoded(db), escape_undecoded(table), *rest)


def _row_events(stream, see=None, take=None) -> Iterator:
    """(stream event, its row changes) of every rows event of the stream that has any, and
    (stream event, None) of a rows event whose rows were not decoded (its `undecoded` says
    why); `see` is given every other event. `take(se)` is offered each rows event first: what
    it returns instead of the changes when true (it wrote the rows itself)."""
    for se in stream.events():
        ev = se.event
        if ev.type is not None and ev.type.row_op:
            if take is not None:
                took = take(se)
                if took:
                    yield se, took
                    continue
            changes = se.changes
            if changes:
                yield se, changes
            elif se.undecoded is not None:
                yield se, None
        elif see is not None:
            see(ev)


def raw_row(se) -> tuple:
    """The row of a rows event whose rows were not decoded: op, no images, source (row 0), ts_ms,
    db, table, the row-image bytes as stored, the reason (dump.raw_rows_record's fields)."""
    from ..output.dump import rows_bytes

    ev = se.event
    t = se.table
    db, table = (t.db, t.table) if t is not None else (None, None)
    ts = int(ev.header.timestamp)
    return (_OPS[ev.type.row_op], None, None,
            (ev.file, ev.offset, ev.end, int(ev.header.server_id), se.gtid, ts, db, table,
             int(ev.data["table_id"]), ev.name, se.tx_seq, 0),
            ts * 1000, db, table, rows_bytes(ev), se.undecoded)


def damage_line(d) -> str:
    """A Damage (bytes skip_damaged stepped over) in the words of the commands' report."""
    return (f"skipped {d.skipped_bytes} damaged bytes of {d.file} at offset {d.offset} "
            f"({d.event_type or 'unknown event'}): {d.message}")


def _put_map(img, columns, json_text):
    """One image (or None) onto the flat offsets, keys, values and null mask of a map column."""
    offsets, keys, values, mask = columns
    if img is None:
        mask.append(True)
    else:
        mask.append(False)
        keys.extend(img)
        values.extend(map(json_text, img.values()))
    offsets.append(len(keys))


class _MapBatch:
    """Rows of the map (or JSON) form, column by column. The fields a rows event gives all its
    rows (op, the source fields but `row`, ts_ms, db, table) are kept once per event as runs and
    expanded by Arrow (run_end_decode); only the images and `row` are per row."""

    def __init__(self, json_images=False):
        self.n = 0
        self.json = json_images
        self.ends = []  # run ends: rows in the batch after each event
        # op, the source fields but row, ts_ms, rows_raw, undecoded
        self.runs = [[] for _ in range(15)]
        self.row = []
        if json_images:
            self.images = [], []  # JSON object text (None: no image)
            self.prefixes = {}  # image keys -> ['{"k1":', ',"k2":', ...]
        else:
            self.images = ([0], [], [], []), ([0], [], [], [])  # offsets, keys, values, null mask

    def add(self, changes, gtid, seq, json_text):
        """The rows of one rows event (every change has the event's op, file, pos ...)."""
        ch = changes[0]
        n = len(changes)
        self.n += n
        self.ends.append(self.n)
        for run, v in zip(self.runs, (ch.op, ch.file, ch.pos, ch.end_pos, ch.server_id, gtid,
                                      ch.timestamp, ch.db, ch.table, ch.table_id, ch.event_type,
                                      seq, ch.timestamp * 1000, None, None)):
            run.append(v)
        self.row.extend(range(n))
        if self.json:
            before, after = self.images
            obj = self._object
            for ch in changes:
                img = ch.before
                before.append(None if img is None else obj(img, json_text))
                img = ch.after
                after.append(None if img is None else obj(img, json_text))
            return
        before, after = self.images
        for ch in changes:
            _put_map(ch.before, before, json_text)
            _put_map(ch.after, after, json_text)

    def add_raw(self, se):
        """The one row of a rows event whose rows were not decoded (raw_row)."""
        self.add_row(raw_row(se))

    def add_row(self, row):
        """A row without images: raw_row's tuple, or DefinitionRows.row's."""
        op, _b, _a, source, ts_ms, _db, _t, raw, why = row
        self.n += 1
        self.ends.append(self.n)
        for run, v in zip(self.runs, (op, *source[:11], ts_ms, raw, why)):
            run.append(v)
        self.row.append(0)
        for img in self.images:
            if self.json:
                img.append(None)
            else:
                offsets, _keys, _values, mask = img
                mask.append(True)
                offsets.append(offsets[-1])

    def _object(self, img, json_text):
        """A row image as one JSON object text (so json.loads of it equals the map form with
        json.loads of every value)."""
        return json_object(img, json_text, self.prefixes)

    def build(self, pa, types, pa_schema):
        if self.json:
            images = [pa.array(v, types[i]) for v, i in zip(self.images, (1, 2))]
        else:
            images = []
            for (offsets, keys, values, mask), t in zip(self.images, (types[1], types[2])):
                images.append(pa.MapArray.from_arrays(
                    pa.array(offsets, pa.int32()), text_array(pa, keys, t.key_type),
                    pa.array(values, t.item_type), type=t, mask=pa.array(mask, pa.bool_())))
        return change_batch(pa, types, pa_schema, self.ends, self.runs,
                            pa.array(self.row, types[3].field(11).type), images[0], images[1])


def _batch(pa, cols, types, pa_schema):
    return pa.RecordBatch.from_arrays([text_array(pa, c, t) for c, t in zip(cols, types)],
                                      schema=pa_schema)


def find_table(o: ReadOptions) -> list:
    """Column descriptions of `o.table` from its first TABLE_MAP_EVENT in the input."""
    from ..errors import BinlogError
    from .split import Split, expand_paths, table_maps
    from .typed import column_def, same_table

    try:
        paths = expand_paths(o.paths) if not o.plan else o.plan["paths"]
        schemas = o.schemas()
        for i, p in enumerate(paths):
            split = Split(p, i, 4, None)
            # with skip_damaged, the maps the reader sees: past the damage it steps over
            maps = _maps_past_damage(split, paths, schemas) if o.skip_damaged else \
                table_maps(split, schemas)
            for table, _ev in maps:
                if same_table(table, o.table_name):
                    return [column_def(c) for c in table.columns]
    except BinlogError as e:
        raise task_error(e) from None
    raise ValueError(f"{ERROR_MARK}table {o.table}: no TABLE_MAP_EVENT of it in the input")


def _maps_past_damage(split, paths, schemas):
    """(rows.Table, event) of the split's TABLE_MAP_EVENTs as the skip_damaged reader reads them
    (table_maps walks the headers and ends at a damaged length)."""
    from ..binlog.rows import RowDecoder
    from .split import split_stream

    decoder = RowDecoder(schemas)
    for se in split_stream(split, paths, None, False, schemas, True, raw_rows=True).events():
        if se.event.type is not None and se.event.type.name == "TABLE_MAP_EVENT":
            yield decoder.table_map(se.event), se.event
