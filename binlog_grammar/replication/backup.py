"""A binlog backup over the replication protocol (issue 28, item 5: `mysqlbinlog
--read-from-remote-server --raw --stop-never --result-file DIR/`): the server's binlog files
written byte for byte as the server sends their events, one file per server file, following
rotations and server restarts, and resuming after its own crash.

`RawBackup(directory, **source_options).run()` reads a `ReplicationSource` (any binlog format:
a backup keeps what the server logged) and writes each event it gives at the position its header
names, in the file of the same name under `directory`:

- a file starts with the binlog magic; the events the server makes up (the ROTATE that names
  where the dump starts, the FORMAT_DESCRIPTION it repeats when a dump starts inside a file)
  are in no file and are not written; a ROTATE the server made up when it moved to the next
  file (after a restart, or a crash left a file without its ROTATE) opens that file;
- an event must start where the copy ends: one before is a resent one (after a reconnection the
  source resumes at the last complete transaction and drops what it already gave, so this is a
  check), one after is a gap, an error naming the file and both positions;
- the server clears LOG_EVENT_BINLOG_IN_USE_F in the FORMAT_DESCRIPTION_EVENT it sends; the
  copy sets it again, as the server's file has it while open, and clears it when the server
  closes the file cleanly (its ROTATE or STOP event), as the server does at that moment (the
  event's CRC32 is computed with the flag cleared, so it holds either way); a file the server
  stopped writing without closing it (a crash) keeps the flag, as the server's does. So the copy
  equals the server's file byte for byte, the file being written and a crashed one included;
- on start, the last file of `directory` (binlog order) is read back: a last event cut short
  (this process stopped while writing it) is cut off, and the backup goes on from the end of
  the last whole event, in that file; an empty directory starts at `file` (default: the
  server's first binlog file) at position 4.

Every event is written with one write() call and the file is fsync'ed when it is closed and
every `sync_seconds`; what a crash of this process can lose is at most the events since the last
sync, which the restart reads again from the server.
"""
from __future__ import annotations

import os
import time
from pathlib import Path
from typing import Optional

from ..errors import ReplicationError
from ..binlog.header import V4_HEADER_LEN
from ..binlog.positions import position_key
from ..generated import enums
from .source import ReplicationSource

__all__ = ["RawBackup", "resume_point", "MAGIC"]

MAGIC = b"\xfebin"
IN_USE = next(bit for bit, name in enums.EVENT_FLAGS.items() if name == "LOG_EVENT_BINLOG_IN_USE_F")
FLAGS_AT = 17  # the common header's flags (u16le): timestamp 4, type 1, server id 4, length 4, log_pos 4
LENGTH_AT = 9  # event_length (u32le)


def _in_use(raw: bytes) -> bytes:
    """A file's FORMAT_DESCRIPTION_EVENT with LOG_EVENT_BINLOG_IN_USE_F set, as the server's
    file has it while open (the server clears the flag in the copy it sends)."""
    flags = int.from_bytes(raw[FLAGS_AT:FLAGS_AT + 2], "little") | IN_USE
    return raw[:FLAGS_AT] + flags.to_bytes(2, "little") + raw[FLAGS_AT + 2:]


def _binlogs(directory: Path) -> list:
    """The binlog files of a folder (those starting with the magic), in binlog order."""
    found = []
    for p in directory.iterdir():
        if p.is_file() and not p.name.startswith("."):
            try:
                with open(p, "rb") as fh:
                    if fh.read(4) == MAGIC:
                        found.append(p)
            except OSError:
                continue
    return sorted(found, key=lambda p: position_key(p.name, 0))


def resume_point(directory) -> Optional[tuple]:
    """(name, end of its last whole event) of the last binlog file in `directory`, with a last
    event cut short cut off; None for a folder without one."""
    files = _binlogs(Path(directory))
    if not files:
        return None
    path = files[-1]
    with open(path, "r+b") as fh:
        size = fh.seek(0, os.SEEK_END)
        at = 4
        while at + V4_HEADER_LEN <= size:
            fh.seek(at + LENGTH_AT)
            length = int.from_bytes(fh.read(4), "little")
            if length < V4_HEADER_LEN or at + length > size:
                break
            at += length
        if at < size:
            fh.truncate(at)
    return path.name, at


