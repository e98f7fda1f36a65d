"""What `binlog-grammar dump` prints: mysqlbinlog-style text, and JSON lines.

Text: each event as `# at POS` and a header line (`#YYMMDD hh:mm:ss server id N  end_log_pos M
CRC32 0x...  Type ...`), statements as SQL, and row changes as `### INSERT INTO ...` / `### SET` /
`###   @1=value /* TYPE meta=... */` exactly as `mariadb-binlog -vv --base64-output=decode-rows`
prints them (binlog_grammar.textfmt). A rows event whose rows are not decoded (see "Rows not
decoded" below) is followed by `# rows not decoded: REASON` and its row-image bytes in hex,
`#   OFFSET  xx xx ...`, 32 bytes a line.

JSON lines (`--format jsonl`), one object per line, UTF-8:
- a row change, in the Debezium envelope:
  `{"op": "c"|"u"|"d", "before": {...}|null, "after": {...}|null, "source": {...}, "ts_ms": N}`
  with `source` = file, pos (of the rows event), end_log_pos, server_id, gtid, timestamp (seconds),
  db, table, table_id, event_type, tx_seq (transaction number in the stream), row (index of the row
  in its event); before/after keyed by column name (`@N` when the binlog has no names);
- a rows event whose rows are not decoded: `{"event": TYPE, "file", "pos", "end_log_pos",
  "inner", "timestamp", "server_id", "gtid", "db", "table", "table_id", "rows_raw": HEX,
  "undecoded": REASON}` (db and table null when no TABLE_MAP_EVENT maps the table), rows_raw the
  hex of the event's row-image bytes as stored; written with `--rows-only` too;
- any other event: `{"event": TYPE, "file", "pos", "end_log_pos", "timestamp", "server_id",
  "gtid", "data": {...}}` with the parsed fields.
Rows not decoded: a valid file's rows event whose TABLE_MAP_EVENT does not say enough to size its
values (no column metadata, as in the 5.1 development trees; the old DECIMAL of tables from before
MySQL 5.0.3), and, with `--skip-damaged`, a damaged rows event (no TABLE_MAP_EVENT before it maps
its table because that one was damaged, bytes that do not decode): everything else in the file is
decoded. The damaged ones are reported on stderr with the skipped events and make the exit status 1.

Value forms (`json_value`): integers as numbers; DECIMAL as a string of its digits; FLOAT/DOUBLE as
numbers (non-finite ones as the strings "NaN", "Infinity", "-Infinity"); DATE "YYYY-MM-DD",
DATETIME "YYYY-MM-DDThh:mm:ss[.ffffff]", TIMESTAMP the same with "Z" (UTC); TIME "[-]hh:mm:ss[.ffffff]";
invalid dates as MySQL's text ("0000-00-00"); text as strings; binary as base64 strings; SET as a
sorted list of members (or the bitmask number); BIT as a number; JSON columns as JSON; GEOMETRY as
{"srid": N, "wkb": base64}; a partial JSON update without its before value as {"json_diffs": [{"op",
"path", "value"}]}; NULL as null.
"""
from __future__ import annotations

import base64
import datetime as dt
import decimal
import json
import math
from typing import Any

from .pyvalues import Geometry
from .textfmt import vv_type, vv_value

# ---------------------------------------------------------------------------------------------
# JSON lines


def json_value(v: Any) -> Any:
    """A decoded column value (or parsed field) in its documented JSON form."""
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
        return {"json_diffs": [{"op": d.op, "path": d.path, "value": json_value(d.value)}
                               for d in v.diffs]}
    if hasattr(v, "field_type") and hasattr(v, "data"):  # jsonb.JsonOpaque
        return {"opaque_type": int(v.field_type), "data": json_value(v.data)}
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


def change_record(ch, se, row_index: int) -> dict:
    """A RowChange in the Debezium envelope."""
    return {
        "op": ch.op,
        "before": json_value(ch.before),
        "after": json_value(ch.after),
        "source": {"file": ch.file, "pos": ch.pos, "end_log_pos": ch.end_pos,
                   "server_id": ch.server_id, "gtid": se.gtid, "timestamp": ch.timestamp,
                   "db": ch.db, "table": ch.table, "table_id": ch.table_id,
                   "event_type": ch.event_type, "tx_seq": se.tx_seq, "row": row_index},
        "ts_ms": ch.timestamp * 1000,
    }


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
    return {"event": ev.name, "file": ev.file, "pos": ev.offset, "end_log_pos": ev.end,
            "inner": ev.inner or None, "timestamp": int(ev.header.timestamp),
            "server_id": int(ev.header.server_id), "gtid": se.gtid,
            "data": _data_json(ev.data)}


def _data_json(data) -> Any:
    if isinstance(data, (bytes, bytearray)):
        return {"raw": json_value(data)}
    return _plain(data)


def _plain(v):
    name = getattr(v, "name", None)
    if isinstance(v, int) and not isinstance(v, bool) and isinstance(name, str):
        return name
    if isinstance(v, dict):
        return {str(k): _plain(x) for k, x in v.items() if not str(k).startswith("_")}
    if isinstance(v, (list, tuple)):
        return [_plain(x) for x in v]
    return json_value(v)


def jsonl_lines(se):
    """The JSON lines of one StreamEvent: its row changes, or the event itself."""
    ev = se.event
    if ev.type is not None and ev.type.row_op:
        changes = se.changes
        if se.undecoded is not None:
            yield json.dumps(raw_rows_record(se), ensure_ascii=False)
            return
        for i, ch in enumerate(changes):
            yield json.dumps(change_record(ch, se, i), ensure_ascii=False)
        return
    yield json.dumps(event_record(se), ensure_ascii=False)


