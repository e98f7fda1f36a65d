"""python-mysql-replication's row event classes (`pymysqlreplication.row_event`): TableMapEvent,
WriteRowsEvent, UpdateRowsEvent, DeleteRowsEvent (PartialUpdateRowsEvent), with `schema`, `table`,
`table_id`, `primary_key`, `columns` and `rows` as the library gives them: `{"values": {...},
"none_sources": {...}}` per inserted or deleted row, `{"before_values", "before_none_sources",
"after_values", "after_none_sources"}` per updated one. Values are decoded by this package
(binlog.rows) and given the library's Python types (`pmr_value`).
"""
from __future__ import annotations

import datetime

from .event import BinLogEvent

# python-mysql-replication's reasons for a None value (its constants.NONE_SOURCE)
NULL, OUT_OF_DATE_RANGE, OUT_OF_DATETIME_RANGE = "null", "out of date range", "out of datetime range"
OUT_OF_DATETIME2_RANGE, EMPTY_SET, COLS_BITMAP = "out of datetime2 range", "empty set", "cols bitmap"

_ABSENT = object()
_ZERO_REASON = {"DATE": OUT_OF_DATE_RANGE, "NEWDATE": OUT_OF_DATE_RANGE,
                "DATETIME": OUT_OF_DATETIME_RANGE, "DATETIME2": OUT_OF_DATETIME2_RANGE,
                "TIMESTAMP": OUT_OF_DATETIME2_RANGE, "TIMESTAMP2": OUT_OF_DATETIME2_RANGE}


def pmr_value(value, col):
    """(value, none_source or None): a value of binlog.rows as python-mysql-replication types it.
    Text is str, binary strings bytes, SET a set of member names (None when empty), BIT a string
    of '0'/'1' as wide as the column, DATE/DATETIME with a zero part None, TIMESTAMP a naive
    datetime in UTC, GEOMETRY its bytes (SRID and WKB)."""
    if value is None:
        return None, NULL
    return converter(col)(value)


def _plain(value):
    t = type(value)
    if t is int or t is float or t is str or t is bool:
        return value, None
    if isinstance(value, str):  # text as logged (a str subclass)
        return str(value), None
    if isinstance(value, (bytes, bytearray, memoryview)):
        return bytes(value), None
    if isinstance(value, frozenset):
        return set(value), None
    return value, None


def _set(value):
    return (set(value), None) if value else (None, EMPTY_SET)


def _geometry(value):
    if isinstance(value, (bytes, bytearray, memoryview)):
        return bytes(value), None
    return int(value.srid).to_bytes(4, "little") + bytes(value.wkb), None


def converter(col):
    """The function that gives one column's values the library's types: (value, none_source)."""
    kind = col.type_name
    if kind == "SET":
        return _set
    if kind == "BIT":
        spec = f"0{_bit_width(col)}b"
        return lambda v: (format(v if isinstance(v, int) else int.from_bytes(bytes(v), "big"),
                                 spec), None)
    if kind == "GEOMETRY":
        return _geometry
    why = _ZERO_REASON.get(kind)
    if why is not None:  # a zero date (text) has no value; a TIMESTAMP is naive, in UTC
        utc = kind.startswith("TIMESTAMP")

        def date(v):
            if isinstance(v, str):
                return None, why
            if utc and isinstance(v, datetime.datetime):
                return v.astimezone(datetime.timezone.utc).replace(tzinfo=None), None
            return v, None
        return date
    return _plain


def _bit_width(col) -> int:
    meta = col.meta
    if isinstance(meta, dict):
        if "bits" in meta and "bytes" in meta:
            return int(meta["bytes"]) * 8 + int(meta["bits"])
        if "length" in meta:
            return int(meta["length"])
    if isinstance(meta, int):  # bytes * 256 + bits, as the TABLE_MAP writes it
        return (meta >> 8) * 8 + (meta & 0xFF)
    return 64


class Column:
    """A column as the library describes one: name, type (the real type code), unsigned,
    is_primary, character_set_name, enum_values ('' first), set_values, fsp, bits."""

    def __init__(self, c):
        self.name = c.name
        self.type = int(c.real_type if c.real_type is not None else c.type)
        self.unsigned = bool(c.unsigned)
        self.is_primary = bool(c.in_primary_key)
        self.character_set_name = c.charset
        self.charset_id = c.collation
        self.enum_values = [""] + list(c.enum_values) if c.enum_values else None
        self.set_values = list(c.set_values) if c.set_values else None
        self.fsp = int(c.fsp or 0)
        if c.type_name == "BIT":
            self.bits = _bit_width(c)
            self.bytes = (self.bits + 7) // 8

    @property
    def data(self):
        return dict(self.__dict__)

    def __repr__(self):
        return f"<Column {self.name} type={self.type}>"


