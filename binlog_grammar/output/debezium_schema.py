"""Kafka Connect schemas of the Debezium records (`schemas.enable=true`): what the JSON converter
writes beside each payload, {"schema": ..., "payload": ...}. A column's schema follows its
form (FORMS["debezium"], output/debezium_values.py) and the connector's type mapping: TINYINT and
SMALLINT int16 (SMALLINT UNSIGNED int32), MEDIUMINT and INT int32 (INT UNSIGNED int64), BIGINT
int64, FLOAT float, DOUBLE double, DECIMAL org.apache.kafka.connect.data.Decimal (bytes, with
scale and precision), the temporal types by time.precision.mode (io.debezium.time.*), BIT(1)
boolean and BIT(n) io.debezium.data.Bits, ENUM/SET io.debezium.data.Enum/EnumSet with their
members, GEOMETRY io.debezium.data.geometry.Geometry (POINT ...Point), JSON io.debezium.data.Json
(MariaDB's JSON, logged as LONGTEXT, by the binlog's DDL: output/debezium_ddl.py), text string,
binary bytes (or string, by binary.handling.mode). Schemas are made once per table."""
from __future__ import annotations

import datetime as dt
import decimal
import re

from .debezium_ddl import BOOL_TYPES
from .forms import form_name

_INT = {"TINY": "int16", "SHORT": "int16", "INT24": "int32", "LONG": "int32", "YEAR": "int32"}
_INT_UNSIGNED = {"TINY": "int16", "SHORT": "int32", "INT24": "int32", "LONG": "int64",
                 "YEAR": "int32"}
_CACHE: dict = {}


_ZERO_DATES = frozenset({"epoch_days", "datetime", "zoned_timestamp"})


def _logical(type_, name, optional, field, **extra):
    out = {"type": type_, "optional": optional}
    if name:
        out["name"] = name
        out["version"] = 1
    out.update(extra)
    out["field"] = field
    return out


def column_schema(col, settings, declared=None) -> dict:
    """One column's field schema; `declared`: what its DDL said (output/debezium_ddl.Column),
    which names a MariaDB JSON column and gives the field's `default`."""
    out = _column_schema(col, settings, declared is not None and declared.type == "JSON")
    literal = declared.default if declared is not None else None
    if literal is not None:
        value = default_value(col, literal, settings)
        if value is not None:  # after "optional", where the JSON converter writes it
            out = {k: v for k, v in out.items() if k in ("type", "optional")} | {"default": value} | {
                k: v for k, v in out.items() if k not in ("type", "optional")}
    if declared is not None and declared.double_float and out.get("type") == "float":
        out["type"] = "double"  # FLOAT(M,D): the connector's DDL parser makes it a DOUBLE
    if declared is not None and declared.type in BOOL_TYPES and out.get("type") == "int16":
        out["type"] = "boolean"  # BOOL: TINYINT(1) in the binlog, a boolean in the connector
        if "default" in out:
            out["default"] = out["default"] != 0
    return out