class RawBackup:
    """See the module docstring. `source_options` go to ReplicationSource (host, port, user,
    password, server_id, until_now, ...); `file` is where an empty folder starts."""

    def __init__(self, directory, file: Optional[str] = None, sync_seconds: float = 1.0,
                 **source_options):
        self.directory = Path(directory)
        self.directory.mkdir(parents=True, exist_ok=True)
        resume = resume_point(self.directory)
        start_file, start_pos = resume if resume is not None else (file, 4)
        self.source = ReplicationSource(file=start_file, pos=start_pos, require_row_format=False,
                                        **source_options)
        self.sync_seconds = sync_seconds
        self.name: Optional[str] = None
        self.fh = None
        self.size = 0
        self.last_sync = time.monotonic()
        self.events = 0
        self.files = []  # the names written to, in order

    def run(self) -> "RawBackup":
        try:
            for ev in self.source:
                self._take(ev)
        finally:
            self._close_file()
        return self

    def stop(self):
        """End run() from another thread (after the event being written)."""
        self.source.stop()

    # -- one event ---------------------------------------------------------------------------
    def _take(self, ev):
        name = ev.name
        if ev.extra.get("artificial"):
            if name == "ROTATE_EVENT":
                self._open_file(str(ev.data.new_log_ident), int(ev.offset))
            return  # a FORMAT_DESCRIPTION the server repeats: the file has its own
        if self.fh is None or ev.file != self.name:
            self._open_file(ev.file, int(ev.offset))
        if ev.offset != self.size:
            if ev.offset < self.size:
                return  # already written (the source drops resent events; kept as a check)
            raise ReplicationError(f"{self.name}: the server sent an event at {ev.offset} but "
                                   f"the copy ends at {self.size}: a gap", self.source.server)
        raw = ev.raw
        if name == "FORMAT_DESCRIPTION_EVENT" and ev.offset == 4:
            raw = _in_use(raw)
        self.fh.write(raw)
        self.size += len(raw)
        self.events += 1
        if name in ("ROTATE_EVENT", "STOP_EVENT"):  # the server closed the file cleanly
            self._clear_in_use()
            if name == "ROTATE_EVENT":
                self._open_file(str(ev.data.new_log_ident),
                                int(ev.data.position) if ev.data.get("position") is not None else 4)
        elif time.monotonic() - self.last_sync >= self.sync_seconds:
            os.fsync(self.fh.fileno())
            self.last_sync = time.monotonic()

    def _open_file(self, name: str, pos: int):
        if self.name == name and self.fh is not None:
            return
        if not name or os.sep in name or name in (".", ".."):
            raise ReplicationError(f"the server names a binlog file this backup cannot write: "
                                   f"{name!r}", self.source.server)
        self._close_file()
        path = self.directory / name
        fh = open(path, "r+b" if path.exists() else "w+b", buffering=0)
        size = fh.seek(0, os.SEEK_END)
        if size == 0:
            fh.write(MAGIC)
            size = 4
        if pos > size:
            fh.close()
            raise ReplicationError(f"{name}: the server starts at {pos} but the copy ends at "
                                   f"{size}: a gap", self.source.server)
        if pos < size:  # the server starts before the copy's end: it has the same bytes
            fh.seek(pos)
            fh.truncate(pos)
            size = pos
        self.fh, self.name, self.size = fh, name, size
        self.files.append(name)

    def _clear_in_use(self):
        """Clear LOG_EVENT_BINLOG_IN_USE_F in the copy's FORMAT_DESCRIPTION_EVENT (at 4)."""
        fh = self.fh
        fh.seek(4 + FLAGS_AT)
        flags = int.from_bytes(fh.read(2), "little")
        if flags & IN_USE:
            fh.seek(4 + FLAGS_AT)
            fh.write((flags & ~IN_USE).to_bytes(2, "little"))
        fh.seek(0, os.SEEK_END)

    def _close_file(self):
        if self.fh is not None:
            try:
                os.fsync(self.fh.fileno())
            finally:
                self.fh.close()
                self.fh = None
                self.name = None
