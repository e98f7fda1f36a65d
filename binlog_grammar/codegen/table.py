"""Readers specialised for one table: the `row_images` spec partially evaluated with the table's
columns, compiled once per TABLE_MAP (and per shape of the event's column bitmaps) and cached.

With the columns known, nearly everything in the row-image specs is a constant: which layout each
column has (`column_value` switches on `col.type`), its sizes (`col.meta`), signedness, the number
of NULL bits, which image holds which columns. This module walks the same validated model as
codegen.construct and codegen.python, evaluates every expression it can with those constants, and writes one
Python function for the table in which only what truly varies from row to row remains: NULL bits,
lengths, the values. Switches with a known key keep only their case; arrays of a known length are
unrolled; named types are inlined; `as:` adapters and the two algorithm types are called as in the
other paths. A construct this specialiser does not handle falls back, for that type only, to the
generic reader of generated/fast.py; and tests/codegen/test_fastpath.py checks all three paths
agree.
"""
from __future__ import annotations

import itertools
import struct

from ..lang import expr as E
from ..runtime import construct as rt
from ..runtime import fast as fastrt
from ..runtime.bitmaps import bits_of_int
from ..lang.model import Field, TypeSpec

UNROLL = 1024  # arrays of a known length up to this are unrolled


class Unsupported(Exception):
    pass


class _Scope:
    def __init__(self, parent=None, index=None, col=None):
        self.parent = parent
        self.values = {}  # field id -> ("c", value) | ("r", code)
        self.index = index  # ("c", i) | ("r", code) | None
        self.col = col if col is not None else (parent.col if parent else None)


