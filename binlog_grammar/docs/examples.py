"""Deterministic example values made from the specs, for the documentation.

The maker walks the validated model the way the hypothesis strategies do (binlog_grammar/
strategies.py), but every choice is fixed, so the same specs always give the same example:

- integers: a field that a later field's condition, size or count reads gets the value (1, 0,
  or a number that expression compares with) under which the most later fields are present and
  every size stays small; any other integer gets a small number (its position in its struct);
- enums: the first member (unless another member makes more later fields present);
- flag sets: the first named bit (same rule);
- strings: the field's own name (a version string where the spec reads it with version());
  bytes: 01 02 03 ... ; a free length is 3 bytes;
- arrays: one element, unless the spec fixes the count; TLV lists: one entry, the first case;
- conditional fields: present whenever the condition can hold, trailing (`remaining`) fields too;
- fields with `rebuild:` are left to the build (their value is computed by the generated struct).

The value is then built by the generated struct and parsed back (see event_examples in
tables.py); what the docs show is the parsed value.
"""
from __future__ import annotations

from ..runtime import construct as rt
from ..lang import expr as E
from ..lang.model import EventDef, Field, SpecSet, TypeSpec
from ..lang.values import REBUILT, KnownValues
from ..lang.values import matches as same
from ..lang.values import normalize as plain

FREE_LEN = 3  # bytes of a bytes/str whose length is free
_BIG = 1 << 30  # `remaining` while making an example: trailing fields are present
_MAX_SIZE = 64  # sizes and counts above this make a candidate value a bad choice



class ExampleError(Exception):
    """The spec leaves no deterministic choice (reported on the docs page, never silently)."""


def _ver_args(node, acc):
    """Names of fields read as version(name)."""
    if isinstance(node, tuple) and node:
        if node[0] == "call":
            if node[1] == "version" and node[2] and node[2][0][0] == "name":
                acc.add(node[2][0][1])
            for a in node[2]:
                _ver_args(a, acc)
            return acc
        for sub in node[1:]:
            if isinstance(sub, tuple):
                _ver_args(sub, acc)
    return acc


def _literals(node, acc):
    """Integer literals of an expression (the values a condition compares a field with)."""
    if isinstance(node, tuple) and node:
        if node[0] == "num":
            acc.append(node[1])
            return acc
        if node[0] == "call":
            for a in node[2]:
                _literals(a, acc)
            return acc
        for sub in node[1:]:
            if isinstance(sub, tuple):
                _literals(sub, acc)
    return acc


def _exprs(f: Field):
    """(role, AST) of every expression a field carries that reads earlier fields."""
    out = []
    if f.cond is not None:
        out.append(("cond", f.cond))
    if isinstance(f.size, tuple):
        out.append(("size", f.size))
    if isinstance(f.repeat, tuple):
        out.append(("size", f.repeat))
    if f.type.kind == "bitmap" and isinstance(f.type.bits, tuple):
        out.append(("size", f.type.bits))
    if f.type.kind == "switch" and f.type.switch_on is not None:
        out.append(("switch", f.type.switch_on))
    return out





