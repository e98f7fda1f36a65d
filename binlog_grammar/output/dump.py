"""What `binlog-grammar dump` prints: mysqlbinlog-style text, and JSON lines.

Text: each event as `# at POS` and a header line (`#YYMMDD hh:mm:ss server id N  end_log_pos M
CRC32 0x...  Type ...`), statements as SQL, and row changes as `### INSERT INTO ...` / `### SET` /
`###   @1=value /* TYPE meta=... */` exactly as `mariadb-binlog -vv --base64-output=decode-rows`
prints them (binlog_grammar.output.text). A rows event whose rows are not decoded (see "Rows not
decoded" below) is followed by `# rows not decoded: REASON` and its row-image bytes in hex,
`#   OFFSET  xx xx ...`, 32 bytes a line.

JSON lines (`--format jsonl`, the native envelope; `--envelope debezium` is output/debezium.py):
one JSON object per line, and every line is valid UTF-8 JSON text.
- a row change, shaped like Debezium's envelope (its values are this module's forms, not the
  connector's):
  `{"op": "c"|"u"|"d", "before": {...}|null, "after": {...}|null, "source": {...}, "ts_ms": N}`
  with `source` = file, pos (of the rows event), end_log_pos, server_id, gtid, timestamp (seconds),
  db, table, table_id, event_type, tx_seq (transaction number in the stream), row (index of the row
  in its event); before/after keyed by column name (`@N` when the binlog has no names); and, only
  when a text value held bytes its character set does not decode, `"text_base64": {"before":
  {column: base64}, "after": {column: base64}}` with those values' exact bytes;
- a rows event whose rows are not decoded: `{"event": TYPE, "file", "pos", "end_log_pos",
  "inner", "timestamp", "server_id", "gtid", "db", "table", "table_id", "rows_raw": HEX,
  "undecoded": REASON}` (db and table null when no TABLE_MAP_EVENT maps the table), rows_raw the
  hex of the event's row-image bytes as stored; written with `--rows-only` too;
- any other event: `{"event": TYPE, "file", "pos", "end_log_pos", "inner", "timestamp",
  "server_id", "gtid", "data": {...}}` with the parsed fields (enum values by name, bytes as
  base64). A statement (`query` of QUERY_EVENT, EXECUTE_LOAD_QUERY_EVENT, QUERY_COMPRESSED_EVENT,
  inflated) is text in its own character set, the character_set_client of its Q_CHARSET_CODE
  status variable (UTF-8 when it has none).

Rows not decoded: a valid file's rows event whose TABLE_MAP_EVENT does not say enough to size its
values (no column metadata, as in the 5.1 development trees; the old DECIMAL of tables from before
MySQL 5.0.3), and, with `--skip-damaged`, a damaged rows event (no TABLE_MAP_EVENT before it maps
its table because that one was damaged, bytes that do not decode): everything else in the file is
decoded. The damaged ones are reported on stderr with the skipped events and make the exit status 1.

Text that does not decode: wherever a string holds bytes that are not valid in its character set,
the JSON string holds the text with each such byte written as the four characters `\\xNN`
(lower-case hex) and the exact bytes are given beside it in base64: for column values in the
envelope's `text_base64`, for a field of an event's data (or of `source`) in a sibling field named
`<field>_base64` (for a list of strings, a list holding the base64 of each such string and null
for the others).

Value forms (`json_value`, and `image_json` for a row image): integers as numbers; DECIMAL as a
string of its digits; FLOAT/DOUBLE as numbers (non-finite ones as the strings "NaN", "Infinity",
"-Infinity"); DATE "YYYY-MM-DD", DATETIME "YYYY-MM-DDThh:mm:ss[.ffffff]", TIMESTAMP the same with
"Z" (UTC); TIME "[-]hh:mm:ss[.ffffff]"; invalid dates as MySQL's text ("0000-00-00"); text as
strings; binary as base64 strings; SET as a sorted list of members (or the bitmask number); BIT as
a number; GEOMETRY as {"srid": N, "wkb": base64}; NULL as null.

| column | JSON value |
|---|---|
| CHAR, VARCHAR, TEXT with a known charset (metadata or --schema) | the text |
| CHAR, VARCHAR, TEXT, BLOB without charset metadata (MySQL before 8.0.1, MariaDB before 10.5, no --schema) | the text in the server's character set: the default database's (Q_CHARSET_DATABASE_CODE) when a QUERY_EVENT of that database gave it, else collation_server of the last QUERY_EVENT before the rows event in that file (the Q_CHARSET_CODE status variable every statement, BEGIN included, carries), else UTF-8; a character set Python has no codec for reads as UTF-8 |
| BINARY, VARBINARY, BLOB known to be binary | base64 |
| JSON (MySQL binary JSON) | a JSON string holding the document's text as MySQL prints it (Json_wrapper::to_string, binlog_grammar.runtime.jsonb.json_text): `"{\"a\": 1.50, \"d\": \"2024-01-02\"}"`; DECIMAL members as their digits, DATE/TIME/DATETIME members as quoted text, other opaque members as "base64:typeNN:..." — the form Debezium gives a JSON column (a string with the schema name io.debezium.data.Json: debezium.io blog, 2016-10-19, "Support for MySQL JSON type coming soon") |
| JSON, partial update without its before value | {"json_diffs": [{"op": "REPLACE"/"INSERT"/"REMOVE", "path": "$.a", "value": JSON text string, null for REMOVE}]} |
"""
from __future__ import annotations

