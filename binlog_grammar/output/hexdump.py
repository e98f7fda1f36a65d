"""`binlog-grammar dump --format hexdump`: mysqlbinlog's hex view with every byte run labelled by its spec field.

    from binlog_grammar.output.hexdump import render
    for se in open_stream(["mariadb-bin.000001"]).events():
        print(render(se))

`render(se)` takes a stream.StreamEvent (or a reader.Event, with the rows.Table of a rows event as
`table=`) and gives its bytes as lines of

    # OFFSET    xx xx xx ...                                     |ascii...        |  label

one line per field run: the common header fields, the post-header and body fields by their spec
path (`columns.columns_present`, `optional_metadata[2].column_name[0]`), TLV entries by their tag
and length, the checksum footer, and for rows events each part of each row image (`row 1 before:
null_bits`, `row 1 before: id (LONG) = 42`). A run longer than 16 bytes goes on over more lines,
labelled `(cont.)`. OFFSET is the file offset (8 hex digits); for an event from inside a
TRANSACTION_PAYLOAD_EVENT, and for the sections after an event that show decompressed bytes, it
is `+` and the offset in the decompressed data.

Nothing here knows a layout: the labels are the spans binlog_grammar.runtime.spans records while the
generated structs parse the event, and for rows the spans of the spec type `row_images` parsed with
the table's columns (the same context rows.RowDecoder.changes builds); hexlabels.py turns spans
into labelled runs and values into short texts, this module dumps events and writes the lines. Bytes that do not parse
(an event type no spec describes, damaged bytes) are dumped all the same, labelled `unparsed`
with the reason; rendering never raises on bad bytes.

Compressed content (MySQL's TRANSACTION_PAYLOAD_EVENT, MariaDB's compressed query and rows events)
is labelled as such. The decompressed row images of a MariaDB compressed rows event follow the
event; the events of a payload follow it only with `inner_events=True` (the stream yields them as
events of their own, so the CLI dumps each once).
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Optional

from construct import ConstructError

from ..runtime import spans as layout
from ..runtime import construct as rt
from ..binlog.events import decompress, format_construct_error
from ..errors import plain_reason
from ..generated import types as T
from ..generated.catalog import EVENTS
from ..binlog.header import V4_HEADER_LEN, probe
from ..binlog.reader import CHECKSUM_LEN, FormatState, crc_of, event_name
from .hexlabels import (
    VALUE_LIMIT, Run, clip, fill, fmt_cell, fmt_timestamp, fmt_value, labelled, row_runs, span_runs)

__all__ = ["render", "render_bytes", "event_runs", "dump_lines", "fmt_value", "fmt_cell", "Run",
           "BYTES_PER_LINE", "VALUE_LIMIT", "CONT"]

BYTES_PER_LINE = 16
CONT = "(cont.)"


@dataclass
class Section:
    """Decompressed bytes shown after the event: a title, the bytes, their runs, and sub-sections."""

    title: str
    data: bytes
    runs: list
    notes: list
    subs: list


# ---------------------------------------------------------------------------------------------
# one event

class _Dumped:
    """What dumping one event's bytes found: runs over its bytes, sections after it, its name."""

    def __init__(self):
        self.runs = []
        self.sections = []
        self.notes = []
        self.name = None
        self.header = None
        self.value = None


def _unparsed(start, end, why) -> Run:
    return Run(start, end, f"unparsed: {clip(why, 100)}")


def _why(e: Exception) -> str:
    if isinstance(e, ConstructError):
        return format_construct_error(e)
    return plain_reason(e)


