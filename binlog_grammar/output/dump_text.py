"""The text `binlog-grammar dump` prints: mysqlbinlog's form, safe to pipe into a client.

Each event is `# at POS` and a header line (`#YYMMDD hh:mm:ss server id N  end_log_pos M CRC32
0x...  Type ...`); statements are SQL, run in their default database (`use`) at their time
(`SET TIMESTAMP`), each ended by a `/*!*/;` line; row changes are `### INSERT INTO ...` /
`### SET` / `###   @1=value /* TYPE meta=... */` comment lines, value by value as
`mariadb-binlog -vv --base64-output=decode-rows` prints them (binlog_grammar.output.text). A rows
event whose rows are not decoded is followed by `# rows not decoded: REASON` and its row-image
bytes in hex, `#   OFFSET  xx xx ...`, 32 bytes a line.

DBAs pipe mysqlbinlog's output into `mysql`, so this text is a script too, and every byte of the
binlog in it goes through binlog_grammar.output.quoting:
- `TEXT_HEADER` starts it as mysqlbinlog's output starts: `/*!\\C utf8mb4 */` (the client reads
  the rest as UTF-8, whatever its `--default-character-set`) and `DELIMITER /*!*/;` (a statement
  holding `;`, such as a stored procedure's body, is sent whole); `TEXT_FOOTER` ends it.
- Names and text in comment lines (`#` header lines, `###` lines, `#Q>` lines of ANNOTATE_ROWS,
  one `#Q>` line per line of the statement) are `quoting.comment`: no line break, NUL or control
  byte ends the comment early. Row values in `###` lines are mariadb-binlog's quoted bytes, whose
  bytes below 0x20 are `\\xNN`.
- A statement is printed as it is only when the client reads it back as exactly that statement
  (`quoting.client_reads_verbatim` with the `/*!*/;` delimiter); otherwise (a NUL byte, the
  delimiter or a client command outside strings, a CR before an LF inside a string) it runs from
  its hex with PREPARE/EXECUTE (`quoting.prepared`), after a `#` line saying so.
- `use` names the database with doubled backquotes (quoting.use_lines; none for an event
  flagged LOG_EVENT_SUPPRESS_USE_F, such as CREATE DATABASE, as mysqlbinlog does); a name
  holding a CR before an LF or a NUL, which no client line carries, cannot be made the default
  database by a script, so its statement is shown as `#` comment lines and not run, with a line
  saying why.
- Before each statement its logged sql_mode is set (`SET @@session.sql_mode=N`, as mysqlbinlog
  does): under a target whose global sql_mode has NO_BACKSLASH_ESCAPES, a statement logged with
  backslash escapes would otherwise be split by the client at an escaped quote.
"""
from __future__ import annotations

import time

from ..binlog.events import query_text
from ..generated import enums
from . import quoting, vv_native
from .text import vv_lines

__all__ = ["text_lines", "rows_text", "label_of", "TEXT_HEADER", "TEXT_FOOTER"]

DELIMITER = "/*!*/;"
# sql_mode bits that change how the client and the server read a statement's strings (the same
# bits in MySQL's and MariaDB's sql_mode)
_MODE = {name: bit for bit, name in enums.SQL_MODE.items()}
NO_BACKSLASH_ESCAPES = _MODE["MODE_NO_BACKSLASH_ESCAPES"]
ANSI_QUOTES = _MODE["MODE_ANSI_QUOTES"]
SUPPRESS_USE = {name: bit for bit, name in enums.EVENT_FLAGS.items()}["LOG_EVENT_SUPPRESS_USE_F"]
TEXT_HEADER = (quoting.CLIENT_CHARSET + ";", f"DELIMITER {DELIMITER}")
TEXT_FOOTER = ("DELIMITER ;", "# End of log file")

