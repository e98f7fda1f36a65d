"""Events as the generated catalog describes them, and parsing/building one event's data."""
from __future__ import annotations

from construct import ConstructError

from ..runtime import construct as rt
from ..runtime.codecs import decompress
from ..errors import EventFormatError


class Decode:
    """A field whose bytes are a compressed form of something else (spec key `decode:`)."""

    __slots__ = ("field", "codec", "target", "cond")

    def __init__(self, field, codec, target, cond=None):
        self.field = field
        self.codec = codec
        self.target = target
        self.cond = cond

    def applies(self, data) -> bool:
        return self.cond is None or bool(self.cond(data))


class EventType:
    """One event type code: its name, the struct of its data, and what the FDE may say of it."""

    __slots__ = ("code", "name", "flavor", "struct", "post_header_len", "post_header_fields",
                 "decode", "spec", "remaps", "legacy_post_header_len", "row_op", "role", "_whole")

    def __init__(self, code, name, flavor, struct, post_header_len, post_header_fields, decode, spec,
                 remaps=(), legacy_post_header_len=None, row_op=None, role=None):
        self.code = code
        self.name = name
        self.flavor = flavor
        self.struct = struct
        self.post_header_len = post_header_len
        self.post_header_fields = post_header_fields
        self.decode = decode
        self.spec = spec
        self.remaps = remaps  # ((condition on this event's data, {code in file: event type}),)
        # binlog v1/v3 files have no FDE: the post-header length of each type is fixed by version
        self.legacy_post_header_len = legacy_post_header_len or {}
        self.row_op = row_op  # rows events: insert, update or delete (the images of each row)
        self.role = role  # what it is to a transaction (the spec's role:; binlog/boundaries.py)
        self._whole = rt.Sized(None, struct)

    def __repr__(self):
        return f"EventType({self.code}, {self.name})"

    def parse(self, data: bytes, ctx: dict):
        """Parse the event data (post-header and body); every byte must be described."""
        return self._whole.parse(data, **ctx)

    def build(self, value, ctx: dict) -> bytes:
        return self._whole.build(value, **ctx)


def decode_of(event_type, data, field: str):
    """The spec's `decode:` entry of `field` that applies to this event's data (the field's bytes
    are then a compressed form, undone by decompress(entry.codec, ...)), or None: stored plain."""
    for dec in getattr(event_type, "decode", ()) or ():
        if dec.field == field and dec.applies(data):
            return dec
    return None


def format_construct_error(e: ConstructError) -> str:
    """construct's "Error in path (parsing) -> a -> b\nwhat" as "field a.b: what"."""
    msg = " ".join(str(e).split())
    path = getattr(e, "path", None)
    if path:
        msg = msg.replace(f"Error in path {path}", "").strip()
        fields = [p.strip() for p in path.split("->")[1:] if p.strip()]
        if fields:
            return f"field {'.'.join(fields)}: {msg}"
    return msg


def parse_error(file, offset, name, e) -> EventFormatError:
    return EventFormatError(format_construct_error(e) if isinstance(e, ConstructError) else str(e),
                            file, offset, name)


def query_text(ev, errors: str = "replace"):
    """The statement of a QUERY_EVENT as text, inflated where the spec's `decode` says the field
    is compressed (MariaDB's QUERY_COMPRESSED_EVENT). None when the event has no statement or its
    statement does not inflate. `errors="surrogateescape"` keeps bytes that are not UTF-8 as the
    spec's `str` keeps a plain QUERY_EVENT's (what a script must write back byte for byte)."""
    data = ev.data
    if ev.type is None or not hasattr(data, "get") or data.get("query") is None:
        return None
    q = data.get("query")
    dec = decode_of(ev.type, data, "query")
    if dec is not None:
        try:
            q = decompress(dec.codec, q)
        except Exception:  # noqa: BLE001 - whatever a damaged stream raises: it does not inflate
            return None
    if isinstance(q, (bytes, bytearray)):
        q = bytes(q).decode("utf-8", errors)
    return str(q)