import base64
import datetime as dt
import decimal
import functools
import json
import math
from typing import Any, Optional

from ..binlog.events import decode_of, decompress
from ..generated import enums
from ..generated.sets import SETS
from ..runtime.construct import set_members
from ..runtime.values import CHARSET_CODECS, Geometry, codec_of, errors_of
from . import jsonl_native
from .forms import form_name, plan

_CODE = {name: code for code, name in enums.COLUMN_TYPE.items()}
# column types whose values are text or bytes by their charset (GEOMETRY aside): the "text" form
# of FORMS["jsonl"] (output/forms.py, "@string_columns")
_TEXT_TYPES = set_members(SETS["string_columns"], None)  # specs/types/column_classes.yaml
_COLLATIONS = getattr(enums, "COLLATION", {})

# ---------------------------------------------------------------------------------------------
# JSON lines


def json_value(v: Any) -> Any:
    """A decoded column value (or parsed field) in its documented JSON form, without knowing its
    column (`image_json` knows it: JSON columns, text without charset metadata)."""
    if v is None or isinstance(v, (bool, str)):
        return v
    if isinstance(v, int):
        return int(v)
    if isinstance(v, float):
        if math.isfinite(v):
            return v
        return "NaN" if math.isnan(v) else ("Infinity" if v > 0 else "-Infinity")
    if isinstance(v, decimal.Decimal):
        return format(v, "f")
    if isinstance(v, (bytes, bytearray, memoryview)):
        return base64.b64encode(bytes(v)).decode("ascii")
    if isinstance(v, dt.datetime):
        if v.tzinfo is not None:
            return v.astimezone(dt.timezone.utc).replace(tzinfo=None).isoformat() + "Z"
        return v.isoformat()
    if isinstance(v, dt.date):
        return v.isoformat()
    if isinstance(v, dt.timedelta):
        return _time_text(v)
    if isinstance(v, Geometry):
        return {"srid": v.srid, "wkb": json_value(v.wkb)}
    if isinstance(v, (set, frozenset)):
        return sorted(json_value(x) for x in v)
    if hasattr(v, "diffs") and type(v).__name__ == "PartialJson":
        return _json_diffs(v)
    if hasattr(v, "field_type") and hasattr(v, "data"):  # jsonb.JsonOpaque: as MySQL prints it
        return _json_document(v)
    if isinstance(v, dict):
        return {str(k): json_value(x) for k, x in v.items() if not str(k).startswith("_")}
    if isinstance(v, (list, tuple)):
        return [json_value(x) for x in v]
    return str(v)