_LABELS = {
    "QUERY_EVENT": "Query", "QUERY_COMPRESSED_EVENT": "Query_compressed", "XID_EVENT": "Xid", "TABLE_MAP_EVENT": "Table_map",
    "FORMAT_DESCRIPTION_EVENT": "Start", "ROTATE_EVENT": "Rotate", "STOP_EVENT": "Stop",
    "GTID_LOG_EVENT": "GTID", "ANONYMOUS_GTID_LOG_EVENT": "Anonymous_GTID", "GTID_EVENT": "GTID",
    "GTID_LIST_EVENT": "Gtid list", "BINLOG_CHECKPOINT_EVENT": "Binlog checkpoint",
    "ANNOTATE_ROWS_EVENT": "Annotate_rows", "PREVIOUS_GTIDS_LOG_EVENT": "Previous-GTIDs",
    "INTVAR_EVENT": "Intvar", "RAND_EVENT": "Rand", "USER_VAR_EVENT": "User_var",
}


def _stamp(ts: int) -> str:
    """The event's time in the local zone (TZ; `--utc` sets it to UTC), as mysqlbinlog prints
    it with localtime_r; the compiled lane does the same."""
    t = time.localtime(ts)
    return "%02d%02d%02d %02d:%02d:%02d" % (t.tm_year % 100, t.tm_mon, t.tm_mday, t.tm_hour,
                                            t.tm_min, t.tm_sec)


def text_lines(se):
    """mysqlbinlog-style lines for one StreamEvent."""
    ev = se.event
    h = ev.header
    crc = f" CRC32 0x{ev.checksum:08x}" if ev.checksum is not None else ""
    where = str(int(ev.offset))
    if ev.inner:
        where += f" (inside the payload, offset {int(ev.extra.get('payload_offset', 0))})"
    yield "# at " + quoting.comment(where)
    label = _LABELS.get(ev.name) or _rows_label(ev) or ev.name
    yield "#" + quoting.comment(f"{_stamp(int(h.timestamp))} server id {int(h.server_id)}  "
                                f"end_log_pos {_end_log_pos(ev)}{crc} \t{label}{_summary(se)}")
    if ev.extra.get("print_table_metadata"):  # dump --print-table-metadata
        from .table_metadata import metadata_lines

        yield from ("#" + quoting.comment(line[1:]) for line in metadata_lines(ev, ev.context))
    yield from _body(se)


def _end_log_pos(ev) -> str:
    """The end_log_pos of the event's header, as mysqlbinlog prints it. In a relay log that is
    the position in the primary's binlog (what SHOW SLAVE STATUS and error messages name), not
    in this file: the offset where the event ends here is shown beside it, marked."""
    log_pos = ev.header.get("log_pos")
    if log_pos is None or ev.inner or ev.context.get("binlog_version", 4) < 4 or \
            int(log_pos) == ev.end:
        return str(ev.end)
    return f"{int(log_pos)} (relay log: ends at {ev.end})"


_ROWS_LABELS = {"insert": "Write_rows", "update": "Update_rows", "delete": "Delete_rows"}


def _rows_label(ev):
    op = ev.type.row_op if ev.type is not None else None
    return _ROWS_LABELS[op] if op else None


def label_of(et) -> str:
    """The label of an event type in its header line (mysqlbinlog's names)."""
    return _LABELS.get(et.name) or _ROWS_LABELS.get(et.row_op) or et.name


def _summary(se) -> str:
    ev = se.event
    d = ev.data
    name = ev.name
    if ev.type is None:
        return f" (type {int(ev.header.type_code)}, {len(ev.raw)} bytes not described by any spec)"
    if name in ("QUERY_EVENT", "QUERY_COMPRESSED_EVENT"):
        return f"\tthread_id={int(d.thread_id)}\texec_time={int(d.exec_time)}\terror_code={int(d.error_code)}"
    if name == "XID_EVENT":
        return f" = {int(d.xid)}"
    if name == "TABLE_MAP_EVENT":
        return f": {quoting.ident(d.db)}.{quoting.ident(d.table)} mapped to number {int(d.table_id)}"
    if ev.type.row_op:
        names = getattr(d.flags, "names", None) or []
        return f": table id {int(d.table_id)}" + (f" flags: {' '.join(names)}" if names else "")
    if name == "FORMAT_DESCRIPTION_EVENT":
        return f": binlog v {int(d.binlog_version)}, server v {d.server_version}"
    if name == "ROTATE_EVENT":
        # binlog v1 has no position: the next file is read from 4 (specs ROTATE_EVENT)
        return f" to {d.new_log_ident}  pos: {4 if d.position is None else int(d.position)}"
    if name in ("GTID_LOG_EVENT", "GTID_EVENT", "GTID_TAGGED_LOG_EVENT") and se.gtid:
        return f" {se.gtid}"
    return ""


