"""Framing: a binlog file -> events, parsed with the generated structs.

bytes -> magic -> (common header, event data, checksum footer)* ; the FORMAT_DESCRIPTION_EVENT of
the file sets the header length, the post-header lengths, the server version and the checksum
algorithm used for the events after it.
"""
from __future__ import annotations

import io
import os
import re
import zlib
from collections import Counter
from dataclasses import dataclass, field
from typing import Any, Optional

from construct import ConstructError, Container

from ..runtime import construct as rt
from ..errors import BinlogError, ChecksumError, EventFormatError, TruncatedError, plain_reason
from .events import EventType, decompress, parse_error
from ..runtime.fast import FAST_ERRORS
from ..generated import fast as F
from ..generated import types as T
from ..generated.catalog import EVENTS

FDE_CODE = next(c for c, e in EVENTS.items() if e.name == "FORMAT_DESCRIPTION_EVENT")
START_V3_CODE = next((c for c, e in EVENTS.items() if e.name == "START_EVENT_V3"), None)
# events after which the rest of the file is read differently
_STATE_CODES = {c for c, e in EVENTS.items()
                if e.name in ("FORMAT_DESCRIPTION_EVENT", "START_EVENT_V3", "START_ENCRYPTION_EVENT")}
CHECKSUM_LEN = T.event_checksum.sizeof()
MAGIC = T.binlog_magic.build(None)
IN_USE = 0x1  # event_flags.LOG_EVENT_BINLOG_IN_USE_F
# parsed event data kept for reuse (see parse_event): data of at most MEMO_BYTES, MEMO_ENTRIES
# of them, for the event types whose data has repeated at least once in four after MEMO_TRIAL
MEMO_BYTES, MEMO_ENTRIES, MEMO_TRIAL = 1024, 512, 64
_UP = {"_index": None}  # the (empty) enclosing context of a top-level generated reader


@dataclass
class FormatState:
    """What the reader knows from the file's FORMAT_DESCRIPTION_EVENT (or START_EVENT_V3).
    The parse contexts it gives are cached until one of its fields changes."""

    binlog_version: int = 4
    header_len: int = 19
    checksum_alg: int = 0
    server: Any = None
    server_version: str = ""
    post_header_lengths: tuple = ()
    type_map: dict = field(default_factory=dict)  # code in the file -> event type (FDE remaps)
    encrypted: bool = False  # a START_ENCRYPTION_EVENT was read: the rest is ciphertext
    # events (by reader: the event type, or common_header) whose bytes the generated fast readers
    # refused (FastPathError), so the construct structs parsed them again: bad bytes, or a fast
    # reader stricter than its spec (stats shows them per file)
    fallbacks: Counter = field(default_factory=Counter, compare=False, repr=False)

    def event_code(self, file_code: int) -> int:
        return self.type_map.get(file_code, file_code)

    def post_header_len(self, file_code: int) -> int:
        if 0 < file_code <= len(self.post_header_lengths):
            return self.post_header_lengths[file_code - 1]
        et = EVENTS.get(self.event_code(file_code))
        if et is None:
            return 0
        if self.binlog_version in (1, 3):  # no FDE: the lengths the server fixes for v1/v3
            return et.legacy_post_header_len.get(self.binlog_version, 0)
        return et.post_header_len[0]

    def __setattr__(self, name, value):
        object.__setattr__(self, name, value)
        object.__setattr__(self, "_contexts", {})
        object.__setattr__(self, "memo", {})  # (type code, data bytes) -> parsed data
        object.__setattr__(self, "_kinds", {})  # type code in the file -> see kind()

    def kind(self, file_code: int) -> tuple:
        """(event type code, EventType or None, name, generated reader or None, checksum length,
        parse context, [memo lookups, memo hits]) of events with this type code in the file."""
        code = self.event_code(file_code)
        et = EVENTS.get(code)
        self.context(file_code)
        return (code, et, et.name if et is not None and code == file_code else
                event_name(file_code, self), F.EVENT_READERS.get(code), self.checksum_len(code),
                self._contexts[file_code], [0, 0])

    def context(self, file_code: int) -> dict:
        """The parse context of an event with this type code (a fresh dict: callers may add to it)."""
        ctx = self._contexts.get(file_code)
        if ctx is None:
            ctx = self._contexts[file_code] = {
                "binlog_version": self.binlog_version, "header_len": self.header_len,
                "type_code": self.event_code(file_code),
                "post_header_len": self.post_header_len(file_code),
                "checksum_alg": self.checksum_alg, "server": self.server}
        return dict(ctx)

    def header(self, raw, file="<bytes>", offset=0, fast=True):
        """The common header at the start of `raw` (at least header_len bytes)."""
        hl = self.header_len
        if fast:
            ctx = self._contexts.get(0) or self.context(0)
            try:
                return F.t_common_header(raw, 0, hl, _UP, ctx, None)[0]
            except FAST_ERRORS:
                self.fallbacks["common_header"] += 1
        try:
            return T.common_header.parse(raw[:hl], **self.context(0))
        except ConstructError as e:
            raise parse_error(file, offset, None, e) from None

    def checksum_len(self, code: int) -> int:
        return CHECKSUM_LEN if self.checksum_alg == 1 and code != FDE_CODE else 0


