"""The `binlog` data source: binlog files as a DataFrame of row changes (Spark 4 Python Data Source).

    from binlog_grammar.spark import register
    register(spark)                                   # spark.dataSource.register(BinlogDataSource)
    df = spark.read.format("binlog").load("/var/lib/mysql/mariadb-bin.0*")
    typed = (spark.read.format("binlog").option("table", "shop.orders")
             .load(["mariadb-bin.000001", "mariadb-bin.000002"]))

See the package docstring (binlog_grammar/spark/__init__.py) for the schema, the options and the
partitioning rule. The work is plain Python (binlog_grammar.spark.split for the plan and the split
reader, binlog_grammar.spark.typed for the values); this module only speaks Spark.
"""
from __future__ import annotations

import datetime as dt
import json
from typing import Iterator, Optional

from pyspark.sql import types as S
from pyspark.sql.datasource import DataSource, DataSourceReader, InputPartition

ERROR_MARK = "[binlog-grammar] "  # starts the message of an error about the input (pipeline shows it)
BATCH_ROWS = 4096

MAP = S.MapType(S.StringType(), S.StringType(), True)
JSON_IMAGE = S.StringType()  # option image_format=json: an image as one JSON object text
SOURCE = S.StructType([
    S.StructField("file", S.StringType(), False),
    S.StructField("pos", S.LongType(), False),
    S.StructField("end_log_pos", S.LongType(), False),
    S.StructField("server_id", S.LongType(), False),
    S.StructField("gtid", S.StringType(), True),
    S.StructField("timestamp", S.LongType(), False),
    S.StructField("db", S.StringType(), False),
    S.StructField("table", S.StringType(), False),
    S.StructField("table_id", S.LongType(), False),
    S.StructField("event_type", S.StringType(), False),
    S.StructField("tx_seq", S.LongType(), True),
    S.StructField("row", S.IntegerType(), False),
])
TABLES = S.StructType([
    S.StructField("db", S.StringType(), False),
    S.StructField("table", S.StringType(), False),
    S.StructField("columns", S.StringType(), False),
    S.StructField("primary_key", S.ArrayType(S.StringType(), False), False),
    S.StructField("full_metadata", S.BooleanType(), False),
    S.StructField("file", S.StringType(), False),
    S.StructField("file_index", S.IntegerType(), False),
    S.StructField("pos", S.LongType(), False),
])


def change_schema(image=MAP) -> S.StructType:
    """The schema of the change rows; `image` is the map type or a table's typed struct."""
    return S.StructType([
        S.StructField("op", S.StringType(), False),
        S.StructField("before", image, True),
        S.StructField("after", image, True),
        S.StructField("source", SOURCE, False),
        S.StructField("ts_ms", S.LongType(), False),
        S.StructField("db", S.StringType(), False),
        S.StructField("table", S.StringType(), False),
    ])


# ---------------------------------------------------------------------------------------------
# options

_TRUE = {"true", "1", "yes", "on"}
_FALSE = {"false", "0", "no", "off"}