class ExampleMaker:
    def __init__(self, specs: SpecSet):
        self.specs = specs
        self.enums = specs.enum_values()

    # -- context ---------------------------------------------------------------------------
    def context(self, ev: EventDef, code: int, post_header_len=None) -> dict:
        """The context of the example: the event's own code, a post-header length it announces
        (the first by default), the first value context.yaml lists for the rest, a server of the
        event's flavor (within the event's since/until when the list has one)."""
        ctx = {}
        for cid, cdef in self.specs.context.items():
            if cid == "type_code":
                ctx[cid] = code
            elif cid == "post_header_len":
                ctx[cid] = ev.post_header_len[0] if post_header_len is None else post_header_len
            elif cdef.type == "version" and isinstance(cdef.values, list):
                ctx[cid] = self._server(ev, cdef.values)
            elif isinstance(cdef.values, list) and cdef.values:
                ctx[cid] = cdef.values[0]
            else:
                ctx[cid] = None
        return ctx

    @staticmethod
    def _server(ev: EventDef, values):
        same = [v for v in values if isinstance(v, E.Version) and v.flavor == ev.flavor]
        if not same:
            same = [v for v in values if isinstance(v, E.Version)]
        if not same:
            return None

        def inside(v):
            ok = True
            if ev.since is not None and ev.since.flavor == v.flavor:
                ok = ok and v.number >= ev.since.number
            if ev.until is not None and ev.until.flavor == v.flavor:
                ok = ok and v.number < ev.until.number
            return ok

        fit = [v for v in same if inside(v)]
        if fit:
            pick = fit[0]
        elif ev.until is not None:
            pick = min(same, key=lambda v: v.number)
        else:
            pick = same[0]
        return rt.Version(pick.flavor, pick.number)

    # -- expressions -----------------------------------------------------------------------
    def _eval(self, node, env, underscore=None):
        try:
            v = E.evaluate(node, env, self.enums, underscore)
        except (LookupError, TypeError, IndexError, KeyError, ZeroDivisionError, AttributeError):
            raise LookupError(E.to_source(node)) from None
        if v is REBUILT:
            raise LookupError(E.to_source(node))
        return v

    def _try(self, node, env):
        if not isinstance(node, tuple):
            return None
        try:
            return self._eval(node, env)
        except LookupError:
            return None

    def _holds(self, node, env) -> bool:
        saved = env.remaining
        env.remaining = _BIG
        try:
            return bool(self._eval(node, env))
        except LookupError:
            # a condition on a value the build computes: present (the build decides the bytes)
            return True
        finally:
            env.remaining = saved

    # -- structs ---------------------------------------------------------------------------
    def event_value(self, ev: EventDef, code: int, post_header_len=None):
        """(context, value) of the example of one event type code."""
        ctx = self.context(ev, code, post_header_len)
        return ctx, self.fields(ev.fields, None, ctx)

    def type_value(self, type_name: str, ctx: dict):
        td = self.specs.types[type_name]
        return self.field(td.field, E.Env({}, ctx=ctx), None, set())

    def fields(self, fields, parent_env, ctx, index=None) -> dict:
        values = {}
        shadow = {}
        env = E.Env(KnownValues(values, shadow), parent=parent_env, ctx=ctx, index=index)
        versioned = set()
        for f in fields:
            for _role, node in _exprs(f):
                _ver_args(node, versioned)
        for i, f in enumerate(fields):
            if f.cond is not None and not self._holds(f.cond, env):
                values[f.id] = None
                continue
            if f.rebuild is not None and f.id not in E.names_used(f.rebuild):
                values[f.id] = REBUILT
                continue
            later = fields[i + 1:]
            if f.rebuild is None and f.repeat is None and f.repeat_until is None and f.const is None \
                    and self._is_scalar(f) and any(f.id in E.names_used(n) for g in later for _r, n in _exprs(g)):
                values[f.id] = self._choose(f, i, later, env, values)
                continue
            values[f.id] = self.field(f, env, shadow, versioned, ordinal=i + 1)
        return dict(values)

    def _is_scalar(self, f: Field) -> bool:
        t = f.type
        while t.kind == "named":
            td = self.specs.types[t.name]
            if td.field.repeat is not None or td.field.cond is not None:
                return False
            t = td.field.type
        return t.kind in ("int", "packed", "sv_uint", "sv_sint")

    def _choose(self, f: Field, i: int, later, env, values):
        """The value of a field later fields read: the candidate under which most later fields are
        present and every size or count they compute stays small (first candidate on a tie)."""
        width = self._int_width(f)
        hi = (1 << (8 * width)) - 1 if width else (1 << 64) - 1
        cands = []
        if f.enum:
            cands += list(self.specs.enums[f.enum].members)
        elif f.flags:
            bits = sorted(self.specs.enums[f.flags].members)
            if bits:
                cands.append(bits[0])
        cands += [1, 0]
        lits = []
        for g in later:
            for _role, node in _exprs(g):
                if f.id in E.names_used(node):
                    lits += [n for n in _literals(node, []) if n >= 0]
        cands += lits
        if lits:
            acc = 0
            for n in lits:
                acc |= n
            cands.append(acc)
        seen, ordered = set(), []
        for c in cands:
            if c not in seen and 0 <= c <= hi:
                seen.add(c)
                ordered.append(c)
        best, best_score = None, None
        for c in ordered:
            values[f.id] = c
            score = 0
            for g in later:
                for role, node in _exprs(g):
                    if f.id not in E.names_used(node):
                        continue
                    if role == "cond":
                        saved = env.remaining
                        env.remaining = _BIG
                        try:
                            score += 1 if self._eval(node, env) else 0
                        except LookupError:
                            pass
                        finally:
                            env.remaining = saved
                    elif role == "size":
                        v = self._try(node, env)
                        if v is not None and not 0 <= v <= _MAX_SIZE:
                            score -= 100
                    elif role == "switch":
                        v = self._try(node, env)
                        if v is not None and g.type.default is None and \
                                not any(k == v for k, _t, _s in g.type.cases):
                            score -= 100
            if best_score is None or score > best_score:
                best, best_score = c, score
        del values[f.id]
        return best

    def _int_width(self, f: Field) -> int:
        t = f.type
        while t.kind == "named":
            t = self.specs.types[t.name].field.type
        return t.width if t.kind == "int" else 0

    # -- fields ----------------------------------------------------------------------------
    def field(self, f: Field, env, shadow, versioned, ordinal=1):
        if f.repeat_until is not None:
            out = []
            for i in range(8):
                item = self.content(f, _at(env, i), shadow, versioned, ordinal)
                out.append(item)
                try:
                    if self._eval(f.repeat_until, env, underscore=item):
                        return out
                except LookupError:
                    return out
            raise ExampleError(f"{f.id}: repeat-until never holds for the example values")
        if f.repeat is not None:
            n = 1 if f.repeat == "eos" else self._try(f.repeat, env)
            if n is None:
                n = 1
                if shadow is not None and f.repeat[0] == "name":
                    shadow[f.repeat[1]] = n
            return [self.content(f, _at(env, i), shadow, versioned, ordinal) for i in range(n)]
        return self.content(f, env, shadow, versioned, ordinal)

    def content(self, f: Field, env, shadow, versioned, ordinal):
        t = f.type
        if f.const is not None:
            return bytes(f.const) if isinstance(f.const, list) else f.const
        if t.kind in ("bytes", "str"):
            return self.text_or_bytes(f, env, shadow, versioned)
        if t.kind == "uintvar":
            n = self._try(f.size, env)
            if n is None:
                raise ExampleError(f"{f.id}: the width of the integer is unknown")
            return min(ordinal, (1 << (8 * n)) - 1)
        if t.kind == "bitmap":
            n = self._try(t.bits, env)
            if n is None:
                n = 1
                if shadow is not None and isinstance(t.bits, tuple) and t.bits[0] == "name":
                    shadow[t.bits[1]] = n
            return [i % 2 == 0 for i in range(n)]
        return self.typed(t, env, f, versioned, ordinal)

    def typed(self, t: TypeSpec, env, f: Field | None, versioned, ordinal):
        k = t.kind
        if k == "int":
            if f is not None and f.enum:
                return next(iter(self.specs.enums[f.enum].members))
            if f is not None and f.flags:
                bits = sorted(self.specs.enums[f.flags].members)
                return bits[0] if bits else 0
            hi = (1 << (8 * t.width - (1 if t.signed else 0))) - 1
            return min(ordinal, hi)
        if k in ("packed", "sv_uint", "sv_sint"):
            if f is not None and f.flags:
                bits = sorted(self.specs.enums[f.flags].members)
                return bits[0] if bits else 0
            return ordinal
        if k == "empty":
            return None
        if k == "struct":
            return self.fields(t.fields, env, env.ctx, env.index)
        if k == "named":
            td = self.specs.types[t.name]
            return self.field(td.field, env, None, set(), ordinal)
        if k == "switch":
            try:
                key = self._eval(t.switch_on, env)
            except LookupError:
                raise ExampleError(f"switch on {E.to_source(t.switch_on)}: value unknown") from None
            for ckey, ctype, _src in t.cases:
                if ckey == key:
                    return self.typed(ctype, env, None, versioned, ordinal)
            if t.default is None:
                raise ExampleError(f"switch on {E.to_source(t.switch_on)}: no case for {key}")
            return self.typed(t.default, env, None, versioned, ordinal)
        if k == "tlv":
            if not t.cases:
                return []
            key, cf = t.cases[0]
            if cf.cond is not None:
                value = self.fields([cf], env, env.ctx)[cf.id]
            else:
                value = self.field(cf, env, None, set(), 1)
            return [{"tag": key, "id": cf.id, "value": value}]
        raise ExampleError(f"no example for a {k}")

    def text_or_bytes(self, f: Field, env, shadow, versioned):
        n = None
        if f.size is not None and f.size != "rest":
            n = self._try(f.size, env)
        free = f.prefix is not None or f.size == "rest" or n is None
        is_str = f.type.kind == "str"
        if is_str and f.id in versioned:
            server = env.ctx.get("server")
            text = ".".join(map(str, server.number)) if server is not None else "8.0.40"
            if server is not None and server.flavor == "mariadb":
                text += "-MariaDB"
            data = text.encode("ascii")
        elif is_str:
            data = f.id.encode("ascii")
        else:
            data = bytes(range(1, FREE_LEN + 1))
        if free:
            if not is_str:
                data = data[:FREE_LEN]
            if f.prefix is not None and f.prefix.kind == "int":
                data = data[:(1 << (8 * f.prefix.width)) - 1]
            if n is None and isinstance(f.size, tuple) and f.size[0] == "name" and shadow is not None:
                shadow[f.size[1]] = len(data)
        else:
            if f.pad is not None:
                data = data[:n]
            else:
                data = (data * (n // max(len(data), 1) + 1))[:n] if n else b""
        if f.terminator is not None:
            data = data.replace(bytes([f.terminator]), b"\x01" if f.terminator != 1 else b"\x02")
        return data.decode("ascii") if is_str else data


def _at(env, i):
    return E.Env(env.values, parent=env.parent, ctx=env.ctx, index=i, remaining=env.remaining)


def build_input(value):
    """The example as the generated struct's build takes it (REBUILT fields as None)."""
    if value is REBUILT:
        return None
    if isinstance(value, dict):
        return {k: build_input(v) for k, v in value.items()}
    if isinstance(value, list):
        return [build_input(v) for v in value]
    return value


class EventExample:
    """One event type code's example: context, the value made, the bytes the generated struct
    built, the value it parsed back, and the spans of the fields (binlog_grammar.runtime.spans)."""

    def __init__(self, name, code, ctx, made, data, parsed, spans):
        self.names = [name]
        self.codes = [code]
        self.ctx = ctx
        self.made = made
        self.data = data
        self.value = parsed
        self.spans = spans


def event_example(maker: ExampleMaker, ev: EventDef, code: int) -> EventExample:
    """Make, build (with the generated struct of the catalog), parse back and record spans.

    The post-header length is the one among those the event announces whose post-header fields,
    as built, take exactly that many bytes (EXECUTE_LOAD_QUERY_EVENT announces 26 where
    QUERY_EVENT announces 13); the first when none does."""
    from ..generated.catalog import EVENTS
    from ..runtime import spans as layout

    et = EVENTS.get(code)
    name = next(n.name for n in ev.names if n.code == code)
    if et is None or et.name != name:
        raise ExampleError(f"{name} ({code}) is not in the generated catalog; run `binlog-grammar generate`")
    post_header = [f.id for f in ev.fields if f.section == "post_header"]
    first = None
    for phl in ev.post_header_len:
        ctx, made = maker.event_value(ev, code, phl)
        try:
            data = et.build(build_input(made), ctx)
            parsed = et.parse(data, ctx)
        except Exception as e:  # noqa: BLE001 - reported with the event's name below
            if first is None:
                first = e
            continue
        value, spans = layout.record(rt.Sized(None, et.struct), data, **ctx)
        ex = EventExample(name, code, ctx, made, data, parsed, spans)
        if plain(value) != plain(parsed):
            raise ExampleError(f"example of {name}: the span recorder parsed another value than the struct")
        if not same(made, parsed) or et.build(parsed, ctx) != data:
            raise ExampleError(f"example of {name} does not round-trip through the generated struct")
        ph_end = max((s.end for s in spans if s.name in post_header), default=0)
        if ph_end == phl:
            return ex
        if not isinstance(first, EventExample):
            first = ex
    if isinstance(first, EventExample):
        return first
    raise ExampleError(f"example of {name}: {type(first).__name__}: {first}")