def _time_text(td: dt.timedelta) -> str:
    neg = td < dt.timedelta(0)
    td = -td if neg else td
    secs = td.days * 86400 + td.seconds
    out = f"{'-' if neg else ''}{secs // 3600:02d}:{secs // 60 % 60:02d}:{secs % 60:02d}"
    return out + (f".{td.microseconds:06d}" if td.microseconds else "")


def _json_document(doc) -> str:
    """A JSON column's value: its text as MySQL prints it."""
    from ..runtime.jsonb import json_text

    return json_text(doc)


def _json_diffs(value) -> dict:
    return {"json_diffs": [{"op": str(d.op), "path": str(d.path),
                            "value": None if str(d.op) == "REMOVE" else _json_document(d.value)}
                           for d in value.diffs]}


# -- text that does not decode

def _b64(data: bytes) -> str:
    return base64.b64encode(data).decode("ascii")


def _is_utf8(text: str) -> bool:
    if text.isascii():
        return True
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        return False
    return True


def escape_undecoded(text: str) -> str:
    """Text whose undecodable bytes (kept as surrogate escapes U+DC80..U+DCFF) are written as
    `\\xNN`; any other lone surrogate as `\\uXXXX`. Valid text comes back unchanged."""
    if _is_utf8(text):
        return text
    out = []
    for ch in text:
        o = ord(ch)
        if 0xDC80 <= o <= 0xDCFF:
            out.append(f"\\x{o - 0xDC00:02x}")
        elif 0xD800 <= o <= 0xDFFF:
            out.append(f"\\u{o:04x}")
        else:
            out.append(ch)
    return "".join(out)


def _clean(v):
    """A JSON-ready value with every string made valid text: a dict's string field that held
    undecodable bytes gets a sibling `<field>_base64` with its bytes (read as UTF-8 with
    surrogateescape, as the spec `str` fields are)."""
    if isinstance(v, str):
        return escape_undecoded(v)
    if isinstance(v, dict):
        out = {}
        for k, x in v.items():
            key = escape_undecoded(str(k))
            if isinstance(x, str) and not _is_utf8(x):
                out[key] = escape_undecoded(x)
                out[key + "_base64"] = _b64(x.encode("utf-8", "surrogateescape"))
            elif isinstance(x, list) and any(isinstance(i, str) and not _is_utf8(i) for i in x):
                out[key] = [_clean(i) for i in x]
                out[key + "_base64"] = [
                    _b64(i.encode("utf-8", "surrogateescape"))
                    if isinstance(i, str) and not _is_utf8(i) else None for i in x]
            else:
                out[key] = _clean(x)
        return out
    if isinstance(v, list):
        return [_clean(x) for x in v]
    return v


def is_text(text: str) -> bool:
    """Is the text valid UTF-8 text (no undecoded bytes kept as surrogates)?"""
    return _is_utf8(text)


def data_json(data):
    """The "data" object of an event record (not a statement's: event_record adds its text)."""
    return _data_json(data)


def dumps(record: dict) -> str:
    """One JSON line: UTF-8 text kept as it is, and valid UTF-8 whatever the record holds."""
    line = json.dumps(record, ensure_ascii=False)
    if not _is_utf8(line):
        line = json.dumps(_clean(record), ensure_ascii=False)
    return line


# -- row images

class ServerCharsets:
    """What the QUERY_EVENTs of each file say about the server's character sets, for the text of
    tables without charset metadata: collation_server of the last Q_CHARSET_CODE, and the default
    database's collation of each database a Q_CHARSET_DATABASE_CODE named."""

    def __init__(self):
        self.server = {}  # file -> charset name
        self.databases = {}  # (file, db) -> charset name

    def see(self, ev) -> None:
        if ev.type is None or ev.name not in _QUERY_EVENTS:
            return
        sv = ev.data.get("status_vars") if hasattr(ev.data, "get") else None
        for entry in sv or ():
            ident = entry.get("id")
            value = entry.get("value")
            if ident == "charset" and value is not None:
                cs = _charset_name(value.get("collation_server"))
                if cs:
                    self.server[ev.file] = cs
            elif ident == "charset_database" and value is not None and ev.data.get("db"):
                cs = _charset_name(value)
                if cs:
                    self.databases[(ev.file, str(ev.data.get("db")))] = cs

    def charset(self, file, db) -> Optional[str]:
        return self.databases.get((file, db)) or self.server.get(file)