@dataclass(slots=True)
class Event:
    """One event: where it is, its header, its parsed data, its checksum, its bytes."""

    file: str
    offset: int
    header: Container
    data: Any  # Container, or the raw bytes of an event type no spec describes
    raw: bytes
    type: Optional[EventType]
    context: dict
    checksum: Optional[int] = None
    checksum_ok: Optional[bool] = None
    inner: bool = False  # an event from inside a TRANSACTION_PAYLOAD_EVENT
    footer: bool = False  # a checksum footer follows the data
    extra: dict = field(default_factory=dict)

    @property
    def name(self) -> str:
        return self.type.name if self.type else f"UNKNOWN_TYPE_{self.header.type_code}"

    @property
    def end(self) -> int:
        return self.offset + len(self.raw)


def event_name(code, state=None) -> str:
    code = int(code)
    et = EVENTS.get(state.event_code(code) if state else code)
    return et.name if et else f"type {code}"


def partial_header(data: bytes, state) -> Container:
    """The common-header fields that fit in a truncated header (to name the event in an error)."""
    out = Container()
    stream = io.BytesIO(data)
    ctx = Container(_params=state.context(0), _io=stream, _parsing=True, _building=False,
                    _sizing=False)
    for sc in T.common_header.subcons:
        try:
            out[sc.name] = sc._parsereport(stream, ctx, "(header)")
        except ConstructError:
            break
        ctx[sc.name] = out[sc.name]
    return out


def crc_of(header: Container, raw: bytes, ctx: dict) -> int:
    """CRC32 the server computed: over header and data; for the FDE with the IN_USE flag cleared."""
    hl = ctx["header_len"]
    if header.type_code == FDE_CODE and header.get("flags") is not None and header.flags & IN_USE:
        h = Container(header)
        h.flags = int(header.flags) & ~IN_USE
        head = T.common_header.build(h, **ctx)
        return zlib.crc32(head + raw[hl:-CHECKSUM_LEN])
    return zlib.crc32(raw[:-CHECKSUM_LEN])


