"""The statements of a binlog (DDL, and DML logged as statements) in the `sql` script, run as
their server ran them, for point-in-time recovery (`binlog-grammar sql FILES | mariadb`).

A QUERY_EVENT says how its session was set when the statement ran: its default database, its
time, and status variables (specs/types/statement.yaml, query_status_vars). `replay_lines(ev,
text, db_map)` gives the lines that set what of these changes how a server reads or runs the
statement, then the statement, then the script's own session settings again (the row changes
after it are literals that assume quoting.SESSION_SETTINGS):

    -- statement at mariadb-bin.000001:1234
    use `shop`;
    SET TIMESTAMP=1714557600.250000, @@session.pseudo_thread_id=12;
    SET @@session.foreign_key_checks=1, @@session.unique_checks=1, @@session.sql_auto_is_null=0;
    SET @@session.sql_mode=1411383296, @@session.auto_increment_increment=1, @@session.auto_increment_offset=1;
    SET @@session.collation_connection=45, @@session.collation_server=8, @@session.collation_database=8;
    SET @@session.time_zone='SYSTEM', @@session.lc_time_names=0, @@session.explicit_defaults_for_timestamp=1;
    ALTER TABLE `orders` ADD COLUMN `note` TEXT
    ;
    SET NAMES utf8mb4; ... (quoting.SESSION_SETTINGS)

mysqlbinlog sets the same variables, by number where it writes numbers (collations, sql_mode,
lc_time_names), so a binlog of one server replays on another of the same kind. Only what the
event logged is set: a variable the event does not carry keeps the target session's value.
MySQL 8's session variables (default_collation_for_utf8mb4, sql_require_primary_key,
default_table_encryption) are set when a MySQL server logged them: a MariaDB target has no such
variables.

Every byte of the statement is hostile, so how it is written is decided by
binlog_grammar.output.quoting, as for the `dump` text (output/dump_text.py):
- as it is, then `;` on a line of its own, when the client reads it back as exactly that one
  statement with `;` as delimiter (quoting.client_reads_verbatim, under the statement's own
  sql_mode: NO_BACKSLASH_ESCAPES and ANSI_QUOTES change what a string is);
- as it is between `DELIMITER /*!*/;` and `DELIMITER ;` when it holds `;` outside strings (a
  stored program's body) and the client reads it verbatim with mysqlbinlog's delimiter;
- else from the hex of its bytes (quoting.prepared), after a comment line saying so.
Names go in through quoting.use_lines / quoting.ident, the time zone through quoting.string,
every other value is an integer the grammar read.

A statement whose default database no client line can name (a CR before an LF, a NUL) cannot be
run in it: that is a SqlGenError, so `sql` writes its transaction as a comment and counts it.
"""
from __future__ import annotations

import os
from typing import List, Optional

from ..generated import enums
from ..runtime.values import CHARSET_CODECS, errors_of
from . import quoting

__all__ = ["replay_lines", "session_values", "STATEMENT_DELIMITER"]

STATEMENT_DELIMITER = "/*!*/;"  # mysqlbinlog's, for a statement that holds `;`

_COLLATIONS = getattr(enums, "COLLATION", {})
_FLAGS2 = {name: bit for bit, name in enums.QUERY_FLAGS2.items()}
_MODE = {name: bit for bit, name in enums.SQL_MODE.items()}
_EVENT_FLAGS = {name: bit for bit, name in enums.EVENT_FLAGS.items()}
NO_BACKSLASH_ESCAPES = _MODE["MODE_NO_BACKSLASH_ESCAPES"]
ANSI_QUOTES = _MODE["MODE_ANSI_QUOTES"]
SUPPRESS_USE = _EVENT_FLAGS["LOG_EVENT_SUPPRESS_USE_F"]

# session variable <- a bit of flags2 (set when the bit is, or when it is not)
_FLAG_VARIABLES = (
    ("foreign_key_checks", "OPTION_NO_FOREIGN_KEY_CHECKS", False),
    ("unique_checks", "OPTION_RELAXED_UNIQUE_CHECKS", False),
    ("sql_auto_is_null", "OPTION_AUTO_IS_NULL", True),
)
# session variable <- an integer status variable, as logged; the MySQL-only ones last
_NUMBER_VARIABLES = (
    ("lc_time_names", "lc_time_names"),
    ("collation_database", "charset_database"),
)
_MYSQL_VARIABLES = (
    ("default_collation_for_utf8mb4", "default_collation_for_utf8mb4"),
    ("sql_require_primary_key", "sql_require_primary_key"),
    ("default_table_encryption", "default_table_encryption"),
)


def session_values(ev) -> dict:
    """{status variable id: value} of a QUERY_EVENT (the last of each id)."""
    out = {}
    for sv in ev.data.get("status_vars") or ():
        if hasattr(sv, "get") and sv.get("id") is not None and sv.get("value") is not None:
            out[sv["id"]] = sv["value"]
    return out


def _timestamp(header, sv) -> Optional[str]:
    """SET TIMESTAMP's value: the event's second and, where logged, its microseconds."""
    if header.get("timestamp") is None:
        return None
    seconds = int(header["timestamp"])
    micro = sv.get("hrnow", sv.get("microseconds"))
    return f"{seconds}.{int(micro):06d}" if micro is not None else str(seconds)