class _Spec:
    def __init__(self, specs, ctx):
        self.specs = specs
        self.enums = specs.enum_values()
        self.ctx = ctx
        self.consts = []
        self.n = itertools.count()
        self.lines = []
        self._adapters = fastrt.CHECKED_ADAPTERS  # adapters whose refusals are FastPathError
        self.items = {}  # list variable of an unrolled array -> the code of each element
        self.images = False  # the "images" form (see reader)

    # -- constants and variables ------------------------------------------------------------
    def k(self, value) -> str:
        if value is None or isinstance(value, (bool, int, float, str, bytes)) and not isinstance(value, rt.EnumValue):
            return repr(value)
        self.consts.append(value)
        return f"K[{len(self.consts) - 1}]"

    def var(self, stem="v") -> str:
        return f"{stem}{next(self.n)}"

    def code(self, pv) -> str:
        if pv[0] == "b":  # a bitmap read as an int: the Bits value, made where it is used whole
            return f"bits_of_int({pv[1]}, {pv[2]})"
        return self.k(pv[1]) if pv[0] == "c" else pv[1]

    def whole(self, pv, bits_ok):
        return ("r", self.code(pv)) if pv[0] == "b" and not bits_ok else pv

    def emit(self, ind, text):
        self.lines.append("    " * ind + text)

    # -- partial evaluation of expressions ----------------------------------------------------
    def pe(self, node, sc: _Scope, bits_ok=False):
        """Partially evaluate an expression: ("c", value) when the columns decide it, ("r",
        code) otherwise; ("b", int variable, n) for a bitmap of n bits read as an int, which
        only indexing (bits_ok) sees as such."""
        return _Partial(self, sc, bits_ok).translate(node)

    @staticmethod
    def possible(v):
        if v[0] == "c":
            try:
                return frozenset([v[1]])
            except TypeError:
                return None
        return v[2] if len(v) > 2 else None

    def const(self, node, sc, what):
        v = self.pe(node, sc)
        if v[0] != "c":
            raise Unsupported(f"{what} is not known from the columns")
        if not isinstance(v[1], int):  # metadata the TABLE_MAP does not give (None)
            raise Unsupported(f"{what} is {v[1]!r}")
        return v[1]

    def int_code(self, node, sc, what):
        """Code of a size or count: a constant must be an int (a column's metadata may be None
        when the TABLE_MAP gives none; the generic reader then says so)."""
        v = self.pe(node, sc)
        if v[0] == "c" and not isinstance(v[1], int):
            raise Unsupported(f"{what} is {v[1]!r}")
        return self.code(v)

    # -- fields --------------------------------------------------------------------------------
    def fields(self, fields, sc: _Scope, ind):
        for f in fields:
            sc.values[f.id] = self.field(f, sc, ind)

    def field(self, f: Field, sc: _Scope, ind):
        if f.type.kind == "computed":
            v = self.pe(f.value, sc)
            if v[0] == "c":
                return v
            out = self.var()
            self.emit(ind, f"{out} = {v[1]}")
            return ("r", out)
        if f.cond is not None:
            c = self.pe(f.cond, sc)
            if c[0] == "c":
                return self.sized(f, sc, ind) if c[1] else ("c", None)
            out = self.var()
            self.emit(ind, f"if {c[1]}:")
            inner = self.sized(f, sc, ind + 1)
            self.emit(ind + 1, f"{out} = {self.code(inner)}")
            self.emit(ind, "else:")
            self.emit(ind + 1, f"{out} = None")
            return ("r", out)
        return self.sized(f, sc, ind)

    def sized(self, f: Field, sc, ind):
        if f.size is None or f.type.kind in ("bytes", "str", "uintvar"):
            return self.repeated(f, sc, ind)
        if f.size == "rest":
            return self.repeated(f, sc, ind)
        n = self.int_code(f.size, sc, f"size of {f.id}")
        outer = self.var("e")
        self.emit(ind, f"{outer} = end")
        self.emit(ind, f"end = pos + {n}")
        self.emit(ind, f"if not pos <= end <= {outer}: raise too_short({f.id!r}, end - pos, {outer} - pos)")
        v = self.repeated(f, sc, ind)
        self.emit(ind, f"if pos != end: raise left_over({f.id!r}, end - pos)")
        self.emit(ind, f"end = {outer}")
        return v

    def repeated(self, f: Field, sc, ind):
        if f.repeat is None and f.repeat_until is None:
            return self.content(f, sc, ind)
        if f.repeat_until is not None:
            raise Unsupported("repeat-until")
        cols = self.ctx.get("columns")
        out = self.var("l")
        if f.repeat != "eos":
            count = self.pe(f.repeat, sc)
            if count[0] == "c" and count[1] <= UNROLL:
                items = []
                for i in range(count[1]):
                    sc.index = ("c", i)
                    sc.col = cols[i] if cols is not None and i < len(cols) else None
                    items.append(self.code(self.content(f, sc, ind)))
                sc.index = None
                self.emit(ind, f"{out} = [{', '.join(items)}]")
                self.items[out] = items
                return ("r", out)
            raise Unsupported("an array of unknown length")
        i = self.var("i")
        self.emit(ind, f"{out} = []")
        self.emit(ind, f"{i} = 0")
        self.emit(ind, "while pos < end:")
        at = self.var("at")
        self.emit(ind + 1, f"{at} = pos")
        sc.index = ("r", i)
        saved = sc.col
        sc.col = None
        elem = self.content(f, sc, ind + 1)
        sc.col, sc.index = saved, None
        self.emit(ind + 1, f"{out}.append({self.code(elem)})")
        # an element of no bytes would repeat forever (rt.RepeatEos)
        self.emit(ind + 1, f"if pos == {at}: raise empty_element({f.id!r}, {i})")
        self.emit(ind + 1, f"{i} += 1")
        return ("r", out)

    def content(self, f: Field, sc, ind):
        t = f.type
        out = self.var()
        if t.kind in ("bytes", "str"):
            if f.prefix is not None or f.terminator is not None or f.pad is not None:
                raise Unsupported("prefixed, terminated or padded strings")
            n = "(end - pos)" if f.size == "rest" else self.int_code(f.size, sc, f"size of {f.id}")
            nv = self.var("n")
            self.emit(ind, f"{nv} = {n}")
            neg = "" if f.size == "rest" else f"{nv} < 0 or "  # a size computed from the bytes
            self.emit(ind, f"if {neg}pos + {nv} > end: raise too_short({f.id!r}, {nv}, end - pos)")
            self.emit(ind, f"{out} = buf[pos:pos + {nv}]")
            self.emit(ind, f"pos += {nv}")
            if t.kind == "str":
                self.emit(ind, f"{out} = {out}.decode('utf-8', 'surrogateescape')")
            return ("r", out)
        if t.kind == "uintvar":
            n = self.const(f.size, sc, f"size of {f.id}")
            if n == 0:
                return ("c", 0)
            self.emit(ind, f"if pos + {n} > end: raise too_short({f.id!r}, {n}, end - pos)")
            if n == 1:
                self.emit(ind, f"{out} = buf[pos]")
            elif n in (2, 4, 8):
                fmt = ("<" if t.endian == "le" else ">") + {2: "H", 4: "I", 8: "Q"}[n]
                self.emit(ind, f"{out} = {self.k(struct.Struct(fmt).unpack_from)}(buf, pos)[0]")
            else:
                self.emit(ind, f"{out} = int.from_bytes(buf[pos:pos + {n}], "
                               f"{'big' if t.endian == 'be' else 'little'!r})")
            self.emit(ind, f"pos += {n}")
            return ("r", out)
        if t.kind == "bitmap":
            nv = self.pe(t.bits, sc)
            if nv[0] == "c" and t.order == "lsb" and 0 < nv[1] <= 64:
                size = (nv[1] + 7) >> 3  # read as an int; bits are tested in it
                self.emit(ind, f"if pos + {size} > end: raise too_short({f.id!r}, {size}, end - pos)")
                self.emit(ind, f"{out} = buf[pos]" if size == 1 else
                          f"{out} = int.from_bytes(buf[pos:pos + {size}], 'little')")
                self.emit(ind, f"pos += {size}")
                return ("b", out, nv[1])
            n = self.code(nv)
            self.emit(ind, f"{out}, pos = read_bitmap(buf, pos, end, {n}, {t.order == 'msb'}, {f.id!r})")
            return ("r", out)
        v = self.typed(t, f, sc, ind)
        if f.const is not None or f.enum or f.flags:
            v = self.whole(v, False)
        if f.const is not None:
            self.emit(ind, f"if {self.code(v)} != {f.const!r}: raise not_expected({f.id!r}, {self.code(v)}, {f.const!r})")
        if f.enum:
            self.emit(ind, f"{out} = rt.EnumValue({self.code(v)}, enums.{f.enum.upper()}.get({self.code(v)}))")
            return ("r", out)
        if f.flags:
            self.emit(ind, f"{out} = rt.FlagsValue({self.code(v)}, enums.{f.flags.upper()})")
            return ("r", out)
        return v

    def typed(self, t: TypeSpec, f: Field, sc, ind):
        k = t.kind
        out = self.var()
        if k in ("int", "float"):
            order = "big" if t.endian == "be" else "little"
            self.emit(ind, f"if pos + {t.width} > end: raise too_short({f.id!r}, {t.width}, end - pos)")
            fmt = {(1, False): "B", (1, True): "b", (2, False): "H", (2, True): "h", (4, False): "I",
                   (4, True): "i", (8, False): "Q", (8, True): "q"}.get((t.width, t.signed))
            if k == "float":
                fmt = {4: "f", 8: "d"}[t.width]
            if fmt is not None:
                unpack = struct.Struct(("<" if t.endian == "le" else ">") + fmt).unpack_from
                self.emit(ind, f"{out} = {self.k(unpack)}(buf, pos)[0]")
            else:
                self.emit(ind, f"{out} = int.from_bytes(buf[pos:pos + {t.width}], {order!r}, signed={t.signed})")
            self.emit(ind, f"pos += {t.width}")
            return ("r", out)
        if k == "packed":
            self.emit(ind, f"{out}, pos = read_packed(buf, pos, end, {f.id!r})")
            return ("r", out)
        if k == "empty":
            return ("c", None)
        if k == "decimal":
            p = self.int_code(t.args["precision"], sc, "precision")
            s = self.int_code(t.args["scale"], sc, "scale")
            self.emit(ind, f"{out}, pos = read_decimal(buf, pos, end, {p}, {s}, {f.id!r})")
            return ("r", out)
        if k == "json_binary":
            self.emit(ind, f"{out} = read_json(buf[pos:end])")
            self.emit(ind, "pos = end")
            return ("r", out)
        if k == "switch":
            key = self.pe(t.switch_on, sc)
            if key[0] == "c":
                for ckey, ctype, _src in t.cases:
                    if ckey == key[1]:
                        return self.typed(ctype, f, sc, ind)
                if t.default is None:
                    raise Unsupported(f"no case for {key[1]!r}")
                return self.typed(t.default, f, sc, ind)
            kv = self.var("k")
            self.emit(ind, f"{kv} = {key[1]}")
            first = True
            can = self.possible(key)
            for ckey, ctype, _src in t.cases:
                if can is not None and ckey not in can:
                    continue
                self.emit(ind, f"{'if' if first else 'elif'} {kv} == {ckey!r}:")
                cv = self.typed(ctype, f, sc, ind + 1)
                self.emit(ind + 1, f"{out} = {self.code(cv)}")
                first = False
            self.emit(ind, "else:")
            if t.default is None:
                self.emit(ind + 1, f"raise no_case({f.id!r}, {kv})")
            else:
                dv = self.typed(t.default, f, sc, ind + 1)
                self.emit(ind + 1, f"{out} = {self.code(dv)}")
            return ("r", out)
        if k == "struct":
            sub = _Scope(sc)
            self.fields(t.fields, sub, ind)
            return self.record(sub, t.fields, ind)
        if k == "named":
            return self.named(t.name, f, sc, ind)
        raise Unsupported(f"type kind {k}")

    def record(self, sub, fields, ind, plain=False):
        out = self.var("r")
        items = ", ".join(f"{fd.id!r}: {self.code(sub.values[fd.id])}" for fd in fields)
        self.emit(ind, f"{out} = {{{items}}}" if plain else f"{out} = Record({{{items}}})")
        return ("r", out)

    def named(self, name, f, sc, ind):
        td = self.specs.types[name]
        mark = len(self.lines)
        try:
            tf = td.field
            if tf.type.kind == "struct" and tf.cond is None and tf.size is None and tf.repeat is None:
                sub = _Scope(sc)
                self.fields(tf.type.fields, sub, ind)
                if self.images and name in IMAGES_FORM:
                    return IMAGES_FORM[name](self, sub, ind)
                v = self.record(sub, tf.type.fields, ind, plain=bool(td.adapter))
            else:
                v = self.field(tf, sc, ind)
        except Unsupported:
            del self.lines[mark:]  # this type goes to its generic reader
            out = self.var()
            stub = self.var("up")
            idx = sc.index if sc.index is not None else ("c", None)
            self.emit(ind, f"{stub} = {{'_params': ctx, '_index': {self.code(idx)}}}")
            self.emit(ind, f"{out}, pos = F.t_{name}(buf, pos, end, {stub}, ctx, {self.k(sc.col)})")
            return ("r", out)
        if td.adapter:
            out = self.var()
            decode = self._adapters[td.adapter].bind(sc.col)
            self.emit(ind, f"{out} = {self.k(decode)}({self.code(v)})")
            return ("r", out)
        return v