class Table:
    """The library's table: table_id, schema, table, columns, primary_key ('' when none, the
    name when one, a tuple when several), column_name_flag, data."""

    def __init__(self, t):
        self.table_id, self.schema, self.table = t.table_id, t.db, t.table
        self.columns = [Column(c) for c in t.columns]
        keys = list(t.primary_key or [])
        self.primary_key = "" if not keys else keys[0] if len(keys) == 1 else tuple(keys)
        self.column_name_flag = bool(t.full_metadata)
        self._plan = [(c.name, converter(c)) for c in t.columns]

    @property
    def data(self):
        return dict(self.__dict__)


_NUMERIC = {1, 2, 9, 3, 8, 246, 4, 5, 13}  # the library's numeric types (SIGNEDNESS bits)
_CHARACTER = {254, 253, 15, 252}  # its character columns (and GEOMETRY, 255, on MariaDB)
_ENUM_SET = {247, 248}


def _bits(value) -> list:
    return [bool(b) for byte in (value or []) for b in byte]


def _default_charset(value):
    if not value:
        return None, {}
    return (int(value["default_collation"]),
            {int(e["column_index"]): int(e["collation"]) for e in value.get("exceptions") or []})


class OptionalMetaData:
    """A TABLE_MAP's optional metadata (binlog_row_metadata) as the library lists it."""

    def __init__(self, entries, columns, dbms):
        self.unsigned_column_list = []
        self.default_charset_collation = None
        self.charset_collation = {}
        self.column_charset = []
        self.column_name_list = []
        self.set_str_value_list = []
        self.set_enum_str_value_list = []
        self.geometry_type_list = []
        self.simple_primary_key_list = []
        self.primary_keys_with_prefix = {}
        self.enum_and_set_default_charset = None
        self.enum_and_set_charset_collation = {}
        self.enum_and_set_default_column_charset_list = []
        self.charset_collation_list = []
        self.enum_and_set_collation_list = []
        self.visibility_list = []
        types = [c.type for c in columns]
        char = _CHARACTER | ({255} if dbms == "mariadb" else set())
        n_char = sum(1 for t in types if t in char)
        n_enum = sum(1 for t in types if t in _ENUM_SET)
        for e in entries or []:
            kind, v = e["id"], e["value"]
            if kind == "signedness":
                bits = iter(_bits(v))
                self.unsigned_column_list = [next(bits, False) if t in _NUMERIC else False
                                             for t in types]
            elif kind == "default_charset":
                self.default_charset_collation, self.charset_collation = _default_charset(v)
                self.charset_collation_list = [self.charset_collation.get(
                    i, self.default_charset_collation) for i in range(n_char)]
            elif kind == "column_charset":
                self.column_charset = [int(x) for x in v]
                self.charset_collation_list = self.column_charset[:n_char] or None
            elif kind == "column_name":
                self.column_name_list = [str(x) for x in v]
            elif kind in ("set_str_value", "enum_str_value"):
                lists = [[str(m) for m in x["members"]] for x in v] or None
                if kind == "set_str_value":
                    self.set_str_value_list = lists
                else:
                    self.set_enum_str_value_list = lists
            elif kind == "geometry_type":
                self.geometry_type_list = [int(x) for x in v]
            elif kind == "simple_primary_key":
                self.simple_primary_key_list = [int(x) for x in v]
            elif kind == "primary_key_with_prefix":
                pairs = [int(x) for p in v for x in (p.values() if hasattr(p, "values") else p)]
                self.primary_keys_with_prefix = dict(zip(pairs[::2], pairs[1::2]))
            elif kind == "enum_and_set_default_charset":
                self.enum_and_set_default_charset, self.enum_and_set_charset_collation = \
                    _default_charset(v)
                self.enum_and_set_collation_list = [self.enum_and_set_charset_collation.get(
                    i, self.enum_and_set_default_charset) for i in range(n_enum)]
            elif kind == "enum_and_set_column_charset":
                self.enum_and_set_default_column_charset_list = [int(x) for x in v]
                self.enum_and_set_collation_list = \
                    self.enum_and_set_default_column_charset_list[:n_enum] or None
            elif kind == "column_visibility":
                self.visibility_list = _bits(v)[:len(types)]

    def dump(self):
        print(f"=== {self.__class__.__name__} ===")
        print(f"unsigned_column_list: {self.unsigned_column_list}")
        print(f"default_charset_collation: {self.default_charset_collation}")
        print(f"charset_collation: {self.charset_collation}")
        print(f"column_charset: {self.column_charset}")
        print(f"column_name_list: {self.column_name_list}")
        print(f"set_str_value_list : {self.set_str_value_list}")
        print(f"set_enum_str_value_list : {self.set_enum_str_value_list}")
        print(f"geometry_type_list : {self.geometry_type_list}")
        print(f"simple_primary_key_list: {self.simple_primary_key_list}")
        print(f"primary_keys_with_prefix: {self.primary_keys_with_prefix}")
        print(f"visibility_list: {self.visibility_list}")
        print(f"charset_collation_list: {self.charset_collation_list}")
        print(f"enum_and_set_collation_list: {self.enum_and_set_collation_list}")


