"""Where `--start-position` and `--stop-position` point, for files, `.index` files and relay logs.

A position is written `N` or `FILE:N`:

- `N`: an offset in the first input file (start) or the last (stop), as mysqlbinlog reads it.
  With a `.index` input that lists several files this is refused: the first listed file is often
  not the one meant (a relay log index starts with relay logs already applied).
- `FILE:N`, FILE one of the input files (by name): an offset in that file; the files before it
  (start) or after it (stop) are not read.
- `FILE:N`, FILE a binlog of the primary that relay logs name (in the ROTATE events the primary
  wrote; `Relay_Master_Log_File` and the `end_log_pos` of SHOW SLAVE STATUS and of error messages
  are such coordinates): the primary's coordinates. Reading starts at the first relay log event
  that begins at or after position N of that primary binlog, and stops before the first one that
  begins at or after it.

An offset should be where an event begins in its file (or, for a stop, the end of the file): one
past the end of its file is refused with one line, one inside an event gives a one-line warning
that names the event around it and where reading starts or stops instead (the next event), as
mysqlbinlog warns. `resolve_positions` turns the options into the files to read and an offset in
the first and the last of them, which is what stream.Filters applies.
"""
from __future__ import annotations

import os
import re
from dataclasses import dataclass, field
from typing import Optional

from ..errors import BinlogError, BinlogGrammarError

# the readers are imported where they are used: the CLI parses positions (parse_position) while
# it builds its options, before any generated module may be read

MAGIC_END = 4  # offset of the first event


def file_key(name: str):
    """Binlog files in server order: by the number after the last dot."""
    stem, _, num = (name or "").rpartition(".")
    return (int(num), stem) if num.isdigit() else (-1, name or "")


def position_key(file: str, pos: int):
    """A sort key of (file, pos): positions in the order the server wrote them (a replica's
    resume point, relay logs' primary coordinates)."""
    return (file_key(file), pos)


class PositionError(BinlogGrammarError):
    """A position that does not point where an event begins (a usage error, exit 2)."""


@dataclass(frozen=True)
class Position:
    """`N` or `FILE:N` as given on the command line."""

    file: Optional[str]
    pos: int

    def __str__(self):
        return f"{self.file}:{self.pos}" if self.file else str(self.pos)


_SPEC = re.compile(r"^(?:(.+):)?(\d+)$")


def parse_position(text: str) -> Position:
    """`N` or `FILE:N`; ValueError otherwise."""
    m = _SPEC.match(text.strip())
    if not m:
        raise ValueError(f"not a position: {text!r} (write N, or FILE:N for an offset in FILE or "
                         f"a position in the primary's binlog FILE)")
    return Position(m[1], int(m[2]))


@dataclass
class Resolved:
    """The files to read, and the offset to start at in the first and to stop at in the last."""

    files: list
    start: Optional[int] = None
    stop: Optional[int] = None
    notes: list = field(default_factory=list)


def resolve_positions(inputs, start: Optional[Position], stop: Optional[Position],
                      follow_rotate: bool = False) -> Resolved:
    """The files and offsets the position options mean for these inputs; PositionError when a
    position is ambiguous or past the end of its file (a note in `notes` for one inside an
    event). With `follow_rotate` the last file is not known yet: a bare stop offset is kept as
    it is, for the file reading ends in."""
    from .stream import expand_inputs

    paths = expand_inputs(inputs)
    res = Resolved(list(paths))
    if start is None and stop is None:
        return res
    indexes = [os.fspath(i) for i in inputs if os.fspath(i).endswith(".index")]
    first, last = 0, len(paths) - 1
    if start is not None:
        first, res.start = _locate(paths, indexes, start, "--start-position", 0, res.notes)
    if stop is not None and follow_rotate and stop.file is None:
        res.stop = stop.pos
        res.files = paths[first:]
        return res
    if stop is not None:
        last, res.stop = _locate(paths, indexes, stop, "--stop-position", len(paths) - 1,
                                 res.notes)
    if (first, res.start or 0) >= (last, res.stop if res.stop is not None else float("inf")):
        raise PositionError(f"--stop-position {stop} is not after --start-position {start}")
    res.files = paths[first:last + 1]
    return res


