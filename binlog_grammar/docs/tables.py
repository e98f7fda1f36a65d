"""The field tables of a struct (with the tables of what is inline in it: structs, switches, TLV
lists) and the hex examples: an event built by the generated struct from an example value, dumped
with [n] markers that point at the rows of its field table, and the legend."""
from __future__ import annotations

import json

from ..runtime import spans as layout
from ..runtime import construct as rt
from ..lang.model import EventDef, Field, TypeSpec
from . import examples as X
from .blocks import C, FACTS, H, L, ROW, T, TABLE, DocsError, join, src, version_rich
from .model import Model, field_anchor

BYTES_PER_LINE = 16
HEX_COLORS = 8


# ---------------------------------------------------------------------------------------------
# field tables

LAYOUT_HEAD = ["#", "Position", "Size", "Field", "Type", "Meaning", "Condition", "Versions", "Source"]
STRUCT_HEAD = LAYOUT_HEAD


class StructTables:
    """The field table of one struct and the tables of what is inline in it."""

    def __init__(self, model: Model, page: str, anchor_fn, search_kind: str, owner: str,
                 reserved=()):
        self.m = model
        self.page = page
        self.anchor_fn = anchor_fn  # dotted field path -> anchor on the page
        self.reserved = set(reserved)  # anchors the page already uses
        self.kind = search_kind
        self.owner = owner
        self.subs = []  # blocks of inline structs / switches / TLVs, in order
        self.search = []

    def sub_anchor(self, path):
        return "s-" + self.anchor_fn(path)

    def anchor(self, path):
        a = self.anchor_fn(path)
        return None if a in self.reserved else a

    def rows(self, fields, path_prefix="", number_from=1, offset0=0):
        rows = []
        offset = offset0
        prev = None
        for i, f in enumerate(fields):
            path = f"{path_prefix}{f.id}"
            if offset is not None:
                pos = [T(str(offset))]
            else:
                pos = [T("after "), C(prev)]
            sub = self.inline(f, path)
            cells = [
                [T(str(number_from + i))],
                pos,
                self.m.size_rich(f),
                [C(f.id)],
                self.m.type_rich(f, self.page, sub),
                self.m.meaning_rich(f),
                [C(src(f.cond))] if f.cond is not None else [],
                version_rich(f.since, f.until),
                [T(f.doc_ref)] if f.doc_ref else [],
            ]
            anchor = self.anchor(path)
            rows.append(ROW(cells, anchor=anchor, cls="field"))
            if anchor is not None:
                self.search.append((self.title(path), anchor, self.kind, f.doc))
            n = self.m.field_fixed(f)
            offset = offset + n if (offset is not None and n is not None) else None
            prev = f.id
        return rows

    def inline(self, f: Field, path):
        """Blocks for what a field defines inline; returns the anchor of the first, or None."""
        t = f.type
        if t.kind == "struct":
            anchor = self.sub_anchor(path)
            blocks = [H(4, [C(path), T(" (inline struct)")], anchor),
                      TABLE(STRUCT_HEAD, [], cls="layout", name=f"{self.owner}.{path}")]
            self.subs.append(blocks)  # reserve the place before the inner tables
            blocks[1]["rows"] = self.rows(t.fields, path + ".")
            return anchor
        if t.kind == "switch":
            anchor = self.sub_anchor(path)
            self.subs.append(self.switch_blocks(t, path, anchor))
            return anchor
        if t.kind == "tlv":
            anchor = self.sub_anchor(path)
            blocks = [H(4, [C(path), T(" (TLV list)")], anchor)]
            self.subs.append(blocks)
            blocks += tlv_blocks(self, t, path)
            return anchor
        return None

    def title(self, path):
        return path if path.split(".")[0] == self.owner else f"{self.owner}.{path}"

    def switch_blocks(self, t: TypeSpec, path, anchor):
        rows = []
        inline = []
        for key, ct, key_src in t.cases:
            ctype = self.case_type(ct, path)
            if ct.kind == "struct":  # an inline struct case: its own table after this one
                sub = f"{self.sub_anchor(path)}-{key}"
                ctype = [L("struct", self.page, sub, code=False)]
                inline += [H(4, [C(path), T(" when the switch is "), C(key_src)], sub),
                           TABLE(STRUCT_HEAD, self.rows(ct.fields, path + "."), cls="layout",
                                 name=f"{self.owner}.{path}[{key_src}]")]
            rows.append(ROW([[C(key_src)], ctype, self.m.elem_size_rich(ct),
                             self.case_doc(ct)], cls="case"))
        if t.default is not None:
            rows.append(ROW([[T("any other value")], self.case_type(t.default, path),
                             self.m.elem_size_rich(t.default), self.case_doc(t.default)], cls="case"))
        else:
            rows.append(ROW([[T("any other value")], [T("parse error")], [], []], cls="case"))
        return [H(4, [C(path), T(": switch on "), C(src(t.switch_on))], anchor),
                TABLE(["Case", "Type", "Size", "Meaning"], rows, cls="cases",
                      name=f"{self.owner}.{path}")] + inline

    def case_type(self, ct: TypeSpec, path):
        if ct.kind == "named":
            return [L(ct.name, "types", ct.name)]
        if ct.kind == "int":
            return [C(ct.name)]
        if ct.kind in ("packed", "sv_uint", "sv_sint", "empty"):
            return [L(ct.kind, "types", f"builtin-{ct.kind}")]
        return [T(ct.kind)]

    def case_doc(self, ct: TypeSpec):
        if ct.kind == "named":
            return [T(self.m.specs.types[ct.name].doc)]
        if ct.kind == "empty":
            return [T("No bytes.")]
        return []