class ReadOptions:
    """The data source's options, checked (a mistake is a ValueError naming the option)."""

    def __init__(self, options):
        o = {str(k).lower(): v for k, v in dict(options).items()}
        self.raw = o
        paths = []
        if o.get("paths"):
            try:
                paths = json.loads(o["paths"])
            except ValueError:
                paths = [o["paths"]]
        if o.get("path"):
            paths = [o["path"]] + [p for p in paths if p != o["path"]]
        self.paths = [str(p) for p in paths]
        self.plan = json.loads(o["plan"]) if o.get("plan") else None
        if not self.paths and not self.plan:
            raise ValueError("binlog: give the files: load(path), load([paths]) or a glob")
        self.tables = _list(o.get("tables"))
        self.exclude_tables = _list(o.get("exclude_tables"))
        self.databases = _list(o.get("databases"))
        self.start_position = _int(o, "start_position")
        self.stop_position = _int(o, "stop_position")
        self.start_datetime = _datetime(o, "start_datetime")
        self.stop_datetime = _datetime(o, "stop_datetime")
        self.include_gtids = o.get("include_gtids") or None
        self.exclude_gtids = o.get("exclude_gtids") or None
        self.verify_checksum = _bool(o, "verify_checksum", True)
        self.table = o.get("table") or None
        if self.table and "." not in self.table:
            raise ValueError(f"binlog: option table: {self.table!r} is not db.table")
        self.schema = o.get("schema") or None
        from . import DEFAULT_SPLIT_BYTES  # not .split: it imports the grammar (see use_grammar)

        self.split_bytes = _int(o, "split_bytes")
        if self.split_bytes is None:
            self.split_bytes = DEFAULT_SPLIT_BYTES
        self.min_partitions = _int(o, "min_partitions") or 0
        self.specs = _list(o.get("specs"))
        self.content = (o.get("content") or "changes").lower()
        if self.content not in ("changes", "tables"):
            raise ValueError(f"binlog: option content: {self.content!r} (changes or tables)")
        self.tx_seq_base = _int(o, "tx_seq_base") or 0
        self.image_format = (o.get("image_format") or "map").strip().lower()
        if self.image_format not in ("map", "json"):
            raise ValueError(f"binlog: option image_format: {self.image_format!r} (map or json)")
        if self.image_format == "json" and self.table:
            raise ValueError("binlog: option image_format: json is a form of the untyped images; "
                             "with the option table they are typed structs")

    def filters(self):
        from ..stream import Filters, GtidSet

        return Filters(self.start_position, self.stop_position, self.start_datetime,
                       self.stop_datetime,
                       GtidSet(self.include_gtids) if self.include_gtids else None,
                       GtidSet(self.exclude_gtids) if self.exclude_gtids else None,
                       self.databases, self.tables, self.exclude_tables)

    def schemas(self) -> Optional[dict]:
        if not self.schema:
            return None
        text = self.schema.strip()
        if text.startswith("{"):
            data = json.loads(text)
        else:
            from ..rows import load_schemas

            data = load_schemas(text)
        if not isinstance(data, dict):
            raise ValueError("binlog: option schema: a mapping of 'db.table' to a table schema")
        return data


def _list(v) -> list:
    if not v:
        return []
    if isinstance(v, (list, tuple)):
        return [str(x) for x in v]
    v = str(v).strip()
    if v.startswith("["):
        return [str(x) for x in json.loads(v)]
    return [x.strip() for x in v.split(",") if x.strip()]


def _int(o, key):
    v = o.get(key)
    if v is None or str(v).strip() == "":
        return None
    try:
        return int(str(v).strip())
    except ValueError:
        raise ValueError(f"binlog: option {key}: {v!r} is not an integer") from None


def _bool(o, key, default):
    v = o.get(key)
    if v is None:
        return default
    s = str(v).strip().lower()
    if s in _TRUE:
        return True
    if s in _FALSE:
        return False
    raise ValueError(f"binlog: option {key}: {v!r} is not true or false")


def _datetime(o, key):
    v = o.get(key)
    if not v:
        return None
    try:
        d = dt.datetime.fromisoformat(str(v).strip().replace("Z", "+00:00"))
    except ValueError:
        raise ValueError(f"binlog: option {key}: {v!r} is not an ISO date-time") from None
    return d


_GRAMMAR = None