def _charset_name(collation) -> Optional[str]:
    try:
        name = _COLLATIONS.get(int(collation))
    except (TypeError, ValueError):
        return None
    return None if name is None else ("binary" if name == "binary" else name.split("_", 1)[0])


def _assumed_codec(charset: Optional[str]) -> str:
    return CHARSET_CODECS.get(charset or "", "utf-8")


def _form(col) -> str:
    """The column's form in FORMS["jsonl"] (output/forms.py), by its real type."""
    return form_name("jsonl", col.get("real_type", col.get("type")))


def image_json(values: Optional[dict], columns, server_charset: Optional[str] = None,
               raw: Optional[dict] = None):
    """A row image in its documented JSON form (see the module docstring), knowing each column:
    JSON columns as their document text, text without charset metadata in `server_charset`
    (UTF-8 when None). The exact bytes of text values that do not decode go to `raw`
    ({column: base64}). Each column is written by its form, found once per table (its plan)."""
    if values is None:
        return None
    writers = plan("jsonl", columns, functools.partial(_jsonl_entry, server_charset=server_charset),
                   (server_charset,), dict)
    out = {}
    for name, v in values.items():
        if v is None:
            out[name] = None
        else:
            out[name] = writers.get(name, _UNKNOWN_COLUMN)(v, raw)
    return out


def _jsonl_entry(col, server_charset):
    return col.name, JSONL_FORMS[_form(col)](col, server_charset)


def _text_out(v: str, name, raw, codec) -> str:
    """Text as it goes into the JSON line: its bytes that do not decode `\\xNN`, and exactly,
    in base64, into `raw`."""
    if _is_utf8(v):
        return v
    if raw is not None:
        raw[name] = _b64(v.encode(codec, errors_of(codec)))
    return escape_undecoded(v)


# -- the forms (output/forms.py FORMS["jsonl"]): form(col, server_charset) -> write(v, raw),
# for a value that is not None; a value of an unexpected Python type goes to json_value

def _value(col, server_charset=None, codec=None):
    name = col.name if col is not None else None
    codec = codec or codec_of(col) or "utf-8"

    def write(v, raw):
        if isinstance(v, str):
            return _text_out(v, name, raw, codec)
        return json_value(v)
    return write


_UNKNOWN_COLUMN = _value(None)


def _fast(test, form):
    """A form whose usual values `test` picks and `form` writes; others as `_value` does."""
    def make(col, server_charset):
        other = _value(col)
        return lambda v, raw: form(v) if test(v) else other(v, raw)
    return make


def _json_document_form(col, server_charset):
    name = col.name

    def write(v, raw):
        if hasattr(v, "diffs"):  # rows.PartialJson
            return _json_diffs(v)
        v = _json_document(v)
        return _text_out(v, name, raw, "utf-8") if isinstance(v, str) else json_value(v)
    return write


def _text_form(col, server_charset):
    name = col.name
    known = col.get("charset") is not None
    assumed = _assumed_codec(server_charset)
    assumed_errors = errors_of(assumed)
    codec = codec_of(col) or "utf-8"

    def write(v, raw):
        if isinstance(v, str):
            return _text_out(v, name, raw, codec)
        if not known and isinstance(v, (bytes, bytearray, memoryview)):
            return _text_out(bytes(v).decode(assumed, assumed_errors), name, raw, assumed)
        return json_value(v)
    return write


def _utc_text(v) -> str:
    if v.tzinfo is None:
        return v.isoformat()
    return v.astimezone(dt.timezone.utc).replace(tzinfo=None).isoformat() + "Z"


