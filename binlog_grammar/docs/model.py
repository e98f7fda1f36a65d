"""Lookups over the validated specs that several pages need (where each named type and enum is
used, how many bytes a field takes, how its type and meaning read) and the names of pages and
anchors."""
from __future__ import annotations

from ..lang.model import EventDef, Field, SpecSet, TypeSpec
from .blocks import C, L, T, src

FLAVORS = (("mysql", "MySQL"), ("mariadb", "MariaDB"))


class Model:
    """Lookups over the validated specs that several pages need."""

    def __init__(self, specs: SpecSet):
        self.specs = specs
        self.enums = specs.enum_values()
        self.used_by_type = {}  # type name -> {(page, anchor, label)}
        self.used_by_enum = {}
        for ev in specs.events:
            page = event_page_id(ev)
            for f, path in iter_fields(ev.fields):
                self._note_uses(f, (page, field_anchor(path), f"{ev.layout}.{path}"))
        for name, td in specs.types.items():
            for f, path in iter_fields([td.field]):
                label = name if path == name else f"{name}.{path[len(name) + 1:]}"
                self._note_uses(f, ("types", name, label))

    def _note_uses(self, f: Field, where):
        for t in iter_typespecs(f.type):
            if t.kind == "named":
                self.used_by_type.setdefault(t.name, set()).add(where)
            if t.kind == "tlv" and t.tag_enum:
                self.used_by_enum.setdefault(t.tag_enum, set()).add(where)
        for t in [f.prefix] if f.prefix else []:
            if t.kind == "named":
                self.used_by_type.setdefault(t.name, set()).add(where)
        for name in (f.enum, f.flags):
            if name:
                self.used_by_enum.setdefault(name, set()).add(where)

    def resolve(self, t: TypeSpec) -> TypeSpec:
        while t.kind == "named":
            t = self.specs.types[t.name].field.type
        return t

    # -- sizes ------------------------------------------------------------------------------
    def type_fixed(self, t: TypeSpec):
        k = t.kind
        if k in ("int", "float"):
            return t.width
        if k in ("empty", "computed"):
            return 0
        if k == "named":
            return self.field_fixed(self.specs.types[t.name].field)
        if k == "struct":
            total = 0
            for f in t.fields:
                n = self.field_fixed(f)
                if n is None:
                    return None
                total += n
            return total
        if k == "switch":
            sizes = {self.type_fixed(c) for _k, c, _s in t.cases}
            if t.default is not None:
                sizes.add(self.type_fixed(t.default))
            return sizes.pop() if len(sizes) == 1 else None
        if k == "bitmap" and isinstance(t.bits, tuple) and t.bits[0] == "num":
            return (t.bits[1] + 7) // 8
        return None

    def field_fixed(self, f: Field, ignore_cond=False):
        """Bytes the field always takes, or None."""
        if f.cond is not None and not ignore_cond:
            return None
        if f.repeat_until is not None:
            return None
        if f.prefix is not None or f.terminator is not None:
            return None
        if isinstance(f.size, tuple) and f.size[0] == "num":
            return f.size[1]
        if f.size is not None:
            return None
        if f.type.kind == "bitmap":
            elem = self.type_fixed(f.type)
        elif f.type.kind in ("bytes", "str", "uintvar"):
            return None
        else:
            elem = self.type_fixed(f.type)
        if elem is None:
            return None
        if f.repeat is None:
            return elem
        if isinstance(f.repeat, tuple) and f.repeat[0] == "num":
            return f.repeat[1] * elem
        return None

    def size_rich(self, f: Field):
        """Bytes the field takes: a number, or the spec's expression, or how it ends."""
        n = self.field_fixed(f, ignore_cond=True)
        if n is not None:
            return [T(str(n))]
        if f.size == "rest":
            return [T("rest of the region")]
        if isinstance(f.size, tuple):  # of the value, or of the whole array
            return [C(src(f.size))]
        if f.prefix is not None:
            pt = f.prefix.name if f.prefix.kind in ("int", "named") else f.prefix.kind
            elem = [C(pt), T(" length, then that many")]
        elif f.terminator is not None:
            elem = [T("up to and including a "), C(f"0x{f.terminator:02x}")]
        else:
            elem = self.elem_size_rich(f.type)
        if f.repeat == "eos":
            return elem + [T(", repeated to the end of the region")]
        if f.repeat_until is not None:
            return elem + [T(", repeated until "), C(src(f.repeat_until))]
        if f.repeat is not None:
            return [C(src(f.repeat)), T(" × ")] + elem
        return elem

    def elem_size_rich(self, t: TypeSpec):
        n = self.type_fixed(t)
        if n is not None:
            return [T(str(n))]
        k = t.kind
        if k == "packed":
            return [T("1, 3, 4 or 9")]
        if k in ("sv_uint", "sv_sint"):
            return [T("1 to 9")]
        if k == "bitmap":
            return [C(f"({src(t.bits)} + 7) / 8")]
        if k == "tlv":
            return [T("to the end of the region")]
        if k == "switch":
            return [T("by case")]
        return [T("varies")]

    # -- types ------------------------------------------------------------------------------
    def type_rich(self, f: Field, page: str, sub_anchor=None):
        t = f.type
        k = t.kind
        out = []
        if f.repeat is not None or f.repeat_until is not None:
            out.append(T("array of "))
        if k in ("int", "float"):
            out.append(C(t.name))
        elif k == "computed":
            out += [T("computed: "), C(src(f.value))]
        elif k == "decimal":
            out += [C("decimal"), T(" (precision "), C(src(t.args["precision"])), T(", scale "),
                    C(src(t.args["scale"])), T(")")]
        elif k == "json_binary":
            out.append(C("json_binary"))
        elif k == "uintvar":
            out.append(C(f"uint{t.endian}"))
        elif k in ("packed", "sv_uint", "sv_sint", "empty"):
            out.append(L(k, "types", f"builtin-{k}"))
        elif k in ("bytes", "str"):
            out.append(L(k, "types", f"builtin-{k}"))
            if f.prefix is not None:
                pname = f.prefix.name if f.prefix.kind in ("int", "named") else f.prefix.kind
                out += [T(", "), C(pname), T(" length prefix")]
            elif f.terminator is not None:
                out.append(T(", NUL-terminated" if f.terminator == 0 else f", ends at 0x{f.terminator:02x}"))
            if f.pad is not None:
                out.append(T(", NUL-padded" if f.pad == 0 else f", padded with 0x{f.pad:02x}"))
        elif k == "bitmap":
            out.append(L("bitmap", "types", "builtin-bitmap"))
            out.append(T(" (bit 0 first)" if t.order == "lsb" else " (MSB first)"))
        elif k == "named":
            out.append(L(t.name, "types", t.name))
        elif k in ("struct", "switch", "tlv"):
            label = {"struct": "struct", "switch": "switch", "tlv": "TLV list"}[k]
            out.append(L(label, page, sub_anchor, code=False) if sub_anchor else T(label))
        if f.enum:
            out += [T(", enum "), L(f.enum, "enums", f.enum)]
        if f.flags:
            out += [T(", flags "), L(f.flags, "enums", f.flags)]
        return out

    def meaning_rich(self, f: Field):
        out = [T(f.doc)]
        if f.const is not None:
            c = f.const
            shown = " ".join(f"{b:02x}" for b in c) if isinstance(c, list) else str(c)
            out += [T(" Always "), C(shown), T(".")]
        if f.rebuild is not None:
            out += [T(" Written as "), C(src(f.rebuild)), T(".")]
        if f.decode:
            d = f.decode
            out += [T(f" Compressed ({d['codec']})")]
            if d.get("if") is not None:
                out += [T(" when "), C(src(d["if"]))]
            out += [T("; holds "), C(str(d["as"])), T(".")]
        return out


