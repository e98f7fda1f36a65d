"""Row changes: the rows of rows events, decoded with the TABLE_MAP_EVENT of their table.

A TABLE_MAP_EVENT gives each column's type code and metadata; its optional metadata (MySQL 8
binlog_row_metadata, MariaDB 10.5+) adds signedness, charsets, names, ENUM/SET members and the
primary key. `Column` gathers that per column; the row images are then parsed by the spec type
`row_images` (specs/types/columns.yaml) with the columns as context, and each row becomes a
`RowChange`: op, before and after images keyed by column name. When the compiled backend runs,
the images' values are made in C (binlog/rows_native.py), equal to the Python readers' values; an
event it does not make is read by the Python readers as without it.

When the binlog lacks full metadata, `schemas` supplies what is missing, per table:
    {"db.table": {"columns": [{"name": "id", "unsigned": True}, {"name": "note", "charset": "utf8mb4"}],
                  "primary_key": ["id"]}}
Column entries are by position; any key may be left out. `load_schemas(path)` reads that mapping
from a JSON or YAML file.
"""
from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field, fields, replace
from functools import cached_property
from typing import Any, NamedTuple, Optional

from construct import ConstructError, Container

from .. import native
from ..errors import EventFormatError, UndecodableRowsError
from .events import decode_of, decompress, format_construct_error
from ..runtime.fast import FAST_ERRORS
from ..generated import enums
from ..generated import fast as F
from ..generated import sets as S
from ..generated import types as T
from ..runtime.values import Geometry
from ..runtime.values import codec_of, errors_of
from . import rows_native
from .header import V4_HEADER_LEN
from .reader import CHECKSUM_LEN, BinlogFile, inner_events
from ..runtime.construct import set_members

TYPE = {name: code for code, name in enums.COLUMN_TYPE.items()}
COLLATIONS = getattr(enums, "COLLATION", {})

OPS = {"insert": "c", "update": "u", "delete": "d"}
_UP = {"_index": None}  # the (empty) enclosing context of a top-level generated reader


def column_class(name: str, server=None) -> frozenset:
    """The column type codes an optional-metadata list counts (specs/types/column_classes.yaml,
    e.g. "signedness_columns"), for the server that wrote the binlog (None: not known)."""
    return set_members(S.SETS[name], server)


class Column(Container):
    """One column of a mapped table. Expressions in the specs read it as `col`.

    type: the type code the TABLE_MAP gives; type_name: the real type's name (a STRING column
    whose metadata says ENUM or SET is ENUM or SET); meta: its parsed metadata; unsigned; charset
    (character set name, 'binary', or None when unknown); collation (number); name; nullable;
    json_index; enum_values / set_values (member strings, when known); fsp; in_primary_key.
    """

    def __repr__(self):
        return f"Column({self.index}, {self.name!r}, {self.type_name})"


@dataclass
class Table:
    """A table as its TABLE_MAP_EVENT (and a supplied schema) describe it."""

    table_id: int
    db: str
    table: str
    columns: list
    primary_key: list = field(default_factory=list)  # column names
    full_metadata: bool = False  # the binlog named the columns
    has_metadata: bool = True  # False for TABLE_MAPs of the 5.1 development trees (types only)
    readers: dict = field(default_factory=dict, repr=False, compare=False)  # fasttable, by event shape
    shapes: dict = field(default_factory=dict, repr=False, compare=False)  # RowDecoder, by event shape
    # the compiled plans of rows events whose head rows_head() read, by (head shape, type code)
    heads: dict = field(default_factory=dict, repr=False, compare=False)

    @cached_property
    def names(self) -> list:
        return [c["name"] for c in self.columns]

    @cached_property
    def json_columns(self) -> int:
        return sum(1 for c in self.columns if c.json_index is not None)


class JsonDiff(NamedTuple):
    """One change of a partial JSON update: op REPLACE, INSERT or REMOVE, a JSON path, the value."""

    op: str
    path: str
    value: Any


class PartialJson(NamedTuple):
    """The after value of a JSON column when the image holds only its diffs and the before image
    lacks the column (binlog_row_image=MINIMAL): the diffs, to apply to the stored value."""

    diffs: tuple


