"""LOAD DATA in the replay script, as mariadb-binlog writes it.

A statement-based `LOAD DATA INFILE` is logged as the file's bytes in blocks
(BEGIN_LOAD_QUERY_EVENT, then APPEND_BLOCK_EVENTs, all with one file_id) and then the statement
(EXECUTE_LOAD_QUERY_EVENT), whose fn_pos_start..fn_pos_end names the file on the source. To
replay it, mariadb-binlog writes the blocks into a new file of its own (`SQL_LOAD_MB-<file_id>-*`
in --local-load's folder, else the temporary folder; the first free counter, in base 36, as
mariadb-binlog names them) and prints the statement with that range
replaced by ` LOCAL INFILE '<that file>'` (` REPLACE` when the load replaced duplicates) and
` INTO`: the client sends the file when the script runs. The files stay after dump ends, for that.

The blocks are data the server loads, written to a file this process creates (O_EXCL|O_NOFOLLOW,
mode 0600: never a file or link that exists); nothing of the binlog reaches a path but the
file_id, an integer. The statement
around the new name is the binlog's own, checked as every statement is (replay._query_event).
"""
from __future__ import annotations

from typing import Optional

import os

from . import quoting

LOAD_DUP_REPLACE = 2  # specs load_dup_handling: LOAD_DUP_ERROR 0, LOAD_DUP_IGNORE 1, REPLACE 2


_DIGITS = "0123456789abcdefghijklmnopqrstuvwxyz"


def _base36(n: int) -> str:
    text = ""
    while True:
        n, d = divmod(n, 36)
        text = _DIGITS[d] + text
        if not n:
            return text


def _new_file(folder: str, file_id: int):
    """(fd, path) of a file that did not exist: SQL_LOAD_MB-<file_id>-<n>, n the first free of
    0, 1, ... z, 10, ... (mariadb-binlog's names, so the script is its byte for byte in the same
    folder); O_EXCL and O_NOFOLLOW, so never an existing file or a link planted there."""
    flags = os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_NOFOLLOW", 0)
    for n in range(1 << 20):
        path = os.path.join(folder, f"SQL_LOAD_MB-{file_id}-{_base36(n)}")
        try:
            return os.open(path, flags, 0o600), path
        except FileExistsError:
            continue
    raise OSError(f"no free SQL_LOAD_MB-{file_id}-* name in {folder}")


class LoadFiles:
    """The files of one replay script, by the binlog's file_id."""

    def __init__(self, folder=None):
        self.folder = folder
        self.paths = {}

    def begin(self, file_id: int, block: bytes) -> None:
        import tempfile  # LOAD DATA's files only (not loaded by a dump without them)

        fd, path = _new_file(self.folder or tempfile.gettempdir(), int(file_id))
        with os.fdopen(fd, "wb") as f:
            f.write(block)
        self.paths[int(file_id)] = path

    def append(self, file_id: int, block: bytes) -> None:
        path = self.paths.get(int(file_id))
        if path is not None:  # a window that starts after the file's first block: as mysqlbinlog
            with open(path, "ab") as f:
                f.write(block)

    def literal(self, d) -> Optional[str]:
        """The string literal naming the file of EXECUTE_LOAD_QUERY `d` in `statement`'s text
        (quoting.client_reads_verbatim takes that one LOCAL INFILE clause), None when unwritten."""
        path = self.paths.get(int(d.file_id))
        return None if path is None else quoting.string(path)

    def statement(self, d, query: str) -> str:
        """The EXECUTE_LOAD_QUERY statement naming the file written here (the statement as
        logged when its file's first block was not read)."""
        path = self.paths.get(int(d.file_id))
        raw = query.encode("utf-8", "surrogateescape")
        start, end = int(d.fn_pos_start), int(d.fn_pos_end)
        if path is None or not 0 <= start <= end <= len(raw):
            return query
        name = quoting.string(path).encode("utf-8", "surrogateescape")
        replace = b" REPLACE" if int(d.dup_handling) == LOAD_DUP_REPLACE else b""
        return (raw[:start] + b" LOCAL INFILE " + name + replace + b" INTO"
                + raw[end:]).decode("utf-8", "surrogateescape")
