"""Hypothesis strategies made from the specs: a value for any struct, drawn field by field.

Sizes, counts, conditions and switches are interpreted from the spec's expressions over the values
drawn so far, so what is drawn is what the struct would parse. Fields with `rebuild:` are left to
the build (their value is REBUILT, a wildcard when comparing); a field whose size is given by such
a field is drawn at a free length. Conditions on `remaining` are drawn as a chain: once one
trailing field is absent, every later one is too.
"""
from __future__ import annotations

from hypothesis import strategies as st

from ..runtime import construct as rt
from ..lang import expr as E
from ..lang.model import EventDef, Field, SpecSet, TypeSpec
from ..lang.values import REBUILT, KnownValues, RebuiltInt, matches, normalize  # noqa: F401


MAX_FREE = 24  # longest free-length bytes/str/arrays drawn


class Reject(Exception):
    """The drawn values cannot form a valid struct (the caller rejects the example)."""


class _Gen:
    def __init__(self, specs: SpecSet, draw):
        self.specs = specs
        self.draw = draw
        self.enums = specs.enum_values()

    # -- expressions ----------------------------------------------------------------------
    def value(self, node, env, underscore=None):
        """Evaluate, or raise LookupError when it depends on something not drawn (yet)."""
        try:
            v = E.evaluate(node, env, self.enums, underscore)
        except (LookupError, TypeError) as e:
            raise LookupError(str(e)) from None
        if v is REBUILT:
            raise LookupError("rebuilt")
        return v

    def _holds(self, node, env, remaining):
        saved = env.remaining
        env.remaining = remaining
        try:
            return bool(self.value(node, env))
        except LookupError:
            raise Reject("condition depends on a rebuilt value") from None
        finally:
            env.remaining = saved

    def try_value(self, node, env):
        if node is None or node == "rest" or node == "eos":
            return None
        try:
            return self.value(node, env)
        except LookupError:
            return None

    # -- structs ---------------------------------------------------------------------------
    def fields(self, fields, parent_env, ctx, index=None):
        values = {}
        env = E.Env(values, parent=parent_env, ctx=ctx, index=index)
        shadow = {}
        env.values = KnownValues(values, shadow)
        cut = False
        for f in fields:
            if f.type.kind == "computed":  # no bytes: what the parse computes, not compared
                values[f.id] = REBUILT
                continue
            if f.cond is not None:
                if E.uses_remaining(f.cond):
                    # present only if the condition can hold with bytes left, and the chain of
                    # trailing fields has not been cut; absent if it holds with none left
                    if cut or not self._holds(f.cond, env, 1 << 30):
                        values[f.id] = None
                        continue
                    if not self._holds(f.cond, env, 0) and not self.draw(st.booleans()):
                        cut = True
                        values[f.id] = None
                        continue
                else:
                    try:
                        present = self.value(f.cond, env)
                    except LookupError:
                        raise Reject(f"condition of {f.id} depends on a rebuilt value") from None
                    if not present:
                        values[f.id] = None
                        continue
            elif cut and f.rebuild is None:
                values[f.id] = self.empty(f)
                continue
            if f.rebuild is not None:
                if f.id in E.names_used(f.rebuild):
                    # the rebuild keeps some bits of the field itself: draw it, match anything
                    values[f.id] = RebuiltInt(self.field(f, env, shadow))
                else:
                    values[f.id] = REBUILT
                continue
            values[f.id] = self.field(f, env, shadow)
        return dict(values)

    def empty(self, f: Field):
        if f.repeat is not None:
            return []
        return "" if f.type.kind == "str" else b""

    def field(self, f: Field, env, shadow=None):
        if f.repeat is not None or f.repeat_until is not None:
            if f.repeat_until is not None:
                return self.repeat_until(f, env)
            n = None if f.repeat == "eos" else self.try_value(f.repeat, env)
            if n is not None and self._counts_from_rebuilt_bits(f.repeat, env):
                n = None  # the build writes the count from the array: draw the array freely
            if n is None:
                n = self.draw(st.integers(0, 4))
                if shadow is not None and isinstance(f.repeat, tuple) and f.repeat[0] == "name":
                    shadow[f.repeat[1]] = n
            out = []
            for i in range(n):
                out.append(self.content(f, _with_index(env, i), shadow))
            return out
        return self.content(f, env, shadow)

    @staticmethod
    def _counts_from_rebuilt_bits(node, env) -> bool:
        """Does the count read a field that keeps some bits of its own and has the rest rebuilt
        (GTID_LIST's count_and_flags: flags kept, count rebuilt from the list)? Then the drawn
        number only stands for the kept bits, and its count bits would ask for up to 2**28
        elements."""
        if not isinstance(node, tuple) or not isinstance(env.values, KnownValues):
            return False
        return any(isinstance(env.values.v.get(n), RebuiltInt) and n not in env.values.s
                   for n in E.names_used(node))

    def repeat_until(self, f, env):
        out = []
        for i in range(6):
            item = self.content(f, _with_index(env, i), None)
            out.append(item)
            if self.value(f.repeat_until, env, underscore=item):
                return out
        raise Reject("repeat-until never satisfied")

    def content(self, f: Field, env, shadow=None):
        t = f.type
        if f.const is not None:
            return bytes(f.const) if isinstance(f.const, list) else f.const
        if t.kind in ("bytes", "str"):
            return self.text_or_bytes(f, env, shadow)
        if t.kind == "uintvar":
            n = self.try_value(f.size, env)
            if n is None:
                raise Reject("uint size unknown")
            return self.draw(st.integers(0, (1 << (8 * n)) - 1))
        if t.kind == "bitmap":
            n = self.try_value(t.bits, env)
            if n is None:
                n = self.draw(st.integers(0, 20))
                if shadow is not None and t.bits[0] == "name":
                    shadow[t.bits[1]] = n
            return self.draw(st.lists(st.booleans(), min_size=n, max_size=n))
        return self.typed(t, env, f)

    def typed(self, t: TypeSpec, env, f: Field | None = None):
        k = t.kind
        if k == "int":
            bits = 8 * t.width
            lo, hi = (-(1 << (bits - 1)), (1 << (bits - 1)) - 1) if t.signed else (0, (1 << bits) - 1)
            name = f.enum or f.flags if f is not None else None
            if name:
                members = list(self.specs.enums[name].members)
                if self.specs.enums[name].is_flags:
                    return self.draw(st.integers(lo, hi))
                return self.draw(st.one_of(st.sampled_from(members), st.integers(lo, hi)))
            return self.draw(st.integers(lo, hi))
        if k == "packed":
            return self.draw(st.one_of(st.integers(0, 300), st.integers(0, (1 << 64) - 1)))
        if k == "sv_uint":
            return self.draw(st.one_of(st.integers(0, 300), st.integers(0, (1 << 64) - 1)))
        if k == "sv_sint":
            return self.draw(st.integers(-(1 << 63), (1 << 63) - 1))
        if k == "empty":
            return None
        if k == "float":
            return self.draw(st.floats(width=8 * t.width, allow_nan=False))
        if k == "decimal":
            try:
                p, sc = (self.value(t.args[a], env) for a in ("precision", "scale"))
            except LookupError:
                raise Reject("decimal precision unknown") from None
            return self.draw(_decimals(p, sc))
        if k == "json_binary":
            return self.draw(json_values())
        if k == "struct":
            return self.fields(t.fields, env, env.ctx, env.index)
        if k == "named":
            td = self.specs.types[t.name]
            return self.field(td.field, env)
        if k == "switch":
            try:
                key = self.value(t.switch_on, env)
            except LookupError:
                raise Reject("switch on an unknown value") from None
            for ckey, ctype, _src in t.cases:
                if ckey == key:
                    return self.typed(ctype, env)
            if t.default is None:
                raise Reject("no case for the drawn value")
            return self.typed(t.default, env)
        if k == "tlv":
            return self.tlv(t, env)
        raise AssertionError(k)

    def tlv(self, t: TypeSpec, env):
        entries = []
        n = self.draw(st.integers(0, 4))
        for _ in range(n):
            if not t.cases:
                break
            key, cf = self.draw(st.sampled_from(t.cases))
            value = self.field(cf, env) if cf.cond is None else self.fields([cf], env, env.ctx)[cf.id]
            entries.append({"tag": key, "id": cf.id, "value": value})
        if t.unknown in ("stop", "skip") and self.draw(st.integers(0, 3)) == 0:
            known = {k for k, _ in t.cases}
            if t.end != "eos":
                known.add(t.end)
            hi = 255 if t.tag.kind != "int" else (1 << (8 * t.tag.width)) - 1
            tag = self.draw(st.integers(0, min(hi, 300)).filter(lambda x: x not in known))
            raw = self.draw(st.binary(max_size=12))
            entries.append({"tag": tag, "id": None, "unknown": True, "raw": raw})
        return entries

    def text_or_bytes(self, f: Field, env, shadow):
        n = None
        if f.size is not None and f.size != "rest":
            n = self.try_value(f.size, env)
            if n is None and not _is_free_size(f.size, env):
                raise Reject(f"size of {f.id} unknown")
        if f.prefix is not None or f.size == "rest" or n is None:
            hi = MAX_FREE
            if f.prefix is not None and f.prefix.kind == "int":
                hi = min(hi, (1 << (8 * f.prefix.width)) - 1)
            data = self.draw(st.binary(max_size=hi))
            if n is None and isinstance(f.size, tuple) and f.size[0] == "name" and shadow is not None:
                shadow[f.size[1]] = len(data)
        else:
            data = self.draw(st.binary(min_size=n, max_size=n))
        if f.terminator is not None:
            data = data.replace(bytes([f.terminator]), b"\x01" if f.terminator != 1 else b"\x02")
        if f.pad is not None:
            data = data.rstrip(bytes([f.pad]))
        if f.type.kind == "str":
            return data.decode("utf-8", "surrogateescape")
        return data


