"""A rows event inverted, as `mariadb-binlog --flashback` inverts it, built by the grammar.

`invert_rows_event(ev, table)` gives the bytes of the event that undoes `ev`:

- the type code: a WRITE_ROWS event becomes the DELETE_ROWS event of its version and the other
  way round; an UPDATE_ROWS event stays one, each row's before and after images swapped (and the
  two column bitmaps with them: equal under binlog_row_image=FULL, the only image flashback can
  undo with; mariadb-binlog keeps the bitmaps in place, which is the same bytes then);
- the rows in reverse order inside the event (mariadb-binlog's change_to_flashback_event);
- a compressed MariaDB rows event (log_bin_compress) becomes its uncompressed twin, inverted
  (mariadb-binlog inflates it too: the script's event is WRITE/UPDATE/DELETE_ROWS_EVENT_V1);
- the header: the new type code, the event length of the bytes built, the next position as the
  server wrote it (mariadb-binlog keeps it), and a CRC32 computed for the new bytes when the
  event has a checksum footer (mariadb-binlog leaves the CRC32 of the event before it inverted
  it: the original's, or for a compressed event its inflated twin's, which no longer matches the
  bytes; the server does not check it in a BINLOG statement, so either replays).

Where each row image starts and ends is what the spec's readers find: the generated fast reader
of one row image (generated/fast.py, which returns where it ends), or when it refuses the bytes
the spec type `row_images`'s struct with runtime.spans recording it. The new row data is those
byte runs in the new order, so every value stays exactly
the bytes the server logged (a compressed column, a float's NaN, a value no adapter writes back
the same), and runs that do not cover the row data end to end are refused rather than guessed at.
The event around them is built by the generated struct of its new type.
The STMT_END_F flag is the caller's to move: mariadb-binlog writes a statement's rows events last
first, so the flag goes to the event that is then last (`stmt_end`).

Refused with an EventFormatError naming file, offset and event: PRE_GA rows events (one column
bitmap; mariadb-binlog leaves them as they are, which replays them forwards), MySQL's
PARTIAL_UPDATE_ROWS_EVENT (its after images may be JSON diffs, which have no inverse), a rows
event whose table no TABLE_MAP maps, an UPDATE or DELETE whose before images lack columns
(binlog_row_image=MINIMAL or NOBLOB: the row put back would lack them; the `flashback` command
refuses them too), and bytes the row images do not describe.
"""
from __future__ import annotations

import zlib
from typing import Optional

from construct import Container

from ..errors import EventFormatError, plain_reason
from ..generated import fast as F
from ..generated import types as T
from ..runtime.fast import FAST_ERRORS, FastPathError
from ..runtime import spans
from ..generated.catalog import EVENTS
from .events import decode_of, decompress

STMT_END_F = 0x01  # rows_flags.STMT_END_F
_UP = {"_index": None}  # the (empty) enclosing context of a top-level generated reader

_BY_NAME = {e.name: e for e in EVENTS.values()}
_OPPOSITE = {"insert": ("WRITE", "DELETE"), "delete": ("DELETE", "WRITE"),
             "update": ("UPDATE", "UPDATE")}


def inverse_type(et):
    """The event type that undoes a rows event of type `et` (uncompressed, same rows version), or
    None when there is none (PRE_GA, PARTIAL_UPDATE: see the module's text)."""
    if et is None or not et.row_op or et.name.startswith(("PRE_GA_", "PARTIAL_")):
        return None
    old, new = _OPPOSITE[et.row_op]
    name = et.name.replace("_COMPRESSED", "")
    return _BY_NAME.get(new + name[len(old):]) if name.startswith(old) else None


def rows_images(ev, table) -> tuple:
    """(the parse context of the event's row images, their bytes as the server wrote them before
    compressing them)."""
    data = ev.data
    cols = data["columns"]
    present = list(cols["columns_present"])
    images = [present] if ev.type.row_op != "update" else \
        [present, list(cols["columns_present_after"])]
    ctx = dict(ev.context, columns=table.columns, images=images, json_columns=table.json_columns)
    rows = data["rows"]
    dec = decode_of(ev.type, data, "rows")
    if dec is not None:
        rows = decompress(dec.codec, bytes(rows))
    return ctx, bytes(rows)