def parse_event(raw: bytes, state: FormatState, *, file="<bytes>", offset=0, inner=False,
                verify_checksum=True, fast=True, header=None, share=True,
                keep_bad_crc=False) -> Event:
    """Parse one whole event (header, data, checksum) with what `state` knows.

    verify_checksum: check the CRC32 (the footer, or the FDE's own): a mismatch is a
    ChecksumError, unless keep_bad_crc, where the event comes back with checksum_ok False (not
    for a FORMAT_DESCRIPTION_EVENT or another event that says how to read the rest of the file:
    a damaged one is always an error, see fde_checksum).

    fast: read with the plain-Python readers generated from the specs (generated/fast.py); bytes
    they refuse are parsed again by the construct structs, which give the precise error.
    fast=False: the construct structs only (the reference). `header`: the common header, when
    the caller has already read it. share: events whose data bytes repeat (a server writes the
    same TABLE_MAP before every statement) may share one parsed `data` value, so treat it as
    read-only; share=False gives every event its own."""
    hl = state.header_len
    if header is None:
        header = state.header(raw, file, offset, fast)
    file_code = header["type_code"]
    kind = state._kinds.get(file_code)
    if kind is None:
        kind = state._kinds[file_code] = state.kind(file_code)
    code, et, name, reader, crc_len, ctx, seen = kind
    if inner:
        crc_len = 0
    n = len(raw)
    if header["event_length"] != n:
        raise EventFormatError(f"event_length {header['event_length']} does not match the "
                               f"{n} bytes given", file, offset, name)
    if n < hl + crc_len:
        raise EventFormatError(f"event_length {n} is shorter than its header and checksum",
                               file, offset, name)
    data_bytes = raw[hl:n - crc_len]
    data = key = None
    if et is None:
        data = data_bytes
    elif fast:
        # Servers write the same small event data again and again (the TABLE_MAP before every
        # statement, BEGIN): while that pays for a type (a hit in four lookups after the first
        # MEMO_TRIAL), its data is read once per format state and the events share the value.
        if share and n - hl <= MEMO_BYTES and (seen[0] < MEMO_TRIAL or seen[1] * 4 >= seen[0]):
            key = (file_code, data_bytes)
            data = state.memo.get(key)
            seen[0] += 1
            if data is not None:
                seen[1] += 1
                key = None
        if data is None and reader is not None:
            try:
                data = reader(data_bytes, 0, len(data_bytes), ctx)
            except FAST_ERRORS:  # bad bytes only: a bug in a generated reader surfaces
                data = None  # the construct struct says precisely what is wrong
                state.fallbacks[name] += 1
    if data is None:
        try:
            data = et.parse(data_bytes, ctx)
        except ConstructError as e:
            raise parse_error(file, offset, name, e) from None
        except Exception as e:  # noqa: BLE001 - whatever bad bytes make a struct raise is bad input
            raise EventFormatError(plain_reason(e), file, offset, name) from None
    if key is not None:
        memo = state.memo
        if len(memo) >= MEMO_ENTRIES:
            memo.clear()
        memo[key] = data
    if code == FDE_CODE:
        return _finish_format_event(raw, state, file, offset, inner, verify_checksum, header,
                                    data, et, ctx, crc_len, name)
    ev = Event(file, offset, header, data, raw, et, ctx, None, None, inner, crc_len != 0)
    if crc_len:
        stored = ev.checksum = F.t_event_checksum(raw, n - crc_len, n, _UP, ctx, None)[0]
        if verify_checksum:
            ok = ev.checksum_ok = zlib.crc32(memoryview(raw)[:n - crc_len]) == stored
            if not ok and not (keep_bad_crc and file_code not in _STATE_CODES):
                raise ChecksumError(f"CRC32 mismatch: stored 0x{stored:08x}, computed "
                                    f"0x{crc_of(header, raw, ctx):08x}", file, offset, name)
    return ev


def fde_checksum(header, data) -> tuple:
    """(CRC32 to check, shown) of a FORMAT_DESCRIPTION_EVENT read without a footer: the one
    decision, for every command, of whether the FDE vouches for its own bytes.

    With checksum_alg CRC32 the FDE ends with its CRC32 (shown, like every event's). A
    checksum-aware server fills in the FDE's own CRC32 whatever the algorithm ("FD of
    checksum-aware server is always checksum-equipped"; 0: it did not), and it is checked, but not
    shown (the events that follow carry no CRC32 footer, and mysqlbinlog prints none). A dump
    thread that zeroes log_pos or create_timestamp of the FDE it sends fixes the CRC32 only when
    checksums are on, so such an FDE (in a relay log) is not checked. (None, False): nothing to
    check, as for a server that predates checksums (see BinlogFile._check_no_footer for an FDE
    whose version string was what the damage changed)."""
    stored = data.get("checksum")
    if stored is None:
        return None, False
    if int(data.checksum_alg) == 1:
        return stored, True
    if stored and header.get("log_pos") and data.get("create_timestamp"):
        return stored, False
    return None, False