class _Partial(E.Translator):
    """The partial evaluator of _Spec.pe: one expression in one scope."""

    def __init__(self, spec: _Spec, sc: _Scope, bits_ok: bool):
        self.spec, self.sc, self.bits_ok = spec, sc, bits_ok

    def sub(self, node, bits_ok=False):
        return self.spec.pe(node, self.sc, bits_ok)

    def on_node(self, node):
        raise Unsupported(type(node).__name__)

    def on_num(self, node):
        return ("c", node.value)

    on_str = on_lit = on_num

    def on_ver(self, node):
        return ("c", rt.Version(node.version.flavor, node.version.number))

    def on_enum(self, node):
        return ("c", self.spec.enums[node.enum][node.member])

    def on_ctx(self, node):
        if node.name not in self.spec.ctx:
            raise Unsupported(f"ctx.{node.name}")
        return ("c", self.spec.ctx[node.name])

    def on_name(self, node):
        if node.id not in self.sc.values:
            raise Unsupported(f"name {node.id}")
        return self.spec.whole(self.sc.values[node.id], self.bits_ok)

    def on_col(self, node):
        if self.sc.col is None:
            raise Unsupported("col outside a column")
        return ("c", self.sc.col)

    def on_loop_index(self, node):
        s = self.sc
        while s is not None and s.index is None:
            s = s.parent
        if s is None:
            raise Unsupported("_index outside an array")
        return s.index

    def on_parent(self, node):
        return ("s", self.sc.parent)

    def on_remaining(self, node):
        return ("r", "(end - pos)")

    def on_attr(self, node):
        base = self.sub(node.base)
        if base[0] == "s":
            if node.name == "_parent":
                return ("s", base[1].parent)
            if node.name == "_index":
                return base[1].index or ("c", None)
            return self.spec.whole(base[1].values[node.name], self.bits_ok)
        if base[0] == "c":
            b = base[1]
            return ("c", b[node.name] if isinstance(b, dict) else getattr(b, node.name))
        return ("r", f"{base[1]}[{node.name!r}]")

    def on_index(self, node):
        a, i = self.sub(node.base, bits_ok=True), self.sub(node.index)
        if a[0] == "b" and i[0] == "c" and 0 <= i[1] < a[2]:
            return ("r", f"({a[1]} >> {i[1]} & 1 == 1)")
        a = self.spec.whole(a, False)
        if a[0] == "c" and i[0] == "c":
            return ("c", a[1][i[1]])
        return ("r", f"{self.spec.code(a)}[{self.spec.code(i)}]")

    def on_call(self, node):
        f, args = node.function, [self.sub(a) for a in node.args]
        if all(a[0] == "c" for a in args):
            return ("c", f.impl(*[a[1] for a in args]))
        return ("r", f"{f.python}({', '.join(self.spec.code(a) for a in args)})")

    def on_sizeof(self, node):
        raise Unsupported("sizeof()")

    def on_binary(self, node):
        a, b = self.sub(node.left), self.sub(node.right)
        op = node.op
        if a[0] == "c" and b[0] == "c":
            return ("c", E.apply_bin(op, a[1], b[1]))
        if op in ("<", "<=", ">", ">=") and any(x[0] == "c" and isinstance(x[1], rt.Version)
                                                for x in (a, b)):
            return ("r", f"rt.vcmp({op!r}, {self.spec.code(a)}, {self.spec.code(b)})")
        return ("r", f"({self.spec.code(a)} {E.PY_BIN[op]} {self.spec.code(b)})")

    def on_bool_op(self, node):
        a = self.sub(node.left)
        if a[0] == "c":
            if node.op == "and":
                return a if not a[1] else self.sub(node.right)
            return a if a[1] else self.sub(node.right)
        b = self.sub(node.right)
        return ("r", f"({a[1]} {node.op} {self.spec.code(b)})")

    def on_not_(self, node):
        a = self.sub(node.operand)
        return ("c", not a[1]) if a[0] == "c" else ("r", f"(not {a[1]})")

    def on_unary(self, node):
        a = self.sub(node.operand)
        if a[0] == "c":
            return ("c", -a[1] if node.op == "-" else ~a[1])
        return ("r", f"({node.op}{a[1]})")

    def on_cond(self, node):
        c = self.sub(node.test)
        if c[0] == "c":
            return self.sub(node.then if c[1] else node.other)
        a, b = self.sub(node.then), self.sub(node.other)
        code = f"({self.spec.code(a)} if {c[1]} else {self.spec.code(b)})"
        ways = [self.spec.possible(a), self.spec.possible(b)]
        if None not in ways:  # what the choice can give, for switches to drop other cases
            return ("r", code, ways[0] | ways[1])
        return ("r", code)