def _column_schema(col, settings, json_declared: bool = False) -> dict:
    from ..generated import enums

    code = col.get("real_type", col.get("type"))
    tname = enums.COLUMN_TYPE.get(code, "")
    form = form_name("debezium", code)
    optional = True if col.get("nullable") is None else bool(col.get("nullable"))
    f = col.name
    meta = col.get("meta")
    fsp = int(col.get("fsp") or 0)
    mode = settings.time_mode
    if form == "year":
        return _logical("int32", "io.debezium.time.Year", optional, f)
    if form == "int":
        table = _INT_UNSIGNED if col.get("unsigned") else _INT
        return _logical(table.get(tname, "int32"), None, optional, f)
    if form == "bigint":
        if col.get("unsigned") and settings.bigint_mode == "precise":
            return _logical("bytes", "org.apache.kafka.connect.data.Decimal", optional, f,
                            parameters={"scale": "0", "connect.decimal.precision": "20"})
        return _logical("int64", None, optional, f)
    if form == "decimal":
        scale = int(meta.get("scale", 0)) if hasattr(meta, "get") else 0
        precision = int(meta.get("precision", 0)) if hasattr(meta, "get") else 0
        if settings.decimal_mode == "string":
            return _logical("string", None, optional, f)
        if settings.decimal_mode == "double":
            return _logical("double", None, optional, f)
        return _logical("bytes", "org.apache.kafka.connect.data.Decimal", optional, f,
                        parameters={"scale": str(scale), "connect.decimal.precision": str(precision)})
    if form == "float32":
        return _logical("float", None, optional, f)
    if form == "float64":
        return _logical("double", None, optional, f)
    if form == "epoch_days":
        name = "org.apache.kafka.connect.data.Date" if mode == "connect" else "io.debezium.time.Date"
        return _logical("int32", name, optional, f)
    if form == "datetime":
        if mode == "connect":
            return _logical("int64", "org.apache.kafka.connect.data.Timestamp", optional, f)
        name = "io.debezium.time.MicroTimestamp" if fsp > 3 else "io.debezium.time.Timestamp"
        return _logical("int64", name, optional, f)
    if form == "zoned_timestamp":
        return _logical("string", "io.debezium.time.ZonedTimestamp", optional, f)
    if form == "micro_time":
        if mode == "connect":
            return _logical("int32", "org.apache.kafka.connect.data.Time", optional, f)
        if mode == "adaptive" and fsp <= 3:
            return _logical("int32", "io.debezium.time.Time", optional, f)
        return _logical("int64", "io.debezium.time.MicroTime", optional, f)
    if form == "bits":
        width = (int(meta.get("bytes", 0)) * 8 + int(meta.get("bits", 0))) if hasattr(meta, "get") else 0
        if width == 1:
            return _logical("boolean", None, optional, f)
        return _logical("bytes", "io.debezium.data.Bits", optional, f,
                        parameters={"length": str(width)})
    if form in ("enum", "enum_set"):
        members = col.get("enum_values" if form == "enum" else "set_values") or ()
        name = "io.debezium.data.Enum" if form == "enum" else "io.debezium.data.EnumSet"
        return _logical("string", name, optional, f, parameters={"allowed": ",".join(members)})
    if form == "geometry" and col.get("geometry_type") == 1:  # POINT
        return _logical("struct", "io.debezium.data.geometry.Point", optional, f,
                        doc="Geometry (POINT)",
                        fields=[{"type": "double", "optional": False, "field": "x"},
                                {"type": "double", "optional": False, "field": "y"},
                                {"type": "bytes", "optional": True, "field": "wkb"},
                                {"type": "int32", "optional": True, "field": "srid"}])
    if form == "geometry":  # optional even NOT NULL: the connector's (POINT's follows it)
        return _logical("struct", "io.debezium.data.geometry.Geometry", True, f,
                        doc="Geometry",
                        fields=[{"type": "bytes", "optional": False, "field": "wkb"},
                                {"type": "int32", "optional": True, "field": "srid"}])
    if form == "json":
        return _logical("string", "io.debezium.data.Json", optional, f)
    if form == "string":
        if json_declared and col.get("charset") != "binary":  # MariaDB's JSON: LONGTEXT
            return _logical("string", "io.debezium.data.Json", optional, f)
        if col.get("charset") == "binary":
            return _logical("bytes" if settings.binary_mode == "bytes" else "string", None,
                            optional, f)
        return _logical("string", None, optional, f)
    return _logical("string", None, optional, f)


def _struct(name, fields, optional):
    return {"type": "struct", "fields": fields, "optional": optional, "name": name}


def _fields(writer, ch, columns):
    declared = writer.declared.get(ch.db, ch.table)
    return [column_schema(c, writer.settings, declared.get(str(c.name).lower())) for c in columns]


def _value_schema(writer, ch, optional=True):
    name = f"{writer.prefix}.{ch.db}.{ch.table}.Value"
    return _struct(name, _fields(writer, ch, ch.columns), optional)


def key_schema(writer, ch) -> dict:
    """The schema of a table's key: its primary key's columns."""
    ident = ("key", id(ch.columns), writer.settings, writer.prefix,
             _declared_key(writer, ch))
    seen = _CACHE.get(ident)
    if seen is not None and seen[0] is ch.columns:
        return seen[1]
    by_name = {c.name: c for c in ch.columns}  # the key's columns in the key's order
    out = _struct(f"{writer.prefix}.{ch.db}.{ch.table}.Key",
                  _fields(writer, ch, [by_name[n] for n in ch.primary_key or () if n in by_name]),
                  False)
    _remember(ident, ch.columns, out)
    return out