def _dump_event(raw: bytes, ctx: dict, crc_len: int, *, table=None, tables=None, state=None,
                checksum_ok=None, expand_inner=False) -> _Dumped:
    """Runs over `raw` (one whole event) and the sections after it. Never raises on bad bytes."""
    d = _Dumped()
    hl = int(ctx.get("header_len", V4_HEADER_LEN))
    if len(raw) < hl:
        d.runs = [_unparsed(0, len(raw), f"{len(raw)} bytes, shorter than the {hl}-byte header")]
        return d
    try:
        header, hspans = layout.record(T.common_header, raw[:hl], **ctx)
    except Exception as e:  # noqa: BLE001 - bad bytes are dumped, not raised
        d.runs = [_unparsed(0, len(raw), f"common header: {_why(e)}")]
        return d
    d.header = header
    runs = []
    for s in hspans:
        if not s.size:
            continue
        if s.name == "timestamp":
            runs.append(Run(s.start, s.end, f"timestamp = {fmt_timestamp(s.value)}"))
        else:
            runs.append(Run(s.start, s.end, labelled(s.name, s.value, s.name)))
    runs = fill(runs, 0, hl, "common header")
    file_code = int(header.type_code)
    code = state.event_code(file_code) if state is not None else int(ctx.get("type_code", file_code))
    et = EVENTS.get(code)
    d.name = et.name if et else f"UNKNOWN_TYPE_{file_code}"
    if crc_len and len(raw) < hl + crc_len:
        crc_len = 0
    end = len(raw) - crc_len
    data = raw[hl:end]
    if int(header.event_length) != len(raw):
        d.notes.append(f"event_length {int(header.event_length)} does not match the {len(raw)} bytes dumped")
    if et is None:
        runs.append(_unparsed(hl, end, f"no spec describes event type code {file_code}"))
    else:
        try:
            value, spans = layout.record(rt.Sized(None, et.struct), data, tlv_parts=True, **ctx)
        except Exception as e:  # noqa: BLE001 - bad bytes are dumped, not raised
            runs.append(_unparsed(hl, end, f"{d.name}: {_why(e)}"))
        else:
            d.value = value
            hook = _Hooks(d, et, value, ctx, hl, table, tables, state, expand_inner, checksum_ok).hook
            runs += fill(span_runs(spans, "", hl, hook), hl, end, "unlabelled")
    if crc_len:
        stored = int(T.event_checksum.parse(raw[end:]))
        if checksum_ok is None:
            try:
                checksum_ok = crc_of(header, raw, ctx) == stored
            except Exception:  # noqa: BLE001 - a header that does not rebuild: not verified
                checksum_ok = None
        verdict = {True: "CRC32 ok", False: "CRC32 MISMATCH", None: "not verified"}[checksum_ok]
        runs.append(Run(end, len(raw), f"checksum = 0x{stored:08x} ({verdict})"))
    d.runs = runs
    if et is not None and et.name == "TABLE_MAP_EVENT" and d.value is not None and tables is not None:
        try:
            from ..binlog.rows import table_from_event

            t = table_from_event(d.value, server=ctx.get("server"))
            tables[t.table_id] = t
        except Exception:  # noqa: BLE001 - a table map that does not make a table: rows unlabelled
            pass
    return d


