"""The replay form of `binlog-grammar dump` (`--base64-output=AUTO`, or NEVER): what
`mariadb-binlog FILE` prints for a client to replay, line for line; and its reading form
(`-v`/`-vv --base64-output=DECODE-ROWS`): the same lines without any BINLOG statement, as
mariadb-binlog prints them.

    /*!50530 SET @@SESSION.PSEUDO_SLAVE_MODE=1*/;  ... the session lines, DELIMITER /*!*/;
    # at N                                            before each event (not with -s)
    #YYMMDD HH:MM:SS server id S  end_log_pos E CRC32 0x..  <Type> ...   its header line
    the FORMAT_DESCRIPTION_EVENT: ROLLBACK, then its bytes as BINLOG '...'
    a GTID: its /*M!100001 SET @@session.gtid_* */ lines (--skip-gtids leaves them out), and
        START TRANSACTION for a transaction
    a QUERY_EVENT: `use`, SET TIMESTAMP and the session state that changed since the last
        statement (pseudo_thread_id, flags2's options, sql_mode, auto_increment, charsets,
        time_zone, lc_time_names, collation_database), then the statement
    ANNOTATE_ROWS: `#Q>` lines, printed with the event that follows it, as mariadb-binlog does
    TABLE_MAP and rows events: header lines, then at the statement's end (STMT_END_F) one
    BINLOG '...' of all their bytes as logged (checksum included), then with -v/-vv the `###`
    lines of their rows (output/dump_text.rows_text: the value rules are written once) and
    `# Number of rows: N`
    XID: COMMIT; ROTATE, STOP and the others: their header line
    DELIMITER ;  # End of log file  ROLLBACK ...  the session lines put back

Every byte of the binlog reaches the script through output/quoting.py (DESIGN rule 12): header
and `#Q>` lines by quoting.comment, `use` by quoting.use_lines, a statement verbatim only when
quoting.client_reads_verbatim says the client sends it as it is (else quoting.prepared), event
bytes by quoting.binlog_statement (base64 only).
"""
from __future__ import annotations

import re
import time

from ..binlog.events import query_text
from ..generated import enums
from ..runtime.decimal import decimal_size, decode_decimal
from . import quoting
from .replay_hex import hex_lines
from .replay_load import LoadFiles
from ..runtime.values import CHARSET_CODECS, errors_of
from .dump_text import NO_BACKSLASH_ESCAPES, ANSI_QUOTES, SUPPRESS_USE, rows_text

DELIMITER = "/*!*/;"
HEADER = ("/*!50530 SET @@SESSION.PSEUDO_SLAVE_MODE=1*/;",
          "/*!40019 SET @@session.max_delayed_threads=0*/;",
          "/*!50003 SET @OLD_COMPLETION_TYPE=@@COMPLETION_TYPE,COMPLETION_TYPE=0*/;",
          f"DELIMITER {DELIMITER}")
FOOTER = ("DELIMITER ;", "# End of log file", "ROLLBACK /* added by mysqlbinlog */;",
          "/*!50003 SET COMPLETION_TYPE=@OLD_COMPLETION_TYPE*/;",
          "/*!50530 SET @@SESSION.PSEUDO_SLAVE_MODE=0*/;")
_QUERY_LABELS = {"QUERY_COMPRESSED_EVENT": "Query_compressed",
                 "EXECUTE_LOAD_QUERY_EVENT": "Execute_load_query"}
# -D/--disable-log-bin: the first line after the header's second, the second before its last
NO_LOG = ("/*!32316 SET @OLD_SQL_LOG_BIN=@@SQL_LOG_BIN, SQL_LOG_BIN=0*/;",
          "/*!32316 SET SQL_LOG_BIN=@OLD_SQL_LOG_BIN*/;")
RESET_IDS = ("/*!100001 SET @@SESSION.SERVER_ID=@@GLOBAL.SERVER_ID */;",
             "/*!100001 SET @@SESSION.GTID_DOMAIN_ID=@@GLOBAL.GTID_DOMAIN_ID */;")
