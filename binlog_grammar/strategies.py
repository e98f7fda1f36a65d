"""Hypothesis strategies made from the specs: a value for any struct, drawn field by field.

Sizes, counts, conditions and switches are interpreted from the spec's expressions over the values
drawn so far, so what is drawn is what the struct would parse. Fields with `rebuild:` are left to
the build (their value is REBUILT, a wildcard when comparing); a field whose size is given by such
a field is drawn at a free length. Conditions on `remaining` are drawn as a chain: once one
trailing field is absent, every later one is too.
"""
from __future__ import annotations

from hypothesis import strategies as st

from . import runtime as rt
from .spec import expr as E
from .spec.model import EventDef, Field, SpecSet, TypeSpec
from .spec.values import REBUILT, KnownValues, RebuiltInt, matches, normalize  # noqa: F401


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
            if n is None:
                n = self.draw(st.integers(0, 4))
                if shadow is not None and isinstance(f.repeat, tuple) and f.repeat[0] == "name":
                    shadow[f.repeat[1]] = n
            out = []
            for i in range(n):
                out.append(self.content(f, _with_index(env, i), shadow))
            return out
        return self.content(f, env, shadow)

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