def use_grammar(specs: list):
    """Read with the project's specs plus `specs` folders (binlog_grammar.grammar), once per
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
        from ..grammar import use_specs

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


def _bad_input(e) -> RuntimeError:
    return RuntimeError(f"{ERROR_MARK}{e}")


# ---------------------------------------------------------------------------------------------
# the data source

class BinlogDataSource(DataSource):
    """`spark.read.format("binlog")`: row changes of MySQL/MariaDB binlog files."""

    @classmethod
    def name(cls) -> str:
        return "binlog"

    def schema(self):
        from .streaming import is_stream, stream_schema

        if is_stream(self.options):  # no files: a live server (spark.readStream; see .streaming)
            return stream_schema(self.options)
        o = ReadOptions(self.options)
        use_grammar(o.specs)
        if o.content == "tables":
            return TABLES
        if o.table:
            from .typed import struct_type

            defs = find_table(o)
            return change_schema(struct_type(defs))
        return change_schema(JSON_IMAGE if o.image_format == "json" else MAP)

    def reader(self, schema):
        return BinlogReader(self.options, schema)

    def streamReader(self, schema):
        """`spark.readStream.format("binlog")`: a live server's binlog (binlog_grammar.spark.streaming)."""
        from .streaming import BinlogStreamReader

        return BinlogStreamReader(self.options, schema)


class SplitPartition(InputPartition):
    def __init__(self, split: dict, paths: list):
        super().__init__(split)
        self.paths = paths


class BinlogReader(DataSourceReader):
    def __init__(self, options, schema):
        self.o = ReadOptions(options)
        self.schema = schema
        self.typed_defs = None
        if self.o.table and self.o.content == "changes":
            after = schema["after"].dataType
            self.typed_defs = [f.metadata.get("binlog_column") or {"name": f.name, "type": None}
                               for f in after.fields]

    def partitions(self):
        use_grammar(self.o.specs)
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
            raise _bad_input(e) from None
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
        _freeze_after_first_task()
        from ..errors import BinlogError
        from .split import Split

        if partition.value is None:
            return
        split = Split.from_json(partition.value)
        try:
            if self.o.content == "tables":
                yield from self._tables(split, partition.paths)
            else:
                yield from self._changes(split, partition.paths)
        except BinlogError as e:
            raise _bad_input(e) from None
        except (OSError, ValueError) as e:
            raise _bad_input(f"{split.path}: {e}") from None

    # -- change rows ---------------------------------------------------------------------------
    def _changes(self, split, paths, stream=None) -> Iterator:
        import pyarrow as pa
        from pyspark.sql.pandas.types import to_arrow_schema

        from .split import split_stream
        from .typed import converter, typed_image

        pa_schema = to_arrow_schema(self.schema, timezone="UTC")
        types = [f.type for f in pa_schema]
        o = self.o
        if stream is None:  # the streaming reader passes a stream over a replication source
            stream = split_stream(split, paths, o.filters(), o.verify_checksum, o.schemas())
        if self.typed_defs is None:
            yield from self._map_batches(stream, pa, types, pa_schema)
            return
        only = tuple(o.table.split(".", 1))
        convs = [(d["name"], converter(d)) for d in self.typed_defs]

        def image(img):
            return typed_image(img, convs)

        cols = [[] for _ in range(7)]
        op_c, before_c, after_c, source_c, ts_c, db_c, table_c = cols
        n = 0
        for se, changes in _row_events(stream):
            t = se.table
            if t is None or (t.db, t.table) != only:
                continue
            gtid = se.gtid
            seq = se.tx_seq
            for i, ch in enumerate(changes):
                op_c.append(ch.op)
                before_c.append(image(ch.before))
                after_c.append(image(ch.after))
                source_c.append((ch.file, ch.pos, ch.end_pos, ch.server_id, gtid, ch.timestamp,
                                 ch.db, ch.table, ch.table_id, ch.event_type, seq, i))
                ts_c.append(ch.timestamp * 1000)
                db_c.append(ch.db)
                table_c.append(ch.table)
                n += 1
            if n >= BATCH_ROWS:
                yield _batch(pa, cols, types, pa_schema)
                for c in cols:
                    c.clear()
                n = 0
        if n:
            yield _batch(pa, cols, types, pa_schema)

    def _map_batches(self, stream, pa, types, pa_schema) -> Iterator:
        """The map (or JSON) form, built column by column (flat key and value lists for the
        maps, one value per rows event for the fields its rows share): what Arrow converts
        fastest. The form is the schema's (a string image: image_format json)."""
        from ..dump import ServerCharsets, with_image_forms
        from .typed import json_text

        json_images = not isinstance(self.schema["before"].dataType, S.MapType)
        batch = _MapBatch(json_images)
        charsets = ServerCharsets()  # the dump's forms: JSON columns, text without charsets
        for se, changes in _row_events(stream, charsets.see):
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
        from .typed import columns_json

        o = self.o
        flt = o.filters()
        seen = set()
        rows = []
        for table, ev in table_maps(split, o.schemas()):
            if not flt.table_ok(table.db, table.table):
                continue
            key = (table.db, table.table, columns_json(table), tuple(table.primary_key))
            if key in seen:
                continue
            seen.add(key)
            rows.append((table.db, table.table, key[2], list(table.primary_key),
                         bool(table.full_metadata), split.path, split.file_index, ev.offset))
        yield from rows