STMT_END_F = 0x01
BINLOG_IN_USE_F = 0x01
THREAD_SPECIFIC_F = 0x04
# flags2's options in the order mariadb-binlog 10.11 prints them: (bit, name, printed as set when
# the bit is set (True) or clear (False))
_FLAGS2 = ((0x04000000, "foreign_key_checks", False), (0x00004000, "sql_auto_is_null", True),
           (0x08000000, "unique_checks", False), (0x00080000, "autocommit", False),
           (1 << 18, "check_constraint_checks", False), (0x10000000, "sql_if_exists", True),
           (0x01000000, "explicit_defaults_for_timestamp", True),
           (1 << 29, "system_versioning_insert_history", True))
_MARIADB_FLAGS2 = ("sql_if_exists", "explicit_defaults_for_timestamp")  # not for MySQL's logs
_GTID_FLAGS = {name: bit for bit, name in enums.MARIADB_GTID_FLAGS2.items()}
_ROWS = {"insert": "Write", "update": "Update", "delete": "Delete"}
# MySQL's events mariadb-binlog reads as ignorable, and the names it gives them
_IGNORABLE = {"ROWS_QUERY_LOG_EVENT": "MySQL Rows_query", "GTID_LOG_EVENT": "MySQL Gtid",
              "ANONYMOUS_GTID_LOG_EVENT": "MySQL Anonymous_Gtid",
              "PREVIOUS_GTIDS_LOG_EVENT": "MySQL Previous_gtids"}
_TRANS_KEYWORD = re.compile(r"(?i)(BEGIN|COMMIT|SAVEPOINT|ROLLBACK|XA (START|END|PREPARE|COMMIT|ROLLBACK))\b")
_PLAIN_ZONE = re.compile(r"^[A-Za-z0-9_/+:.-]*$")


_TYPE_CODE = {name: code for code, name in enums.EVENT_TYPE.items()}


def event_bytes(ev) -> bytes:
    """The bytes of an event as mariadb-binlog puts them in a BINLOG statement: as logged
    (checksum included), except a compressed rows event (log_bin_compress), which it sends as
    its uncompressed twin: the type without _COMPRESSED, the length of the inflated rows, the
    same end_log_pos, and a CRC32 of its own bytes when the event has one. A TABLE_MAP_EVENT
    that --rewrite-db renamed is sent as rebuilt (binlog/rewrite.py: extra["rewritten_raw"])."""
    rewritten = ev.extra.get("rewritten_raw")
    if rewritten is not None:
        return bytes(rewritten)
    raw = bytes(ev.raw)
    if "_COMPRESSED" not in ev.name or not ev.type.row_op:
        return raw
    import struct
    import zlib

    from ..binlog.events import decode_of, decompress

    d = ev.data
    dec = decode_of(ev.type, d, "rows")
    code = _TYPE_CODE.get(ev.name.replace("_COMPRESSED", ""))
    if dec is None or code is None:
        return raw
    footer = 4 if ev.checksum is not None else 0
    packed = bytes(d["rows"])
    body = raw[:len(raw) - footer - len(packed)] + decompress(dec.codec, packed)
    length = len(body) + footer
    body = body[:4] + bytes([code]) + body[5:9] + struct.pack("<I", length) + body[13:]
    if footer:
        body += struct.pack("<I", zlib.crc32(body) & 0xFFFFFFFF)
    return body


class NeverError(Exception):
    """--base64-output=NEVER met a row event (mysqlbinlog refuses it the same way)."""


def xid_text(xid) -> str:
    """An XA transaction id as the server serializes it (XID::serialize): X'gtrid',X'bqual',
    formatID, the parts as lower-case hex of their bytes (so hostile bytes stay digits) and the
    formatID as an unsigned long (a null XID's -1 as 2**64-1)."""
    return (f"X'{bytes(xid.gtrid).hex()}',X'{bytes(xid.bqual).hex()}',"
            f"{int(xid.format_id) & 0xFFFFFFFFFFFFFFFF}")


def _stamp(ts: int) -> str:
    t = time.localtime(ts)
    return "%02d%02d%02d %2d:%02d:%02d" % (t.tm_year % 100, t.tm_mon, t.tm_mday, t.tm_hour,
                                           t.tm_min, t.tm_sec)


def _charset_name(collation: int) -> str:
    name = enums.COLLATION.get(int(collation))
    return name.split("_")[0] if name else str(int(collation))


def _status(data) -> dict:
    return {sv.get("id"): sv.get("value") for sv in data.get("status_vars") or ()}


