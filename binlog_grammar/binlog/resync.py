"""Damage in a binlog file: what `BinlogFile(..., skip_damaged=True)` stepped over (Damage), the
checks that find damage nothing else tells (a length that swallowed the next event, a format
event that lies about checksum footers), and where reading goes on after it (Resync._resync).

Resync is the part of reader.BinlogFile that looks at bytes around an event rather than at the
event: its methods read `self.state` (the FormatState), `self.path`, `self.verify_checksum` and
what BinlogFile.__iter__ learnt of the file (_format_known, _footers_unsure, _crc_hint). Headers
are probed with header.py (type_code and event_length by the spec's layout).
"""
from __future__ import annotations

import os
import re
import zlib
from dataclasses import dataclass, field
from typing import Optional

from ..errors import BinlogError, EventFormatError
from ..generated.catalog import EVENTS
from .header import FLAGS_AT, LENGTH_AT, LENGTH_SIZE, TYPE_AND_LENGTH, TYPE_AT
from .parse import CHECKSUM_LEN, FDE_CODE, IN_USE, footer_crc, parse_event


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



# type codes no server writes to a file: never a place to resynchronise at
NOT_IN_FILES = {"UNKNOWN_EVENT", "HEARTBEAT_LOG_EVENT", "HEARTBEAT_LOG_EVENT_V2"}
SCAN_WINDOW = 1 << 16  # bytes searched per read while resynchronising
CRC_CHUNK = 1 << 18  # bytes read at a time to check the CRC32 of a candidate event


class Resync:
    """BinlogFile's checks of the bytes around events, and its search for the next whole event
    after damage (see the module docstring)."""

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
        code, length = TYPE_AND_LENGTH.unpack_from(head)
        et = EVENTS.get(state.event_code(code))
        return et is not None and et.name not in NOT_IN_FILES and \
            hl + state.post_header_len(code) <= length <= size - at


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
                length = TYPE_AND_LENGTH.unpack_from(head)[1]
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
        length = TYPE_AND_LENGTH.unpack_from(head)[1]
        if not hl + CHECKSUM_LEN <= length <= size - at:
            return None
        raw = head + fh.read(length - hl)
        ok = zlib.crc32(raw[:-CHECKSUM_LEN]) == footer_crc(raw)
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
        top = min((size - start) >> 8 * (LENGTH_SIZE - 1), 255)
        candidates = re.compile(b"(?s)(?=.{%d}[%s].{%d}[\\x00-\\x%02x])"
                                % (TYPE_AT, codes, LENGTH_AT + LENGTH_SIZE - 1 - TYPE_AT - 1, top))
        p = start + 1
        while p + hl <= size:
            fh.seek(p)
            buf = fh.read(min(SCAN_WINDOW + hl - 1, size - p))
            last = len(buf) - hl  # the last index in buf where a whole header starts
            for m in candidates.finditer(buf):
                j = m.start()
                if j > last:
                    break
                code, length = TYPE_AND_LENGTH.unpack_from(buf, j)
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
        code, length = TYPE_AND_LENGTH.unpack_from(head)
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
        code, length = TYPE_AND_LENGTH.unpack_from(head)
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
        return len(stored) == CHECKSUM_LEN and crc == footer_crc(stored)

