"""One event's bytes -> an Event, with what the file's format event says (FormatState).

bytes of one event = common header, event data, checksum footer. The FORMAT_DESCRIPTION_EVENT of
a file (or START_EVENT_V3) sets the header length, the post-header lengths, the server version and
the checksum algorithm used for the events after it (update_state); parse_event reads one event
with them (the generated fast readers first, the construct structs for what they refuse), checks
its CRC32, and refuses a FORMAT_DESCRIPTION_EVENT the server would refuse. rebuild_event builds
the bytes back. Walking a file is reader.py's; this module sees one event at a time.
"""
from __future__ import annotations

import io
import zlib
from collections import Counter
from dataclasses import dataclass, field
from typing import Any, Optional

from construct import ConstructError, Container

from ..runtime import construct as rt
from ..errors import ChecksumError, EventFormatError, plain_reason
from .events import EventType, parse_error
from .header import V4_HEADER_LEN
from ..runtime.fast import FAST_ERRORS
from ..generated import fast as F
from ..generated import types as T
from ..generated.catalog import EVENTS

FDE_CODE = next(c for c, e in EVENTS.items() if e.name == "FORMAT_DESCRIPTION_EVENT")
START_V3_CODE = next((c for c, e in EVENTS.items() if e.name == "START_EVENT_V3"), None)
# events after which the rest of the file is read differently
STATE_CODES = {c for c, e in EVENTS.items()
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
    header_len: int = V4_HEADER_LEN
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
    # what the compiled walk read of an event it framed (binlog/batch.py, FramedEvent): its
    # header's timestamp and server_id, and the head of a rows event (rows_head)
    _stamp = None
    _head = None

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


def footer_crc(raw) -> int:
    """The CRC32 stored in the checksum footer that ends `raw` (spec event_checksum)."""
    return F.t_event_checksum(raw, len(raw) - CHECKSUM_LEN, len(raw), _UP, None, None)[0]


def crc_of(header: Container, raw: bytes, ctx: dict) -> int:
    """CRC32 the server computed: over header and data; for the FDE with the IN_USE flag cleared."""
    hl = ctx["header_len"]
    if header.type_code == FDE_CODE and header.get("flags") is not None and header.flags & IN_USE:
        h = Container(header)
        h.flags = int(header.flags) & ~IN_USE
        head = T.common_header.build(h, **ctx)
        return zlib.crc32(head + raw[hl:-CHECKSUM_LEN])
    return zlib.crc32(raw[:-CHECKSUM_LEN])


def _sharing(share, n, seen) -> bool:
    """Is the data of this event type looked up in the memo? Servers write the same small event
    data again and again (the TABLE_MAP before every statement, BEGIN): while that pays for a
    type (a hit in four lookups after the first MEMO_TRIAL), its data is read once per format
    state and the events share the value."""
    return share and n <= MEMO_BYTES and (seen[0] < MEMO_TRIAL or seen[1] * 4 >= seen[0])


def read_data(state: FormatState, kind: tuple, file_code: int, data_bytes: bytes, share=True):
    """The event data `data_bytes` of an event of `kind` (FormatState.kind) read by its generated
    reader, or the value shared by earlier events with the same bytes (see _sharing); None when
    there is no reader or it refuses the bytes (the construct struct then says what is wrong)."""
    seen = kind[6]
    key = None
    if _sharing(share, len(data_bytes), seen):
        key = (file_code, data_bytes)
        seen[0] += 1
        data = state.memo.get(key)
        if data is not None:
            seen[1] += 1
            return data
    reader = kind[3]
    if reader is None:
        return None
    try:
        data = reader(data_bytes, 0, len(data_bytes), kind[5])
    except FAST_ERRORS:
        return None
    if key is not None:
        _remember(state.memo, key, data)
    return data


def _remember(memo, key, data):
    if len(memo) >= MEMO_ENTRIES:
        memo.clear()
    memo[key] = data


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
        data = read_data(state, kind, file_code, data_bytes, share)
        if data is None:
            if reader is not None:  # bad bytes only: a bug in a generated reader surfaces
                state.fallbacks[name] += 1  # the construct struct says precisely what is wrong
            if _sharing(share, len(data_bytes), seen):
                key = (file_code, data_bytes)
    if data is None:
        try:
            data = et.parse(data_bytes, ctx)
        except ConstructError as e:
            raise parse_error(file, offset, name, e) from None
        except Exception as e:  # noqa: BLE001 - whatever bad bytes make a struct raise is bad input
            raise EventFormatError(plain_reason(e), file, offset, name) from None
    if key is not None:
        _remember(state.memo, key, data)
    if code == FDE_CODE:
        return _finish_format_event(raw, state, file, offset, inner, verify_checksum, header,
                                    data, et, ctx, crc_len, name)
    ev = Event(file, offset, header, data, raw, et, ctx, None, None, inner, crc_len != 0)
    if crc_len:
        stored = ev.checksum = F.t_event_checksum(raw, n - crc_len, n, _UP, ctx, None)[0]
        if verify_checksum:
            ok = ev.checksum_ok = zlib.crc32(memoryview(raw)[:n - crc_len]) == stored
            if not ok and not (keep_bad_crc and file_code not in STATE_CODES):
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
    elif data.common_header_len < V4_HEADER_LEN:
        problem = (f"common_header_len {data.common_header_len} is shorter than {V4_HEADER_LEN} "
                   "bytes")
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