def _finish_format_event(raw, state, file, offset, inner, verify_checksum, header, data, et, ctx,
                         crc_len, name) -> Event:
    """The rest of parse_event for a FORMAT_DESCRIPTION_EVENT: its checks and its checksum. A
    damaged FDE is always an error: everything after it is read with what it says."""
    if et is not None:
        check_format_description(data, file, offset, name, ctx["header_len"])
    ev = Event(file, offset, header, data, raw, et, ctx, inner=inner, footer=bool(crc_len))
    stored, shown = None, False
    if crc_len:
        stored = F.t_event_checksum(raw, len(raw) - crc_len, len(raw), _UP, ctx, None)[0]
        shown = True
    elif et is not None:
        stored, shown = fde_checksum(header, data)
    if stored is not None:
        if shown:
            ev.checksum = stored
        if verify_checksum:
            ev.checksum_ok = crc_of(header, raw, ctx) == stored
            if not ev.checksum_ok:
                err = ChecksumError(f"CRC32 mismatch: stored 0x{stored:08x}, computed "
                                    f"0x{crc_of(header, raw, ctx):08x}", file, offset, name)
                # what the damaged FDE says of the events' footers (BinlogFile._resync)
                err.checksum_alg = int(data.checksum_alg) if et is not None else None
                raise err
    return ev


def check_format_description(data, file, offset, name, header_len=None) -> None:
    """Refuse a FORMAT_DESCRIPTION_EVENT the server would refuse (Format_description_event::
    is_valid: a header of at least 19 bytes, a server version that is a version) or could not
    use (binlog version other than 4, unknown checksum algorithm, a header length other than
    that of its own header, `header_len`, which every reader reads it with). Everything after
    the FDE is read with what it says, so a damaged one must not pass."""
    problem = None
    alg = data.get("checksum_alg")
    if data.binlog_version != 4:
        problem = f"binlog_version {data.binlog_version} (a FORMAT_DESCRIPTION_EVENT is binlog v4)"
    elif data.common_header_len < 19:
        problem = f"common_header_len {data.common_header_len} is shorter than 19 bytes"
    elif header_len is not None and data.common_header_len != header_len:
        problem = (f"common_header_len {data.common_header_len}, but this event's own header is "
                   f"{header_len} bytes")
    elif not any(rt.version(data.server_version).number[:3]):
        problem = f"server_version {data.server_version!r} is not a server version"
    elif alg is not None and int(alg) not in (0, 1, 255):
        problem = f"unknown checksum_alg {int(alg)}"
    if problem:
        raise EventFormatError(problem, file, offset, name)


def update_state(state: FormatState, ev: Event) -> None:
    """Take header length, post-header lengths, version and checksum from a format event."""
    if ev.type is None:
        return
    if ev.type.code == FDE_CODE:
        d = ev.data
        state.binlog_version = d.binlog_version
        state.header_len = d.common_header_len
        state.server_version = d.server_version
        state.server = rt.version(d.server_version)
        state.post_header_lengths = tuple(d.post_header_lengths)
        alg = d.get("checksum_alg")
        state.checksum_alg = int(alg) if alg is not None else 0
        state.type_map = {}
        for cond, mapping in ev.type.remaps:
            if cond(d):
                state.type_map = dict(mapping)
    elif ev.type.code == START_V3_CODE:
        d = ev.data
        state.binlog_version = d.binlog_version
        state.server_version = d.server_version
        state.server = rt.version(d.server_version)


