"""Untrusted text into anything that may be executed: the one place it is quoted.

Every byte of a binlog was chosen by someone: database, table, column and ENUM/SET names, row
values and whole statements come from the applications that wrote to the server. The scripts this
project writes (`sql`, `flashback`, the `dump` text, `repair`'s plan and undo file, `stream`'s
text) are piped by DBAs into the `mariadb`/`mysql` client as root. Every writer of such a script
puts binlog text into it through this module, and through nothing else:

| function | for | what it guarantees |
|---|---|---|
| `ident(name)` | an identifier | `` `name` `` with backquotes doubled |
| `ident_is_plain(name)` | choosing a form | False when a client line cannot carry the name as it is (below) |
| `string(text)` | a string literal | `'...'` with MySQL's backslash escapes of `\\ ' NUL LF CR Ctrl-Z` |
| `hex_literal(data)` | bytes | `X'..'` (`''` when empty) |
| `text_literal(text, charset)` | a column's string value | `string(text)` when the text stores the logged bytes (binlog_grammar.output.replay_charsets), else `_charset X'..'` of those bytes |
| `comment(text)` | text inside a `-- `, `#` or `/* */` comment | one line: no CR, LF, NUL, control or invalid bytes (escaped as `\\n`, `\\r`, `\\0`, `\\xNN`; a backslash as `\\\\`), no `*/` or `/*` (written `*\\/`, `/\\*`) |
| `comment_line(text, prefix)` | a whole comment line | `prefix + comment(text) + "\\n"` |
| `hex_column(data)` | the text column of a `#` hex-dump line (`dump -H`) | printable ASCII (0x20-0x7E) as it is, every other byte a dot: one line, no NUL, inert after `#` |
| `client_reads_verbatim(stmt, delimiter)` | printing a statement from the binlog | True when the client sends it to the server as exactly that one statement, and it makes the client send none of its files (`LOCAL INFILE`, but for the one file a replay wrote) |
| `statement_lines(stmt, delimiter)` | any statement | the statement and its delimiter when `client_reads_verbatim`, else `prepared(stmt)` |
| `use_lines(db, delimiter)` | a default database | the client's `use` line; None when no line carries the name (CR LF, NUL) |
| `prepared(stmt, delimiter)` | a statement a client line cannot carry | it runs from its UTF-8 bytes in hex: `SET @binlog_grammar_stmt=CONVERT(X'..' USING utf8mb4)`, `PREPARE`, `EXECUTE`, `DEALLOCATE`; one that holds `LOCAL ... INFILE` is not run: a `SIGNAL` stops the client there |
| `binlog_statement(events, delimiter)` | whole events' bytes for the server to apply (`dump --flashback`) | `BINLOG '...'` of base64 text only (A-Z a-z 0-9 + / =, lines of 76): no byte of an event reaches the client as itself |
| `html(text)` | text in the report page (`stats --html`) | `& < > " '` as entities, unseen characters as visible escapes |
| `script_json(value)` | data in the page's `<script type="application/json">` | JSON with no `<`, `>`, `&` or non-ASCII character: no `</script>` |
| `shell(arg)` | a word of a copyable shell command | plain, `'...'`, or `$'...'` with `\\xNN` for unseen characters |
| `SCRIPT_HEADER` | the first lines of every script | `/*!\\C utf8mb4 */` and the session settings |

Why each rule (checked against a real MariaDB 10.11 client and server, and by
tests/output/test_quoting.py and the hostile-content suite):
- The client splits a script into statements by its own character set, before the server sees
  anything. Under `--default-character-set=gbk` (big5, sjis, cp932 alike) the UTF-8 bytes `AC 5C`
  of `€` and an escaped quote are one character followed by a closing quote, so a row value
  could end its string and run SQL or `\\!` shell commands. `/*!\\C utf8mb4 */`, the client
  command mysqlbinlog starts its output with, sets the client's character set before any
  binlog byte is read. (`SET NAMES` alone changes the server's, not the client's.) In utf8mb4
  no trail byte is ever a quote or a backslash.
- The client reads lines and drops a CR before each LF, aborts on a NUL byte (even with
  `--force`), and takes a backslash outside a string as a client command (`\\!` runs a shell).
  A name holding a control character or a backslash therefore goes into `prepared(...)`, whose
  text is hex digits, instead of a backquoted identifier; a comment holds none of those bytes.
- Comments end at the line's end (`-- `, `#`) or at `*/`: `comment` keeps both out.
"""
from __future__ import annotations

import binascii
import re
from typing import List, Optional

from ..runtime.values import CHARSET_CODECS, errors_of
from .replay_charsets import text_round_trips