def _user_var_value(d):
    """The value of a USER_VAR_EVENT as an SQL literal (NULL, an integer, a REAL, a string's
    bytes as _charset X'..' COLLATE, a DECIMAL's digits with its scale), None for a kind not
    written here or a DECIMAL that does not decode."""
    if int(d.is_null or 0):
        return "NULL"
    kind = int(d.value_type)
    raw = bytes(d.value or b"")
    if kind == 2:  # INT_RESULT; flags bit 1: UNSIGNED_F
        return str(int.from_bytes(raw[:8], "little", signed=not int(d.flags or 0) & 1))
    if kind == 1:  # REAL_RESULT
        import struct

        return "%.17g" % struct.unpack("<d", raw[:8])[0]
    if kind == 0:  # STRING_RESULT
        coll = enums.COLLATION.get(int(d.charset or 0))
        hexed = quoting.hex_literal(raw)
        if coll is None:
            return hexed
        return f"_{coll.split('_')[0]} {hexed} COLLATE {quoting.ident(coll)}"
    if kind == 4 and len(raw) >= 2:  # DECIMAL_RESULT: precision, scale, then the packed digits
        try:
            number = decode_decimal(raw[2:2 + decimal_size(raw[0], raw[1])], raw[0], raw[1])
        except (ValueError, IndexError, ArithmeticError):
            return None  # digits that do not decode: the comment says so
        return format(number, "f")  # digits and '.' only, never an exponent
    return None


def _as_client_wrote(text: str, st: dict) -> str:
    """The statement's characters in its character_set_client (the grammar reads it as UTF-8,
    other bytes as surrogates); the text unchanged when that charset is UTF-8 or unknown, or
    its bytes are not characters of it."""
    cs = st.get("charset")
    name = enums.COLLATION.get(int(cs["character_set_client"])) if cs is not None else None
    codec = CHARSET_CODECS.get(name.split("_", 1)[0]) if name else None
    if codec is None or codec == "utf-8" or text.isascii():
        return text
    try:
        meant = text.encode("utf-8", "surrogateescape").decode(codec, errors_of(codec))
        meant.encode("utf-8")  # a lone surrogate has no UTF-8 bytes: the hex form then
        return meant
    except (UnicodeError, LookupError):
        return text


def _without_type(line: str) -> str:
    """A -vv `###   @N=value /* TYPE meta=.. */` line as -v prints it (the value alone)."""
    if line.startswith("###   @") and line.endswith(" */"):
        cut = line.rfind(" /* ")
        if cut > 0:
            return line[:cut]
    return line


