"""C readers of an event's fields, generated from its spec: for the compiled loops (lanes.h) that
write or count events whose layout is a sequence of conditional fields (MySQL's GTID and
ANONYMOUS_GTID, QUERY_EVENT and its status variables).

A reader walks the event's data d[0:end] as the Python readers do (generated/fast.py): every
field in spec order, its `if:` through codegen.c_expr (over the fields read before it,
`remaining`, ctx.post_header_len and ctx.type_code), each read bounded by the data's length, a
`size:` on a struct or TLV field making a sub-range that must be used up, and the event's end
reached exactly. It returns 0 with the fields the loop asked for (`wanted`: integers and the
spans of byte and text fields, and the first value of TLV cases by id), or -1 where the Python
reader would raise (or read what this reader does not know): the loop then stops and the Python
path reads the event. What it reads: little-endian integers of 1 to 8 bytes (a `const:` checked),
packed integers, bytes and text of a fixed, field-given or `rest` size, with a u8 prefix or a NUL
terminator, repeated by a field's count; named types, structs, switches whose cases all are the
same integer, TLVs with a u8 tag and no length (an unknown tag ends the block, as `unknown: stop`
says). Anything else in a spec is a SpecError at generation time: change this module with the
spec.
"""
from __future__ import annotations

from ..errors import SpecError
from . import c_expr

_CTX = {"ctx_post_header_len", "ctx_type_code"}