__all__ = ["ident", "ident_is_plain", "string", "hex_literal", "charset_literal", "text_literal",
           "comment", "comment_line", "hex_column", "binlog_statement", "client_reads_verbatim", "statement_lines", "prepared",
           "use_lines", "html", "script_json", "shell", "SCRIPT_HEADER", "CLIENT_CHARSET", "SESSION_SETTINGS", "STMT_VAR"]

# The client command that fixes the client's character set (mysql/mariadb `\C`, `charset`).
CLIENT_CHARSET = "/*!\\C utf8mb4 */"

# What the literals of a script assume: UTF-8 text, TIMESTAMPs as UTC text, backslash escapes
# (no NO_BACKSLASH_ESCAPES, no ANSI_QUOTES whatever the target's global sql_mode), a logged 0 kept
# in an AUTO_INCREMENT column, zero and invalid dates and the ENUM error value '' stored as logged.
SESSION_SETTINGS = (
    "SET NAMES utf8mb4;",
    "SET time_zone='+00:00';",
    "SET sql_mode='NO_AUTO_VALUE_ON_ZERO,ALLOW_INVALID_DATES,NO_ENGINE_SUBSTITUTION';",
)

SCRIPT_HEADER = (CLIENT_CHARSET + ";",) + SESSION_SETTINGS

# The user variable that carries a statement run by `prepared` (and its prepared statement's name).
STMT_VAR = "binlog_grammar_stmt"

_ESCAPES = str.maketrans({"\\": "\\\\", "'": "\\'", "\0": "\\0", "\n": "\\n", "\r": "\\r",
                          "\x1a": "\\Z"})

# Characters a client line cannot carry verbatim inside a backquoted name: C0 controls and DEL
# (CR before LF is dropped, NUL aborts, LF splits a line-based reading), the backslash (a command
# outside strings; older clients escaped with it inside backquotes), and the surrogates that stand
# for bytes which are not UTF-8.
_NOT_PLAIN = re.compile(r"[\x00-\x1f\x7f\\\ud800-\udfff]")


def ident(name) -> str:
    """An identifier in backquotes (a backquote inside doubled). The name must be plain
    (`ident_is_plain`) for the statement to be printed as it is; else use `prepared`."""
    return "`" + str(name).replace("`", "``") + "`"


def ident_is_plain(name) -> bool:
    """Can a client line carry `ident(name)` as it is? False for control characters, a
    backslash, or bytes that are not UTF-8."""
    return _NOT_PLAIN.search(str(name)) is None


def string(text: str) -> str:
    """A SQL string literal of `text` with MySQL's backslash escapes (backslash, quote, NUL, LF,
    CR, Ctrl-Z); every other character as it is. The script's sql_mode keeps backslash escapes."""
    return "'" + text.translate(_ESCAPES) + "'"


def hex_literal(data: bytes) -> str:
    """X'..' of the bytes (upper-case hex); '' for no bytes."""
    return f"X'{bytes(data).hex().upper()}'" if data else "''"


def charset_literal(data: bytes, charset: str) -> str:
    """`_charset X'..'`: exactly these bytes as a string of that MySQL character set."""
    if not re.fullmatch(r"[a-z0-9_]+", charset or ""):
        raise ValueError(f"{charset!r} is not a character set name")
    return f"_{charset} X'{bytes(data).hex().upper()}'"


def text_literal(text: str, charset: Optional[str] = None) -> str:
    """The literal of a string value of a column in MySQL character set `charset` (None:
    unknown): quoted UTF-8 text when that stores the bytes the value was decoded from
    (replay_charsets.text_round_trips), else those bytes behind a charset introducer (a binary
    string `X'..'` when the charset is unknown and the text holds bytes UTF-8 does not decode)."""
    if text_round_trips(text, charset):
        return string(text)
    codec = CHARSET_CODECS.get(charset) if charset else None
    if codec is None:  # bytes of an unknown charset: a binary string, stored as it is
        return hex_literal(text.encode("utf-8", "surrogateescape"))
    return charset_literal(text.encode(codec, errors_of(codec)), charset)


_COMMENT_ESCAPES = {"\\": "\\\\", "\n": "\\n", "\r": "\\r", "\0": "\\0"}
# Control characters but the tab (mysqlbinlog's header lines use tabs), the C1 controls (NEL,
# 0x85, ends a line for some readers, as U+2028 and U+2029 do), bytes that are not UTF-8, the
# backslash (so that every escape reads back one way), and the start and end of a /* */ comment:
# inside a /* */ comment the client takes `/*!` as the start of an executable comment and then
# no `*/` ends the outer one, so the rest of the script would be skipped.
_UNSAFE_IN_COMMENT = re.compile(
    r"[\\\x00-\x08\x0a-\x1f\x7f-\x9f\u2028\u2029\ud800-\udfff]|\*(?=/)|/(?=\*)")


