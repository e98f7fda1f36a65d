"""Reading a binlog file: bytes -> magic -> events, parsed with the generated structs.

BinlogFile walks one file: the magic number, then each event's common header, length and bytes,
parsed by parse.parse_event with what the file's FORMAT_DESCRIPTION_EVENT (or START_EVENT_V3)
says (parse.FormatState); the checks of a file's first event; and, reading with skip_damaged, the
resynchronisation after damage (resync.Resync). first_format_event gives the file's format event
to the readers that walk headers themselves (framing.scan, the Spark split planner).

The names other modules read events with are all importable from here: the event and its format
state (parse.py), the events inside a TRANSACTION_PAYLOAD_EVENT (payload.py), Damage (resync.py)
and the header offsets (header.py).
"""
from __future__ import annotations

import os
from collections import Counter
from typing import Optional

from ..errors import BinlogError, EventFormatError, TruncatedError, plain_reason
from ..generated.catalog import EVENTS
from .header import FLAGS_AT, LENGTH_AT, TYPE_AT, V1_HEADER_LEN, V4_HEADER_LEN
from .parse import (
    CHECKSUM_LEN, FDE_CODE, IN_USE, MAGIC, START_V3_CODE, STATE_CODES, Event, FormatState,
    check_format_description, crc_of, event_name, fde_checksum, parse_event, partial_header,
    rebuild_event, update_state)
from .batch import Batches
from .payload import inner_events, inner_events_or_damage
from .resync import NOT_IN_FILES, Damage, Resync

__all__ = ["BinlogFile", "first_format_event", "read_events", "CHECKSUM_LEN", "FDE_CODE", "IN_USE",
           "MAGIC", "START_V3_CODE", "STATE_CODES", "Event", "FormatState",
           "check_format_description", "crc_of", "event_name", "fde_checksum", "parse_event",
           "partial_header", "rebuild_event", "update_state", "inner_events",
           "inner_events_or_damage", "NOT_IN_FILES", "Damage", "FLAGS_AT", "LENGTH_AT", "TYPE_AT"]