def _settings(header, data, sv, mariadb: bool) -> List[str]:
    """The SET statements of the statement's session."""
    lines = []
    when = _timestamp(header, sv)
    first = [] if when is None else [f"TIMESTAMP={when}"]
    thread = data.get("thread_id")
    if thread is not None:  # temporary tables belong to the thread that made them
        first.append(f"@@session.pseudo_thread_id={int(thread)}")
    lines.append(first)
    flags2 = sv.get("flags2")
    if flags2 is not None:
        f = int(flags2)
        group = [f"@@session.{var}={int(bool(f & _FLAGS2[bit]) == when)}"
                 for var, bit, when in _FLAG_VARIABLES]
        if mariadb:  # MariaDB 10.10+ logs explicit_defaults_for_timestamp in flags2
            bit = _FLAGS2["OPTION_EXPLICIT_DEF_TIMESTAMP"]
            group.append(f"@@session.explicit_defaults_for_timestamp={int(bool(f & bit))}")
        lines.append(group)
    group = []
    if sv.get("sql_mode") is not None:
        group.append(f"@@session.sql_mode={int(sv['sql_mode'])}")
    inc = sv.get("auto_increment")
    if inc is not None:
        group += [f"@@session.auto_increment_increment={int(inc['increment'])}",
                  f"@@session.auto_increment_offset={int(inc['offset'])}"]
    lines.append(group)
    cs = sv.get("charset")
    group = []
    if cs is not None:  # the text is UTF-8 in the script: character_set_client stays utf8mb4
        group += [f"@@session.collation_connection={int(cs['collation_connection'])}",
                  f"@@session.collation_server={int(cs['collation_server'])}"]
    group += [f"@@session.{var}={int(sv[key])}" for var, key in _NUMBER_VARIABLES
              if sv.get(key) is not None]
    lines.append(group)
    group = []
    if sv.get("time_zone") is not None:
        group.append(f"@@session.time_zone={quoting.string(str(sv['time_zone']))}")
    if not mariadb:
        if sv.get("explicit_defaults_for_timestamp") is not None:
            group.append("@@session.explicit_defaults_for_timestamp="
                         f"{int(bool(int(sv['explicit_defaults_for_timestamp'])))}")
        group += [f"@@session.{var}={int(sv[key])}" for var, key in _MYSQL_VARIABLES
                  if sv.get(key) is not None]
    lines.append(group)
    return ["SET " + ", ".join(g) + ";" for g in lines if g]


def _body(text: str, mode: int) -> List[str]:
    """The statement as script lines: verbatim with `;`, verbatim between DELIMITER lines, or
    from its hex."""
    how = dict(backslash_escapes=not mode & NO_BACKSLASH_ESCAPES, ansi_quotes=bool(mode & ANSI_QUOTES))
    if quoting.client_reads_verbatim(text, ";", **how):
        return [text, ";"]
    if quoting.client_reads_verbatim(text, STATEMENT_DELIMITER, **how):
        return [f"DELIMITER {STATEMENT_DELIMITER}", text, STATEMENT_DELIMITER, "DELIMITER ;"]
    return ["-- the statement holds bytes a client would not read as they are (a NUL, a client "
            "command, both delimiters, a CR LF in a string): it runs from its hex",
            *quoting.prepared(text, ";")]


def replay_lines(ev, text: str, db_map: Optional[dict] = None, error=None) -> List[str]:
    """The script lines (each ending in a newline) that run the statement `text` of the
    QUERY_EVENT `ev` as its server ran it, then set the script's session again. db_map renames
    the default database ({"old": "new"}, as --rewrite-db does: the statement's text is not
    changed). `error(message)` makes the exception raised when the statement cannot be run in
    its default database."""
    where = f"{os.path.basename(os.fspath(ev.file))}:{ev.offset}" if ev.file is not None \
        else str(ev.offset)
    out = [f"-- statement at {quoting.comment(where)}"]
    db = ev.data.get("db") or None
    header = getattr(ev, "header", None) or {}
    if int(header.get("flags") or 0) & SUPPRESS_USE:
        db = None  # CREATE/DROP DATABASE and the like run without a default database
    if db is not None:
        db = (db_map or {}).get(db, db)
        use = quoting.use_lines(db, ";")
        if use is None:
            raise (error or ValueError)(
                "the statement's default database has a name no client line can carry (a CR "
                f"before an LF or a NUL): {quoting.comment(quoting.ident(db))}")
        out += use
    sv = session_values(ev)
    mariadb = _is_mariadb(ev)
    text = _as_client_wrote(text, sv)
    out += _settings(header, ev.data, sv, mariadb)
    out += _body(text, int(sv.get("sql_mode") or 0))
    out += quoting.SESSION_SETTINGS
    return [line + "\n" for line in out]


def _as_client_wrote(text: str, sv: dict) -> str:
    """The statement's characters as its client meant them: the grammar reads a statement as
    UTF-8 (bytes that are not, as surrogates), but its bytes are in the session's
    character_set_client (Q_CHARSET_CODE); the script is UTF-8. Bytes that charset does not
    map stay surrogates (and send the statement to its hex form)."""
    cs = sv.get("charset")
    name = _COLLATIONS.get(int(cs["character_set_client"])) if cs is not None else None
    codec = CHARSET_CODECS.get(name.split("_", 1)[0]) if name else None
    if codec is None or codec == "utf-8" or text.isascii():
        return text
    try:
        meant = text.encode("utf-8", "surrogateescape").decode(codec, errors_of(codec))
        meant.encode("utf-8", "surrogateescape")  # a lone UTF-16 surrogate has no UTF-8 bytes
        return meant
    except (UnicodeError, LookupError):
        return text


def _is_mariadb(ev) -> bool:
    """Did a MariaDB server write the event (the version its format description names)?"""
    server = (getattr(ev, "context", None) or {}).get("server")
    return getattr(server, "flavor", None) == "mariadb"