def _decimals(precision, scale):
    from decimal import Decimal

    hi = 10 ** precision - 1
    # built from digits, not arithmetic: Decimal arithmetic rounds past 28 digits
    return st.integers(-hi, hi).map(
        lambda n: Decimal((int(n < 0), tuple(int(d) for d in str(abs(n))), -scale)))


def _is_free_size(node, env):
    return True


def _with_index(env, i):
    e = E.Env(env.values, parent=env.parent, ctx=env.ctx, index=i, remaining=env.remaining)
    return e


def context_strategy(specs: SpecSet, ev: EventDef, code: int):
    """Context values for one event: its own post-header lengths, the context.yaml values otherwise."""
    parts = {}
    for cid, cdef in specs.context.items():
        if cid == "type_code":
            parts[cid] = st.just(code)
        elif cid == "post_header_len":
            parts[cid] = st.sampled_from(ev.post_header_len)
        elif isinstance(cdef.values, list) and cdef.values:
            vals = [rt.Version(v.flavor, v.number) if isinstance(v, E.Version) else v
                    for v in cdef.values]
            parts[cid] = st.sampled_from(vals)
        else:
            parts[cid] = st.none()
    return st.fixed_dictionaries(parts)


@st.composite
def event_values(draw, specs: SpecSet, event_name: str):
    """(context, value) for an event's data."""
    ev, name = specs.event_by_name(event_name)
    ctx = draw(context_strategy(specs, ev, name.code))
    gen = _Gen(specs, draw)
    try:
        value = gen.fields(ev.fields, None, ctx)
    except Reject:
        from hypothesis import reject

        reject()
    return ctx, value


