"""Kafka Connect schemas of the Debezium records (`schemas.enable=true`): what the JSON converter
writes beside each payload, {"schema": ..., "payload": ...}. A column's schema follows its
form (FORMS["debezium"], output/debezium_values.py) and the connector's type mapping: TINYINT and
SMALLINT int16 (SMALLINT UNSIGNED int32), MEDIUMINT and INT int32 (INT UNSIGNED int64), BIGINT
int64, FLOAT float, DOUBLE double, DECIMAL org.apache.kafka.connect.data.Decimal (bytes, with
scale and precision), the temporal types by time.precision.mode (io.debezium.time.*), BIT(1)
boolean and BIT(n) io.debezium.data.Bits, ENUM/SET io.debezium.data.Enum/EnumSet with their
members, GEOMETRY io.debezium.data.geometry.Geometry, JSON io.debezium.data.Json, text string,
binary bytes (or string, by binary.handling.mode). Schemas are made once per table."""
from __future__ import annotations

from .forms import form_name

_INT = {"TINY": "int16", "SHORT": "int16", "INT24": "int32", "LONG": "int32", "YEAR": "int32"}
_INT_UNSIGNED = {"TINY": "int16", "SHORT": "int32", "INT24": "int32", "LONG": "int64",
                 "YEAR": "int32"}
_CACHE: dict = {}


def _logical(type_, name, optional, field, **extra):
    out = {"type": type_, "optional": optional}
    if name:
        out["name"] = name
        out["version"] = 1
    out.update(extra)
    out["field"] = field
    return out


def column_schema(col, settings) -> dict:
    """One column's field schema."""
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
    if form == "geometry":
        return _logical("struct", "io.debezium.data.geometry.Geometry", optional, f,
                        doc="Geometry",
                        fields=[{"type": "bytes", "optional": False, "field": "wkb"},
                                {"type": "int32", "optional": True, "field": "srid"}])
    if form == "json":
        return _logical("string", "io.debezium.data.Json", optional, f)
    if form == "string":
        if col.get("charset") == "binary":
            return _logical("bytes" if settings.binary_mode == "bytes" else "string", None,
                            optional, f)
        return _logical("string", None, optional, f)
    return _logical("string", None, optional, f)


def _struct(name, fields, optional):
    return {"type": "struct", "fields": fields, "optional": optional, "name": name}


def _value_schema(writer, ch, optional=True):
    name = f"{writer.prefix}.{ch.db}.{ch.table}.Value"
    return _struct(name, [column_schema(c, writer.settings) for c in ch.columns], optional)


def key_schema(writer, ch) -> dict:
    """The schema of a table's key: its primary key's columns."""
    ident = ("key", id(ch.columns), writer.settings, writer.prefix)
    seen = _CACHE.get(ident)
    if seen is not None and seen[0] is ch.columns:
        return seen[1]
    pk = set(ch.primary_key or ())
    out = _struct(f"{writer.prefix}.{ch.db}.{ch.table}.Key",
                  [column_schema(c, writer.settings) for c in ch.columns if c.name in pk], False)
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
    ident = ("envelope", id(ch.columns), writer.settings, writer.prefix, connector)
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


def _remember(ident, columns, schema):
    if len(_CACHE) > 1024:
        _CACHE.clear()
    _CACHE[ident] = (columns, schema)
