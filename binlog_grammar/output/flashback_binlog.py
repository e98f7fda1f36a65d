"""`dump --flashback` (`-B`): the script `mariadb-binlog --flashback` writes, built by the grammar.

The script undoes the row changes of the binlog when piped into the client: the transactions
last first, and in each the statements last first, every rows event inverted by
binlog.invert (WRITE<->DELETE, UPDATE's images swapped, rows last first) and sent as the server's
own events in `BINLOG '...'` statements, which the server applies as a replica applies them:

    /*!\\C utf8mb4 */;            the client's character set (quoting.CLIENT_CHARSET)
    /*!50530 SET @@SESSION.PSEUDO_SLAVE_MODE=1*/;  ... mariadb-binlog's session lines
    DELIMITER /*!*/;
    # the file's FORMAT_DESCRIPTION_EVENT       a comment line, then
    BINLOG '<base64 of its bytes>'/*!*/;        (again when a transaction of another file with
                                                 another format description follows)
    # flashback of <GTID> (<file>, <start> to <end>)
    START TRANSACTION/*!*/;
    # <event> of <db>.<table> at <offset>, inverted       per statement, last first:
    BINLOG '<its TABLE_MAPs as logged> <its rows events inverted, last first>'/*!*/;
    COMMIT/*!*/;
    DELIMITER ;
    # End of log file
    ROLLBACK /* added by binlog-grammar */;  ... and the session lines put back

As mariadb-binlog does, a statement's rows events are written last first and its STMT_END_F flag
moves to the event that is then last (the statement's first); each event is base64 in lines of
76 characters, one event after the other in the statement's BINLOG. What differs from its bytes:
the CRC32 of an inverted event is that of its new bytes (mariadb-binlog leaves the original's).

What is written as a comment instead (`on_refused(reason)` is told, so the command can say so):
a transaction that did not commit (rolled back, XA PREPAREd, cut off at the end of the input:
inverting rows a server never kept would change data), one holding a statement other than its
BEGIN and COMMIT (a DML statement logged as a statement, a SAVEPOINT or ROLLBACK TO: its changes
are not rows the script can invert), and one with a rows event binlog.invert refuses. A DDL
statement is a comment line (its change cannot be undone by rows; mariadb-binlog skips it too).
Filters never cut a transaction here: the stream keeps or drops whole transactions.

Binlog text reaches the script only through output/quoting.py: comment lines by
`quoting.comment_line`, the BINLOG statements by `quoting.binlog_statement` (base64 text only).
"""
from __future__ import annotations

from array import array
from typing import Callable, Iterable, List, Optional

from ..binlog import boundaries as B
from ..binlog.invert import invert_rows_event
from ..binlog.framing import frames
from ..binlog.parse import FDE_CODE
from ..errors import BinlogError
from . import quoting
from .spill import Backwards

DELIMITER = "/*!*/;"
STMT_END_F = 0x01  # rows_flags.STMT_END_F

HEADER = (quoting.CLIENT_CHARSET + ";",
          "/*!50530 SET @@SESSION.PSEUDO_SLAVE_MODE=1*/;",
          "/*!40019 SET @@session.max_delayed_threads=0*/;",
          "/*!50003 SET @OLD_COMPLETION_TYPE=@@COMPLETION_TYPE,COMPLETION_TYPE=0*/;",
          f"DELIMITER {DELIMITER}")
FOOTER = ("DELIMITER ;",
          "# End of log file",
          "ROLLBACK /* added by binlog-grammar */;",
          "/*!50003 SET COMPLETION_TYPE=@OLD_COMPLETION_TYPE*/;",
          "/*!50530 SET @@SESSION.PSEUDO_SLAVE_MODE=0*/;")

_FDE = "FORMAT_DESCRIPTION_EVENT"  # its name in comment lines


class Refused(Exception):
    """A transaction the script cannot invert; the message says why."""


def _where(tx) -> str:
    name = tx.gtid if tx.gtid else "the transaction"
    return f"{name} ({tx.file}, {tx.start_pos} to {tx.end_pos})"


def _statements(tx) -> List[tuple]:
    """The statements of a transaction's row changes: (TABLE_MAP events, rows StreamEvents), in
    binlog order. A statement ends with the rows event that has STMT_END_F (or the
    transaction's end)."""
    out, maps, rows, other = [], [], [], None
    for se in tx.events:
        ev = se.event
        et = ev.type
        role = et.role if et is not None else None
        if role == "table_map":
            maps.append(ev)
        elif et is not None and et.row_op:
            rows.append(se)
            if int(ev.data["flags"]) & STMT_END_F:
                out.append((maps, rows))
                maps, rows = [], []
        elif other is None and B.is_statement_event(ev) \
                and B.query_kind(ev) not in (B.BEGIN, B.COMMIT):
            other = ev
    if rows:
        out.append((maps, rows))
    if out and other is not None:
        raise Refused(f"beside its rows it holds a statement ({B.query_kind(other)} at "
                      f"{other.offset}), which has no rows to invert")
    return out