@st.composite
def type_values(draw, specs: SpecSet, type_name: str, ctx: dict):
    gen = _Gen(specs, draw)
    td = specs.types[type_name]
    try:
        value = gen.field(td.field, E.Env({}, ctx=ctx))
    except Reject:
        from hypothesis import reject

        reject()
    return value


# ---------------------------------------------------------------------------------------------
# Row images: random tables (column types and metadata) and random rows of Python values.
#
# A column's metadata is drawn in the domain a server writes (a fact per metadata type, below),
# built with the metadata struct and parsed back, so it carries the spec's computed fields. A
# value is drawn from the column's value type in the specs: plain layouts from the spec itself,
# types with `as:` from the Python domain of their adapter, `decimal` and `json_binary` from theirs.

def _parsed_meta(name, raw):
    from ..generated import types as T

    return getattr(T, name).parse(getattr(T, name).build(raw))


def _meta_strategy(code_name):
    """(type code, raw metadata) for a column of this real type, in the domain servers write."""
    from ..generated import enums

    code = {n: c for c, n in enums.COLUMN_TYPE.items()}
    string = st.integers(1, 1020).map(
        lambda n: {"real_type": 0xFE ^ ((n >> 8) << 4) if n > 255 else 0xFE, "length": n & 0xFF})
    fsp = st.integers(0, 6)
    pick = {
        "FLOAT": st.just(4), "DOUBLE": st.just(8),
        "NEWDECIMAL": st.integers(1, 65).flatmap(
            lambda p: st.integers(0, min(p, 30)).map(lambda s: {"precision": p, "scale": s})),
        "BIT": st.integers(1, 64).map(lambda n: {"bits": n % 8, "bytes": n // 8}),
        "TIME2": fsp, "DATETIME2": fsp, "TIMESTAMP2": fsp,
        "VARCHAR": st.integers(1, 65535), "VARCHAR_COMPRESSED": st.integers(1, 65535),
        "STRING": string,
        "ENUM": st.sampled_from([1, 2]).map(lambda n: {"real_type": 0xF7, "length": n}),
        "SET": st.sampled_from([1, 2, 3, 4, 8]).map(lambda n: {"real_type": 0xF8, "length": n}),
        "BLOB": st.integers(1, 4), "BLOB_COMPRESSED": st.integers(1, 4),
        "JSON": st.integers(1, 4), "GEOMETRY": st.integers(1, 4), "VECTOR": st.just(4),
        "VAR_STRING": st.fixed_dictionaries({"real_type": st.integers(0, 255),
                                             "length": st.integers(0, 255)}),
    }
    logged_as = {"ENUM": "STRING", "SET": "STRING"}
    meta_type = {"FLOAT": "colmeta_size", "DOUBLE": "colmeta_size", "NEWDECIMAL": "colmeta_decimal",
                 "BIT": "colmeta_bit", "TIME2": "colmeta_fsp", "DATETIME2": "colmeta_fsp",
                 "TIMESTAMP2": "colmeta_fsp", "VARCHAR": "colmeta_varchar",
                 "VARCHAR_COMPRESSED": "colmeta_varchar", "STRING": "colmeta_string",
                 "ENUM": "colmeta_string", "SET": "colmeta_string", "BLOB": "colmeta_pack_length",
                 "BLOB_COMPRESSED": "colmeta_pack_length", "JSON": "colmeta_pack_length",
                 "GEOMETRY": "colmeta_pack_length", "VECTOR": "colmeta_pack_length",
                 "VAR_STRING": "colmeta_string"}
    wire = code[logged_as.get(code_name, code_name)]
    if code_name not in pick:
        return st.just((wire, None))
    return pick[code_name].map(lambda raw: (wire, _parsed_meta(meta_type[code_name], raw)))


ROW_COLUMN_TYPES = ["TINY", "SHORT", "INT24", "LONG", "LONGLONG", "FLOAT", "DOUBLE", "NEWDECIMAL",
                    "YEAR", "DATE", "TIME", "TIME2", "DATETIME", "DATETIME2", "TIMESTAMP",
                    "TIMESTAMP2", "BIT", "ENUM", "SET", "STRING", "VARCHAR", "BLOB", "JSON",
                    "GEOMETRY", "VECTOR", "NULL", "VARCHAR_COMPRESSED", "BLOB_COMPRESSED",
                    "VAR_STRING"]


@st.composite
def columns_strategy(draw, max_columns=8):
    """A random table: a list of rows.Column with type, metadata, signedness and charset."""
    from ..generated import enums
    from ..binlog.rows import Column

    out = []
    json_i = 0
    for i in range(draw(st.integers(1, max_columns))):
        name = draw(st.sampled_from(ROW_COLUMN_TYPES))
        code, meta = draw(_meta_strategy(name))
        real = int(meta.type) if name in ("ENUM", "SET", "STRING") else code
        c = Column(index=i, name=f"c{i}", type=code, type_name=enums.COLUMN_TYPE[real], real_type=real,
                   meta=meta, unsigned=draw(st.booleans()),
                   charset=draw(st.sampled_from(["utf8mb4", "latin1", "binary", None])),
                   json_index=None, enum_values=None, set_values=None, nullable=True,
                   fsp=int(meta) if name in ("TIME2", "DATETIME2", "TIMESTAMP2") else 0)
        if name == "JSON":
            c.json_index, json_i = json_i, json_i + 1
        if name in ("ENUM", "SET") and draw(st.booleans()):
            limit = (1 << (8 * int(meta.length))) - 1 if name == "ENUM" else 8 * int(meta.length)
            n = draw(st.integers(1, min(limit, 12)))
            c["enum_values" if name == "ENUM" else "set_values"] = [f"m{k}" for k in range(n)]
        out.append(c)
    return out


def _frac(unit):
    return st.just(0) if unit is None else st.integers(0, 999999 // unit).map(lambda x: x * unit)


def _unit(fsp):
    return {0: None, 1: 10000, 2: 10000, 3: 100, 4: 100, 5: 1, 6: 1}[fsp]


def _adapter_value(adapter, col):
    """The Python domain of an `as:` adapter for this column."""
    import datetime as dt

    fsp = col.fsp if col.real_type in _FSP_TYPES() else 0
    unit = _unit(fsp)
    if adapter == "year":
        return st.one_of(st.just(0), st.integers(1901, 2155))
    if adapter == "date":
        return st.one_of(st.dates(dt.date(1000, 1, 1), dt.date(9999, 12, 31)),
                         st.sampled_from(["0000-00-00", "2020-00-00", "2020-02-00"]))
    if adapter == "datetime":
        return st.one_of(
            st.builds(lambda d, us: d.replace(microsecond=us),
                      st.datetimes(dt.datetime(1000, 1, 1), dt.datetime(9999, 12, 31, 23, 59, 59)),
                      _frac(unit)),
            st.just("0000-00-00 00:00:00" + ("." + "0" * fsp if fsp else "")))
    if adapter == "timestamp":
        utc = dt.timezone.utc
        return st.one_of(
            st.builds(lambda s, us: dt.datetime.fromtimestamp(s, utc).replace(microsecond=us),
                      st.integers(1, 2**31 - 1), _frac(unit)),
            st.just("0000-00-00 00:00:00" + ("." + "0" * fsp if fsp else "")))
    if adapter == "time":
        return st.builds(lambda s, us, neg: (-1 if neg else 1) * dt.timedelta(seconds=s, microseconds=us),
                         st.integers(0, 838 * 3600 + 59 * 60 + 59), _frac(unit), st.booleans())
    if adapter in ("text", "compressed_text"):
        limit = _max_bytes(col)
        if col.charset in (None, "binary"):
            from ..runtime.values import binary_char_length

            pad_to = binary_char_length(col)
            if pad_to is not None:  # BINARY(n): the value is n bytes, logged without trailing 0x00
                return st.binary(max_size=min(pad_to, 40)).map(
                    lambda b: b.rstrip(b"\0").ljust(pad_to, b"\0"))
            return st.binary(max_size=min(limit, 40))
        alphabet = st.characters(codec="utf-8" if col.charset == "utf8mb4" else "latin-1",
                                 exclude_categories=("Cs",))
        if col.charset == "latin1":
            alphabet = st.sampled_from("abcXYZ é\u00e8\u00fc0-9")
        return st.text(alphabet, max_size=min(limit // 4, 20))
    if adapter == "enum":
        if col.enum_values:
            return st.sampled_from([""] + col.enum_values)
        return st.integers(0, (1 << (8 * int(col.meta.length))) - 1)
    if adapter == "set":
        if col.set_values:
            return st.frozensets(st.sampled_from(col.set_values))
        return st.integers(0, (1 << (8 * int(col.meta.length))) - 1)
    if adapter == "json":
        return json_values()
    if adapter == "vector":
        return st.lists(st.floats(width=32, allow_nan=False), max_size=6)
    if adapter == "geometry":
        from ..runtime.values import Geometry

        return st.builds(Geometry, st.integers(0, 2**32 - 1), st.binary(max_size=30))
    raise AssertionError(adapter)


def _FSP_TYPES():
    from ..binlog.rows import column_class

    return column_class("fsp_columns")


def _max_bytes(col):
    t = col.type_name
    if t == "STRING":
        return int(col.meta.max_length)
    if t in ("VARCHAR", "VARCHAR_COMPRESSED"):
        return int(col.meta)
    if t == "VAR_STRING":
        return min(255, int(col.meta.real_type) | int(col.meta.length) << 8)
    return (1 << (8 * int(col.meta))) - 1 if col.meta else 255


def json_values(max_leaves=12):
    """JSON documents as binlog_grammar.runtime.jsonb maps them to Python."""
    scalar = st.one_of(st.none(), st.booleans(), st.integers(-(2**63), 2**64 - 1),
                       st.floats(allow_nan=False, allow_infinity=False), st.text(max_size=10))
    return st.recursive(scalar, lambda inner: st.one_of(
        st.lists(inner, max_size=4), st.dictionaries(st.text(max_size=6), inner, max_size=4)),
        max_leaves=max_leaves)


@st.composite
def column_value(draw, specs: SpecSet, col):
    """A Python value for one (non-NULL) cell of this column, from the specs' value types."""
    gen = _Gen(specs, draw)
    env = E.Env({}, ctx={}, col=col)
    return gen.cell(env)


def _cell(self, env):
    td = self.specs.types["column_value"]
    t = td.field.type
    key = self.value(t.switch_on, env)
    for ckey, ctype, _src in t.cases:
        if ckey == key:
            return self.cell_type(ctype, env)
    raise Reject(f"no value layout for column type {key}")


def _cell_type(self, t, env):
    if t.kind == "named":
        td = self.specs.types[t.name]
        if td.adapter:
            return self.draw(_adapter_value(td.adapter, env.col))
        return self.cell_type(td.field.type, env) if td.field.type.kind in ("switch", "decimal") \
            else self.field(td.field, env)
    if t.kind == "switch":
        key = self.value(t.switch_on, env)
        for ckey, ctype, _src in t.cases:
            if ckey == key:
                return self.cell_type(ctype, env)
        return self.cell_type(t.default, env)
    if t.kind == "float":
        return self.draw(st.floats(width=8 * t.width, allow_nan=False))
    return self.typed(t, env)


_Gen.cell = _cell
_Gen.cell_type = _cell_type