def inner_events(ev: Event, state: FormatState, verify_checksum=True):
    """The events held compressed inside an event (TRANSACTION_PAYLOAD_EVENT)."""
    if ev.type is None:
        return
    for dec in ev.type.decode:
        if dec.target != "events" or not dec.applies(ev.data):
            continue
        try:
            payload = decompress(dec.codec, ev.data[dec.field])
        except Exception as e:  # noqa: BLE001 - any codec failure is bad input
            raise EventFormatError(f"cannot decompress {dec.field}: {e}", ev.file, ev.offset,
                                   ev.name) from None
        pos = 0
        hl = state.header_len
        while pos < len(payload):
            if len(payload) - pos < hl:
                raise TruncatedError(f"payload ends inside an event header at payload offset {pos}",
                                     ev.file, ev.offset, ev.name)
            head = state.header(payload[pos:pos + hl], ev.file, ev.offset)
            length = head.event_length
            if length < hl or pos + length > len(payload):
                raise TruncatedError(f"inner {event_name(head.type_code)} at payload offset {pos} "
                                     f"says {length} bytes; {len(payload) - pos} remain",
                                     ev.file, ev.offset, ev.name)
            inner = parse_event(payload[pos:pos + length], state, file=ev.file, offset=ev.offset,
                                inner=True, verify_checksum=verify_checksum)
            inner.extra["payload_offset"] = pos
            yield inner
            pos += length


def inner_events_or_damage(ev: Event, state: FormatState, verify_checksum=True, damage=None):
    """The event, then the events inside it (inner_events). With `damage` (a list: reading with
    skip_damaged), a payload that cannot be read (it does not decompress, an inner event is cut
    short) becomes a Damage appended to it, after the inner events before the bad one, instead
    of an error: the reader goes on after the event."""
    yield ev
    events = inner_events(ev, state, verify_checksum)
    while True:
        try:
            e = next(events)
        except StopIteration:
            return
        except BinlogError as err:
            if damage is None:
                raise
            damage.append(Damage(ev.file, ev.offset, ev.name, err.message, len(ev.raw), ev.end,
                                 err.with_traceback(None)))
            return
        yield e


@dataclass
class Damage:
    """Bytes a `BinlogFile(..., skip_damaged=True)` stepped over: where the damaged event began,
    the type its header named (None when not even that was readable), what was wrong, how many
    bytes were skipped, and where reading went on (None: nothing readable followed; the file's
    last `skipped_bytes` bytes were dropped and iteration ended)."""

    file: str
    offset: int
    event_type: Optional[str]
    message: str
    skipped_bytes: int
    resumed_at: Optional[int]
    error: Optional[BinlogError] = field(default=None, repr=False, compare=False)


def _header_field_offsets() -> tuple:
    """Where type_code and event_length sit in the common header (the same in v1, v3 and v4)."""
    probe = T.common_header.build(dict(timestamp=0, type_code=165, server_id=0,
                                       event_length=0x5A5A5A5A, log_pos=0, flags=0),
                                  **FormatState().context(0))
    flags = T.common_header.build(dict(timestamp=0, type_code=165, server_id=0, event_length=0,
                                       log_pos=0, flags=0xA55A), **FormatState().context(0))
    return probe.index(bytes([165])), probe.index(b"\x5a" * 4), flags.index(b"\x5a\xa5")


TYPE_AT, LENGTH_AT, FLAGS_AT = _header_field_offsets()  # FLAGS_AT: the byte holding IN_USE
# type codes no server writes to a file: never a place to resynchronise at
NOT_IN_FILES = {"UNKNOWN_EVENT", "HEARTBEAT_LOG_EVENT", "HEARTBEAT_LOG_EVENT_V2"}
SCAN_WINDOW = 1 << 16  # bytes searched per read while resynchronising
CRC_CHUNK = 1 << 18  # bytes read at a time to check the CRC32 of a candidate event