class _Reader:
    def __init__(self, specs, where, wanted, cases):
        self.specs, self.where = specs, where
        self.wanted, self.cases = wanted, cases  # {field id: kind}, {case id: kind}
        self.found = set()
        self.n = 0

    def fail(self, f, why):
        raise SpecError(f"the compiled loops read {self.where}.{f.id} in C but not {why}; change "
                        "codegen/c_fields.py with the spec", f.file, f.line, self.where)

    def tmp(self) -> str:
        self.n += 1
        return f"t{self.n}"

    # -- a scope of fields: [C lines], the bg_val variables its conditions read --------------
    def seq(self, fields, depth, top=False) -> list:
        tr = c_expr.CTranslator(self.specs.enum_values())
        self.n += 1
        tr.scope = f"@@{self.n}:"
        body = []
        for f in fields:
            body += self.field(f, tr, depth, top)
        ids = {f.id for f in fields}
        names = {v for v in tr.variables if v not in _CTX and v != "v_remaining"}
        if any(v[2:] not in ids for v in names):
            raise SpecError(f"the compiled loops' C readers bind a scope's own fields only, not "
                            f"{sorted(names)}", fields[0].file, fields[0].line, self.where)
        pad = "    " * depth
        out = [f"{pad}bg_val {v} = bg_null();" for v in sorted(names)]
        for line in body:  # a field's value goes to its bg_val when a condition reads it
            at = line.find(tr.scope)
            if at < 0:
                out.append(line)
                continue
            fid = line[at + len(tr.scope):line.index("@@", at + 2)]
            if "v_" + fid in names:
                out.append(line.replace(f"{tr.scope}{fid}@@", "v_" + fid))
        return out

    def cond(self, f, tr):
        try:
            return tr.translate(f.cond)
        except c_expr.Unsupported as e:
            self.fail(f, f"its condition ({e})")

    def field(self, f, tr, depth, top) -> list:
        if f.repeat_until is not None or f.decode or f.value is not None or f.pad is not None:
            self.fail(f, "a field repeated until, decoded, computed or padded")
        inner = self.value(f, f.type, tr, depth + (f.cond is not None), top, f.id)
        if f.repeat is not None:
            if not isinstance(f.repeat, tuple) or f.repeat[0] != "name":
                self.fail(f, "a repeat other than a field's count")
            k = self.tmp()
            count = tr.translate(f.repeat)
            pad = "    " * (depth + (f.cond is not None))
            inner = [f"{pad}{{ bg_val {k} = {count};",
                     f"{pad}if ({k}.k != BG_INT || {k}.i < 0) return -1;",
                     f"{pad}for (int64_t i_{k} = 0; i_{k} < {k}.i; i_{k}++) {{"] + \
                ["    " + x for x in inner] + [f"{pad}}} }}"]
        if f.cond is None:
            return inner
        pad = "    " * depth
        test = self.cond(f, tr)
        return [f"{pad}v_remaining = bg_int(end - pos);", f"{pad}if (bg_truth({test})) {{"] + \
            inner + [f"{pad}}}"]

    def resolve(self, t):
        """A named type's field (its type and modifiers), followed to the end."""
        seen = 0
        f = None
        while t.kind == "named" and t.name in self.specs.types and seen < 16:
            f = self.specs.types[t.name].field
            t, seen = f.type, seen + 1
        return t, f

    def value(self, f, t, tr, depth, top, fid) -> list:
        pad = "    " * depth
        named = None
        if t.kind == "named" and t.name != "packed":
            t, named = self.resolve(t)
        prefix = f.prefix or (named.prefix if named is not None else None)
        terminator = f.terminator if f.terminator is not None else \
            (named.terminator if named is not None else None)
        out_int = top and self.wanted.get(fid) == "int"
        out_span = top and self.wanted.get(fid) == "span"
        case_int = self.cases.get(fid) == "int" and not top
        if out_int or out_span:
            self.found.add(fid)
        if case_int:
            self.found.add(fid)
        if t.kind == "switch":
            widths = {self.int_of(f, self.resolve(c)[0]) for _k, c, _s in t.cases} | \
                ({self.int_of(f, self.resolve(t.default)[0])} if t.default is not None else set())
            if len(widths) != 1:
                self.fail(f, "a switch whose cases differ")
            t = self.resolve(t.cases[0][1])[0]
        if t.kind == "int":
            w, signed = self.int_of(f, t), t.signed
            x = self.tmp()
            lines = [f"{pad}if (end - pos < {w}) return -1;",
                     f"{pad}uint64_t {x} = bg_le_uint(d + pos, {w});", f"{pad}pos += {w};",
                     f"{pad}(void){x};"]
            val = f"(int64_t){x}" if not signed or w == 8 else \
                f"(int64_t)({x} ^ (1ULL << {8 * w - 1})) - (int64_t)(1ULL << {8 * w - 1})"
            if f.const is not None:
                lines.append(f"{pad}if ({x} != {int(f.const)}ULL) return -1;")
            lines.append(f"{pad}{tr.scope}{fid}@@ = bg_int({val});")
            if out_int:
                lines.append(f"{pad}o->{fid} = {x};")
                lines.append(f"{pad}o->has_{fid} = 1;")
            if case_int:
                lines.append(f"{pad}if (!o->has_{fid}) {{ o->{fid} = {x}; o->has_{fid} = 1; }}")
            return lines
        if f.const is not None:
            self.fail(f, "a constant that is not an integer")
        if t.kind == "packed":
            x = self.tmp()
            return [f"{pad}uint64_t {x};", f"{pad}int k{x} = bg_lanes_packed(d + pos, end - pos, &{x});",
                    f"{pad}if (k{x} < 0) return -1;", f"{pad}pos += k{x};",
                    f"{pad}{tr.scope}{fid}@@ = bg_int((int64_t){x});"]
        if t.kind in ("bytes", "str"):
            size = f.size if f.size is not None else (named.size if named is not None else None)
            n = self.tmp()
            if prefix is not None:
                if size is not None or prefix.kind != "int" or prefix.width != 1:
                    self.fail(f, "a prefix other than one byte")
                lines = [f"{pad}if (end - pos < 1) return -1;", f"{pad}int64_t {n} = d[pos++];"]
            elif terminator is not None:
                if size is not None or terminator != 0:
                    self.fail(f, "a terminator other than NUL")
                z = self.tmp()
                lines = [f"{pad}const uint8_t *{z} = memchr(d + pos, 0, (size_t)(end - pos));",
                         f"{pad}if ({z} == NULL) return -1;",
                         f"{pad}int64_t {n} = {z} - (d + pos);"]
            elif size == "rest":
                lines = [f"{pad}int64_t {n} = end - pos;"]
            elif size is not None:
                s = self.tmp()
                lines = [f"{pad}v_remaining = bg_int(end - pos);",
                         f"{pad}bg_val {s} = {self.translate(f, tr, size)};",
                         f"{pad}if ({s}.k != BG_INT) return -1;", f"{pad}int64_t {n} = {s}.i;"]
            else:
                self.fail(f, "bytes without a size")
            lines.append(f"{pad}if ({n} < 0 || {n} > end - pos) return -1;")
            if out_span:
                lines += [f"{pad}o->{fid} = d + pos;", f"{pad}o->{fid}_len = {n};"]
            lines.append(f"{pad}pos += {n};")
            if terminator is not None:
                lines.append(f"{pad}pos += 1;")
            return lines
        if t.kind in ("struct", "tlv"):
            size = f.size
            if size is None:
                return self.block(f, t, depth)
            s, e = self.tmp(), self.tmp()
            return [f"{pad}v_remaining = bg_int(end - pos);",
                    f"{pad}bg_val {s} = {self.translate(f, tr, size)};",
                    f"{pad}if ({s}.k != BG_INT || {s}.i < 0 || {s}.i > end - pos) return -1;",
                    f"{pad}{{ int64_t {e} = end; end = pos + {s}.i;"] + \
                self.block(f, t, depth + 1) + \
                [f"{pad}if (pos != end) return -1;", f"{pad}end = {e}; }}"]
        self.fail(f, f"type {t.describe()}")

    def translate(self, f, tr, expr):
        try:
            return tr.translate(expr)
        except c_expr.Unsupported as e:
            self.fail(f, f"its size ({e})")

    def int_of(self, f, t) -> int:
        if t.kind != "int" or t.endian != "le" or not 1 <= t.width <= 8:
            self.fail(f, f"a value of type {t.describe()} (little-endian integers only)")
        return t.width

    def block(self, f, t, depth) -> list:
        pad = "    " * depth
        if t.kind == "struct":
            return [f"{pad}{{"] + self.seq(t.fields, depth + 1) + [f"{pad}}}"]
        if t.length is not None or t.end != "eos" or t.unknown != "stop" or \
                t.tag.kind != "int" or t.tag.width != 1:
            self.fail(f, "a TLV other than a u8 tag, no length, to the end, stopping at an "
                         "unknown tag")
        lines = [f"{pad}for (int go = 1; go && pos < end;) {{",
                 f"{pad}    unsigned tag = d[pos++];", f"{pad}    switch (tag) {{"]
        for key, cf in t.cases:
            lines.append(f"{pad}    case {int(key)}: {{")
            lines += self.seq([cf], depth + 2)
            lines += [f"{pad}        break;", f"{pad}    }}"]
        lines += [f"{pad}    default: pos = end; go = 0; break;  /* unknown: the rest is kept raw */",
                  f"{pad}    }}", f"{pad}}}"]
        return lines