def _source_schema(connector: str) -> dict:
    def fld(t, field, optional=False, **extra):
        return {"type": t, "optional": optional, **extra, "field": field}

    return {"type": "struct", "fields": [
        fld("string", "version"), fld("string", "connector"), fld("string", "name"),
        fld("int64", "ts_ms"),
        fld("string", "snapshot", True, name="io.debezium.data.Enum", version=1,
            parameters={"allowed": "true,first,first_in_data_collection,"
                                   "last_in_data_collection,last,false,incremental"},
            default="false"),
        fld("string", "db"), fld("string", "sequence", True), fld("int64", "ts_us", True),
        fld("int64", "ts_ns", True), fld("string", "table", True), fld("int64", "server_id"),
        fld("string", "gtid", True), fld("string", "file"), fld("int64", "pos"),
        fld("int32", "row"), fld("int64", "thread", True), fld("string", "query", True)],
        "optional": False, "name": f"io.debezium.connector.{connector}.Source", "version": 1,
        "field": "source"}


_BLOCK = {"type": "struct", "fields": [
    {"type": "string", "optional": False, "field": "id"},
    {"type": "int64", "optional": False, "field": "total_order"},
    {"type": "int64", "optional": False, "field": "data_collection_order"}],
    "optional": True, "name": "event.block", "version": 1, "field": "transaction"}


def envelope_schema(writer, ch) -> dict:
    """The schema of a table's change events."""
    connector = writer._connector(ch.file)
    ident = ("envelope", id(ch.columns), writer.settings, writer.prefix, connector,
             _declared_key(writer, ch))
    seen = _CACHE.get(ident)
    if seen is not None and seen[0] is ch.columns:
        return seen[1]
    value = _value_schema(writer, ch)
    out = {"type": "struct", "fields": [
        dict(value, field="before"), dict(value, field="after"), _source_schema(connector), _BLOCK,
        {"type": "string", "optional": False, "field": "op"},
        {"type": "int64", "optional": True, "field": "ts_ms"},
        {"type": "int64", "optional": True, "field": "ts_us"},
        {"type": "int64", "optional": True, "field": "ts_ns"}],
        "optional": False, "name": f"{writer.prefix}.{ch.db}.{ch.table}.Envelope", "version": 2}
    _remember(ident, ch.columns, out)
    return out


def transaction_schema(kind: str) -> dict:
    """The schema of the transaction topic's keys and values."""
    if kind == "transaction_key":
        return {"type": "struct", "fields": [{"type": "string", "optional": False, "field": "id"}],
                "optional": False, "name": "io.debezium.connector.common.TransactionMetadataKey",
                "version": 1}
    collection = {"type": "struct", "fields": [
        {"type": "string", "optional": False, "field": "data_collection"},
        {"type": "int64", "optional": False, "field": "event_count"}], "optional": False}
    return {"type": "struct", "fields": [
        {"type": "string", "optional": False, "field": "status"},
        {"type": "string", "optional": False, "field": "id"},
        {"type": "int64", "optional": True, "field": "event_count"},
        {"type": "array", "items": collection, "optional": True, "field": "data_collections"},
        {"type": "int64", "optional": False, "field": "ts_ms"}],
        "optional": False, "name": "io.debezium.connector.common.TransactionMetadataValue",
        "version": 1}


def schema_change_schema(kind: str, connector) -> dict:
    """The schema of the schema-change topic's keys ("schema_change_key") and values."""
    def fld(t, field, optional=True, **extra):
        return {"type": t, "optional": optional, **extra, "field": field}

    if kind == "schema_change_key":
        return {"type": "struct", "fields": [fld("string", "databaseName", False)],
                "optional": False, "name": "io.debezium.connector.mysql.SchemaChangeKey",
                "version": 1}
    names = {"type": "array", "items": {"type": "string", "optional": False}}
    column = {"type": "struct", "fields": [
        fld("string", "name", False), fld("int32", "jdbcType", False), fld("int32", "nativeType"),
        fld("string", "typeName", False), fld("string", "typeExpression"),
        fld("string", "charsetName"), fld("int32", "length"), fld("int32", "scale"),
        fld("int32", "position", False), fld("boolean", "optional"),
        fld("boolean", "autoIncremented"), fld("boolean", "generated"), fld("string", "comment"),
        fld("string", "defaultValueExpression"), dict(names, optional=True, field="enumValues")],
        "optional": False, "name": "io.debezium.connector.schema.Column", "version": 1}
    table = {"type": "struct", "fields": [
        fld("string", "defaultCharsetName"),
        dict(names, optional=True, field="primaryKeyColumnNames"),
        {"type": "array", "items": column, "optional": False, "field": "columns"},
        fld("string", "comment")],
        "optional": True, "name": "io.debezium.connector.schema.Table", "version": 1,
        "field": "table"}
    change = {"type": "struct", "fields": [fld("string", "type", False), fld("string", "id", False),
                                           table],
              "optional": False, "name": "io.debezium.connector.schema.Change", "version": 1}
    return {"type": "struct", "fields": [
        _source_schema(connector), fld("int64", "ts_ms", False), fld("string", "databaseName"),
        fld("string", "schemaName"), fld("string", "ddl"),
        {"type": "array", "items": change, "optional": False, "field": "tableChanges"}],
        "optional": False, "name": f"io.debezium.connector.{connector}.SchemaChangeValue",
        "version": 1}