class BinlogFile(Resync):
    """Iterate the events of one binlog file. Errors name the file, the offset and the event type;
    every event before the damage has been yielded when one is raised.

    With `skip_damaged=True` a damaged event (bad header, impossible length, CRC32 mismatch, bytes
    its spec refuses, truncation) raises nothing: a `Damage` is appended to `self.damage` (and
    passed to `on_damage(damage)` when given, before the next event is yielded), and reading goes
    on at the next offset where a whole event is found again (see `_resync`). Only events are
    yielded. A file that cannot be opened, does not start with the binlog magic number, or whose
    rest is encrypted still raises BinlogError.

    Events whose data bytes repeat may share one parsed `data` value (see parse_event): change
    a copy, or read with share_data=False.
    """

    def __init__(self, path, verify_checksum=True, skip_damaged=False, on_damage=None, fast=True,
                 share_data=True, start=None, format_at=None, keep_bad_crc=False, local=None):
        self.path = os.fspath(path)
        # local: where the bytes are read when `path` names them elsewhere (an object storage
        # URI whose ranges the Spark source copied; events and errors still name `path`)
        self.local = os.fspath(local) if local is not None else self.path
        # keep_bad_crc: an event whose CRC32 footer does not match is yielded with checksum_ok
        # False instead of raising (verify counts them); a damaged FDE still raises
        self.keep_bad_crc = keep_bad_crc
        # start: begin at this offset (an event boundary) after reading the format event at
        # format_at (default: the first event), which is not yielded
        self.start = start
        self.format_at = format_at
        self.verify_checksum = verify_checksum
        self.fast = fast  # False: the construct structs only (see parse_event)
        self.share_data = share_data  # False: no two events share a parsed data value
        self._size = 0
        self.skip_damaged = skip_damaged
        self.on_damage = on_damage
        self.state = FormatState()
        self.damage: list[Damage] = []
        # where to read on after the event just yielded, when its consumer has read the events
        # that follow it another way (the compiled text lane: output/text_lane.py)
        self.skip_to: Optional[int] = None
        # the offset of an event whose data the generated reader refused in a batch (batch.py,
        # which counted the fallback): its data is read by the construct structs alone
        self.refused: Optional[int] = None

    @property
    def fallbacks(self) -> Counter:
        """Events of this file the fast readers refused and construct parsed again, by reader
        (FormatState.fallbacks)."""
        return self.state.fallbacks

    def __iter__(self):
        path = self.path
        try:
            fh = open(self.local, "rb", buffering=1 << 18)
        except IsADirectoryError:
            raise BinlogError("is a directory, not a binlog file", path) from None
        except OSError as e:
            raise BinlogError(e.strerror or str(e), path) from None
        with fh:
            magic = fh.read(len(MAGIC))
            if magic != MAGIC:
                if len(magic) < len(MAGIC) and MAGIC.startswith(magic):
                    raise TruncatedError("file ends inside the magic number", path, 0)
                raise BinlogError(f"not a binlog file (magic {magic.hex()}, expected {MAGIC.hex()})",
                                  path, 0)
            self.damage = []
            self._first = True
            self._format_known = False  # an FDE (or START_EVENT_V3) has been read
            self._footers_unsure = False  # the FDE says no CRC32 footers, and nothing vouched for it
            self._crc_hint = False  # the file's FDE was damaged, but said CRC32
            self._positions_agree = True  # every event so far ended at its log_pos
            pos = len(MAGIC)
            if self.start is not None and self.start > pos:
                pos = self._skip_to_start(fh, pos)
            # the events: in batches while they are plain, else one by one
            batches = Batches.of(self, fh)  # None: event by event only (no compiled backend)
            try:
                while True:
                    if batches is not None:
                        at = pos
                        pos = yield from batches.events(pos)
                        if pos != at:
                            fh.seek(pos)
                    try:
                        ev = self._next_event(fh, pos)
                    except BinlogError as e:
                        if not self.skip_damaged or self.state.encrypted:
                            raise
                        if not self._format_known and getattr(e, "checksum_alg", None) == 1:
                            # the file's FDE fails its CRC32 but says CRC32: take its word that
                            # the events carry footers when a candidate's CRC32 matches
                            self._crc_hint = True
                        self._first = False
                        resume = self._resync(fh, pos)
                        size = os.fstat(fh.fileno()).st_size
                        damage = Damage(path, pos, e.event_type, e.message,
                                        (size if resume is None else resume) - pos, resume,
                                        e.with_traceback(None))
                        self.damage.append(damage)
                        if self.on_damage is not None:
                            self.on_damage(damage)
                        if resume is None:
                            return
                        fh.seek(resume)
                        pos = resume
                        continue
                    if ev is None:
                        return
                    yield ev
                    if self.skip_to is not None:  # the consumer read on from ev.end itself
                        pos, self.skip_to = self.skip_to, None
                        fh.seek(pos)
                    else:
                        pos = ev.end
            finally:
                if batches is not None:
                    batches.close()

    def _skip_to_start(self, fh, first) -> int:
        """Read the format event (at format_at, else the first event), then stand at start."""
        at = self.format_at if self.format_at is not None else first
        self._first = at == first  # the checks of a file's first event apply to it alone
        fh.seek(at)
        ev = self._next_event(fh, at)
        if ev is None or ev.type is None or ev.type.code not in (FDE_CODE, START_V3_CODE):
            raise BinlogError(f"no FORMAT_DESCRIPTION_EVENT at offset {at} to read the events "
                              f"from offset {self.start} with", self.path, at)
        fh.seek(self.start)
        return self.start

    def _next_event(self, fh, pos):
        """Read and parse the event at `pos` (where `fh` stands); None at the end of the file."""
        path = self.path
        state = self.state
        hl = state.header_len
        head = fh.read(hl)
        if not head:
            return None
        if len(head) < hl:
            part = partial_header(head, state)
            name = event_name(part.type_code, state) if "type_code" in part else None
            raise TruncatedError(f"file ends inside an event header ({len(head)} of {hl} bytes)",
                                 path, pos, name)
        if state.encrypted:
            raise BinlogError("the rest of the file is encrypted (it follows a "
                              "START_ENCRYPTION_EVENT); reading it needs the server's "
                              "encryption key", path, pos)
        header = state.header(head, path, pos, self.fast)
        if self._first:
            self._first = False
            if self._first_event(header, pos):
                fh.seek(pos)  # binlog v1: read again with 13-byte headers
                return self._next_event(fh, pos)
        length = header["event_length"]
        if length < hl:
            raise EventFormatError(f"event_length {length} is shorter than the {hl}-byte header",
                                   path, pos, event_name(header.type_code, state))
        # never let a bogus length allocate: compare with the bytes the file has (its size is
        # looked up again only when an event seems to go past it: the file may have grown)
        if pos + length > self._size:
            self._size = os.fstat(fh.fileno()).st_size
        available = self._size - pos - hl
        rest = fh.read(length - hl) if length - hl <= available else fh.read(max(available, 0))
        if len(rest) < length - hl:
            raise TruncatedError(f"file ends inside the event: event_length {length}, "
                                 f"{hl + len(rest)} bytes present", path, pos,
                                 event_name(header.type_code, state))
        refused, self.refused = self.refused == pos, None
        ev = parse_event(head + rest, state, file=path, offset=pos,
                         verify_checksum=self.verify_checksum, fast=self.fast and not refused,
                         header=header, share=self.share_data, keep_bad_crc=self.keep_bad_crc)
        if self._positions_agree and header.get("log_pos") != pos + length:
            self._check_log_pos(fh, ev)
        if ev.type is not None and ev.type.code in STATE_CODES:
            self._state_event(fh, ev)
        return ev


    def _first_event(self, header, pos) -> bool:
        """Checks of the file's first event; True when it shows a binlog v1 file (13-byte
        headers), which must be read again."""
        state = self.state
        if header.type_code == START_V3_CODE:
            # binlog v1 (MySQL 3.23) has 13-byte headers; its START event is shorter than a
            # v3 one, which is how the server itself tells them apart.
            if header.event_length < V4_HEADER_LEN + EVENTS[START_V3_CODE].post_header_len[0]:
                state.header_len = V1_HEADER_LEN
                state.binlog_version = 1
                return True
            state.binlog_version = 3
            return False
        name = event_name(header.type_code, state)
        if state.event_code(header.type_code) != FDE_CODE:
            raise EventFormatError("a binlog file begins with a FORMAT_DESCRIPTION_EVENT (or "
                                   "a START_EVENT_V3 before MySQL 5.0); this one does not",
                                   self.path, pos, name)
        # the server writing the file puts the FDE's own end in log_pos; a dump thread that
        # sends it puts 0 (the length field is the one thing the CRC32 cannot vouch for
        # when the FDE says checksums are off or the damage moved its checksum)
        if header.log_pos not in (0, pos + header.event_length):
            raise EventFormatError(f"event_length {header.event_length} does not agree with "
                                   f"log_pos {header.log_pos} of the file's first event",
                                   self.path, pos, name)
        return False

    def _state_event(self, fh, ev):
        """An event that changes how the rest of the file is read (FDE, START_EVENT_V3,
        START_ENCRYPTION_EVENT)."""
        state = self.state
        if ev.type.code == FDE_CODE and self.verify_checksum and ev.checksum_ok is None and \
                (ev.data.get("checksum_alg") is None or int(ev.data.checksum_alg) != 1):
            self._check_no_footer(fh, ev)  # it says no footers, and nothing vouches for it
        try:
            update_state(state, ev)
        except Exception as e:  # noqa: BLE001 - a format event whose values make no sense
            raise EventFormatError(f"unusable format description: {plain_reason(e)}",
                                   self.path, ev.offset, ev.name) from None
        if ev.type.code in (FDE_CODE, START_V3_CODE):
            self._format_known = True
            # an FDE that says "no footers" without a CRC32 of its own may be a damaged one: after
            # damage, _resync may still find that the events carry CRC32s
            self._footers_unsure = state.checksum_alg != 1 and ev.checksum_ok is None
        if ev.type.name == "START_ENCRYPTION_EVENT":
            state.encrypted = True


def first_format_event(path, verify_checksum=True):
    """(the file's first event, the FormatState it gives) with every check BinlogFile makes of a
    file's FORMAT_DESCRIPTION_EVENT (its fields, its own CRC32, a version string that predates
    the checksums the next event carries); BinlogError when it is damaged. The first event is a
    START_EVENT_V3 in binlog v1 and v3 files. For the readers that walk headers themselves
    (framing.scan, the Spark split planner): whether a file carries checksums, and what a damaged
    FDE means, is decided here for every command."""
    bf = BinlogFile(path, verify_checksum)
    events = iter(bf)
    try:
        ev = next(events, None)
    finally:
        events.close()
    if ev is None:
        raise TruncatedError("the file holds no event", bf.path, len(MAGIC))
    return ev, bf.state


def read_events(path, verify_checksum=True, skip_damaged=False):
    return iter(BinlogFile(path, verify_checksum, skip_damaged))