class _Hooks:
    """Special runs for fields whose bytes hold something else: compressed data, row images."""

    def __init__(self, d, et, value, ctx, hl, table, tables, state, expand_inner, checksum_ok):
        self.d, self.et, self.value, self.ctx, self.hl = d, et, value, ctx, hl
        self.checksum_ok = checksum_ok
        self.table, self.tables, self.state, self.expand_inner = table, tables, state, expand_inner
        self.decodes = {}
        for dec in et.decode:
            try:
                if dec.applies(value):
                    self.decodes.setdefault(dec.field, dec)
            except Exception:  # noqa: BLE001 - a condition the value cannot answer: not compressed
                pass

    def hook(self, path, span):
        if path == "checksum" and self.et.name == "FORMAT_DESCRIPTION_EVENT" \
                and self.checksum_ok is not None and isinstance(span.value, int):
            verdict = "CRC32 ok" if self.checksum_ok else "CRC32 MISMATCH"
            return [Run(self.hl + span.start, self.hl + span.end,
                        f"checksum = 0x{int(span.value):08x} ({verdict})")]
        dec = self.decodes.get(path)
        if dec is not None:
            return self._compressed(path, span, dec)
        if path == "rows" and self.et.row_op:
            return self._rows(span, bytes(span.value), self.hl + span.start, None)
        return None

    def _table(self):
        if self.table is not None:
            return self.table
        if self.tables is not None:
            return self.tables.get(int(self.value.table_id))
        return None

    def _rows(self, span, rows_bytes, base, section):
        """Row image runs over rows_bytes at `base`; a note and one run when they do not decode."""
        start, end = base, base + len(rows_bytes)
        t = self._table()
        if t is None:
            return [Run(start, end, f"rows: row images (no TABLE_MAP of table id "
                                    f"{int(self.value.table_id)} known)")]
        if not t.has_metadata:
            return [_unparsed(start, end, f"row images of {t.db}.{t.table}: its TABLE_MAP_EVENT "
                                          "carries no column metadata, so the values cannot be sized")]
        try:
            return fill(row_runs(rows_bytes, base, self.ctx, self.value, t), start, end,
                         "rows: (unlabelled)")
        except Exception as e:  # noqa: BLE001 - bad row bytes are dumped, not raised
            return [_unparsed(start, end, f"row images of {t.db}.{t.table}: {_why(e)}")]

    def _compressed(self, path, span, dec):
        raw = bytes(span.value)
        start, end = self.hl + span.start, self.hl + span.end
        try:
            plain = decompress(dec.codec, raw)
        except Exception as e:  # noqa: BLE001 - any codec failure is bad input
            return [Run(start, end, f"{path} = compressed ({dec.codec}), {len(raw)} bytes, "
                                    f"cannot decompress: {clip(str(e), 60)}")]
        kind = {"events": "events", "str": "text", "bytes": "row images" if path == "rows" else "bytes"}
        what = (f"{path} = compressed {kind.get(dec.target, dec.target)} ({dec.codec}), "
                f"{len(raw)} -> {len(plain)} bytes")
        if dec.target == "str":
            text = plain.decode("utf-8", "surrogateescape")
            return [Run(start, end, f"{what}: {fmt_value(text)}")]
        if dec.target == "bytes" and path == "rows" and self.et.row_op:
            runs = self._rows(span, plain, 0, True)
            self.d.sections.append(Section(f"{path}, decompressed ({len(plain)} bytes; offsets "
                                           f"into the decompressed data)", plain, runs, [], []))
            return [Run(start, end, f"{what} (decompressed below)")]
        if dec.target == "events":
            sec, n = _payload_section(path, plain, self.state or _state_of(self.ctx), self.expand_inner)
            what += f", {n} event{'s' if n != 1 else ''}"
            if self.expand_inner:
                self.d.sections.append(sec)
                return [Run(start, end, f"{what} (dumped below)")]
            self.d.notes += sec.notes
            return [Run(start, end, what)]
        return [Run(start, end, what)]


def _state_of(ctx: dict) -> FormatState:
    """What an event's context says of its file (when no FormatState is given)."""
    known = FormatState()
    return FormatState(binlog_version=int(ctx.get("binlog_version", known.binlog_version)),
                       header_len=int(ctx.get("header_len", known.header_len)),
                       checksum_alg=int(ctx.get("checksum_alg") or 0), server=ctx.get("server"))


def _payload_section(path, payload: bytes, state: FormatState, expand: bool):
    """(section, number of events) of a decompressed payload: a note naming its events, and when
    `expand` each event dumped with payload offsets."""
    hl = state.header_len
    pos = 0
    runs, subs, names = [], [], []
    tables = {}
    while pos < len(payload):
        rest = payload[pos:]
        head = None
        if len(rest) >= hl:
            try:
                head = T.common_header.parse(rest[:hl], **state.context(0))
            except Exception:  # noqa: BLE001 - an unreadable header: the rest is unparsed
                head = None
        length = int(head.event_length) if head is not None else 0
        if head is None or length < hl or length > len(rest):
            runs.append(_unparsed(pos, len(payload), f"{len(rest)} bytes that are not a whole event"))
            names.append("unparsed bytes")
            break
        code = int(head.type_code)
        if expand:
            d = _dump_event(rest[:length], state.context(code), 0, tables=tables, state=state)
            runs += [Run(pos + r.start, pos + r.end, r.label) for r in d.runs]
            subs.append((pos, d))
        names.append(event_name(code, state))
        pos += length
    note = f"{path} holds {len(names)} event{'s' if len(names) != 1 else ''}: " + ", ".join(names)
    sec = Section(f"{path}, decompressed ({len(payload)} bytes; offsets into the decompressed "
                  f"payload)", payload, runs, [clip(note, 200)], subs)
    return sec, len(names)


# ---------------------------------------------------------------------------------------------
# lines

def _ascii(chunk: bytes) -> str:
    return "".join(chr(b) if 0x20 <= b < 0x7F else "." for b in chunk)


