"""One exception hierarchy for everything binlog-grammar reports to a user."""
from __future__ import annotations


class BinlogGrammarError(Exception):
    """Base of every error this package raises on purpose."""


class SpecError(BinlogGrammarError):
    """A mistake in a spec file: names the file, the line and the field."""

    def __init__(self, message, file=None, line=None, field=None):
        self.message = message
        self.file = file
        self.line = line
        self.field = field
        super().__init__(str(self))

    def __str__(self):
        where = str(self.file or "<spec>")
        if self.line:
            where += f":{self.line}"
        if self.field:
            where += f": field {self.field}"
        return f"{where}: {self.message}"


class BinlogError(BinlogGrammarError):
    """Bad bytes in a binlog: names the file, the offset and the event type."""

    def __init__(self, message, file=None, offset=None, event_type=None):
        self.message = message
        self.file = file
        self.offset = offset
        self.event_type = event_type
        super().__init__(str(self))

    def __str__(self):
        parts = [str(self.file or "<bytes>")]
        if self.offset is not None:
            parts.append(f"offset {self.offset}")
        if self.event_type is not None:
            parts.append(str(self.event_type))
        return f"{': '.join(parts)}: {self.message}"


class TruncatedError(BinlogError):
    """The file ends inside an event (or inside the magic number)."""


class ChecksumError(BinlogError):
    """An event's CRC32 does not match its bytes."""


class EventFormatError(BinlogError):
    """An event's bytes do not follow its spec."""


class UndecodableRowsError(EventFormatError):
    """A rows event of a valid binlog whose values cannot be decoded, because its TABLE_MAP_EVENT
    does not say enough (no column metadata, so values cannot be sized): not damage. The reading
    commands show such rows raw, with this message as the reason."""


class ReplicationError(BinlogGrammarError):
    """A replication connection failed (cannot connect, authentication refused, the server
    reported an error, it sent bytes the protocol specs refuse, it went silent): names the server
    and says what went wrong, on one line. Never carries the password."""

    def __init__(self, message, server=None, code=None, sql_state=None):
        self.message = " ".join(str(message).split())
        self.server = server
        self.code = code
        self.sql_state = sql_state
        super().__init__(str(self))

    def __str__(self):
        where = f"{self.server}: " if self.server else ""
        what = ""
        if self.code is not None:
            what = f" (server error {self.code}" + (f", SQLSTATE {self.sql_state}" if self.sql_state
                                                   else "") + ")"
        return f"{where}{self.message}{what}"


def plain_reason(e: Exception) -> str:
    """What went wrong, in words for a user: the exception's message without its Python class
    name (no message of the project names a Python exception class). An exception without a
    message is described by what such exceptions mean when bytes are read."""
    text = " ".join(str(e).split())
    if text:
        return text
    if isinstance(e, (IndexError, EOFError)):
        return "the bytes end before the layout does"
    if isinstance(e, (OverflowError, ZeroDivisionError)):
        return "a value is out of range"
    return "the bytes do not fit the layout"