def _comment_escape(m: re.Match) -> str:
    s = m.group(0)
    if s in "*/":  # a star before a slash, or a slash before a star: split by a backslash
        return s + "\\"
    if s in _COMMENT_ESCAPES:
        return _COMMENT_ESCAPES[s]
    code = ord(s)
    if 0xDC80 <= code <= 0xDCFF:  # a byte that did not decode (surrogateescape)
        return f"\\x{code - 0xDC00:02x}"
    return f"\\x{code:02x}" if code < 0x100 else f"\\u{code:04x}"


def comment(text) -> str:
    """`text` made safe inside a comment: one line, printable, no `*/`."""
    return _UNSAFE_IN_COMMENT.sub(_comment_escape, str(text))


# mysqlbinlog -H's text column: the printable ASCII bytes as they are, every other one a dot
_HEX_COLUMN = {c: chr(c) if 0x20 <= c < 0x7F else "." for c in range(256)}


def hex_column(data: bytes) -> str:
    """The text column of a `#` hex-dump line (mysqlbinlog -H): bytes 0x20-0x7E as they are,
    every other byte a dot. One line, no NUL; a `#` comment ends only at the line's end, and
    the client reads nothing after the `#` (a backslash, `*/` or the delimiter there is inert:
    tests/output/test_quoting.py pipes such lines into a real client), so these characters
    need no escape, and mariadb-binlog's bytes are kept."""
    return bytes(data).decode("latin-1").translate(_HEX_COLUMN)


def comment_line(text, prefix: str = "-- ") -> str:
    """A whole comment line: `prefix`, the text made safe, a newline."""
    return f"{prefix}{comment(text)}\n"


def binlog_statement(events, delimiter: str = ";") -> List[str]:
    """The lines of one `BINLOG '...'` statement holding `events` (each an event's whole bytes),
    as mysqlbinlog writes it: each event in base64 on its own lines of 76 characters, then the
    closing quote and `delimiter`. The server decodes the events one after the other."""
    if not events:
        raise ValueError("a BINLOG statement holds at least one event")
    return ["BINLOG '\n"] + [_base64_lines(e) for e in events] + [f"'{delimiter}\n"]


def _base64_lines(event) -> str:
    """An event's bytes in base64, lines of 76 characters each ending in a newline (what
    base64.encodebytes writes, made by one binascii call)."""
    text = binascii.b2a_base64(event, newline=False).decode("ascii")
    if len(text) <= 76:
        return text + "\n"
    return "\n".join([text[i:i + 76] for i in range(0, len(text), 76)]) + "\n"


# Words the mysql/mariadb client takes as its own command when a statement starts with them
# (client/mysql.cc, commands[]): such a statement never reaches the server as written.
_SURROGATE = re.compile(r"[\ud800-\udfff]")
_CLIENT_COMMANDS = frozenset("""
    ? clear connect delimiter edit ego exit go help nopager notee nowarning pager print prompt
    quit rehash source status system tee use charset warnings
""".split())


def client_reads_verbatim(stmt: str, delimiter: str = ";", backslash_escapes: bool = True,
                          ansi_quotes: bool = False, local_file: Optional[str] = None) -> bool:
    """Does the mysql/mariadb client, reading `stmt` and then a line holding only the delimiter,
    send exactly `stmt` (less its comments) to the server as one statement? It does not when the
    text holds a NUL, a client command (a backslash outside strings, or a first word such as
    `use`), the delimiter outside strings and comments, a CR before an LF inside a string or a
    name (the client drops it), or ends inside a string or a comment. The session's sql_mode
    decides what a backslash in a string is (the client learns it from the server's status
    flags): `backslash_escapes` False for NO_BACKSLASH_ESCAPES, `ansi_quotes` True for
    ANSI_QUOTES (a double-quoted name, where a backslash escapes nothing).

    Nor may it make the client send one of its own files: a replay script is run with
    `--local-infile` for the LOAD DATA statements this project writes, and a binlog statement
    holding `LOCAL INFILE` would have the client read any file the DBA can. Only the one clause
    naming `local_file` (the literal this module wrote for the file a replay made) is taken; a
    statement with another goes to `prepared`, where the server refuses LOAD DATA."""
    scanned = _scan(stmt, delimiter, backslash_escapes, ansi_quotes)
    if scanned is None:
        return False
    code, literals = scanned
    files = [literals[int(m.group(1))] for m in _LOCAL_INFILE.finditer(code)]
    if _LOCAL_INFILE_ANY.search(_LOCAL_INFILE.sub(" ", code)):
        return False  # LOCAL INFILE followed by no string literal: not ours
    return files == ([] if local_file is None else [local_file])