def _row_events(stream, see=None) -> Iterator:
    """(stream event, its row changes) of every rows event of the stream that has any; `see` is
    given every other event."""
    for se in stream.events():
        ev = se.event
        if ev.type is not None and ev.type.row_op:
            changes = se.changes
            if changes:
                yield se, changes
        elif see is not None:
            see(ev)


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
        self.runs = [[] for _ in range(13)]  # op, the source fields but row, ts_ms
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
                                      seq, ch.timestamp * 1000)):
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

    def _object(self, img, json_text):
        """A row image as one JSON object text: the keys in image order, each value its
        json_text (so json.loads of it equals the map form with json.loads of every value)."""
        keys = tuple(img)
        pre = self.prefixes.get(keys)
        if pre is None:
            pre = self.prefixes[keys] = [("," if i else "{") + json_text(k) + ":"
                                         for i, k in enumerate(keys)]
        if not pre:
            return "{}"
        return "".join(map(str.__add__, pre, map(json_text, img.values()))) + "}"

    def build(self, pa, types, pa_schema):
        import pyarrow.compute as pc

        ends = pa.array(self.ends, pa.int32())

        def expand(values, t):
            return pc.run_end_decode(pa.RunEndEncodedArray.from_arrays(ends, pa.array(values, t)))

        if self.json:
            images = [pa.array(v, types[i]) for v, i in zip(self.images, (1, 2))]
        else:
            images = []
            for (offsets, keys, values, mask), t in zip(self.images, (types[1], types[2])):
                images.append(pa.MapArray.from_arrays(
                    pa.array(offsets, pa.int32()), pa.array(keys, t.key_type),
                    pa.array(values, t.item_type), type=t, mask=pa.array(mask, pa.bool_())))
        st = types[3]
        runs = self.runs
        fields = [expand(runs[i + 1], st.field(i).type) for i in range(11)]
        fields.append(pa.array(self.row, st.field(11).type))
        source = pa.StructArray.from_arrays(fields,
                                            fields=[st.field(i) for i in range(st.num_fields)])
        return pa.RecordBatch.from_arrays(
            [expand(runs[0], types[0]), images[0], images[1], source, expand(runs[12], types[4]),
             fields[6], fields[7]], schema=pa_schema)


def _batch(pa, cols, types, pa_schema):
    return pa.RecordBatch.from_arrays([pa.array(c, type=t) for c, t in zip(cols, types)],
                                      schema=pa_schema)


def find_table(o: ReadOptions) -> list:
    """Column descriptions of `o.table` from its first TABLE_MAP_EVENT in the input."""
    from ..errors import BinlogError
    from .split import Split, expand_paths, table_maps
    from .typed import column_def

    want = tuple(o.table.split(".", 1))
    try:
        paths = expand_paths(o.paths) if not o.plan else o.plan["paths"]
        schemas = o.schemas()
        for i, p in enumerate(paths):
            for table, _ev in table_maps(Split(p, i, 4, None), schemas):
                if (table.db, table.table) == want:
                    return [column_def(c) for c in table.columns]
    except BinlogError as e:
        raise _bad_input(e) from None
    raise ValueError(f"{ERROR_MARK}table {o.table}: no TABLE_MAP_EVENT of it in the input")