def image_spans(rows: bytes, ctx: dict) -> list:
    """[[(start, end) of each image of a row], ...] for every row of `rows`, where the spec's
    row_images struct (with the event's context `ctx`) finds them; they must cover the bytes
    end to end (ValueError otherwise)."""
    try:
        return _fast_image_spans(rows, ctx)
    except FAST_ERRORS:  # the construct struct reads them again, and says what is wrong
        pass
    _value, found = spans.record(T.row_images, rows, **ctx)
    out, at = [], 0
    for row in (found[0].children if found else ()):
        images = next((c for c in row.children if c.name == "images"), None)
        img = [(i.start, i.end) for i in (images.children if images is not None else ())]
        if not img or img[0][0] != at or any(a[1] != b[0] for a, b in zip(img, img[1:])):
            raise ValueError(f"the row images do not follow each other at byte {at}")
        at = img[-1][1]
        out.append(img)
    if at != len(rows):
        raise ValueError(f"{len(rows) - at} bytes after the last row image")
    return out


def _fast_image_spans(rows: bytes, ctx: dict) -> list:
    """image_spans by the generated fast reader of one row image (generated/fast.py, held equal
    to the construct structs by tests/codegen/test_fastpath.py), which returns where it ends."""
    read, n, end = F.t_row_image, len(ctx["images"]), len(rows)
    up = {"_": _UP, "_params": ctx, "_index": None}  # the enclosing row, as t_row makes it
    out, pos = [], 0
    while pos < end:
        img = []
        for i in range(n):
            up["_index"] = i
            start = pos
            pos = read(rows, pos, end, up, ctx, None)[1]
            img.append((start, pos))
        if pos == img[0][0]:
            raise FastPathError(f"a row of no bytes at byte {pos}")
        out.append(img)
    return out


_BUILT: dict = {}  # (type code, flags, the event's bytes before its rows) -> what they build to


def _post_header_and_columns(ev, new_type, flags: int, ctx: dict) -> bytes:
    """The inverted event's data up to its rows (post-header, extra row info, column count and
    bitmaps, swapped for an update), built by the struct of its new type; the same bytes for
    every event of a statement's table, so they are built once per shape."""
    d = ev.data
    footer = T.event_checksum.sizeof() * ev.footer
    before = bytes(ev.raw[ctx["header_len"]:len(ev.raw) - footer - len(d["rows"])])
    key = (new_type.code, flags, before)
    built = _BUILT.get(key)
    if built is None:
        data = Container(d)
        cols = Container(d["columns"])
        if ev.type.row_op == "update":  # the parsed bitmaps: they build back their unused bits
            cols["columns_present"], cols["columns_present_after"] = \
                d["columns"]["columns_present_after"], d["columns"]["columns_present"]
        data["columns"] = cols
        data["rows"] = b""
        data["flags"] = flags
        built = new_type.build(data, ctx)
        if len(_BUILT) >= 4096:
            _BUILT.clear()
        _BUILT[key] = built
    return built


def invert_rows_event(ev, table, stmt_end: Optional[bool] = None) -> bytes:
    """The bytes of the rows event that undoes `ev` (a parsed reader.Event) whose table is
    `table` (rows.Table, as its TABLE_MAP mapped it). stmt_end: set (True) or clear (False) the
    STMT_END_F flag; None keeps the event's."""
    def refuse(why):
        return EventFormatError(f"cannot invert this rows event: {why}", ev.file, ev.offset,
                                ev.name)

    new_type = inverse_type(ev.type)
    if new_type is None:
        raise refuse("mariadb-binlog --flashback inverts only WRITE/UPDATE/DELETE_ROWS events "
                     "(v1, v2 and MariaDB's compressed ones)")
    if table is None:
        raise refuse("no TABLE_MAP_EVENT before it maps its table")
    d = ev.data
    present = d["columns"]["columns_present"]
    if len(present) != len(table.columns):
        raise refuse(f"it has {len(present)} columns, the TABLE_MAP of its table "
                     f"{len(table.columns)}")
    if ev.type.row_op != "insert" and not all(present):
        raise refuse("its before images lack columns (binlog_row_image=MINIMAL or NOBLOB): the "
                     "rows put back would lack them")
    try:
        ctx, rows = rows_images(ev, table)
        new_rows = b"".join(rows[a:b] for img in reversed(image_spans(rows, ctx))
                            for a, b in reversed(img))
    except EventFormatError:
        raise
    except Exception as e:  # noqa: BLE001 - whatever bad bytes make a struct raise is bad input
        raise refuse(plain_reason(e)) from None

    flags = int(d["flags"])
    if stmt_end is not None:
        flags = flags | STMT_END_F if stmt_end else flags & ~STMT_END_F
    ctx = dict(ev.context, type_code=new_type.code)
    body = _post_header_and_columns(ev, new_type, flags, ctx) + new_rows
    header = Container(ev.header)
    header["type_code"] = new_type.code
    header["event_length"] = ctx["header_len"] + len(body) + T.event_checksum.sizeof() * ev.footer
    head = T.common_header.build(header, **ctx)
    if not ev.footer:
        return head + body
    return head + body + T.event_checksum.build(zlib.crc32(head + body))