# LOCAL INFILE in a statement's code (its literals as \x01N\x01, its comments as spaces)
_LOCAL_INFILE = re.compile(r"(?i)\bLOCAL\s+INFILE\s+\x01(\d+)\x01")
_LOCAL_INFILE_ANY = re.compile(r"(?i)\bLOCAL\s+INFILE\b")


def _scan(stmt: str, delimiter: str, backslash_escapes: bool, ansi_quotes: bool):
    """How the client reads `stmt` (client_reads_verbatim): None when it would not send it as
    it is; else (its code, with each quoted literal as \x01N\x01 and each comment as a space,
    the text of /*! */ comments kept since the server runs it; the literals as written)."""
    if "\0" in stmt or "\x01" in stmt or _SURROGATE.search(stmt):
        return None
    words = stmt.split(None, 1)
    if not words or words[0].lower().rstrip(";") in _CLIENT_COMMANDS:
        return None
    code, literals = [], []
    i, n, quote, opened, in_comment, executable = 0, len(stmt), None, 0, False, False
    while i < n:
        c = stmt[i]
        if in_comment:  # the client ends it at the first */, unless a /*! opened inside it
            if stmt.startswith(("/*!", "/*M!"), i):
                return None
            if stmt.startswith("*/", i):
                in_comment, i = False, i + 2
                code.append(" ")
            else:
                i += 1
            continue
        if quote is not None:
            if c == "\\" and backslash_escapes and quote != "`" and not (
                    quote == '"' and ansi_quotes):
                i += 2
                continue
            if c == "\r" and stmt.startswith("\n", i + 1):
                return None
            if c == quote:
                quote = None
                code.append(f"\x01{len(literals)}\x01")
                literals.append(stmt[opened:i + 1])
            i += 1
            continue
        if stmt.startswith(delimiter, i) or c == "\\":
            return None
        if c in "'\"`":
            quote, opened = c, i
        elif c == "#" or (stmt.startswith("--", i) and (i + 2 >= n or stmt[i + 2].isspace())):
            end = stmt.find("\n", i)
            code.append(" ")
            if end < 0:
                return "".join(code), literals
            i = end
            continue
        elif stmt.startswith(("/*!", "/*M!"), i):
            executable = True
            i += 3 if stmt.startswith("/*!", i) else 4
            while i < n and stmt[i].isdigit():  # the version the server runs it from
                i += 1
            code.append(" ")
            continue
        elif stmt.startswith("*/", i):
            executable = False
            code.append(" ")
            i += 2
            continue
        elif stmt.startswith("/*", i) and not stmt.startswith("/*+", i):
            if executable:  # a comment inside /*! */: the client would not see where either ends
                return None
            in_comment, i = True, i + 2
            continue
        else:
            code.append(c)
        i += 1
    if quote is not None or in_comment:
        return None
    return "".join(code), literals


# A database name the client's `use` command cannot carry: a CR before an LF (the client drops the
# CR), a NUL (the client stops), bytes that are not UTF-8. Every other character works, line
# breaks and backslashes included (the client reads a backquoted name with doubled backquotes,
# no escapes, across lines; checked on MariaDB 10.11 by tests/output/test_quoting.py).
_NO_USE = re.compile(r"\r\n|\x00|[\ud800-\udfff]")


def use_lines(db: str, delimiter: str = ";") -> Optional[List[str]]:
    """The lines (without newlines) that make `db` the default database: the client's `use`
    command, as mysqlbinlog writes it; None when no script line carries the name (USE cannot be
    prepared, so `prepared` is no way round)."""
    if _NO_USE.search(db):
        return None
    return [f"use {ident(db)}{delimiter}"]


# A statement that may make the client send one of its files: LOCAL and INFILE anywhere in it, in
# any case, whatever lies between (strings and comments too: this errs on the side of not running)
_CLIENT_FILES = re.compile(r"(?is)\bLOCAL\b.*\bINFILE\b")
REFUSED_FILE_READ = ("SIGNAL SQLSTATE '45000' SET MESSAGE_TEXT = 'binlog-grammar: a statement of "
                     "the binlog that could make the client send one of its files (LOCAL INFILE) "
                     "is not run'")


