"""Framing: a binlog file -> events, parsed with the generated structs.

bytes -> magic -> (common header, event data, checksum footer)* ; the FORMAT_DESCRIPTION_EVENT of
the file sets the header length, the post-header lengths, the server version and the checksum
algorithm used for the events after it.
"""
from __future__ import annotations

import io
import os
import zlib
from dataclasses import dataclass, field
from typing import Any, Optional

from construct import ConstructError, Container

from . import runtime as rt
from .errors import BinlogError, ChecksumError, EventFormatError, TruncatedError
from .events import EventType, decompress, parse_error
from .generated import types as T
from .generated.catalog import EVENTS

FDE_CODE = next(c for c, e in EVENTS.items() if e.name == "FORMAT_DESCRIPTION_EVENT")
START_V3_CODE = next((c for c, e in EVENTS.items() if e.name == "START_EVENT_V3"), None)
CHECKSUM_LEN = T.event_checksum.sizeof()
MAGIC = T.binlog_magic.build(None)
IN_USE = 0x1  # event_flags.LOG_EVENT_BINLOG_IN_USE_F


@dataclass
class FormatState:
    """What the reader knows from the file's FORMAT_DESCRIPTION_EVENT (or START_EVENT_V3)."""

    binlog_version: int = 4
    header_len: int = 19
    checksum_alg: int = 0
    server: Any = None
    server_version: str = ""
    post_header_lengths: tuple = ()
    type_map: dict = field(default_factory=dict)  # code in the file -> event type (FDE remaps)
    encrypted: bool = False  # a START_ENCRYPTION_EVENT was read: the rest is ciphertext

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

    def context(self, file_code: int) -> dict:
        return {"binlog_version": self.binlog_version, "header_len": self.header_len,
                "type_code": self.event_code(file_code),
                "post_header_len": self.post_header_len(file_code),
                "checksum_alg": self.checksum_alg, "server": self.server}

    def checksum_len(self, code: int) -> int:
        return CHECKSUM_LEN if self.checksum_alg == 1 and code != FDE_CODE else 0


@dataclass
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
                verify_checksum=True) -> Event:
    """Parse one whole event (header, data, checksum) with what `state` knows."""
    hl = state.header_len
    ctx0 = state.context(0)
    try:
        header = T.common_header.parse(raw[:hl], **ctx0)
    except ConstructError as e:
        raise parse_error(file, offset, None, e) from None
    file_code = int(header.type_code)
    code = state.event_code(file_code)
    et = EVENTS.get(code)
    name = event_name(file_code, state)
    ctx = state.context(file_code)
    crc_len = 0 if inner else state.checksum_len(code)
    if header.event_length != len(raw):
        raise EventFormatError(f"event_length {header.event_length} does not match the "
                               f"{len(raw)} bytes given", file, offset, name)
    if len(raw) < hl + crc_len:
        raise EventFormatError(f"event_length {len(raw)} is shorter than its header and checksum",
                               file, offset, name)
    data_bytes = raw[hl:len(raw) - crc_len]
    if et is None:
        data = data_bytes
    else:
        try:
            data = et.parse(data_bytes, ctx)
        except ConstructError as e:
            raise parse_error(file, offset, name, e) from None
        except Exception as e:  # noqa: BLE001 - whatever bad bytes make a struct raise is bad input
            raise EventFormatError(f"{type(e).__name__}: {e}", file, offset, name) from None
    ev = Event(file, offset, header, data, raw, et, ctx, inner=inner, footer=bool(crc_len))
    stored = None
    if crc_len:
        stored = T.event_checksum.parse(raw[-crc_len:])
        ev.checksum = stored
    elif code == FDE_CODE and et is not None and data.get("checksum") is not None:
        stored = data.checksum
        if int(data.checksum_alg) != 1:
            stored = None  # the bytes are there but the server does not fill them in
    if stored is not None:
        ev.checksum = stored
        if verify_checksum:
            ev.checksum_ok = crc_of(header, raw, ctx) == stored
            if not ev.checksum_ok:
                raise ChecksumError(f"CRC32 mismatch: stored 0x{stored:08x}, computed "
                                    f"0x{crc_of(header, raw, ctx):08x}", file, offset, name)
    return ev


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
            head = T.common_header.parse(payload[pos:pos + hl], **state.context(0))
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


class BinlogFile:
    """Iterate the events of one binlog file. Errors name the file, the offset and the event type;
    every event before the damage has been yielded when one is raised."""

    def __init__(self, path, verify_checksum=True):
        self.path = os.fspath(path)
        self.verify_checksum = verify_checksum
        self.state = FormatState()

    def __iter__(self):
        path = self.path
        try:
            fh = open(path, "rb")
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
            pos = len(MAGIC)
            state = self.state
            first = True
            while True:
                hl = state.header_len
                head = fh.read(hl)
                if not head:
                    return
                if len(head) < hl:
                    part = partial_header(head, state)
                    name = event_name(part.type_code, state) if "type_code" in part else None
                    raise TruncatedError(f"file ends inside an event header ({len(head)} of {hl} bytes)",
                                         path, pos, name)
                if state.encrypted:
                    raise BinlogError("the rest of the file is encrypted (it follows a "
                                      "START_ENCRYPTION_EVENT); reading it needs the server's "
                                      "encryption key", path, pos)
                try:
                    header = T.common_header.parse(head, **state.context(0))
                except ConstructError as e:
                    raise parse_error(path, pos, None, e) from None
                name = event_name(header.type_code, state)
                if first and header.type_code == START_V3_CODE:
                    # binlog v1 (MySQL 3.23) has 13-byte headers; its START event is shorter than a
                    # v3 one, which is how the server itself tells them apart.
                    if header.event_length < 19 + EVENTS[START_V3_CODE].post_header_len[0]:
                        state.header_len = 13
                        state.binlog_version = 1
                        first = False
                        fh.seek(pos)
                        continue
                    state.binlog_version = 3
                first = False
                length = header.event_length
                if length < hl:
                    raise EventFormatError(f"event_length {length} is shorter than the {hl}-byte header",
                                           path, pos, name)
                # never let a bogus length allocate: compare with the bytes the file has
                available = os.fstat(fh.fileno()).st_size - pos - hl
                rest = fh.read(length - hl) if length - hl <= available else fh.read(available)
                if len(rest) < length - hl:
                    raise TruncatedError(f"file ends inside the event: event_length {length}, "
                                         f"{hl + len(rest)} bytes present", path, pos, name)
                ev = parse_event(head + rest, state, file=path, offset=pos,
                                 verify_checksum=self.verify_checksum)
                update_state(state, ev)
                if ev.type is not None and ev.type.name == "START_ENCRYPTION_EVENT":
                    state.encrypted = True
                yield ev
                pos += length


def read_events(path, verify_checksum=True):
    return iter(BinlogFile(path, verify_checksum))


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