# ---------------------------------------------------------------------------------------------
# text

_LABELS = {
    "QUERY_EVENT": "Query", "XID_EVENT": "Xid", "TABLE_MAP_EVENT": "Table_map",
    "FORMAT_DESCRIPTION_EVENT": "Start", "ROTATE_EVENT": "Rotate", "STOP_EVENT": "Stop",
    "GTID_LOG_EVENT": "GTID", "ANONYMOUS_GTID_LOG_EVENT": "Anonymous_GTID", "GTID_EVENT": "GTID",
    "GTID_LIST_EVENT": "Gtid list", "BINLOG_CHECKPOINT_EVENT": "Binlog checkpoint",
    "ANNOTATE_ROWS_EVENT": "Annotate_rows", "PREVIOUS_GTIDS_LOG_EVENT": "Previous-GTIDs",
    "INTVAR_EVENT": "Intvar", "RAND_EVENT": "Rand", "USER_VAR_EVENT": "User_var",
}


def _stamp(ts: int) -> str:
    return dt.datetime.fromtimestamp(ts, dt.timezone.utc).strftime("%y%m%d %H:%M:%S")


def text_lines(se):
    """mysqlbinlog-style lines for one StreamEvent."""
    ev = se.event
    h = ev.header
    crc = f" CRC32 0x{ev.checksum:08x}" if ev.checksum is not None else ""
    where = f"# at {ev.offset}" if not ev.inner else \
        f"# at {ev.offset} (inside the payload, offset {ev.extra.get('payload_offset', 0)})"
    yield where
    label = _LABELS.get(ev.name) or _rows_label(ev) or ev.name
    yield (f"#{_stamp(int(h.timestamp))} server id {int(h.server_id)}  end_log_pos {ev.end}{crc} "
           f"\t{label}{_summary(se)}")
    yield from _body(se)


def _rows_label(ev):
    op = ev.type.row_op if ev.type is not None else None
    if not op:
        return None
    return {"insert": "Write_rows", "update": "Update_rows", "delete": "Delete_rows"}[op]


def _summary(se) -> str:
    ev = se.event
    d = ev.data
    name = ev.name
    if ev.type is None:
        return f" (type {int(ev.header.type_code)}, {len(ev.raw)} bytes not described by any spec)"
    if name == "QUERY_EVENT":
        return f"\tthread_id={int(d.thread_id)}\texec_time={int(d.exec_time)}\terror_code={int(d.error_code)}"
    if name == "XID_EVENT":
        return f" = {int(d.xid)}"
    if name == "TABLE_MAP_EVENT":
        return f": `{d.db}`.`{d.table}` mapped to number {int(d.table_id)}"
    if ev.type.row_op:
        names = getattr(d.flags, "names", None) or []
        return f": table id {int(d.table_id)}" + (f" flags: {' '.join(names)}" if names else "")
    if name == "FORMAT_DESCRIPTION_EVENT":
        return f": binlog v {int(d.binlog_version)}, server v {d.server_version}"
    if name == "ROTATE_EVENT":
        return f" to {d.new_log_ident}  pos: {int(d.position)}"
    if name in ("GTID_LOG_EVENT", "GTID_EVENT", "GTID_TAGGED_LOG_EVENT") and se.gtid:
        return f" {se.gtid}"
    return ""


def _body(se):
    ev = se.event
    d = ev.data
    if ev.type is None:
        return
    name = ev.name
    if name in ("QUERY_EVENT", "QUERY_COMPRESSED_EVENT") and isinstance(d.get("query"), str):
        if d.get("db"):
            yield f"use `{d.db}`/*!*/;"
        yield f"SET TIMESTAMP={int(ev.header.timestamp)}/*!*/;"
        yield f"{d.query}"
        yield "/*!*/;"
    elif name == "XID_EVENT":
        yield "COMMIT/*!*/;"
    elif name == "ANNOTATE_ROWS_EVENT":
        yield f"#Q> {d.get('query', '')}"
    elif ev.type.row_op:
        yield from rows_text(se)


def rows_text(se):
    """The `###` lines of a rows event, as mariadb-binlog -vv prints them; for rows not decoded,
    the reason and the row-image bytes in hex."""
    changes = se.changes
    if se.undecoded is not None:
        yield f"# rows not decoded: {se.undecoded}"
        data = rows_bytes(se.event)
        for at in range(0, len(data), 32):
            yield f"#   {at:06x}  {data[at:at + 32].hex(' ')}"
        return
    for ch in changes:
        table = f"`{ch.db}`.`{ch.table}`"
        if ch.op == "c":
            yield f"### INSERT INTO {table}"
            yield "### SET"
            yield from _image(ch.after, ch.columns)
        elif ch.op == "u":
            yield f"### UPDATE {table}"
            yield "### WHERE"
            yield from _image(ch.before, ch.columns)
            yield "### SET"
            yield from _image(ch.after, ch.columns)
        else:
            yield f"### DELETE FROM {table}"
            yield "### WHERE"
            yield from _image(ch.before, ch.columns)


def _image(values: dict, columns):
    for c in columns:
        if c.name not in values:
            continue
        v = values[c.name]
        yield f"###   @{c.index + 1}={vv_value(v, c)} /* {vv_type(c, is_null=v is None)} */"