TLV_HEAD = ["Tag", "Name", "Field", "Type", "Size", "Meaning", "Versions", "Source"]


def tlv_blocks(tables: StructTables, t: TypeSpec, path):
    m = tables.m
    tag_type = t.tag.name if t.tag.kind in ("int", "named") else t.tag.kind
    if t.length is None:
        length = [T("no length: each case's type knows its own size")]
    else:
        lname = t.length.name if t.length.kind in ("int", "named") else t.length.kind
        length = [C(lname), T(" length after the tag")]
    end = [T("the end of the region")] if t.end == "eos" else [T("tag "), C(str(t.end)), T(" (carries nothing)")]
    unknown = {"stop": [T("kept raw with every byte after it; the list ends there")],
               "skip": [T("its value is kept raw and the list goes on")],
               "error": [T("a parse error")]}[t.unknown]
    facts = FACTS([("Tag", [C(tag_type)] + ([T(", enum "), L(t.tag_enum, "enums", t.tag_enum)] if t.tag_enum else [])),
                   ("Length", length), ("Ends at", end), ("Unknown tag", unknown)])
    names = m.specs.enums[t.tag_enum].members if t.tag_enum else {}
    rows = []
    for key, cf in t.cases:
        cpath = f"{path}.{cf.id}" if path else cf.id
        sub = tables.inline(cf, cpath)
        name = names.get(key, (None, ""))[0]
        anchor = tables.anchor(cpath)
        rows.append(ROW([[T(str(key))], [C(name)] if name else [], [C(cf.id)],
                         m.type_rich(cf, tables.page, sub), m.size_rich(cf), m.meaning_rich(cf),
                         version_rich(cf.since, cf.until), [T(cf.doc_ref)] if cf.doc_ref else []],
                        anchor=anchor, cls="field"))
        tables.search.append((tables.title(cpath), anchor, tables.kind, cf.doc))
    return [facts, TABLE(TLV_HEAD, rows, cls="tlv", name=f"{tables.owner}.{path}")]


def struct_section(model: Model, page: str, fields, owner: str, anchor_fn, kind: str,
                   split_sections=False, reserved=()):
    """Blocks of a struct's field table(s) and its inline parts; (blocks, search entries)."""
    st = StructTables(model, page, anchor_fn, kind, owner, reserved)
    blocks = []
    if split_sections:
        ph = [f for f in fields if f.section == "post_header"]
        body = [f for f in fields if f.section != "post_header"]
        ph_rows = st.rows(ph)
        fixed = 0
        for f in ph:
            n = model.field_fixed(f)
            fixed = fixed + n if (fixed is not None and n is not None) else None
        body_rows = st.rows(body, number_from=len(ph) + 1, offset0=fixed)
        if body_rows and ph and fixed is None:
            body_rows[0]["cells"][1] = [T("after "), C(ph[-1].id)]
        if ph_rows:
            blocks += [H(3, "Post-header", "post-header"),
                       TABLE(LAYOUT_HEAD, ph_rows, cls="layout", name=owner)]
        if body_rows:
            blocks += [H(3, "Body", "body"), TABLE(LAYOUT_HEAD, body_rows, cls="layout", name=owner)]
    else:
        blocks.append(TABLE(STRUCT_HEAD, st.rows(fields), cls="layout", name=owner))
    for sub in st.subs:
        blocks += sub
    return blocks, st.search


# ---------------------------------------------------------------------------------------------
# hex examples

