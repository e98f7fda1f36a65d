"""What the public reading API adds over stream.Stream: binlog files named the ways a user names
them (one path, a list, a glob, an index file) and row changes that carry their transaction's
GTID, their position and their table (`Change`, from Stream.row_changes()).

binlog_grammar.open_stream (compat/api.py) is the one call users make; it reads files through
`paths_of` and a server through the replication client.
"""
from __future__ import annotations

import glob
import os
import re
from dataclasses import dataclass, field
from typing import Optional

from ..errors import BinlogError

_GLOB = re.compile(r"[*?\[]")


def _binlog_order(path: str):
    """Sort key: a binlog's numeric suffix counts as a number (mariadb-bin.999999 < .1000000)."""
    head, dot, tail = os.path.basename(path).rpartition(".")
    return (os.path.dirname(path), head, int(tail) if dot and tail.isdigit() else -1, tail)


def paths_of(source) -> list:
    """Binlog paths (and `.index` files, which stream.expand_inputs opens) from a str or
    os.PathLike, or a list/tuple of them, in reading order. A glob (`logs/mariadb-bin.0*`) is its
    files in binlog order (`.index` files and folders left out); a glob that matches no file is
    an error, as is a source of another type."""
    if isinstance(source, (str, os.PathLike)):
        items = [source]
    elif isinstance(source, (list, tuple)):
        items = list(source)
    else:
        raise TypeError(f"open_stream() reads a path, a list of paths, a glob or a "
                        f"ReplicationSource, not {type(source).__name__}")
    out = []
    for item in items:
        if not isinstance(item, (str, os.PathLike)):
            raise TypeError(f"open_stream(): {item!r} is not a path (str or os.PathLike)")
        path = os.fspath(item)
        if _GLOB.search(path) and not os.path.exists(path):
            found = sorted((p for p in glob.glob(path) if os.path.isfile(p)
                            and not p.endswith(".index")), key=_binlog_order)
            if not found:
                raise BinlogError("no binlog file matches this pattern", path)
            out += found
        else:
            out.append(path)
    if not out:
        raise TypeError("open_stream() was given an empty list of paths")
    return out


@dataclass
class Change:
    """One changed row with where it comes from.

    op: "c" (insert), "u" (update) or "d" (delete); db, table: its table; before, after: the
    row as {column: value} before and after (None for an insert's before and a delete's after);
    gtid: its transaction's GTID (MariaDB `domain-server-seq`, MySQL `uuid:n`; None when the
    binlog has none); file, pos, end_pos: the rows event that holds it (byte offsets);
    timestamp: the event's (seconds since the epoch, UTC); server_id: the server that wrote it;
    event_type: the rows event's type name; primary_key: its key's column names (from the
    TABLE_MAP's metadata); tx_seq: its transaction's number in the stream (1-based)."""

    op: str
    db: str
    table: str
    before: Optional[dict]
    after: Optional[dict]
    gtid: Optional[str]
    file: str
    pos: int
    end_pos: int
    timestamp: int
    server_id: int
    event_type: str
    primary_key: list = field(default_factory=list)
    tx_seq: int = 0

    @property
    def values(self) -> dict:
        """The row as it is after the change (before it for a delete)."""
        return self.after if self.after is not None else self.before


def changes_of(events):
    """Change objects from stream.StreamEvents, in order."""
    for se in events:
        ev = se.event
        if ev.type is None or not ev.type.row_op:
            continue
        for c in se.changes:
            yield Change(c.op, c.db, c.table, c.before, c.after, se.gtid, c.file, c.pos,
                         c.end_pos, c.timestamp, c.server_id, c.event_type, list(c.primary_key),
                         se.tx_seq or 0)