@dataclass(slots=True)
class RowChange:
    """One changed row, Debezium-style: op c (insert), u (update) or d (delete)."""

    op: str
    db: str
    table: str
    before: Optional[dict]
    after: Optional[dict]
    columns: list
    file: str
    pos: int
    end_pos: int
    event_type: str
    table_id: int
    timestamp: int
    server_id: int
    json_diffs: dict = field(default_factory=dict)  # column name -> [(op, path, value)]
    primary_key: list = field(default_factory=list)


def _collation_charset(collation) -> Optional[str]:
    if collation is None:
        return None
    name = COLLATIONS.get(int(collation))
    if name is None:
        return None
    return "binary" if name == "binary" else name.split("_", 1)[0]


def _member(text: str, c: Column) -> str:
    """An ENUM/SET member string is written in the column's charset, not in UTF-8."""
    codec = codec_of(c)
    if codec is None or codec == "utf-8":
        return text
    return text.encode("utf-8", "surrogateescape").decode(codec, errors_of(codec))


def _charsets(entry_default, entry_columns, count):
    """Collation of each of `count` columns from a DEFAULT_CHARSET or a COLUMN_CHARSET entry."""
    if entry_columns is not None:
        return list(entry_columns) + [None] * (count - len(entry_columns))
    if entry_default is not None:
        out = [entry_default.default_collation] * count
        for ex in entry_default.exceptions:
            if ex.column_index < count:
                out[ex.column_index] = ex.collation
        return out
    return [None] * count


def table_from_event(data, schema: Optional[dict] = None, server=None) -> Table:
    """The Table of a parsed TABLE_MAP_EVENT, completed by a supplied schema. `server` (the
    version of the server that wrote it) picks which columns each optional-metadata list counts."""
    types = [int(t) for t in data.column_types]
    info = data.column_info
    metas = list(info.metadata) if info is not None else [None] * len(types)
    nulls = list(info.null_bitmap) if info is not None else [True] * len(types)
    opt = {}
    for entry in data.get("optional_metadata") or ():
        if entry.get("id"):
            opt.setdefault(entry["id"], entry["value"])
    columns = []
    json_i = 0
    fsp_types = column_class("fsp_columns", server)
    for i, (code, meta) in enumerate(zip(types, metas)):
        real = code
        if code == TYPE["STRING"] and meta is not None:
            real = int(meta.type)
        c = Column(index=i, name=f"@{i + 1}", type=code, type_name=enums.COLUMN_TYPE.get(real, str(real)),
                   real_type=real, meta=meta, unsigned=False, charset=None, collation=None,
                   nullable=bool(nulls[i]) if i < len(nulls) else True, json_index=None,
                   enum_values=None, set_values=None, in_primary_key=False, geometry_type=None,
                   fsp=int(meta) if code in fsp_types and meta is not None else 0)
        if code == TYPE["JSON"]:
            c.json_index = json_i
            json_i += 1
        columns.append(c)

    def counted(name):  # the columns an optional-metadata list has an entry for, in order
        codes = column_class(name, server)
        return [c for c in columns if c.real_type in codes]

    # signedness: one bit per numeric column, in column order
    bits = [b for entry in opt.get("signedness") or () for b in entry]
    for c, b in zip(counted("signedness_columns"), bits):
        c.unsigned = bool(b)
    character = counted("charset_columns")
    for c, coll in zip(character, _charsets(opt.get("default_charset"), opt.get("column_charset"),
                                            len(character))):
        c.collation = coll
        c.charset = _collation_charset(coll)
    enum_set = counted("enum_and_set_columns")
    for c, coll in zip(enum_set, _charsets(opt.get("enum_and_set_default_charset"),
                                           opt.get("enum_and_set_column_charset"), len(enum_set))):
        c.collation = coll
        c.charset = _collation_charset(coll)
    for c, name in zip(columns, opt.get("column_name") or ()):
        c.name = name
    for c, vals in zip(counted("enum_columns"), opt.get("enum_str_value") or ()):
        c.enum_values = [_member(m, c) for m in vals.members]
    for c, vals in zip(counted("set_columns"), opt.get("set_str_value") or ()):
        c.set_values = [_member(m, c) for m in vals.members]
    for c, g in zip(counted("geometry_columns"), opt.get("geometry_type") or ()):
        c.geometry_type = g
    pk = [int(i) for i in opt.get("simple_primary_key") or ()]
    pk += [int(p.column_index) for p in opt.get("primary_key_with_prefix") or ()]
    t = Table(int(data.table_id), data.db, data.table, columns,
              full_metadata="column_name" in opt, has_metadata=info is not None)
    if schema:
        _apply_schema(t, schema)
        pk = pk or [i for i, c in enumerate(columns) if c.in_primary_key]
    for i in pk:
        if i < len(columns):
            columns[i].in_primary_key = True
    names = [c.name for c in columns]
    if len(set(names)) != len(names) or not all(isinstance(n, str) and n for n in names):
        # two columns named alike, or one named '' (no server writes that: damaged metadata, or a
        # schema that says so): row images are keyed by name, so a value would take another
        # column's place; the columns are named by position instead, as without names
        for c in columns:
            c.name = f"@{c.index + 1}"
        t.full_metadata = False
    t.primary_key = [columns[i].name for i in pk if i < len(columns)]
    return t