class TableMapEvent(BinLogEvent):
    """A table's layout before its rows events: table_id, schema, table, column_count, columns."""

    def _fill(self, d, ev, ctx):
        t = ctx.table
        self.table_id = int(d.table_id)
        self.flags = int(d.flags)
        self.schema = str(d.db)
        self.table = str(d.table)
        self.column_count = int(d.column_count)
        self.table_obj = ctx.pmr_table if t is not None else None
        self.columns = self.table_obj.columns if t is not None else []
        entries = d.get("optional_metadata") or []
        self.optional_metadata = OptionalMetaData(entries, self.columns, ctx.dbms)
        # the library prints it when the server logs full metadata, which names the columns
        self._full = any(e["id"] == "column_name" for e in entries)

    def get_table(self):
        """The Table (columns, primary key) this TABLE_MAP describes."""
        return self.table_obj

    def _dump(self):
        print(f"Table id: {self.table_id}")
        print(f"Schema: {self.schema}")
        print(f"Table: {self.table}")
        print(f"Columns: {self.column_count}")
        if self._full:
            self.optional_metadata.dump()


class RowsEvent(BinLogEvent):
    """The base of the rows events: table_id, schema, table, primary_key, columns,
    number_of_columns, flags, rows."""

    def _fill(self, d, ev, ctx):
        t = ctx.table
        self.table_id = int(d.table_id)
        self.flags = int(d.flags)
        self.number_of_columns = int(d.columns.column_count)
        self._table = ctx.pmr_table
        self.schema, self.table = t.db, t.table
        self.primary_key = self._table.primary_key
        self.columns = self._table.columns
        self._changes = ctx.changes
        self._rows = None
        rows = d.get("rows")
        self._head = len(ev.raw) - ctx.header_len - ctx.crc_len(ev) - (len(rows) if rows is not None else 0)

    def _read(self, body):
        return self._head if self._rows is None else body

    @property
    def rows(self):
        """The changed rows, decoded when first read: `{"values": {column: value}}` for writes
        and deletes, `{"before_values": ..., "after_values": ...}` for updates."""
        if self._rows is None:
            self._rows = [self._row(c) for c in self._changes()]
            self.packet.read_bytes = self.event_size
        return self._rows

    def _image(self, image):
        values, nones = {}, {}
        for name, conv in self._table._plan:
            v = image.get(name, _ABSENT)
            if v is None:
                values[name] = None
                nones[name] = NULL
                continue
            if v is _ABSENT:  # not in the image (binlog_row_image=MINIMAL)
                values[name] = None
                nones[name] = COLS_BITMAP
                continue
            v, why = conv(v)
            values[name] = v
            if v is None:
                nones[name] = why
        return values, nones

    def _row(self, change):
        image = change.after if change.after is not None else change.before
        values, nones = self._image(image)
        return {"values": values, "none_sources": nones}

    def _dump(self):
        print(f"Table: {self.schema}.{self.table}")
        print(f"Affected columns: {self.number_of_columns}")
        print(f"Changed rows: {len(self.rows)}")
        print(f"Column Name Information Flag: {self._table.column_name_flag}")

    def _dump_values(self):
        print("Values:")
        for row in self.rows:
            print("--")
            for key in row["values"]:
                why = row["none_sources"].get(key, "")
                print(f"* {key} : {row['values'][key]} ({why})" if why else
                      f"* {key} : {row['values'][key]}")


class WriteRowsEvent(RowsEvent):
    """Inserted rows: `rows[i]["values"]`."""

    def _dump(self):
        super()._dump()
        self._dump_values()


class DeleteRowsEvent(RowsEvent):
    """Deleted rows: `rows[i]["values"]`."""

    def _dump(self):
        super()._dump()
        self._dump_values()


class UpdateRowsEvent(RowsEvent):
    """Updated rows: `rows[i]["before_values"]` and `rows[i]["after_values"]`."""

    def _row(self, change):
        before, bn = self._image(change.before)
        after, an = self._image(change.after)
        return {"before_values": before, "before_none_sources": bn,
                "after_values": after, "after_none_sources": an}

    def _dump(self):
        super()._dump()
        print("Values:")
        for row in self.rows:
            print("--")
            for key in row["before_values"]:
                b, a = row["before_values"][key], row["after_values"][key]
                if key in row["before_none_sources"]:
                    b = (f"{b} ", f"{row['before_none_sources'][key]} ")
                if key in row["after_none_sources"]:
                    a = (f"{a} ", f"{row['after_none_sources'][key]} ")
                print(f"*{key}:{b}=>{a}")


class PartialUpdateRowsEvent(UpdateRowsEvent):
    """MySQL's PARTIAL_UPDATE_ROWS_EVENT (JSON columns changed in place), as an update."""