def dump_lines(data: bytes, runs, offset: int = 0, relative: bool = False) -> list:
    """`# OFFSET  hex  |ascii|  label` lines of `runs` over `data`. OFFSET is `offset` + the
    position in `data`: 8 hex digits, or `+` and 7 when `relative` (offsets in decompressed data)."""
    out = []
    for r in runs:
        for k in range(r.start, r.end, BYTES_PER_LINE):
            chunk = data[k:min(k + BYTES_PER_LINE, r.end)]
            off = f"+{offset + k:07x}" if relative else f"{offset + k:08x}"
            hexes = " ".join(f"{b:02x}" for b in chunk)
            label = r.label if k == r.start else CONT
            out.append(f"# {off}  {hexes:<{3 * BYTES_PER_LINE - 1}}  |{_ascii(chunk):<{BYTES_PER_LINE}}|"
                       f"  {label}")
    return out


def _section_lines(sec: Section) -> list:
    out = [f"# {sec.title}"]
    out += [f"#   {n}" for n in sec.notes]
    if not sec.subs:
        return out + dump_lines(sec.data, sec.runs, relative=True)
    by_start = sorted(sec.runs, key=lambda r: r.start)
    i = 0
    for pos, d in sec.subs:
        n = sum(r.end - r.start for r in d.runs)
        out.append(f"# -- inner {d.name} at payload offset {pos} ({n} bytes)")
        out += [f"#   {x}" for x in d.notes]
        mine = []
        while i < len(by_start) and by_start[i].start < pos + n:
            mine.append(by_start[i])
            i += 1
        out += dump_lines(sec.data, mine, relative=True)
        for s in d.sections:
            out += _section_lines(s)
    if i < len(by_start):
        out += dump_lines(sec.data, by_start[i:], relative=True)
    return out


# ---------------------------------------------------------------------------------------------
# entry points

def event_runs(ev, table=None, state=None, inner_events=False):
    """(runs over ev.raw, sections after it, notes) of a reader.Event."""
    d = _dump(ev, table, state, inner_events)
    return d.runs, d.sections, d.notes


def _dump(ev, table, state, inner_events) -> _Dumped:
    tables = {} if table is None else None
    return _dump_event(bytes(ev.raw), dict(ev.context), CHECKSUM_LEN if ev.footer else 0, table=table,
                       tables=tables, state=state, checksum_ok=ev.checksum_ok,
                       expand_inner=inner_events)


def render(se, state: Optional[FormatState] = None, table=None, *, inner_events: bool = False) -> str:
    """The labelled hex dump of one event.

    `se`: a stream.StreamEvent (its table is used for rows events), or a reader.Event with the
    rows.Table of a rows event as `table`. `state`: the FormatState of the event's file (only the
    events of a TRANSACTION_PAYLOAD_EVENT need it; without it the event's context stands in).
    `inner_events`: also dump the events of a payload after it, with payload offsets.
    """
    ev = getattr(se, "event", se)
    if table is None:
        table = getattr(se, "table", None) if se is not ev else None
    if table is not None and (ev.type is None or not ev.type.row_op):
        table = None
    d = _dump(ev, table, state, inner_events)
    return _text(ev.offset, bytes(ev.raw), d, ev.inner, ev.extra.get("payload_offset"))


def render_bytes(raw: bytes, state: Optional[FormatState] = None, *, offset: int = 0, table=None,
                 inner: bool = False, inner_events: bool = False) -> str:
    """The labelled hex dump of one event's bytes as the file holds them (header, data, checksum),
    read with what `state` knows of the file; for bytes the reader rejects (damaged events)."""
    state = state or FormatState()
    raw = bytes(raw)
    type_code = probe(V4_HEADER_LEN, ("type_code",))
    code = type_code.unpack_from(raw)[0] if len(raw) >= type_code.size else 0
    ctx = state.context(code)
    crc_len = 0 if inner else state.checksum_len(state.event_code(code))
    d = _dump_event(raw, ctx, crc_len, table=table, tables={} if table is None else None,
                    state=state, expand_inner=inner_events)
    return _text(offset, raw, d, inner, None)


def _text(offset: int, raw: bytes, d: _Dumped, inner: bool, payload_offset) -> str:
    name = d.name or "unreadable event"
    if inner:
        where = f"# at {offset}, inner event at payload offset {payload_offset or 0}"
    else:
        where = f"# at {offset}"
    lines = [where, f"# {name}, {len(raw)} bytes"]
    lines += [f"#   {n}" for n in d.notes]
    if inner:
        lines += dump_lines(raw, d.runs, payload_offset or 0, relative=True)
    else:
        lines += dump_lines(raw, d.runs, offset)
    for sec in d.sections:
        lines += _section_lines(sec)
    return "\n".join(lines)

