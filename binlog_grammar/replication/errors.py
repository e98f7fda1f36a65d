"""The replication client's errors, each a one-line binlog_grammar.errors.ReplicationError
naming the server, and the rule for which of them a new connection may mend."""
from __future__ import annotations

from ..errors import ReplicationError

# server errors a new connection may mend: too many connections, shutdown in progress, the
# connection or query was killed or aborted, network read/write errors
RETRYABLE_CODES = {1040, 1053, 1077, 1152, 1153, 1154, 1155, 1156, 1157, 1158, 1159, 1160, 1161,
                   1184, 1317, 1927, 2006, 2013}


class ConnectionLost(ReplicationError):
    """The connection failed or dropped, or the server went silent: a new connection may mend it."""


class ServerError(ReplicationError):
    """The server answered with an ERR packet."""


class ProtocolError(ReplicationError):
    """The server sent bytes the protocol specs refuse, or a packet out of place."""


def retryable(e: Exception) -> bool:
    """May a new connection mend this error (a lost connection, or a server error of
    RETRYABLE_CODES)?"""
    if isinstance(e, ConnectionLost):
        return True
    return isinstance(e, ServerError) and e.code in RETRYABLE_CODES


def first_line(text, limit=300) -> str:
    """The text on one line (its whitespace runs made single spaces), cut after `limit` characters."""
    text = " ".join(str(text).split())
    return text if len(text) <= limit else text[:limit] + "..."