def _apply_schema(t: Table, schema: dict):
    cols = schema.get("columns") or []
    for c, s in zip(t.columns, cols):
        if isinstance(s, str):
            s = {"name": s}
        for key in ("name", "unsigned", "charset", "enum_values", "set_values"):
            if s.get(key) is not None:
                c[key] = list(s[key]) if key in ("enum_values", "set_values") else s[key]
    names = [c.name for c in t.columns]
    for n in schema.get("primary_key") or ():
        if n in names:
            t.columns[names.index(n)].in_primary_key = True


def load_schemas(path) -> dict:
    """Table schemas from a JSON or YAML file: {"db.table": {"columns": [...], "primary_key": [...]}}.
    A mapping is taken as it is (schemas read elsewhere: replication.schema, from a server)."""
    if isinstance(path, dict):
        return path
    import yaml

    with open(path, encoding="utf-8") as fh:
        data = yaml.safe_load(fh)
    if not isinstance(data, dict):
        raise ValueError(f"{path}: a schema file maps 'db.table' to a table schema")
    return data


def parse_row_images(data: bytes, ctx: dict, fast: bool = True, table: Optional["Table"] = None,
                     specialised=None, fallbacks: Optional[Counter] = None):
    """The row images of one rows event. Fastest first: a reader specialised for the table
    (fasttable.py, compiled once per TABLE_MAP and event shape; `specialised` when the caller
    has it at hand), the generic readers generated from the specs (generated/fast.py), and the
    construct struct (`fast=False`, the reference). When a faster path rejects the bytes, the
    construct struct parses them again to give the precise error (counted in `fallbacks`, by
    reader, when given)."""
    if fast:
        fn = specialised
        if fn is None and table is not None:
            fn = _specialised(table, ctx)
        if fn is not None:
            try:
                return fn(data, ctx)
            except FAST_ERRORS:
                if fallbacks is not None:
                    fallbacks["row_images (per table)"] += 1
        try:
            return F.t_row_images(data, 0, len(data), {"_params": ctx}, ctx, None)[0]
        except FAST_ERRORS:
            if fallbacks is not None:
                fallbacks["row_images"] += 1
    return T.row_images.parse(data, **ctx)


_UNMADE = object()  # a shape's specialised reader, not compiled yet


def _specialised(table: "Table", ctx: dict, form: str = "parsed"):
    from ..codegen.table import reader

    return reader(ctx["columns"], ctx["images"], ctx.get("type_code"), ctx["json_columns"],
                  table.readers, form)