def _declared_key(writer, ch):
    return tuple(sorted(writer.declared.get(ch.db, ch.table).items()))


def _sql_string(raw: str) -> str:
    """The text of a SQL string literal as written ('...', '' and backslash escapes)."""
    body, out, i = raw[1:-1], [], 0
    escapes = {"0": "\0", "b": "\b", "n": "\n", "r": "\r", "t": "\t", "Z": "\x1a"}
    while i < len(body):
        ch = body[i]
        if ch == "\\" and i + 1 < len(body):
            nxt = body[i + 1]
            out.append(escapes.get(nxt, "\\" + nxt if nxt in "%_" else nxt))
            i += 2
        elif ch == "'" and body[i + 1:i + 2] == "'":
            out.append("'")
            i += 2
        else:
            out.append(ch)
            i += 1
    return "".join(out)


def _time(text: str):
    m = re.fullmatch(r"(-?)(\d+):(\d\d):(\d\d)(?:\.(\d{1,6}))?", text.strip())
    if not m:
        return text
    us = ((int(m[2]) * 60 + int(m[3])) * 60 + int(m[4])) * 10**6 + int((m[5] or "0").ljust(6, "0"))
    return dt.timedelta(microseconds=-us if m[1] else us)


def default_value(col, literal, settings):
    """A DEFAULT literal (kind, text) as the column's values are written (its form), or None."""
    from .debezium_values import writer_of

    kind, text = literal
    form = form_name("debezium", col.get("real_type", col.get("type")))
    if kind == "str":
        text = _sql_string(text)
    try:
        if form in ("int", "year", "bigint"):
            v = int(decimal.Decimal(text.strip())) if kind in ("num", "str") else \
                int(text, 16 if kind == "hex" else 2) if kind in ("hex", "bits") else None
            if form == "year" and v is not None and (0 < v < 100 or (v == 0 and kind == "str")):
                v += 2000 if v < 70 else 1900  # MariaDB stores a two-digit YEAR DEFAULT so
        elif form == "decimal":
            v = decimal.Decimal(text.strip())
        elif form in ("float32", "float64"):
            v = float(text)
        elif form == "epoch_days":
            v = dt.date.fromisoformat(text) if kind == "str" else None
        elif form in ("datetime", "zoned_timestamp"):
            v = dt.datetime(1970, 1, 1) if kind == "now" else dt.datetime.fromisoformat(text)
            if form == "zoned_timestamp":
                v = v.replace(tzinfo=dt.timezone.utc)
        elif form == "micro_time":
            v = _time(text) if kind == "str" else None
        elif form == "bits":
            v = int(text, 2) if kind == "bits" else int(text, 16) if kind == "hex" else int(text)
        elif form == "enum":
            v = text if kind == "str" else None
        elif form == "enum_set":
            v = frozenset(m for m in text.split(",") if m) if kind == "str" else None
        elif form == "string":
            raw = bytes.fromhex(text) if kind == "hex" else None
            if col.get("charset") == "binary":
                v = raw if raw is not None else text.encode("utf-8") if kind == "str" else None
            else:
                v = raw.decode("utf-8", "replace") if raw is not None else text if kind == "str" else None
        else:
            v = None
    except (ValueError, ArithmeticError):
        return None
    if v is None:
        return None
    return writer_of(col, settings)(v)


def _remember(ident, columns, schema):
    if len(_CACHE) > 1024:
        _CACHE.clear()
    _CACHE[ident] = (columns, schema)