def prepared(stmt: str, delimiter: str = ";") -> List[str]:
    """The lines (without newlines) that run `stmt` from the hex of its UTF-8 bytes, for a
    statement that no client line can carry verbatim. Works inside a transaction (PREPARE and
    EXECUTE do not commit) and for every statement the server can prepare.

    The server prepares LOAD DATA LOCAL INFILE too, and the client, run with --local-infile for
    the loads a replay writes, then sends the file the statement names: a statement holding
    LOCAL ... INFILE is not run but replaced by a SIGNAL, an error that stops the client."""
    if _CLIENT_FILES.search(stmt):
        return [REFUSED_FILE_READ + delimiter]
    data = stmt.encode("utf-8", "surrogateescape")
    return [f"SET @{STMT_VAR}=CONVERT({hex_literal(data)} USING utf8mb4){delimiter}",
            f"PREPARE {STMT_VAR} FROM @{STMT_VAR}{delimiter}",
            f"EXECUTE {STMT_VAR}{delimiter}",
            f"DEALLOCATE PREPARE {STMT_VAR}{delimiter}"]


def statement_lines(stmt: str, delimiter: str = ";", names=None) -> List[str]:
    """The lines (without newlines) that run `stmt`: the statement ending in the delimiter when
    the client reads it verbatim, else `prepared(stmt)`. A statement this project wrote (its
    literals from `string`/`text_literal`/`hex_literal`, which a client always reads verbatim)
    passes the identifiers it named as `names`, and only those are checked (`ident_is_plain`);
    a statement from a binlog (names None) is read the way the client reads it."""
    if names is not None:
        verbatim = all(ident_is_plain(n) for n in names)
    else:
        verbatim = client_reads_verbatim(stmt, delimiter)
    return [stmt + delimiter] if verbatim else prepared(stmt, delimiter)


# -- the report page (stats --html) and the shell commands it shows -----------------------------
# A page is read by a browser, which runs what it takes for markup or script: binlog text enters
# it only as escaped text (`html`) or inside a JSON island (`script_json`), never as code. The
# characters a reader cannot see (controls, bytes that are not UTF-8, line separators) are shown
# as the same visible escapes `comment` writes.
_UNSEEN = re.compile(r"[\x00-\x08\x0b-\x1f\x7f-\x9f\u2028\u2029\ud800-\udfff]")
_HTML_ESCAPES = str.maketrans({"&": "&amp;", "<": "&lt;", ">": "&gt;", '"': "&quot;", "'": "&#39;"})


def html(text) -> str:
    """`text` as HTML text, fit for an element's content and for a quoted attribute value (and
    for the labels of plotly.js, which reads `<br>`, `<a>` and entities in them): `& < > " '` as
    entities, controls, invalid bytes and U+2028/2029 as visible escapes (\\xNN, \\uNNNN)."""
    return _UNSEEN.sub(_comment_escape, str(text)).translate(_HTML_ESCAPES)


def script_json(value) -> str:
    """`value` as JSON that may stand inside a `<script type="application/json">` element and
    read back (JSON.parse, json.loads) as the same value: ASCII only (U+2028/2029 and bytes that
    are not UTF-8 as \\u escapes), and `<`, `>`, `&` as \\u003c, \\u003e, \\u0026, so that no
    `</script>` or `<!--` can appear. Those three occur in JSON only inside strings."""
    import json

    text = json.dumps(value, ensure_ascii=True, allow_nan=False)
    return text.replace("<", "\\u003c").replace(">", "\\u003e").replace("&", "\\u0026")


_SHELL_PLAIN = re.compile(r"[A-Za-z0-9_@%+=:,./-]+")
# in a copyable command a tab or a line feed is unseen too (the command is one line)
_SHELL_UNSEEN = re.compile(r"[\x00-\x1f\x7f-\x9f\u2028\u2029\ud800-\udfff]")


def shell(arg) -> str:
    """One word of a POSIX shell command (the copyable commands of the report page): as it is
    when plain, else in single quotes, else (controls, bytes that are not UTF-8) as bash's
    $'...' with every such character as \\xNN."""
    s = str(arg)
    if _SHELL_PLAIN.fullmatch(s):
        return s
    if not _SHELL_UNSEEN.search(s):
        return "'" + s.replace("'", "'\"'\"'") + "'"
    out = []
    for ch in s:
        code = ord(ch)
        if 0xDC80 <= code <= 0xDCFF:
            out.append(f"\\x{code - 0xDC00:02x}")
        elif ch in "\\'" or _SHELL_UNSEEN.match(ch):
            out.append("".join(f"\\x{b:02x}" for b in ch.encode("utf-8", "surrogatepass")))
        else:
            out.append(ch)
    return "$'" + "".join(out) + "'"