class RowDecoder:
    """Keeps the TABLE_MAPs of one binlog file and turns its rows events into RowChanges."""

    def __init__(self, schemas: Optional[dict] = None, fast: bool = True):
        self.schemas = schemas or {}
        self.tables: dict = {}
        self.fast = fast
        self.fallbacks = Counter()  # row images the fast readers refused (see parse_row_images)
        self._by_body: dict = {}  # TABLE_MAP body -> Table
        self._by_data: dict = {}  # id of a parsed TABLE_MAP data value -> (the value, Table)
        self._native = False  # native.rows(), asked on the first rows event (False: not yet)
        self._make = None  # RowChange(op, ..., server_id, primary_key), with json_diffs {}

    def table_map(self, ev) -> Table:
        """Register a TABLE_MAP_EVENT. Servers write one before every statement's rows; when its
        body (everything after the table id and flags) repeats, the table, with the readers
        compiled for it, is reused."""
        d = ev.data
        seen = self._by_data.get(id(d))
        if seen is not None and seen[0] is d:  # the very same parsed data (reader.parse_event
            t = seen[1]                         # shares the value of repeated bytes)
            self.tables[t.table_id] = t
            return t
        hl = ev.context.get("header_len", V4_HEADER_LEN)
        server = ev.context.get("server")
        end = len(ev.raw) - CHECKSUM_LEN * ev.footer
        body = (server,  # the server picks which columns each optional-metadata list counts
                bytes(ev.raw[hl + ev.context.get("post_header_len", 8):end]))
        known = self._by_body.get(body)
        if known is not None:
            t = known if known.table_id == int(d.table_id) else replace(known, table_id=int(d.table_id))
        else:
            t = table_from_event(d, self.schemas.get(f"{d.db}.{d.table}"), server)
            if len(self._by_body) > 1024:
                self._by_body.clear()
            self._by_body[body] = t
        self.tables[t.table_id] = t
        if len(self._by_data) > 1024:
            self._by_data.clear()
        self._by_data[id(d)] = (d, t)  # d is kept, so its id is not reused meanwhile
        return t

    def rows_bytes(self, ev) -> bytes:
        """The row images of a rows event as the server wrote them before compressing them (MariaDB
        *_ROWS_COMPRESSED_EVENT_V1), inflated where the spec's `decode:` says."""
        data = ev.data["rows"]
        if not ev.type.decode:
            return data
        dec = decode_of(ev.type, ev.data, "rows")
        if dec is None:
            return bytes(data)
        try:
            return decompress(dec.codec, data)
        except Exception as e:  # noqa: BLE001 - any codec failure is bad input
            raise EventFormatError(f"cannot decompress the row images: {e}", ev.file,
                                   ev.offset, ev.name) from None

    def changes(self, ev, table: Optional[Table] = None) -> list:
        """The RowChanges of a rows event, with its table as mapped when the event was read."""
        head = getattr(ev, "_head", None)  # what rows_head() read of it (binlog/batch.py)
        if head and self.fast:
            out = self._changes_of_head(ev, head, table)
            if out is not None:
                return out
        op = ev.type.row_op
        d = ev.data
        t = table or self.tables.get(int(d["table_id"]))
        if t is None:
            raise EventFormatError(f"rows of table id {int(d.table_id)}, which no TABLE_MAP_EVENT "
                                   f"before it maps", ev.file, ev.offset, ev.name)
        cols = d["columns"]
        present = cols["columns_present"]
        if len(present) != len(t.columns):
            raise EventFormatError(f"the rows event has {len(present)} columns, the TABLE_MAP of "
                                   f"{t.db}.{t.table} {len(t.columns)}", ev.file, ev.offset, ev.name)
        data = self.rows_bytes(ev)  # inflated first: what follows reads plain row images
        # the parse context and the names of the columns each image holds, per event shape
        after = cols.get("columns_present_after") if op == "update" else None
        key = (tuple(present), None if after is None else tuple(after), ev.context["type_code"])
        shape = t.shapes.get(key)
        if shape is None:
            images = [list(present)] if op != "update" else \
                [list(present), list(after) if after is not None else list(present)]
            ctx = dict(ev.context, columns=t.columns, images=images, json_columns=t.json_columns)
            names = t.names
            # the reader specialised for the shape: made when the Python readers first need it
            # (not when the compiled backend makes every row of the table: compiling it is
            # most of a small file's time)
            shape = [ctx, [[(i, names[i]) for i, p in enumerate(img) if p] for img in images],
                     _UNMADE if self.fast else None]
            if len(t.shapes) > 256:
                t.shapes.clear()
            t.shapes[key] = shape
        ctx, picks, fn = shape
        rows = records = None
        if self.fast:  # the compiled backend's values, when it runs and makes them (else None)
            mod = self._native
            if mod is False:
                mod = self._compiled()
            if mod is not None:
                rows = rows_native.rows(t, ev, key, data, mod)
        if rows is None and fn is _UNMADE:
            fn = shape[2] = _specialised(t, ctx, "images")
        if rows is None and fn is not None:  # each row's images as {name: value}, straight from the bytes
            try:
                rows = fn(data, ctx)
            except FAST_ERRORS:
                rows = None
                self.fallbacks["row_images (per table)"] += 1
        if rows is None:
            try:
                records = parse_row_images(data, ctx, self.fast, t, fallbacks=self.fallbacks)["rows"]
            except Exception as e:  # noqa: BLE001 - whatever bad bytes make a struct raise is bad input
                unsized = _unsized(t)
                if unsized:  # a valid event this reader cannot size: not damage
                    raise UndecodableRowsError(f"row images of {t.db}.{t.table}: {unsized}", ev.file,
                                               ev.offset, ev.name) from None
                if isinstance(e, ConstructError):
                    msg = format_construct_error(e)
                elif isinstance(e, ValueError):
                    msg = str(e)
                else:  # a Python error is no message for a user: say what it means
                    msg = "the bytes do not hold values of the columns the TABLE_MAP_EVENT describes"
                raise EventFormatError(f"row images of {t.db}.{t.table}: {msg}", ev.file, ev.offset,
                                       ev.name) from None
            rows = [[{n: img["cells"][i] for i, n in pick} for img, pick in zip(r["images"], picks)]
                    for r in records]
        return _row_changes(t, ev, op, rows, records)

    def _changes_of_head(self, ev, head, table) -> Optional[list]:
        """The RowChanges of a rows event whose head rows_head() read, made by the compiled
        backend without the event's data being parsed; None when it does not make them (then
        changes() reads the event as any other, and gives every error)."""
        t = table or self.tables.get(head[0])
        mod = self._native
        if mod is False:
            mod = self._compiled()
        if t is None or mod is None or ev.type.decode:
            return None
        key = (head[1], ev.context["type_code"])
        plan = t.heads.get(key)
        if plan is None:
            plan = t.heads[key] = _head_plan(mod, t, ev, head[1])
        if plan is False:
            return None
        raw = ev.raw
        rows = mod.rows(plan, raw[head[2]:len(raw) - CHECKSUM_LEN * ev.footer], mod.OBJECTS)[0]
        if rows is None:
            return None
        make, et = self._make, ev.type
        if make is None:
            return _row_changes(t, ev, et.row_op, rows, None)
        # _row_changes, inlined: the fields of every RowChange of the event
        stamp, op, offset = ev._stamp, et.row_op, ev.offset
        code, db, tb, cols, file, end, name, tid, ts, sid, pk = (
            OPS[op], t.db, t.table, t.columns, ev.file, offset + len(raw), et.name, t.table_id,
            int(stamp[0]), int(stamp[1]), t.primary_key)
        if op == "update":
            return [make(code, db, tb, before, after, cols, file, offset, end, name, tid, ts, sid,
                         pk) for before, after in rows]
        if op == "insert":
            return [make(code, db, tb, None, img, cols, file, offset, end, name, tid, ts, sid, pk)
                    for (img,) in rows]
        return [make(code, db, tb, img, None, cols, file, offset, end, name, tid, ts, sid, pk)
                for (img,) in rows]

    def _compiled(self):
        """native.rows(), kept (with the RowChange maker made by its slot_maker) for the
        decoder's life."""
        mod = self._native = native.rows()
        slot_maker = getattr(mod, "slot_maker", None)
        if slot_maker is not None:
            names = [f.name for f in fields(RowChange) if f.name != "json_diffs"] + ["json_diffs"]
            self._make = slot_maker(RowChange, tuple(RowChange.__dict__[n] for n in names),
                                    (dict,))
        return mod


