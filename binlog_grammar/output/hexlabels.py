"""The labels of `dump --format hexdump` (binlog_grammar.output.hexdump): field values as short text,
the spans binlog_grammar.runtime.spans records turned into labelled runs of bytes, and the runs of
a rows event's row images, one a cell.

A Run is bytes [start, end) of the dumped data and the label of the field they belong to.
`span_runs` walks a span tree to its leaves (bytes a span's parts leave uncovered get the span's
own label); `fill` makes sorted runs that cover every byte once; `row_runs` parses the spec type
`row_images` with the table's columns (the context rows.RowDecoder.changes builds) and labels each
part: `row 1 before: null_bits`, `row 1 before: id (LONG) = 42`.
"""
from __future__ import annotations

import datetime as _dt
import decimal as _decimal
import json
import uuid as _uuid
from dataclasses import dataclass
from typing import Any, Optional

from ..generated import types as T
from ..generated.catalog import EVENTS
from ..runtime import construct as rt
from ..runtime import spans as layout

__all__ = ["Run", "fmt_value", "fmt_cell", "fmt_timestamp", "clip", "labelled", "span_runs", "fill",
           "row_runs", "VALUE_LIMIT", "IMAGE_NAMES"]

VALUE_LIMIT = 60  # characters of a shown value; longer ones end in "..."
IMAGE_NAMES = {"insert": ["after"], "delete": ["before"], "update": ["before", "after"]}


@dataclass
class Run:
    """Bytes [start, end) of the dumped data and the label of the field they belong to."""

    start: int
    end: int
    label: str


# ---------------------------------------------------------------------------------------------
# values

def clip(s: str, limit: int = VALUE_LIMIT) -> str:
    return s if len(s) <= limit else s[:limit - 3] + "..."


def fmt_value(v: Any, name: str = "") -> Optional[str]:
    """A field value as a short text (None when there is nothing worth showing)."""
    if v is None:
        return None
    if isinstance(v, rt.EnumValue):
        s = f"{v.name} ({int(v)})" if v.name else str(int(v))
    elif isinstance(v, rt.FlagsValue):
        s = f"0x{int(v):x} ({'|'.join(v.names)})" if v.names else f"0x{int(v):x}"
    elif isinstance(v, bool):
        s = "true" if v else "false"
    elif isinstance(v, int):
        s = f"0x{v:08x}" if name == "checksum" else str(int(v))
    elif isinstance(v, float):
        s = repr(v)
    elif isinstance(v, str):
        s = json.dumps(v, ensure_ascii=False)
    elif isinstance(v, (bytes, bytearray)):
        if name in ("uuid", "sid", "server_uuid") and len(v) == 16:
            s = str(_uuid.UUID(bytes=bytes(v)))
        else:
            s = f"x'{bytes(v).hex()}'" if v else "(empty)"
    elif isinstance(v, rt.Version):
        s = str(v)
    elif isinstance(v, dict):
        parts = [f"{k}={fmt_value(x, k)}" for k, x in v.items() if not str(k).startswith("_")]
        s = "{" + ", ".join(parts) + "}"
    elif isinstance(v, (list, tuple)):
        if v and all(isinstance(x, bool) for x in v):
            s = "bits " + "".join("1" if x else "0" for x in v)
        elif v and all(isinstance(x, rt.EnumValue) and x.name for x in v):
            s = "[" + ", ".join(x.name for x in v) + "]"
        else:
            s = "[" + ", ".join(fmt_value(x) or "null" for x in v) + "]"
    else:
        s = str(v)
    return clip(s)


def fmt_cell(v: Any, col=None) -> str:
    """A decoded column value (the Python value rows.py gives) as a short text; SET members in
    the column's member order."""
    if v is None:
        s = "NULL"
    elif isinstance(v, str):
        s = json.dumps(v, ensure_ascii=False)
    elif isinstance(v, (bytes, bytearray)):
        s = f"x'{bytes(v).hex()}'"
    elif isinstance(v, bool):
        s = "true" if v else "false"
    elif isinstance(v, (int, float, _decimal.Decimal)):
        s = str(v)
    elif isinstance(v, _dt.datetime):
        s = v.isoformat(" ")
    elif isinstance(v, (_dt.date, _dt.timedelta)):
        s = str(v)
    elif isinstance(v, (set, frozenset)):
        order = list(col.get("set_values") or ()) if col is not None else []
        key = (lambda m: (order.index(m) if m in order else len(order), str(m)))
        s = "{" + ", ".join(json.dumps(m, ensure_ascii=False) for m in sorted(v, key=key)) + "}"
    elif isinstance(v, (dict, list)):
        s = "JSON " + json.dumps(_public(v), ensure_ascii=False, default=str)
    elif isinstance(v, tuple) and type(v).__name__ == "Geometry":
        s = f"GEOMETRY srid={v.srid}, {len(v.wkb)}-byte WKB"
    else:
        s = str(v)
    return clip(s)


def _public(v):
    """A parsed value without construct's bookkeeping keys (`_io` holds a stream object whose
    address changes from run to run)."""
    if isinstance(v, dict):
        return {k: _public(x) for k, x in v.items() if not str(k).startswith("_")}
    if isinstance(v, list):
        return [_public(x) for x in v]
    return v