def _body(se):
    ev = se.event
    d = ev.data
    if ev.type is None:
        return
    name = ev.name
    if name in ("QUERY_EVENT", "QUERY_COMPRESSED_EVENT"):
        query = query_text(ev, "surrogateescape")  # inflated when compressed, bytes kept
        if query is not None:
            yield from _statement(ev, d.get("db"), query)
    elif name == "XID_EVENT":
        yield "COMMIT" + DELIMITER
    elif name == "ANNOTATE_ROWS_EVENT":
        for line in str(d.get("query", "")).split("\n"):
            yield "#Q> " + quoting.comment(line)
    elif ev.type.row_op:
        yield from rows_text(se)


def _statement(ev, db, query: str):
    """A statement in its default database at its time; from its hex when the client would not
    read it verbatim; as comments when its database cannot be named by any script line."""
    if int(ev.header.get("flags") or 0) & SUPPRESS_USE:
        db = None  # CREATE/DROP DATABASE and the like: run without a default database
    use = quoting.use_lines(db, DELIMITER) if db else []
    if use is None:
        yield ("# not run: its default database " + quoting.comment(quoting.ident(db))
               + " has a name no client line can carry; the statement was:")
        for line in query.split("\n"):
            yield "#   " + quoting.comment(line)
        return
    yield from use
    yield f"SET TIMESTAMP={int(ev.header.timestamp)}{DELIMITER}"
    mode = _sql_mode(ev.data)
    if mode is not None:  # the statement is read as its server read it (mysqlbinlog does this too)
        yield f"SET @@session.sql_mode={mode}{DELIMITER}"
    if quoting.client_reads_verbatim(query, DELIMITER,
                                     backslash_escapes=not (mode or 0) & NO_BACKSLASH_ESCAPES,
                                     ansi_quotes=bool((mode or 0) & ANSI_QUOTES)):
        yield query
        yield DELIMITER
        return
    yield ("# the statement holds bytes a client would not read as they are (a NUL, a client "
           "command, the delimiter, a CR LF in a string): it runs from its hex")
    yield from quoting.prepared(query, DELIMITER)


def _sql_mode(data):
    """The statement's sql_mode (its Q_SQL_MODE_CODE status variable), None when not logged."""
    for sv in data.get("status_vars") or ():
        if sv.get("id") == "sql_mode" and sv.get("value") is not None:
            return int(sv["value"])
    return None


def rows_text(se):
    """The `###` lines of a rows event, as mariadb-binlog -vv prints them; for rows not decoded,
    the reason and the row-image bytes in hex. The compiled backend writes them when it runs
    and can (output/vv_native.py), else the Python values do."""
    if se._changes is None:  # not decoded yet: the compiled backend may write it from the bytes
        text = vv_native.rows_text(se)
        if text is not None:
            if text:
                yield text[:-1]
            return
    changes = se.changes
    if se.undecoded is not None:
        from .dump import rows_bytes  # the JSON lines' module, loaded for this rare case only

        yield f"# rows not decoded: {quoting.comment(se.undecoded)}"
        data = rows_bytes(se.event)
        for at in range(0, len(data), 32):
            yield "#   " + quoting.comment(f"{at:06x}  {data[at:at + 32].hex(' ')}")
        return
    for ch in changes:
        table = quoting.comment(f"{quoting.ident(ch.db)}.{quoting.ident(ch.table)}")
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
    """The `###   @N=` lines of a row image, by its table's plan (output/forms.py)."""
    return vv_lines(values, columns)