def _statement_lines(maps, rows) -> List[str]:
    """One statement undone: a comment line, then its TABLE_MAPs and its rows events inverted,
    last first (STMT_END_F on the last written), in one BINLOG statement."""
    inverted = []
    for k, se in enumerate(reversed(rows)):
        try:
            inverted.append(invert_rows_event(se.event, se.table, stmt_end=k == len(rows) - 1))
        except BinlogError as e:
            raise Refused(str(e)) from None
    first = rows[0]
    t = first.table
    what = f"{len(rows)} rows event{'s' * (len(rows) != 1)} of " \
           f"{t.db}.{t.table}" if t is not None else "rows events"
    line = quoting.comment_line(f"{what} at {first.event.offset}, inverted", "# ")
    # a TABLE_MAP of a database --rewrite-db renames: its rebuilt bytes (binlog/rewrite.py)
    raws = [ev.extra.get("rewritten_raw", ev.raw) for ev in maps]
    return [line] + quoting.binlog_statement(raws + inverted, DELIMITER)


def transaction_lines(tx) -> List[str]:
    """The lines that undo one transaction; Refused when it cannot be undone. A transaction
    without row changes gives a comment line (DDL) or nothing."""
    statements = _statements(tx)
    if not statements:
        if tx.end == "ddl":
            return [quoting.comment_line(f"not inverted: a statement of its own (DDL) at "
                                         f"{_where(tx)}", "# ")]
        return []
    if tx.end != "commit":
        raise Refused(f"it did not commit (it ends: {tx.end})")
    out = [quoting.comment_line(f"flashback of {_where(tx)}", "# "),
           f"START TRANSACTION{DELIMITER}\n"]
    for maps, rows in reversed(statements):
        out += _statement_lines(maps, rows)
    out.append(f"COMMIT{DELIMITER}\n")
    return out


class FormatEvents:
    """The FORMAT_DESCRIPTION_EVENTs of each binlog file (a relay log holds its own and the
    source's), found by the header-only walk once per file: `fde(path, offset)` gives the bytes
    of the last one before `offset`, the one the events there are read with."""

    def __init__(self):
        self.by_file: dict = {}

    def _read(self, path) -> list:
        found = []
        try:
            with open(path, "rb") as fh:
                for fr in frames(path, checksums=False):
                    if fr.type_code == FDE_CODE:
                        fh.seek(fr.offset)
                        found.append((fr.offset, fh.read(fr.event_length)))
        except (BinlogError, OSError):  # damage after them: the ones before it were found
            pass
        return found

    def __call__(self, path, offset=None) -> Optional[bytes]:
        found = self.by_file.get(path)
        if found is None:
            found = self.by_file[path] = self._read(path)
        before = [raw for at, raw in found if offset is None or at < offset]
        return before[-1] if before else None


def render(transactions: Iterable, on_refused: Optional[Callable] = None,
           format_event: Optional[Callable] = None, spool_dir=None) -> Iterable[str]:
    """The whole script (lines, each ending in a newline) that undoes `transactions` (a
    stream's, in binlog order). The last is written first, so all are read before the first line
    is given: each transaction's text goes to a temporary file as it is made (output/spill.py, in
    `spool_dir`, or $TMPDIR) and is read back last first, so memory stays flat where mariadb-binlog
    holds the whole script; only where each came from is kept (two arrays of numbers).
    format_event(path, offset): the bytes of the FORMAT_DESCRIPTION_EVENT the events of a file at
    `offset` are read with (FormatEvents() by default); on_refused(reason) for each transaction
    written as a comment."""
    fde = format_event or FormatEvents()
    paths: dict = {}  # file -> its number in `files` and `where`
    files, offsets = array("q"), array("q")  # per text in the spill: its transaction's file, start
    with Backwards(spool_dir) as spill:
        for tx in transactions:
            try:
                lines = transaction_lines(tx)
            except Refused as e:
                reason = f"{_where(tx)}: {e}"
                if on_refused is not None:
                    on_refused(reason)
                lines = [quoting.comment_line(f"not inverted: {reason}", "# ")]
            if lines:
                spill.add("".join(lines))
                files.append(paths.setdefault(tx.file, len(paths)))
                offsets.append(tx.start_pos)
        yield from (line + "\n" for line in HEADER)
        names = list(paths)
        written = None
        for k, text in spill.backwards():
            path = names[files[k]]
            raw = fde(path, offsets[k])
            if raw is not None and raw != written:
                yield quoting.comment_line(f"{_FDE} of {path}", "# ")
                yield from quoting.binlog_statement([raw], DELIMITER)
                written = raw
            yield text
    yield from (line + "\n" for line in FOOTER)