def fmt_timestamp(v) -> str:
    try:
        t = _dt.datetime.fromtimestamp(int(v), _dt.timezone.utc)
    except (OverflowError, OSError, ValueError):
        return str(int(v))
    return f"{t:%Y-%m-%d %H:%M:%S} UTC ({int(v)})"


def labelled(path: str, value: Any, name: str) -> str:
    shown = fmt_value(value, name)
    return f"{path} = {shown}" if shown is not None else path


def _join(prefix: str, name: str) -> str:
    if name.startswith("["):
        return prefix + name
    if name.startswith("(") and name.endswith(")"):
        word = {"end": "end mark"}.get(name[1:-1], name[1:-1])
        return f"{prefix} {word}" if prefix else word
    return f"{prefix}.{name}" if prefix else name


# ---------------------------------------------------------------------------------------------
# spans -> runs

def _small_array(span) -> bool:
    """An array of small scalars (post_header_lengths, column_types): one run, the list as value."""
    kids = [c for c in span.children if c.size]
    return len(kids) > 1 and all(c.name.startswith("[") and not c.children and c.size <= 2
                                 and not isinstance(c.value, (bytes, str)) for c in kids)


def span_runs(spans, prefix: str, base: int, hook=None) -> list:
    """Runs of the leaves of a span tree; bytes a span's parts leave uncovered get its own label.
    `hook(path, span)` may return the runs of a span itself (or None to walk it as usual)."""
    out = []
    for s in spans:
        if not s.size:
            continue
        path = _join(prefix, s.name)
        if hook is not None:
            special = hook(path, s)
            if special is not None:
                out += special
                continue
        kids = [c for c in s.children if c.size]
        if not kids or _small_array(s):
            out.append(Run(base + s.start, base + s.end, labelled(path, s.value, s.name)))
            continue
        inner = span_runs(kids, path, base, hook)
        pos = base + s.start
        for r in sorted(inner, key=lambda r: r.start):
            if r.start > pos:
                out.append(Run(pos, r.start, path))
            pos = max(pos, r.end)
        if pos < base + s.end:
            out.append(Run(pos, base + s.end, path))
        out += inner
    return out


def fill(runs, start: int, end: int, label: str) -> list:
    """Sorted runs, each byte in one run only; gaps between start and end labelled `label`."""
    runs = sorted(runs, key=lambda r: r.start)
    out = []
    pos = start
    for r in runs:
        if r.end <= pos:
            continue
        if r.start > pos:
            out.append(Run(pos, r.start, label))
        out.append(r if r.start >= pos else Run(pos, r.end, r.label))
        pos = r.end
    if pos < end:
        out.append(Run(pos, end, label))
    return out


# ---------------------------------------------------------------------------------------------
# row images

def _row_ctx(ctx: dict, data, table) -> dict:
    """The context rows.RowDecoder.changes parses `row_images` with."""
    op = EVENTS[int(ctx["type_code"])].row_op
    present = list(data.columns.columns_present)
    after = data.columns.get("columns_present_after")
    images = {"insert": [present], "delete": [present],
              "update": [present, list(after) if after is not None else present]}[op]
    if len(present) != len(table.columns):
        raise ValueError(f"the rows event has {len(present)} columns, the TABLE_MAP of "
                         f"{table.db}.{table.table} {len(table.columns)}")
    return dict(ctx, columns=table.columns, images=images, json_columns=table.json_columns)


def row_runs(rows_bytes: bytes, base: int, ctx: dict, data, table) -> list:
    """Runs of the row images of a rows event: `row N before|after: part`, one run per cell."""
    rctx = _row_ctx(ctx, data, table)
    names = IMAGE_NAMES[EVENTS[int(ctx["type_code"])].row_op]
    _, spans = layout.record(T.row_images, rows_bytes, **rctx)
    out = []
    for top in spans:  # "rows"
        for r, row in enumerate(top.children):
            for images in row.children:  # "images"
                for j, img in enumerate(images.children):
                    who = f"row {r + 1} {names[j] if j < len(names) else f'image {j + 1}'}"
                    out += _image_runs(img, who, base, table)
    return out


def _image_runs(img, who: str, base: int, table) -> list:
    out = []
    present = img.value.get("present") if img.value is not None else None
    for part in img.children:
        if not part.size:
            continue
        if part.name == "cells":
            for k, cell in enumerate(part.children):
                if not cell.size:
                    continue
                c = table.columns[k]
                out.append(Run(base + cell.start, base + cell.end,
                               f"{who}: {c.name} ({c.type_name}) = {fmt_cell(cell.value, c)}"))
        elif part.name == "null_bits":
            bits = list(part.value or ())
            text = "bits " + "".join("1" if b else "0" for b in bits)
            cols = [c for c, p in zip(table.columns, present or ()) if p]
            nulls = [c.name for c, b in zip(cols, bits) if b]
            text += f" (NULL: {', '.join(nulls)})" if nulls else " (no NULLs)"
            out.append(Run(base + part.start, base + part.end, f"{who}: null_bits = {clip(text)}"))
        else:
            out.append(Run(base + part.start, base + part.end, labelled(f"{who}: {part.name}",
                                                                         part.value, part.name)))
    return fill(out, base + img.start, base + img.end, f"{who}: (unlabelled)")