def _locate(paths, indexes, p: Position, option, default_index, notes):
    """(index of the input file, offset in it) of one position."""
    if p.file is None:
        if indexes and len(paths) > 1:
            names = os.path.basename(paths[default_index])
            raise PositionError(
                f"{option} {p.pos} is an offset in one file, and {indexes[0]} lists {len(paths)} "
                f"files ({os.path.basename(paths[0])} first): it would apply to {names}; give "
                f"FILE:{p.pos} with the file meant (for relay logs, the primary's binlog name and "
                f"position also work)")
        i = default_index
    else:
        names = [os.path.basename(x) for x in paths]
        base = os.path.basename(p.file)
        if base in names:
            i = len(names) - 1 - names[::-1].index(base) if option == "--stop-position" else \
                names.index(base)
        else:
            return _on_primary(paths, p, option)
    note = _check_boundary(paths[i], p.pos, option)
    if note:
        notes.append(note)
    return i, p.pos


def _check_boundary(path: str, pos: int, option: str) -> Optional[str]:
    """Refuse an offset past the end of the file; a warning for one inside an event (or inside
    the magic number), None for an event boundary."""
    from .framing import scan
    from ..generated import enums
    if pos <= MAGIC_END:
        return None if pos in (0, MAGIC_END) else \
            f"{option} {pos} is inside the magic number of {path}: events begin at {MAGIC_END}"
    end = MAGIC_END
    try:
        for at, code, length in scan(path):
            if at == pos:
                return None
            if at < pos < at + length:
                name = enums.EVENT_TYPE.get(code, f"type {code}")
                then = "reading starts at the next event" if option == "--start-position" else \
                    "reading stops after this event"
                return (f"{option} {pos} is inside the {name} at {at} of {path} ({at}-"
                        f"{at + length}): {then}, at {at + length}")
            end = at + length
    except BinlogError:
        return None  # a damaged file: reading it reports the damage, with file, offset and event
    if pos > end:
        raise PositionError(f"{option} {pos} lies past the end of {path} ({end} bytes)")
    return None


def _on_primary(paths, p: Position, option):
    """(index, offset) of the first relay log event that begins at or after the primary's
    position `p`: the primary's binlog file names come from the ROTATE events the primary wrote
    (their server id is not that of the file's own FORMAT_DESCRIPTION_EVENT)."""
    from .reader import BinlogFile

    target = position_key(os.path.basename(p.file), p.pos)
    named = set()
    source = None
    for i, path in enumerate(paths):
        own = None
        try:
            for ev in BinlogFile(path):
                sid = int(ev.header.server_id)
                if own is None:
                    own = sid  # a relay log begins with the replica's own format event
                    continue
                if ev.name == "ROTATE_EVENT" and sid != own:
                    source = os.path.basename(str(ev.data.new_log_ident))
                    named.add(source)
                    continue
                log_pos = int(ev.header.log_pos)
                if source is None or sid == own or not log_pos:
                    continue
                if position_key(source, log_pos - len(ev.raw)) >= target:
                    return i, ev.offset
        except BinlogError:
            break  # the reading command reports the damage
    if os.path.basename(p.file) not in named:
        raise PositionError(f"{option} {p}: {p.file} is not one of the input files, nor a binlog of "
                            f"the primary that they name (relay logs name the primary's binlogs "
                            f"in its ROTATE events)")
    if option == "--stop-position":
        return len(paths) - 1, None
    raise PositionError(f"{option} {p} lies past the last event of the primary's {p.file} in the "
                        f"inputs")


__all__ = ["Position", "PositionError", "Resolved", "parse_position", "resolve_positions"]