def reader(specs, event: str, name: str, wanted: dict, cases: dict | None = None) -> str:
    """The C of `static int bg_lanes_read_<name>(d, end, phl, code, o)` and its output struct
    bg_lanes_<name>, for the event named `event`. wanted: {field id: "int" or "span"} of the
    event's own fields; cases: {TLV case id: "int"} (the first value of each)."""
    ed = next((ed for ed in specs.events if any(n.name == event for n in ed.names)), None)
    if ed is None:
        raise SpecError(f"no event {event} in the specs", "", 0, event)
    cases = cases or {}
    r = _Reader(specs, event, wanted, cases)
    body = r.seq(ed.fields, 1, top=True)
    missing = (set(wanted) | set(cases)) - r.found
    if missing:
        raise SpecError(f"the compiled loops read {sorted(missing)} of {event}, which its spec "
                        "does not have as they read it", ed.file, ed.line, event)
    lines = body
    members = []
    for fid, kind in list(wanted.items()) + list(cases.items()):
        members.append(f"    uint64_t {fid}; int has_{fid};" if kind == "int"
                       else f"    const uint8_t *{fid}; int64_t {fid}_len;")
    return "\n".join([
        f"/* {event}'s fields ({ed.file}), read by codegen/c_fields.py's reader */",
        f"typedef struct bg_lanes_{name} {{", *members, f"}} bg_lanes_{name};", "",
        f"static inline int bg_lanes_read_{name}(const uint8_t *d, int64_t end, int phl, int code,",
        f"                                       bg_lanes_{name} *o)", "{",
        "    int64_t pos = 0;",
        "    bg_val v_remaining, ctx_post_header_len = bg_int(phl), ctx_type_code = bg_int(code);",
        "    (void)v_remaining; (void)ctx_post_header_len; (void)ctx_type_code;",
        "    memset(o, 0, sizeof *o);",
        *lines,
        "    return pos == end ? 0 : -1;", "}"])
