"""`--rewrite-db='from->to'`, as mariadb-binlog reads and applies it.

A rule is `FROM->TO` (spaces around either name are dropped; both names must be there); several
rules may be given, and a database takes the first rule whose FROM is its name. mariadb-binlog
applies them to the default database of statements (the `use` it prints) and to TABLE_MAP events,
so the row events that follow name the new database; this module does the second by rebuilding
the TABLE_MAP event with the generated structs (binlog.parse): the new name and its length, the
event's new length and a new CRC32 over the new bytes. The end_log_pos stays the file's, as
mariadb-binlog keeps it.
"""
from __future__ import annotations

import zlib
from typing import Optional

from .header import V4_HEADER_LEN
from .parse import FormatState, parse_event, rebuild_event


def parse_rule(text: str) -> tuple:
    """(from, to) of one `--rewrite-db` text; ValueError with mariadb-binlog's reason."""
    if "->" not in text:
        raise ValueError("bad syntax in rewrite-db: missing '->'")
    src, dst = text.split("->", 1)
    src, dst = src.strip(), dst.strip()
    if not src:
        raise ValueError("bad syntax in rewrite-db: empty FROM db")
    if not dst:
        raise ValueError("bad syntax in rewrite-db: empty TO db")
    return src, dst


class Rules:
    """The rules in the order given: `rules.db(name)` is the name after rewriting."""

    def __init__(self, pairs=()):
        self.pairs = list(pairs)

    def __bool__(self):
        return bool(self.pairs)

    def db(self, name):
        for src, dst in self.pairs:
            if name == src:
                return dst
        return name

    def mapping(self) -> dict:
        out = {}
        for src, dst in self.pairs:
            out.setdefault(src, dst)
        return out


def _name_bytes(v) -> bytes:
    return v if isinstance(v, (bytes, bytearray)) else str(v).encode("utf-8")


def rewrite_table_map(raw: bytes, mapping, state: Optional[FormatState] = None) -> bytes:
    """The TABLE_MAP event `raw` with its database renamed by `mapping` (a dict from name to
    name, or Rules), rebuilt byte for byte by the spec; `raw` itself when its database is not
    renamed. `state`: the file's FormatState; without one, a v4 header and a CRC32 footer when the
    last four bytes are the CRC32 of the others (as they are in a file that has them)."""
    if state is None:
        state = FormatState()
        state.header_len = V4_HEADER_LEN
        state.checksum_alg = 1 if len(raw) > 4 and \
            zlib.crc32(raw[:-4]) == int.from_bytes(raw[-4:], "little") else 0
    ev = parse_event(bytes(raw), state, verify_checksum=False, fast=False)
    if ev.name != "TABLE_MAP_EVENT":
        return bytes(raw)
    old = _name_bytes(ev.data["db"])
    name = old.decode("utf-8", "surrogateescape")
    new = mapping.db(name) if isinstance(mapping, Rules) else mapping.get(name, name)
    if new == name:
        return bytes(raw)
    data = ev.data
    data["db"] = new.encode("utf-8", "surrogateescape") if isinstance(data["db"], (bytes, bytearray)) \
        else new
    if "db_len" in data:
        data["db_len"] = len(_name_bytes(data["db"]))
    ev.header["event_length"] = int(ev.header["event_length"]) + len(_name_bytes(data["db"])) - len(old)
    out = rebuild_event(ev)
    if ev.footer:
        body = out[:-4]
        out = body + zlib.crc32(body).to_bytes(4, "little")
    if len(out) != int(ev.header["event_length"]):
        raise ValueError(f"the rebuilt TABLE_MAP_EVENT is {len(out)} bytes, its header says "
                         f"{int(ev.header['event_length'])}")
    return out


def rewrite_event(ev, rules: Rules, state: FormatState):
    """The event as the stream hands it on under `rules` (binlog.stream.Stream.rewrite): a
    TABLE_MAP_EVENT of a renamed database with the parsed data of its rebuilt bytes
    (rewrite_table_map, parsed back by the spec) and those bytes in extra["rewritten_raw"], for a
    writer that emits the event (BINLOG blocks); its `raw` stays the file's, so its offsets,
    end_log_pos and CRC32 are the file's as mariadb-binlog prints them. A QUERY_EVENT gets its
    default database renamed in its parsed data (the `use` the outputs print). Any other event
    is as it was."""
    name = ev.name
    if name == "TABLE_MAP_EVENT":
        raw = rewrite_table_map(ev.raw, rules, state)
        if raw == ev.raw:
            return ev
        new = parse_event(raw, state, file=ev.file, offset=ev.offset, verify_checksum=False,
                          inner=ev.inner)
        ev.data = new.data
        ev.extra = {**ev.extra, "rewritten_raw": raw}
        return ev
    if name == "QUERY_EVENT" and hasattr(ev.data, "get"):
        db = ev.data.get("db")
        text = db.decode("utf-8", "surrogateescape") if isinstance(db, (bytes, bytearray)) else db
        if text and rules.db(text) != text:
            data = type(ev.data)(ev.data)
            new = rules.db(text)
            data["db"] = new.encode("utf-8", "surrogateescape") if isinstance(db, (bytes, bytearray)) \
                else new
            ev.data = data
    return ev