JSONL_FORMS = {
    "number": _fast(lambda v: type(v) is int, lambda v: v),
    "decimal_string": _fast(lambda v: type(v) is decimal.Decimal, lambda v: format(v, "f")),
    "float_number": _fast(lambda v: type(v) is float and math.isfinite(v), lambda v: v),
    "iso_date": _fast(lambda v: type(v) is dt.date, dt.date.isoformat),
    "iso_datetime": _fast(lambda v: type(v) is dt.datetime, _utc_text),
    "iso_time": _fast(lambda v: type(v) is dt.timedelta, lambda v: _time_text(v)),
    "member": _value,
    "members": _value,
    "geometry": _value,
    "json_document": _json_document_form,
    "text": _text_form,
    "value": _value,
}


def needs_columns(columns) -> bool:
    """Do the JSON forms of this table's values depend on their columns (a JSON column, text
    without charset metadata)? When not, `json_value` of each value is its form."""
    forms = {c.name: (_form(c), c) for c in columns}
    return any(form == "json_document" or (form == "text" and c.get("charset") is None)
               for form, c in forms.values())


def with_image_forms(changes, server_charset: Optional[str] = None) -> list:
    """RowChanges whose images are already in their documented JSON forms (`image_json`; the
    bytes of text that does not decode are not kept), when their table needs its columns for
    that: for writers that turn each value into JSON on their own (the Spark map form)."""
    if not changes or not needs_columns(changes[0].columns):
        return changes
    from dataclasses import replace

    return [replace(ch, before=image_json(ch.before, ch.columns, server_charset),
                    after=image_json(ch.after, ch.columns, server_charset)) for ch in changes]


def change_record(ch, se, row_index: int, server_charset: Optional[str] = None) -> dict:
    """A RowChange in the native envelope (op, before, after, source, ts_ms)."""
    raw_before, raw_after = {}, {}
    rec = {
        "op": ch.op,
        "before": image_json(ch.before, ch.columns, server_charset, raw_before),
        "after": image_json(ch.after, ch.columns, server_charset, raw_after),
        "source": {"file": ch.file, "pos": ch.pos, "end_log_pos": ch.end_pos,
                   "server_id": ch.server_id, "gtid": se.gtid, "timestamp": ch.timestamp,
                   "db": ch.db, "table": ch.table, "table_id": ch.table_id,
                   "event_type": ch.event_type, "tx_seq": se.tx_seq, "row": row_index},
        "ts_ms": ch.timestamp * 1000,
    }
    if raw_before or raw_after:
        rec["text_base64"] = {k: v for k, v in (("before", raw_before), ("after", raw_after)) if v}
    return rec


def raw_rows_record(se) -> dict:
    """A rows event whose rows were not decoded (StreamEvent.undecoded says why)."""
    ev = se.event
    t = se.table
    return {"event": ev.name, "file": ev.file, "pos": ev.offset, "end_log_pos": ev.end,
            "inner": ev.inner or None, "timestamp": int(ev.header.timestamp),
            "server_id": int(ev.header.server_id), "gtid": se.gtid,
            "db": t.db if t is not None else None, "table": t.table if t is not None else None,
            "table_id": int(ev.data["table_id"]), "rows_raw": rows_bytes(ev).hex(),
            "undecoded": se.undecoded}


def rows_bytes(ev) -> bytes:
    """The row-image bytes of a rows event, as stored."""
    data = ev.data.get("rows") if hasattr(ev.data, "get") else None
    return bytes(data) if isinstance(data, (bytes, bytearray, memoryview)) else b""


def event_record(se) -> dict:
    ev = se.event
    query = ev.type is not None and ev.name in _QUERY_EVENTS
    rec = {"event": ev.name, "file": ev.file, "pos": ev.offset, "end_log_pos": ev.end,
           "inner": ev.inner or None, "timestamp": int(ev.header.timestamp),
           "server_id": int(ev.header.server_id), "gtid": se.gtid,
           "data": _data_json(ev.data) if query else _shared_data_json(ev.data)}
    if query and isinstance(rec["data"], dict):
        _statement_text(ev, rec["data"])
    return rec


_JSON_OF = {}  # id of a parsed data value -> (the value, its JSON form)