class BinlogFile:
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
                 share_data=True, start=None, format_at=None, keep_bad_crc=False):
        self.path = os.fspath(path)
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

    @property
    def fallbacks(self) -> Counter:
        """Events of this file the fast readers refused and construct parsed again, by reader
        (FormatState.fallbacks)."""
        return self.state.fallbacks

    def __iter__(self):
        path = self.path
        try:
            fh = open(path, "rb", buffering=1 << 18)
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
            while True:
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
                pos = ev.end

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
        ev = parse_event(head + rest, state, file=path, offset=pos,
                         verify_checksum=self.verify_checksum, fast=self.fast, header=header,
                         share=self.share_data, keep_bad_crc=self.keep_bad_crc)
        if self._positions_agree and header.get("log_pos") != pos + length:
            self._check_log_pos(fh, ev)
        if ev.type is not None and ev.type.code in _STATE_CODES:
            self._state_event(fh, ev)
        return ev

    def _check_log_pos(self, fh, ev):
        """In a file without CRC32s whose events so far all ended where their log_pos says (a
        server's own binlog, not a relay log), an event whose event_length takes it past its
        log_pos, where a plausible event begins, while none begins where its length ends it,
        is damaged: a changed length made it swallow the next event, and nothing else tells."""
        self._positions_agree = False  # a file whose positions disagree is checked no further
        state = self.state
        lp, end = ev.header.get("log_pos"), ev.end
        if state.binlog_version != 4 or (self.verify_checksum and state.checksum_alg == 1) \
                or not lp or not ev.offset < lp < end:
            return
        size = os.fstat(fh.fileno()).st_size
        if self._plausible_header(fh, lp, size) and not (
                end == size or self._plausible_header(fh, end, size)):
            raise EventFormatError(f"event_length {len(ev.raw)} ends it at {end}, past its log_pos "
                                   f"{lp}, where an event begins", self.path, ev.offset, ev.name)
        fh.seek(end)

    def _plausible_header(self, fh, at, size) -> bool:
        """A common header at `at` with a type code servers write to files and a length that
        covers its header and post-header and fits in the file."""
        state = self.state
        hl = state.header_len
        if at + hl > size:
            return False
        fh.seek(at)
        head = fh.read(hl)
        code = head[TYPE_AT]
        et = EVENTS.get(state.event_code(code))
        length = int.from_bytes(head[LENGTH_AT:LENGTH_AT + 4], "little")
        return et is not None and et.name not in NOT_IN_FILES and \
            hl + state.post_header_len(code) <= length <= size - at

    def _first_event(self, header, pos) -> bool:
        """Checks of the file's first event; True when it shows a binlog v1 file (13-byte
        headers), which must be read again."""
        state = self.state
        if header.type_code == START_V3_CODE:
            # binlog v1 (MySQL 3.23) has 13-byte headers; its START event is shorter than a
            # v3 one, which is how the server itself tells them apart.
            if header.event_length < 19 + EVENTS[START_V3_CODE].post_header_len[0]:
                state.header_len = 13
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

    def _check_no_footer(self, fh, fde, look=3):
        """An FDE that says the events carry no CRC32 footer, and whose own CRC32 was not checked
        (its server version predates checksums, MySQL 5.6.1 and MariaDB 5.3; or checksum_alg OFF
        with no CRC32 of its own), is what was damaged (its version string, or its checksum_alg
        and CRC32) when, of the next `look` events (walked by their lengths, which count a footer
        when there is one), two end with the CRC32 of their bytes, or the only one does. One event
        spliced in from a file with footers is not enough; one damaged event among events with
        footers does not hide them."""
        hl = fde.data.common_header_len
        size = os.fstat(fh.fileno()).st_size
        at, walked, matched = fde.end, 0, 0
        try:
            for _ in range(look):
                fh.seek(at)
                head = fh.read(hl)
                if len(head) < hl:
                    break
                length = int.from_bytes(head[LENGTH_AT:LENGTH_AT + 4], "little")
                if not hl <= length <= size - at:
                    break
                walked += 1
                matched += self._event_with_crc(fh, at, hl, size) is not None
                at += length
            if not (matched >= 2 or matched == walked == 1 and at == size):
                return
            if fde.data.get("checksum_alg") is None:
                what = (f"server_version {fde.data.server_version!r} predates checksums, but the "
                        "next events end with their CRC32: the version string is damaged")
            else:
                what = ("checksum_alg says the events carry no CRC32, but the next events end "
                        "with theirs: the FORMAT_DESCRIPTION_EVENT is damaged")
            raise EventFormatError(what, self.path, fde.offset, fde.name)
        finally:
            fh.seek(fde.end)

    @staticmethod
    def _event_with_crc(fh, at, hl, size) -> Optional[int]:
        """The length of the event at `at` when its bytes end with their CRC32, else None."""
        fh.seek(at)
        head = fh.read(hl)
        if len(head) < hl:
            return None
        length = int.from_bytes(head[LENGTH_AT:LENGTH_AT + 4], "little")
        if not hl + CHECKSUM_LEN <= length <= size - at:
            return None
        raw = head + fh.read(length - hl)
        ok = zlib.crc32(raw[:-CHECKSUM_LEN]) == int.from_bytes(raw[-CHECKSUM_LEN:], "little")
        return length if ok else None

    # -- resynchronisation after damage ------------------------------------------------------
    def _resync(self, fh, start) -> Optional[int]:
        """The first offset after `start` where a whole event is found again, or None.

        A candidate offset needs a common header with a type code some server writes to files
        and an event_length that fits in the file and covers header and post-header (and the
        checksum footer). Then, in a file whose FDE announced CRC32 (and when checksums are
        verified), the CRC32 over the candidate's bytes must match its footer; otherwise the
        header at offset + event_length must be plausible the same way (or be the end of the
        file): a chain of two. Finally the candidate must parse. When the file's format event
        itself was lost, or said "no footers" with nothing to vouch for it (no CRC32 of its own),
        a matching CRC32 also tells that the file has checksum footers.

        The file is searched a window at a time (a regular expression finds candidate headers), so
        no byte is read twice except to check a candidate, and nothing is allocated from a
        length field that does not fit in the file.
        """
        state = self.state
        hl = state.header_len
        size = os.fstat(fh.fileno()).st_size
        crc_mode = self.verify_checksum and state.checksum_alg == 1
        guess = (not self._format_known or self._footers_unsure) and state.checksum_alg != 1
        minimum = {}
        for code in range(256):
            et = EVENTS.get(state.event_code(code))
            if et is not None and et.name not in NOT_IN_FILES:
                minimum[code] = hl + state.post_header_len(code)
        # a regular expression finds, at C speed, the offsets whose type code byte is one of those
        # and whose event_length's top byte is small enough for the rest of the file
        codes = b"".join(b"\\x%02x" % c for c in sorted(minimum))
        top = min((size - start) >> 24, 255)
        candidates = re.compile(b"(?s)(?=.{%d}[%s].{%d}[\\x00-\\x%02x])"
                                % (TYPE_AT, codes, LENGTH_AT + 3 - TYPE_AT - 1, top))
        p = start + 1
        while p + hl <= size:
            fh.seek(p)
            buf = fh.read(min(SCAN_WINDOW + hl - 1, size - p))
            last = len(buf) - hl  # the last index in buf where a whole header starts
            for m in candidates.finditer(buf):
                j = m.start()
                if j > last:
                    break
                code = buf[j + TYPE_AT]
                length = int.from_bytes(buf[j + LENGTH_AT:j + LENGTH_AT + 4], "little")
                if not minimum[code] <= length <= size - (p + j):
                    continue
                if self._candidate_ok(fh, p + j, length, code, size, minimum, crc_mode, guess,
                                      buf, p):
                    return p + j
            p += last + 1
        return None

    def _candidate_ok(self, fh, at, length, code, size, minimum, crc_mode, guess, buf, buf_at):
        state = self.state
        is_fde = state.event_code(code) == FDE_CODE
        crc_ok = (crc_mode or guess) and length >= minimum[code] + CHECKSUM_LEN and \
            self._crc_matches(fh, at, length, buf, buf_at, is_fde)
        if crc_ok and guess and not crc_mode and not is_fde and not self._crc_hint:
            # before the file is taken to carry CRC32s, what follows must not be an event
            # without a footer: one event spliced in from another file is not enough
            crc_ok = self._successor_crc_ok(fh, at + length, size, minimum, buf, buf_at)
        if crc_mode and not is_fde and not crc_ok:
            return False
        if not crc_ok and not self._successor_ok(fh, at + length, size, minimum, buf, buf_at):
            return False
        if not crc_ok and not self._format_known and at + length < size and \
                self._event_with_crc(fh, at + length, self.state.header_len, size) is not None:
            # the file's FDE is lost, what follows ends with its CRC32 and this does not: this
            # is the damage (with an intact FDE that said "no footers", it is the other way)
            return False
        # only now, with a matching CRC32 or a plausible next header, read and parse it all
        fh.seek(at)
        raw = fh.read(length)
        inferred = guess and crc_ok and not is_fde
        if inferred:
            state.checksum_alg = 1
        try:
            parse_event(raw, state, file=self.path, offset=at, verify_checksum=self.verify_checksum)
        except BinlogError:
            if inferred:
                state.checksum_alg = 0
            return False
        return True

    def _successor_crc_ok(self, fh, at, size, minimum, buf, buf_at) -> bool:
        """Does what follows a candidate that ends with its CRC32 agree that the file carries
        CRC32s? Yes at the end of the file, or when the event there ends with its CRC32 too, or
        when no event without a footer is there either (damage); no when an event there reads
        whole without a footer (the candidate came from another file)."""
        if at == size:
            return True
        if not self._successor_ok(fh, at, size, minimum, buf, buf_at):
            return True
        state = self.state
        fh.seek(at)
        head = fh.read(state.header_len)
        code = head[TYPE_AT]
        length = int.from_bytes(head[LENGTH_AT:LENGTH_AT + 4], "little")
        is_fde = state.event_code(code) == FDE_CODE
        if length >= minimum[code] + CHECKSUM_LEN and \
                self._crc_matches(fh, at, length, buf, buf_at, is_fde):
            return True
        fh.seek(at)
        try:
            parse_event(fh.read(length), state, file=self.path, offset=at, verify_checksum=False)
        except BinlogError:
            return True
        return False

    def _successor_ok(self, fh, at, size, minimum, buf, buf_at) -> bool:
        """The end of the file, or a plausible common header (known type, length that fits)."""
        hl = self.state.header_len
        if at == size:
            return True
        if at + hl > size:
            return False
        if buf_at <= at and at + hl <= buf_at + len(buf):
            head = buf[at - buf_at:at - buf_at + hl]
        else:
            fh.seek(at)
            head = fh.read(hl)
        code = head[TYPE_AT]
        length = int.from_bytes(head[LENGTH_AT:LENGTH_AT + 4], "little")
        return code in minimum and minimum[code] <= length <= size - at

    def _crc_matches(self, fh, at, length, buf, buf_at, is_fde) -> bool:
        """CRC32 of the event's bytes before its 4-byte footer equals the footer (for an FDE,
        computed with LOG_EVENT_BINLOG_IN_USE_F cleared, as the server does). Read in chunks."""
        hl = self.state.header_len
        if buf_at <= at and at + length <= buf_at + len(buf):
            view = memoryview(buf)[at - buf_at:at - buf_at + length]
            chunks = iter((view[:-CHECKSUM_LEN],))
            stored = bytes(view[-CHECKSUM_LEN:])
        else:
            def read_chunks(left=length - CHECKSUM_LEN):
                fh.seek(at)
                while left:
                    chunk = fh.read(min(CRC_CHUNK, left))
                    if not chunk:
                        return
                    left -= len(chunk)
                    yield chunk
            chunks = read_chunks()
            stored = None
        crc = 0
        first = True
        for chunk in chunks:
            if first and is_fde and hl > FLAGS_AT:
                head = bytearray(chunk[:hl])
                head[FLAGS_AT] &= ~IN_USE & 0xFF
                crc = zlib.crc32(chunk[hl:], zlib.crc32(head))
            else:
                crc = zlib.crc32(chunk, crc)
            first = False
        if stored is None:
            fh.seek(at + length - CHECKSUM_LEN)
            stored = fh.read(CHECKSUM_LEN)
        return len(stored) == CHECKSUM_LEN and crc == int.from_bytes(stored, "little")


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


def rebuild_event(ev: Event) -> bytes:
    """Build the event's bytes back from its parsed header, data and checksum."""
    ctx = ev.context
    head = T.common_header.build(ev.header, **ctx)
    if ev.type is None:
        data = bytes(ev.data)
    else:
        data = ev.type.build(ev.data, ctx)
    tail = T.event_checksum.build(ev.checksum) if ev.footer else b""
    return head + data + tail
