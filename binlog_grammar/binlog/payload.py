"""The events held inside an event: a TRANSACTION_PAYLOAD_EVENT's compressed events, inflated
(events.decompress, with the codec its spec's `decode:` names) and framed one by one with the
file's FormatState, as parse.py frames the file's own."""
from __future__ import annotations

from ..errors import BinlogError, EventFormatError, TruncatedError
from .events import decompress
from .parse import Event, FormatState, event_name, parse_event
from .resync import Damage


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