def _head_plan(mod, t, ev, shape):
    """The compiled plan of the rows events of table `t` with the head shape of `ev` (the bytes
    of their rows_columns, read by its generated reader), or False."""
    cols = F.t_rows_columns(shape, 0, len(shape), _UP, ev.context, None)[0]
    present, after = cols["columns_present"], cols["columns_present_after"]
    if len(present) != len(t.columns):
        return False
    op = ev.type.row_op
    key = (tuple(present), tuple(after) if after is not None and op == "update" else None,
           ev.context["type_code"])
    return rows_native.plan_of(mod, t, op, key)


def _row_changes(t: Table, ev, op, rows, records) -> list:
    """The RowChanges of a rows event of table `t` from its rows (each the list of its images'
    dicts), and the parsed records of their images when the Python readers made them."""
    stamp = getattr(ev, "_stamp", None)  # a FramedEvent's header fields, as the walk read them
    if stamp is None:
        h = ev.header
        stamp = (h["timestamp"], h["server_id"])
    db, tb, cols, file, offset, end, name, tid, ts, sid, pk = (
        t.db, t.table, t.columns, ev.file, ev.offset, ev.end, ev.name, t.table_id,
        int(stamp[0]), int(stamp[1]), t.primary_key)
    code = OPS[op]
    if op == "update":
        if records is None:
            return [RowChange(code, db, tb, before, after, cols, file, offset, end, name, tid,
                              ts, sid, {}, pk) for before, after in rows]
        return [RowChange(code, db, tb, before, after, cols, file, offset, end, name, tid, ts,
                          sid, _apply_partial_json(t, records[k]["images"][1], before, after,
                                                   ev), pk)
                for k, (before, after) in enumerate(rows)]
    if op == "insert":
        return [RowChange(code, db, tb, None, img, cols, file, offset, end, name, tid, ts, sid,
                          {}, pk) for (img,) in rows]
    return [RowChange(code, db, tb, img, None, cols, file, offset, end, name, tid, ts, sid, {},
                      pk) for (img,) in rows]