def _image_dict(gen, sub, ind):
    """A row image as {column name: value} of the columns it holds (NULL: None)."""
    present = sub.values["present"]
    cells = gen.items.get(sub.values["cells"][1]) if sub.values["cells"][0] == "r" else None
    if present[0] != "c" or cells is None:
        raise Unsupported("an image whose columns are not known")
    cols = gen.ctx["columns"]
    out = gen.var("d")
    items = ", ".join(f"{cols[i]['name']!r}: {cells[i]}" for i, p in enumerate(present[1]) if p)
    gen.emit(ind, f"{out} = {{{items}}}")
    return ("r", out)


# The "images" form: what rows.RowDecoder keeps of the row-image records (columns.yaml's
# row_images -> row -> row_image), built directly: a list of rows, each the list of its images.
IMAGES_FORM = {
    "row_image": _image_dict,
    "row": lambda gen, sub, ind: sub.values["images"],
}

_SPECS = []


def _specs():
    if not _SPECS:
        from ..lang.loader import load_specs

        _SPECS.append(load_specs())
    return _SPECS[0]


def reader(columns, images, type_code, json_columns, cache=None, form="parsed"):
    """The specialised reader of row images for this table and event shape, or None when the
    specs cannot be loaded here (an installed package without specs/) or do not specialise.
    `cache` (a dict kept with the table) remembers readers by event shape.

    form "parsed": the value the row_images struct parses to. form "images": the rows as lists
    of images, each image {column name: value} of the columns it holds (what rows.RowDecoder
    makes of the parsed value), for tables whose column names are distinct and images that are
    not partial JSON updates (else None)."""
    _CACHE = cache if cache is not None else {}
    key = (tuple(tuple(b) for b in images), type_code, form)
    fn = _CACHE.get(key)
    if fn is not None or key in _CACHE:
        return fn
    try:
        specs = _specs()
    except Exception:  # noqa: BLE001 - no specs folder: the generic readers serve
        _CACHE[key] = None
        return None
    ctx = {"columns": columns, "images": [list(b) for b in images], "type_code": type_code,
           "json_columns": json_columns}
    gen = _Spec(specs, ctx)
    if form == "images":
        if json_columns or len({c["name"] for c in columns}) != len(columns):
            _CACHE[key] = None
            return None
        gen.images = True
    try:
        top = specs.types["row_images"].field
        sc = _Scope()
        gen.fields(top.type.fields, sc, 1)
        body = gen.lines
        result = gen.code(sc.values[top.type.fields[0].id])
    except Exception:  # noqa: BLE001 - columns the specs cannot specialise (missing metadata, ...)
        _CACHE[key] = None  # go to the generic readers, which report bad bytes precisely
        return None
    ret = result if gen.images else f"Record({{{top.type.fields[0].id!r}: {result}}})"
    src = "\n".join(["def read(buf, ctx, K=K):", "    pos, end = 0, len(buf)", *body,
                     f"    return {ret}", ""])
    from ..generated import enums
    from ..generated import fast as F

    env = {"rt": rt, "enums": enums, "F": F, "K": gen.consts, "bits_of_int": bits_of_int,
           **{n: getattr(fastrt, n) for n in ("Record", "empty_element", "left_over", "no_case",
                                              "not_expected", "read_bitmap", "read_decimal",
                                              "read_json", "read_packed", "too_short")}}
    exec(compile(src, f"<row images of {len(columns)} columns>", "exec"), env)  # noqa: S102
    run = env["read"]  # run(buf, ctx); K, its constants, is bound as a default
    run.source = src
    if len(_CACHE) > 256:  # a table whose events come in many shapes: keep the newest
        _CACHE.clear()
    _CACHE[key] = run
    return run