class Replay:
    """mariadb-binlog's printing state (its PRINT_EVENT_INFO): `lines(se)` gives the lines of
    one StreamEvent (without newlines); `header()` and `footer()` the script's ends."""

    def __init__(self, verbose: int = 0, short: bool = False, skip_gtids: bool = False,
                 never: bool = False, disable_log_bin: bool = False, local_load=None,
                 row_count: bool = True, annotations: bool = True, positions: bool = True,
                 reset_ids: bool = False, decode_rows: bool = False, hexdump: bool = False):
        self.verbose, self.short, self.skip_gtids, self.never = verbose, short, skip_gtids, never
        # --base64-output=DECODE-ROWS: no BINLOG statement at all (the format description's and
        # each statement's rows), the rows only as -v/-vv's ### lines: mariadb-binlog's reading
        # form, which no client can replay
        self.decode_rows = decode_rows
        # -H/--hexdump: each header line holds the event's bytes (output/replay_hex.py)
        self.hexdump, self.header_len = hexdump, 19
        self.disable_log_bin = disable_log_bin
        # mariadb-binlog's --print-row-count, --print-row-event-positions (every `# at` line)
        # and ANNOTATE_ROWS (--skip-annotate-row-events), on unless told
        self.row_count, self.annotations, self.positions = row_count, annotations, positions
        # a server id rule was given: the script ends setting the session's server id and GTID
        # domain back to the target's, as mariadb-binlog's then does (RESET_IDS)
        self.reset_ids = reset_ids
        self.loads = LoadFiles(local_load)  # LOAD DATA's files (replay_load)
        self.db = ""
        self.thread_id = None
        self.flags2 = None
        self.sql_mode = None
        self.auto_inc = (0, 0)  # mariadb-binlog starts from 0/0, 0 and "unset" below
        self.charset = None
        self.time_zone = ""
        self.lc_time_names = None
        self.collation_db = None
        self.parallel = self.domain = self.server = None
        self.cache = []       # the TABLE_MAP and rows events of the statement not yet ended
        self._ts = self._stamp = None  # the last header's time and its text
        self.held = []        # header lines of the statement's rows events, printed at its end
        self.mariadb = True   # the FORMAT_DESCRIPTION_EVENT's server: MariaDB
        self.annotate = None  # an ANNOTATE_ROWS (event, data), printed with the next TABLE_MAP

    def header(self):
        """The script's first lines; with -D (disable_log_bin) the target does not log what the
        script runs (SQL_LOG_BIN=0 after the session's first two settings, as mariadb-binlog)."""
        return list(HEADER[:2] + NO_LOG[:1] + HEADER[2:] if self.disable_log_bin else HEADER)

    def footer(self):
        lines = FOOTER[:-1] + NO_LOG[1:] + FOOTER[-1:] if self.disable_log_bin else FOOTER
        return list(lines + RESET_IDS if self.reset_ids else lines)

    def _head(self, ev, text: str, names: bool = False, at=None) -> str:
        """The `#YYMMDD hh:mm:ss server id ...` line; `text` goes through quoting.comment when
        it holds binlog text (`names`), the rest is numbers the grammar read."""
        h = ev.header
        crc = f" CRC32 0x{ev.checksum:08x}" if ev.checksum is not None else ""
        log_pos = h.get("log_pos")
        end = int(log_pos) if log_pos is not None else ev.end
        ts = int(h.timestamp)
        if ts != self._ts:
            self._ts, self._stamp = ts, _stamp(ts)
        # -H: mariadb-binlog numbers an ANNOTATE_ROWS's bytes from the event printed with it (at)
        gap = (" \n" + hex_lines(event_bytes(ev), int(ev.offset) if at is None else at,
                                  self.header_len) + "# Event: \t" if self.hexdump else " \t")
        return (f"#{self._stamp} server id {int(h.server_id)}  end_log_pos {end}{crc}{gap}"
                + (quoting.comment(text) if names else text))

    def lines(self, se):
        ev = se.event
        out = []
        if not self.short and self.positions:
            out.append(f"# at {int(ev.offset)}")
        et = ev.type
        name = ev.name
        if self.annotate is not None:
            # printed with the statement's first TABLE_MAP that is printed, as mariadb-binlog
            # keeps it; when a filter (-d, --table) dropped them, it goes with its statement
            if name == "TABLE_MAP_EVENT":
                out += self._annotate_lines(*self.annotate, at=int(ev.offset))
            self.annotate = None
        d = ev.data
        if et is None:
            if not self.short:
                out.append(self._head(ev, f"Unknown event (type {int(ev.header.type_code)})"))
            return out
        if et.row_op:
            return out + self._rows(se)
        ignorable = _IGNORABLE.get(name)
        if ignorable is not None:
            if not self.short:
                out += [self._head(ev, "Ignorable"), f"# Ignorable event type "
                        f"{int(ev.header.type_code)} ({ignorable})"]
            return out
        handler = getattr(self, "_" + name.lower(), None)
        if handler is not None:
            return out + handler(ev, d, se)
        if not self.short:
            out.append(self._head(ev, name, True))
        return out

    # --- events ---------------------------------------------------------------------------

    def _format_description_event(self, ev, d, se):
        out = []
        created = int(d.get("create_timestamp") or 0)
        self.mariadb = "mariadb" in str(d.server_version).lower()
        self.header_len = int(d.get("common_header_len") or 19)
        if not self.short:
            text = f"Start: binlog v {int(d.binlog_version)}, server v {d.server_version} created "
            text += _stamp(created or int(ev.header.timestamp)) + (" at startup" if created else "")
            out.append(self._head(ev, text, names=True))
            if int(ev.header.get("flags") or 0) & BINLOG_IN_USE_F:
                out.append("# Warning: this binlog is either in use or was not closed properly.")
        if created:
            out.append("ROLLBACK" + DELIMITER)
        if not self.short and not self.never and not self.decode_rows:
            out += [line[:-1] for line in quoting.binlog_statement([ev.raw], DELIMITER)]
        return out

    def _gtid_list_event(self, ev, d, se):
        if self.short:
            return []
        # sorted by domain, then sequence number, one a line: as mariadb-binlog prints them
        items = sorted(((int(g["domain_id"]), int(g["seq_no"]), int(g["server_id"]))
                        for g in d.get("gtids") or ()), key=lambda x: x[:2])
        gtids = ",\n# ".join(f"{dom}-{sid}-{seq}" for dom, seq, sid in items)
        return [self._head(ev, f"Gtid list [{gtids}]")]

    def _binlog_checkpoint_event(self, ev, d, se):
        if self.short:
            return []
        return [self._head(ev, f"Binlog checkpoint {d.binlog_file_name}", True)]

    def _gtid_event(self, ev, d, se):
        out = []
        f2 = int(d.flags2)
        server = int(ev.header.server_id)
        if not self.short:
            text = f"GTID {int(d.domain_id)}-{server}-{int(d.seq_no)}"
            if f2 & _GTID_FLAGS["FL_GROUP_COMMIT_ID"] and d.get("commit_id") is not None:
                text += f" cid={int(d.commit_id)}"
            if f2 & _GTID_FLAGS["FL_DDL"]:
                text += " ddl"
            if f2 & _GTID_FLAGS["FL_TRANSACTIONAL"]:
                text += " trans"
            if f2 & _GTID_FLAGS["FL_WAITED"]:
                text += " waited"
            out.append(self._head(ev, text))
        if not self.skip_gtids and not self.short:
            parallel = 0 if f2 & _GTID_FLAGS["FL_ALLOW_PARALLEL"] else 1
            if parallel != self.parallel:
                out.append(f"/*M!100101 SET @@session.skip_parallel_replication={parallel}*/"
                           + DELIMITER)
                self.parallel = parallel
            if int(d.domain_id) != self.domain:
                self.domain = int(d.domain_id)
                out.append(f"/*M!100001 SET @@session.gtid_domain_id={self.domain}*/" + DELIMITER)
            if server != self.server:
                self.server = server
                out.append(f"/*M!100001 SET @@session.server_id={server}*/" + DELIMITER)
            out.append(f"/*M!100001 SET @@session.gtid_seq_no={int(d.seq_no)}*/" + DELIMITER)
        if f2 & _GTID_FLAGS["FL_PREPARED_XA"] and d.get("xid") is not None:
            out.append(f"XA START {xid_text(d.xid)}{DELIMITER}")  # as mariadb-binlog, -s too
        elif not f2 & _GTID_FLAGS["FL_STANDALONE"]:
            out += ["START TRANSACTION", DELIMITER]
        return out

    def _xid_event(self, ev, d, se):
        out = [] if self.short else [self._head(ev, f"Xid = {int(d.xid)}")]
        return out + ["COMMIT" + DELIMITER]

    def _xa_prepare_log_event(self, ev, d, se):
        """mariadb-binlog's `XID = ...` header and `XA PREPARE xid`; MySQL's XA COMMIT ...
        ONE PHASE (one_phase set, which MariaDB does not write) as mysqlbinlog prints it."""
        xid = xid_text(d)
        out = [] if self.short else [self._head(ev, f"XID = {xid}")]
        what = f"XA COMMIT {xid} ONE PHASE" if int(d.one_phase) else f"XA PREPARE {xid}"
        return out + [what, DELIMITER]

    def _rotate_event(self, ev, d, se):
        if self.short:
            return []
        pos = 4 if d.position is None else int(d.position)
        return [self._head(ev, f"Rotate to {d.new_log_ident}  pos: {pos}", True)]

    def _stop_event(self, ev, d, se):
        return [] if self.short else [self._head(ev, "Stop")]

    def _annotate_rows_event(self, ev, d, se):
        if not self.annotations:
            return []
        self.annotate = (ev, d)
        return []

    def _annotate_lines(self, ev, d, at):
        lines = ["# Annotate_rows:" if self.short else self._head(ev, "Annotate_rows:", at=at)]
        return lines + ["#Q> " + quoting.comment(line)
                        for line in str(d.get("query", "")).split("\n")]

    def _table_map_event(self, ev, d, se):
        if self.never:
            raise NeverError(ev)
        self.cache.append(se)
        if self.short:
            return []
        lines = [self._head(ev, f"Table_map: {quoting.ident(d.db)}.{quoting.ident(d.table)} "
                                f"mapped to number {int(d.table_id)}", True)]
        if ev.extra.get("print_table_metadata"):  # --print-table-metadata (output/table_metadata.py)
            from .table_metadata import metadata_lines

            lines += ["#" + quoting.comment(line[1:]) for line in metadata_lines(ev, ev.context)]
        return lines

    def _rows(self, se):
        ev = se.event
        if self.never:
            raise NeverError(ev)
        d = ev.data
        self.cache.append(se)
        out = []
        if not self.short:
            kind = _ROWS[ev.type.row_op] + ("_compressed" if "COMPRESSED" in ev.name else "")
            names = getattr(d.flags, "names", None) or []
            text = f"{kind}_rows: table id {int(d.table_id)}"
            self.held.append(self._head(ev, text + (f" flags: {' '.join(names)}"
                                                     if names else "")))
        if int(d["flags"]) & STMT_END_F:
            out += self.held
            self.held = []
            out += self._flush()
        return out

    def _flush(self):
        cached, self.cache = self.cache, []
        if self.short:
            return []
        out = [] if self.decode_rows else [""] + [line[:-1] for line in quoting.binlog_statement(
            [event_bytes(se.event) for se in cached], DELIMITER)]
        rows = 0
        for se in cached:
            if se.event.type.row_op:
                if self.verbose > 1:
                    out += list(rows_text(se))
                elif self.verbose:
                    text = "\n".join(rows_text(se))  # the compiled lane gives one text
                    out += [_without_type(line) for line in text.split("\n")]
                rows += len(se.changes or ()) if se.undecoded is None else 0
        if self.row_count:
            out.append(f"# Number of rows: {rows}")
        return out

    def _query_event(self, ev, d, se):
        st = _status(d)
        out = []
        if not self.short:
            label = _QUERY_LABELS.get(ev.name, "Query")
            out.append(self._head(ev, f"{label}\tthread_id={int(d.thread_id)}\texec_time="
                                      f"{int(d.exec_time)}\terror_code={int(d.error_code)}"
                                      f"\txid={int(st.get('xid') or 0)}"))
        # inflated where the spec says the statement is compressed, its bytes kept as a plain
        # QUERY_EVENT's are (surrogateescape): the script must carry them back byte for byte
        query = query_text(ev, "surrogateescape")
        flags = int(ev.header.get("flags") or 0)
        db = d.get("db") or ""
        trans = isinstance(query, str) and _TRANS_KEYWORD.match(query) is not None
        if flags & SUPPRESS_USE:
            if not trans:
                self.db = ""
        elif trans:
            pass  # BEGIN, COMMIT, SAVEPOINT, ROLLBACK (TO), XA ...: mariadb-binlog prints no use
        elif db != self.db:
            self.db = db
            if db:
                use = quoting.use_lines(db, DELIMITER)
                if use is None:
                    return out + ["# not run: its default database "
                                  + quoting.comment(quoting.ident(db)) + " has a name no client "
                                  "line can carry"]
                out += use
        micro = st.get("hrnow", st.get("microseconds"))
        frac = f".{int(micro):06d}" if micro is not None else ""
        out.append(f"SET TIMESTAMP={int(ev.header.timestamp)}{frac}{DELIMITER}")
        thread = int(d.thread_id)
        if self.thread_id is None or (flags & THREAD_SPECIFIC_F and thread != self.thread_id):
            out.append(f"SET @@session.pseudo_thread_id="
                       f"{999999999 if self.short else thread}{DELIMITER}")
            self.thread_id = thread
        f2 = st.get("flags2")
        if f2 is not None:
            f2 = int(f2)
            changed = ~0 if self.flags2 is None else self.flags2 ^ f2
            if changed:
                sets = [f"@@session.{name}={int(bool(f2 & bit) == when_set)}"
                        for bit, name, when_set in _FLAGS2 if changed & bit
                        and (self.mariadb or name not in _MARIADB_FLAGS2)]
                if sets:
                    out.append("SET " + ", ".join(sets) + DELIMITER)
                self.flags2 = f2
        mode = st.get("sql_mode")
        mode = int(mode) if mode is not None else None
        if mode is not None and mode != self.sql_mode:
            out.append(f"SET @@session.sql_mode={mode}{DELIMITER}")
            self.sql_mode = mode
        a = st.get("auto_increment") or {}
        inc = (int(a.get("increment", 1)), int(a.get("offset", 1)))
        if inc != self.auto_inc:
            out.append(f"SET @@session.auto_increment_increment={inc[0]}, "
                       f"@@session.auto_increment_offset={inc[1]}{DELIMITER}")
            self.auto_inc = inc
        cs = st.get("charset")
        if cs is not None:
            trio = (int(cs["character_set_client"]), int(cs["collation_connection"]),
                    int(cs["collation_server"]))
            if trio != self.charset:
                name = _charset_name(trio[0])
                out.append(f"/*!\\C {name} */{DELIMITER}")
                out.append(f"SET @@session.character_set_client={name},@@session.collation_"
                           f"connection={trio[1]},@@session.collation_server={trio[2]}{DELIMITER}")
                self.charset = trio
        tz = st.get("time_zone")
        if tz and tz != self.time_zone:
            text = f"'{tz}'" if _PLAIN_ZONE.match(tz) else quoting.string(tz)
            out.append(f"SET @@session.time_zone={text}{DELIMITER}")
            self.time_zone = tz
        lc = int(st.get("lc_time_names") or 0)
        if lc != self.lc_time_names:
            out.append(f"SET @@session.lc_time_names={lc}{DELIMITER}")
            self.lc_time_names = lc
        cdb = int(st.get("charset_database") or 0)
        if cdb != self.collation_db:
            out.append(f"SET @@session.collation_database={cdb or 'DEFAULT'}{DELIMITER}")
            self.collation_db = cdb
        if not isinstance(query, str):
            return out + ["# a statement not decoded as text is not printed"]
        local = None
        if ev.name == "EXECUTE_LOAD_QUERY_EVENT":  # the file it loads: the one written here
            query, local = self.loads.statement(d, query), self.loads.literal(d)
        m = mode or 0
        # its bytes are in the session's character_set_client, which the `/*!\\C cs */` line
        # above makes the client read them in: it is checked as the characters they are there
        meant = _as_client_wrote(query, st)
        if quoting.client_reads_verbatim(meant, DELIMITER,
                                         backslash_escapes=not m & NO_BACKSLASH_ESCAPES,
                                         ansi_quotes=bool(m & ANSI_QUOTES),
                                         local_file=local and _as_client_wrote(local, st)):
            return out + [query, DELIMITER]
        return out + ["# the statement holds bytes a client would not read as they are, or "
                      "names a file for the client to send: it runs from its hex"] + \
            [line.rstrip("\n") for line in quoting.prepared(meant, DELIMITER)]

    _query_compressed_event = _query_event

    def _execute_load_query_event(self, ev, d, se):
        out = self._query_event(ev, d, se)
        return out if self.short else out + [f"# file_id: {int(d.file_id)} "]

    def _begin_load_query_event(self, ev, d, se):
        self.loads.begin(d.file_id, bytes(d.block))
        return [] if self.short else [self._head(ev, "")[:-1], f"#Begin_load_query: file_id: "
                                      f"{int(d.file_id)}  block_len: {len(d.block)}"]

    def _append_block_event(self, ev, d, se):
        self.loads.append(d.file_id, bytes(d.block))
        return [] if self.short else [self._head(ev, "")[:-1], f"#Append_block: file_id: "
                                      f"{int(d.file_id)}  block_len: {len(d.block)}"]

    def _intvar_event(self, ev, d, se):
        out = [] if self.short else [self._head(ev, "Intvar")]
        what = "LAST_INSERT_ID" if int(d.type) == 1 else "INSERT_ID"
        return out + [f"SET {what}={int(d.value)}{DELIMITER}"]

    def _rand_event(self, ev, d, se):
        out = [] if self.short else [self._head(ev, "Rand")]
        return out + [f"SET @@RAND_SEED1={int(d.seed1)}, @@RAND_SEED2={int(d.seed2)}{DELIMITER}"]

    def _user_var_event(self, ev, d, se):
        out = [] if self.short else [self._head(ev, "User_var")]
        name = d.name if isinstance(d.name, str) else bytes(d.name).decode("utf-8", "replace")
        value = _user_var_value(d)
        if value is None:
            return out + ["# " + quoting.comment(f"a user variable @{name} of a kind not "
                                                 "written by this writer")]
        return out + [f"SET @{quoting.ident(name)}:={value}{DELIMITER}"]