def fmt_value(v, limit=48) -> str:
    if v is None:
        return "absent"
    if isinstance(v, rt.EnumValue):
        s = f"{int(v)} ({v.name})" if v.name else str(int(v))
    elif isinstance(v, rt.FlagsValue):
        s = f"{hex(int(v))} ({'|'.join(v.names)})" if v.names else hex(int(v))
    elif isinstance(v, bool):
        s = "true" if v else "false"
    elif isinstance(v, int):
        s = str(int(v)) if not 0x10000 <= v else f"{int(v)} (0x{int(v):x})"
    elif isinstance(v, str):
        s = json.dumps(v)
    elif isinstance(v, (bytes, bytearray)):
        s = " ".join(f"{b:02x}" for b in v) if v else "(empty)"
    elif isinstance(v, rt.Version):
        s = str(v)
    elif isinstance(v, dict):
        s = "{" + ", ".join(k for k in v if not str(k).startswith("_")) + "}"
    elif isinstance(v, (list, tuple)):
        if all(isinstance(x, bool) for x in v):
            s = "bits " + "".join("1" if x else "0" for x in v) if v else "[]"
        elif all(isinstance(x, int) and not isinstance(x, bool) for x in v):
            s = "[" + ", ".join(fmt_value(x, limit) for x in v) + "]"
        else:
            s = f"[{len(v)} element{'s' if len(v) != 1 else ''}]"
    else:
        s = str(v)
    return s if len(s) <= limit else s[:limit - 1] + "…"


def event_examples(ev: EventDef, maker: X.ExampleMaker):
    """One example per distinct byte string of the event's type codes (codes whose examples build
    the same bytes and parse to the same value share one)."""
    out = []
    for n in ev.names:
        try:
            ex = X.event_example(maker, ev, n.code)
        except X.ExampleError as e:
            raise DocsError(str(e)) from None
        key = (ex.data, repr(X.plain(ex.value)))
        for prev in out:
            if (prev.data, repr(X.plain(prev.value))) == key:
                prev.names.append(n.name)
                prev.codes.append(n.code)
                break
        else:
            out.append(ex)
    return out


def hex_block(ex: X.EventExample, fields, page_id):
    """The hex dump with [n] markers (n = row of the field table) and the legend."""
    number = {f.id: i + 1 for i, f in enumerate(fields)}
    names = {i + 1: f.id for i, f in enumerate(fields)}
    starts = {}
    for s in ex.spans:
        if s.size:
            starts[s.start] = number.get(s.name, 0)
    owner = [0] * len(ex.data)
    for s in ex.spans:
        for b in range(s.start, s.end):
            owner[b] = number.get(s.name, 0)
    lines = []
    for off in range(0, len(ex.data), BYTES_PER_LINE):
        chunk = ex.data[off:off + BYTES_PER_LINE]
        runs = []
        for j, b in enumerate(chunk):
            pos = off + j
            n = owner[pos]
            if pos in starts or not runs or runs[-1]["n"] != n:
                runs.append({"marker": f"[{starts[pos]}]" if pos in starts else "", "n": n,
                             "color": n % HEX_COLORS, "bytes": []})
            runs[-1]["bytes"].append(f"{b:02x}")
        for r in runs:
            r["hex"] = " ".join(r["bytes"])
            r["text"] = (r["marker"] + " " if r["marker"] else "") + r["hex"]
            r["title"] = f"[{r['n']}] {names.get(r['n'], '')}"
        ascii_ = "".join(chr(b) if 0x20 <= b < 0x7F else "." for b in chunk)
        width = sum(len(r["text"]) for r in runs) + len(runs) - 1
        lines.append({"offset": f"{off:06x}", "runs": runs, "ascii": ascii_, "width": width})
    # pad the hex column so the ascii column lines up
    width = max((ln["width"] for ln in lines), default=0)
    for ln in lines:
        ln["pad"] = " " * (width - ln["width"])
    legend = []
    for s in ex.spans:
        n = number.get(s.name, 0)
        legend.append(legend_row(str(n), s.name, s, ex.data, page_id, field_anchor(s.name), top=True))
        k = 0
        for path, sub in layout.flatten(s.children, s.name):
            k += 1
            legend.append(legend_row(f"{n}.{k}", path, sub, ex.data, page_id, None, top=False))
    return {"kind": "hex", "lines": lines,
            "legend": TABLE(["#", "Field", "Offset", "Bytes", "Value"], legend, cls="legend")}


def legend_row(num, path, span, data, page_id, anchor, top):
    raw = data[span.start:span.end]
    absent = span.value is None and not span.name.startswith("[")
    if span.size == 0:
        shown = [T("absent" if absent else "0 bytes")]
    else:
        hexes = " ".join(f"{b:02x}" for b in raw[:12]) + (" …" if len(raw) > 12 else "")
        shown = [C(hexes), T(f" ({span.size})")]
    name = [L(path, page_id, anchor)] if anchor else [C(path)]
    value = [] if span.value is None else [T(fmt_value(span.value))]
    return ROW([[T(f"[{num}]" if top else num)], name, [T(str(span.start))], shown, value],
               cls="top" if top else "sub")


def ctx_rich(ctx):
    parts = []
    for k in sorted(ctx):
        v = ctx[k]
        parts.append([C(f"ctx.{k} = {v if not isinstance(v, rt.Version) else str(v)}")])
    return join(parts, ", ")