def iter_typespecs(t: TypeSpec):
    """t and every TypeSpec inside it (switch cases, struct fields' types are not included)."""
    yield t
    if t.kind == "switch":
        for _k, c, _s in t.cases:
            yield from iter_typespecs(c)
        if t.default is not None:
            yield from iter_typespecs(t.default)
    if t.kind == "tlv":
        if t.tag is not None:
            yield t.tag
        if t.length is not None:
            yield t.length


def iter_fields(fields, prefix=""):
    """(field, dotted path) of every field, with the fields of inline structs, switch cases and
    TLV cases after their owner."""
    for f in fields:
        path = f"{prefix}{f.id}"
        yield f, path
        yield from _inner_fields(f.type, path)


def _inner_fields(t: TypeSpec, path):
    if t.kind == "struct":
        yield from iter_fields(t.fields, path + ".")
    elif t.kind == "switch":
        for _k, c, _s in t.cases:
            yield from _inner_fields(c, path)
        if t.default is not None:
            yield from _inner_fields(t.default, path)
    elif t.kind == "tlv":
        for _k, cf in t.cases:
            yield from iter_fields([cf], path + ".")


def field_anchor(path: str) -> str:
    return "f-" + path


def event_page_id(ev: EventDef) -> str:
    return f"events/{ev.layout.lower()}"


def event_title(ev: EventDef) -> str:
    return ", ".join(n.name for n in ev.names)


def flavor_name(flavor: str) -> str:
    return dict(FLAVORS).get(flavor, flavor)