def _shared_data_json(data):
    """_data_json(data), made once per parsed value: the reader gives events whose data bytes
    repeat (a TABLE_MAP before every statement) one shared, read-only value (binlog.parse), so
    its JSON form is made once too (the caller must not change it; statements get their own)."""
    seen = _JSON_OF.get(id(data))
    if seen is not None and seen[0] is data:
        return seen[1]
    out = _data_json(data)
    if len(_JSON_OF) >= 1024:
        _JSON_OF.clear()
    _JSON_OF[id(data)] = (data, out)  # data is kept, so its id is not reused meanwhile
    return out


_QUERY_EVENTS = frozenset({"QUERY_EVENT", "EXECUTE_LOAD_QUERY_EVENT", "QUERY_COMPRESSED_EVENT"})


def _statement_text(ev, out: dict) -> None:
    """The statement of a QUERY event as text in its character_set_client (the bytes that do not
    decode escaped, with `query_base64`)."""
    data = ev.data
    q = data.get("query")
    dec = decode_of(ev.type, data, "query")
    if dec is not None:
        try:
            q = decompress(dec.codec, bytes(q))
        except Exception:  # noqa: BLE001 - a statement that does not inflate stays as stored
            return
    if isinstance(q, str):
        raw = q.encode("utf-8", "surrogateescape")
    elif isinstance(q, (bytes, bytearray, memoryview)):
        raw = bytes(q)
    else:
        return
    cs = None
    for entry in data.get("status_vars") or ():
        if entry.get("id") == "charset" and entry.get("value") is not None:
            cs = _charset_name(entry["value"].get("character_set_client"))
    codec = CHARSET_CODECS.get(cs or "", "utf-8")
    try:
        text = raw.decode(codec, errors_of(codec))
    except UnicodeDecodeError:  # a handler that keeps surrogates has no answer for cut-off units
        try:
            text = raw.decode(codec, "surrogateescape")
        except UnicodeDecodeError:
            return  # the statement stays as stored, with query_base64
    out.pop("query_base64", None)
    if _is_utf8(text):
        out["query"] = text
    else:
        out["query"] = escape_undecoded(text)
        out["query_base64"] = _b64(raw)


def _data_json(data) -> Any:
    if isinstance(data, (bytes, bytearray)):
        return {"raw": json_value(data)}
    return _plain(data)


def _plain(v):
    t = type(v)
    if t is str or t is int or t is bool or v is None:  # as json_value writes them (no enum name)
        return v
    name = getattr(v, "name", None)
    if isinstance(v, int) and not isinstance(v, bool) and isinstance(name, str):
        return name
    if isinstance(v, dict):
        return {str(k): _plain(x) for k, x in v.items() if not str(k).startswith("_")}
    if isinstance(v, (list, tuple)):
        return [_plain(x) for x in v]
    return json_value(v)


class JsonlWriter:
    """The JSON lines of a stream's events, given in stream order: it remembers what earlier
    events say about later ones (the server's character set, for text without charset metadata).
    `rows_only`: only row changes and rows not decoded."""

    def __init__(self, rows_only: bool = False):
        self.rows_only = rows_only
        self.charsets = ServerCharsets()

    def lines(self, se):
        ev = se.event
        self.charsets.see(ev)
        if ev.type is not None and ev.type.row_op:
            if se._changes is None and se.undecoded is None:  # the compiled backend may write them
                cs = self.charsets.charset(ev.file, se.table.db if se.table is not None else None)
                text = jsonl_native.rows_jsonl(se, cs, change_record)
                if text is not None:
                    if text:
                        yield text[:-1]
                    return
            changes = se.changes
            if se.undecoded is not None:
                yield dumps(raw_rows_record(se))
                return
            cs = self.charsets.charset(ev.file, se.table.db if se.table is not None else None) \
                if changes else None
            for i, ch in enumerate(changes):
                yield dumps(change_record(ch, se, i, cs))
            return
        if not self.rows_only:
            yield dumps(event_record(se))

    def end(self) -> list:
        """The lines left once the stream ends (none: each event's lines are whole)."""
        return []