def _unsized(t: Table) -> Optional[str]:
    """Why the values of a table's rows cannot be sized, when the TABLE_MAP_EVENT does not say
    enough; None when it does."""
    if not t.has_metadata:
        return ("its TABLE_MAP_EVENT carries no column metadata (written by a MySQL 5.1 "
                "development tree), so the sizes of its values are not known")
    old = [c.name for c in t.columns if c.type == TYPE["DECIMAL"]]
    if old:
        return (f"column {old[0]} is an old DECIMAL (a table from before MySQL 5.0.3), whose "
                "length the TABLE_MAP_EVENT does not carry")
    return None


def _apply_partial_json(t: Table, img, before, after, ev) -> dict:
    """Replace JSON diff lists in an after image by the value they make from the before image."""
    if img.partial_bits is None:
        return {}
    from ..runtime.jsonb import apply_json_diff

    diffs = {}
    for c in t.columns:
        if c.json_index is None or not img.present[c.index] or not img.partial_bits[c.json_index]:
            continue
        cell = after.get(c.name)
        if cell is None:
            continue
        steps = [JsonDiff(enums.JSON_DIFF_OPERATION.get(int(dd.operation), str(int(dd.operation))),
                          dd.path, dd.value.doc if dd.value is not None else None)
                 for dd in cell.diffs]
        diffs[c.name] = steps
        if c.name not in (before or {}):
            after[c.name] = PartialJson(tuple(steps))
            continue
        value = before[c.name]
        try:
            for op, path, v in steps:
                value = apply_json_diff(value, op, path, v)
        except ValueError as e:
            raise EventFormatError(f"partial JSON update of {t.table}.{c.name}: {e}", ev.file,
                                   ev.offset, ev.name) from None
        after[c.name] = value
    return diffs


def iter_row_changes(paths, schemas: Optional[dict] = None, verify_checksum: bool = True):
    """Every row change of the rows events in these binlog files, in order.

    TABLE_MAPs are kept per file; TRANSACTION_PAYLOAD_EVENTs are opened.
    """
    if isinstance(paths, (str, bytes)) or hasattr(paths, "__fspath__"):
        paths = [paths]
    for path in paths:
        decoder = RowDecoder(schemas)
        f = BinlogFile(path, verify_checksum)
        for ev in f:
            for e in _with_inner(ev, f.state, verify_checksum):
                yield from _event_changes(decoder, e)


def _with_inner(ev, state, verify_checksum):
    yield ev
    if ev.type is not None and any(d.target == "events" for d in ev.type.decode):
        yield from inner_events(ev, state, verify_checksum)


def _event_changes(decoder: RowDecoder, ev):
    if ev.type is None:
        return
    if ev.type.name == "TABLE_MAP_EVENT":
        decoder.table_map(ev)
    elif ev.type.row_op:
        yield from decoder.changes(ev)
