"""The C translator (codegen.c_expr) against the interpreter (lang.expr.evaluate): every
expression the specs hold, and random expressions over the grammar, compiled with gcc into one
shared object and evaluated on drawn inputs, give the value Python gives, or both refuse the
input (null arithmetic, division by zero, an index out of range). An int64 overflow in C, or a
value the C header does not compare (lists), leaves that draw out; the tests count them."""
import ctypes
import dataclasses
import random
import shutil
import subprocess

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from binlog_grammar.codegen import c_expr
from binlog_grammar.lang import expr as E
from binlog_grammar.lang.expr import nodes as N
from binlog_grammar.lang.loader import load_specs
from binlog_grammar.runtime.versions import Version

pytestmark = pytest.mark.skipif(shutil.which("gcc") is None,
                                reason="gcc is not installed: the C expressions cannot be compiled")

(NULL, INT, BOOL, VERSION, STR, BYTES, BITS, LIST, TLV) = range(9)
E_TYPE, E_OVERFLOW, E_ZERO, E_INDEX, E_UNSUPPORTED = range(1, 6)
REFUSED = (TypeError, ValueError, ZeroDivisionError, IndexError)


class Val(ctypes.Structure):
    _fields_ = [("k", ctypes.c_int32), ("n", ctypes.c_int32), ("i", ctypes.c_int64),
                ("p", ctypes.c_void_p), ("v", ctypes.c_int64 * 3)]


class Skip(Exception):
    """A value C does not hold (an int beyond int64, a record)."""


def to_c(value, keep) -> Val:
    out = Val()
    if value is None:
        out.k = NULL
    elif isinstance(value, bool):
        out.k, out.i = BOOL, int(value)
    elif isinstance(value, int):
        if not -(1 << 63) <= value < (1 << 63):
            raise Skip
        out.k, out.i = INT, value
    elif isinstance(value, Version):
        out.k, out.i, out.n = VERSION, {"mysql": 0, "mariadb": 1}[value.flavor], len(value.number)
        for j, part in enumerate(value.number):
            out.v[j] = part
    elif isinstance(value, (str, bytes)):
        data = value.encode("utf-8") if isinstance(value, str) else value
        buf = ctypes.create_string_buffer(data, len(data) + 1)
        keep.append(buf)
        out.k, out.i, out.p = (STR if isinstance(value, str) else BYTES), len(data), ctypes.addressof(buf)
    elif isinstance(value, list) and all(isinstance(b, bool) for b in value) and value:
        buf = (ctypes.c_uint8 * len(value))(*value)
        keep.append(buf)
        out.k, out.i, out.p = BITS, len(value), ctypes.addressof(buf)
    elif isinstance(value, list) and all(isinstance(e, dict) for e in value) and value:
        items = (Val * (2 * len(value)))(*[v for e in value for v in (to_c(e["id"], keep),
                                                                        to_c(e["value"], keep))])
        keep.append(items)
        out.k, out.i, out.p = TLV, len(value), ctypes.addressof(items)
    elif isinstance(value, list):
        items = (Val * max(1, len(value)))(*[to_c(e, keep) for e in value])
        keep.append(items)
        out.k, out.i, out.p = LIST, len(value), ctypes.addressof(items)
    else:
        raise Skip
    return out


def from_c(v: Val):
    if v.k == NULL:
        return None
    if v.k in (INT, BOOL):
        return bool(v.i) if v.k == BOOL else v.i
    if v.k == VERSION:
        return Version(("mysql", "mariadb")[v.i], tuple(v.v[:v.n]))
    if v.k in (STR, BYTES, BITS):
        data = ctypes.string_at(v.p, v.i)
        return data.decode("utf-8") if v.k == STR else data if v.k == BYTES else [bool(b) for b in data]
    return ("list", v.i, v.p)  # compared by identity with the input it came from


class Compiled:
    """Expressions compiled into one shared object: run(i, {C variable: value})."""

    def __init__(self, nodes, enums, tmp_path):
        self.leaves = []
        decls, funcs = set(), []
        for i, node in enumerate(nodes):
            t = c_expr.CTranslator(enums)
            funcs.append(f"static bg_val e{i}(void) {{ return {t.translate(node)}; }}")
            decls |= t.variables
            self.leaves.append(leaves(node, t))
        src = "\n".join([c_expr.header(), *(f"bg_val {d};" for d in sorted(decls)), *funcs,
                         f"static bg_val (*const exprs[])(void) = {{{', '.join(f'e{i}' for i in range(len(nodes)))}}};",
                         "int bg_run(int i, bg_val *out) { int why = setjmp(bg_jmp);"
                         " if (why) return why; *out = exprs[i](); return 0; }", ""])
        (tmp_path / "exprs.c").write_text(src)
        subprocess.run(["gcc", "-shared", "-fPIC", "-O0", "-Wall", "-Wno-unused-function",
                        "-Werror", "-o", str(tmp_path / "exprs.so"), str(tmp_path / "exprs.c")],
                       check=True, capture_output=True, text=True)
        self.lib = ctypes.CDLL(str(tmp_path / "exprs.so"))
        self.cells = {}

    def run(self, i, bound: dict):
        keep = []
        for name, value in bound.items():
            if name not in self.cells:
                self.cells[name] = Val.in_dll(self.lib, name)
            self.cells[name].__init__(*_fields(to_c(value, keep)))
        out = Val()
        why = self.lib.bg_run(i, ctypes.byref(out))
        return why, from_c(out) if why == 0 else None


def _fields(v: Val):
    return (v.k, v.n, v.i, v.p, v.v)


def leaves(node, t: c_expr.CTranslator) -> dict:
    """{C variable: (leaf node, what it is used as)} of an expression."""
    out = {}

    class Leaves(E.Walker):
        use = "value"

        def leaf(self, n):
            out.setdefault(t.translate(n) if not isinstance(n, N.SizeOf)
                           else t.names.sizeof(n.args[0].id), (n, self.use))

        on_name = on_attr = on_ctx = on_sizeof = leaf

        def on_index(self, n):
            self.with_use(n.base, "bits")
            self.with_use(n.index, "value")

        def on_call(self, n):
            for param, a in zip(n.function.params, n.args):
                self.with_use(a, {"len": "sized", "version": "version_text", "matches": "text",
                                  "tlv": "tlv"}.get(n.func, "bits" if param == "bits" else "value"))

        def with_use(self, n, use):
            saved, self.use = self.use, use
            self.translate(n)
            self.use = saved

    Leaves().translate(node)
    return out


def literals(node) -> list:
    acc = []

    class Lits(E.Walker):
        def on_num(self, n):
            acc.extend((n.value, n.value + 1, n.value - 1))
    Lits().translate(node)
    return acc


def draw_value(rnd, use, lits, node):
    """A value for a leaf, by what the expression uses it as (from a Random seeded by
    Hypothesis: thousands of values per example)."""
    if isinstance(node, N.Ctx) and node.name == "server":
        return rnd.choice([None, Version(rnd.choice(["mysql", "mariadb"]),
                                         tuple(rnd.randint(0, 12) for _ in range(rnd.randint(1, 3))))])
    if use == "bits":
        return [rnd.random() < 0.5 for _ in range(rnd.randint(1, 10))]
    if use == "sized":
        return rnd.choice([None, bytes(rnd.randrange(256) for _ in range(rnd.randint(0, 6))),
                           "".join(rnd.choice("ab\u00e9") for _ in range(rnd.randint(0, 4))),
                           [rnd.random() < 0.5 for _ in range(rnd.randint(1, 5))]])
    if use in ("version_text", "text"):
        return rnd.choice([None, "".join(rnd.choice("0123456789.-abdiMDAaRr_ ") for _ in range(rnd.randint(0, 14))),
                           "10.11.6-MariaDB-log", "5.5.5-10.4.2-MariaDB", "8.0.40", "5.1.4-a_drop6",
                           "5.1.3-a_drop5x"])
    if use == "tlv":
        return [{"id": rnd.choice(["compression_type", "other"]), "value": rnd.randint(0, 3)}
                for _ in range(rnd.randint(0, 3))]
    pick = rnd.random()
    if pick < 0.35 and lits:
        return rnd.choice(lits)
    if pick < 0.7:
        return rnd.randint(-20, 300)
    if pick < 0.8:
        return rnd.randint(-(1 << 20), 1 << 20)  # a shift by it stays small in Python
    if pick < 0.93:
        return rnd.random() < 0.5
    return None


def python_env(values: dict):
    """The Env (and `_`) in which the leaves have these values; None when two leaves disagree
    (a record that is also a number)."""
    env, sizes = E.Env({}, ctx={}, index=None, remaining=None), {}
    env.sizeof = sizes.get
    parents = {}

    def scope(depth):
        s = env
        for _ in range(depth):
            if s.parent is None:
                s.parent = E.Env({}, ctx=env.ctx)
            s = s.parent
        return s

    underscore = None
    for node, value in values.values():
        if isinstance(node, N.Ctx):
            env.ctx[node.name] = value
        elif isinstance(node, N.SizeOf):
            sizes[node.args[0].id] = value
        else:
            path, depth = [], 0
            n = node
            while isinstance(n, N.Attr) and not isinstance(n, N.ParentAttr):
                path.insert(0, n.name)
                n = n.base
            while isinstance(n, N.ParentAttr):
                depth, n = depth + 1, n.base
            if isinstance(n, N.Parent):
                depth += 1
            elif isinstance(n, N.Underscore) and not path:
                underscore = value
                continue
            else:
                path.insert(0, n.id)
            s = scope(depth)
            if path[0] == "remaining" and len(path) == 1:
                s.remaining = value
            elif path[0] == "_index" and len(path) == 1:
                s.index = value
            else:
                holder = s.values
                if path[0] == "col":
                    s.col = s.col if isinstance(s.col, dict) else {}
                    holder, path = s.col, path[1:]
                for p in path[:-1]:
                    holder = holder.setdefault(p, {})
                    if not isinstance(holder, dict):
                        return None
                if not path or path[-1] in holder:
                    return None
                holder[path[-1]] = value
    return env, underscore, parents


class Bounded(E.Evaluator):
    """evaluate, stopping (OverflowError) where an int64 would: what C then refuses too, and a
    Python int of millions of digits is never computed."""

    def on_binary(self, node):
        a, b = self.translate(node.left), self.translate(node.right)
        if node.op == "<<" and isinstance(b, int) and b > 64 and a:
            raise OverflowError("shift")
        return _fits(E.apply_bin(node.op, a, b))

    def on_unary(self, node):
        return _fits(super().on_unary(node))


def _fits(v):
    if isinstance(v, int) and not -(1 << 63) <= v < (1 << 63):
        raise OverflowError("beyond int64")
    return v


def check_one(compiled, i, node, enums, rnd, counts):
    bound = {}
    lits = literals(node)
    for name, (leaf, use) in compiled.leaves[i].items():
        bound[name] = (leaf, draw_value(rnd, use, lits, leaf))
    made = python_env(bound)
    if made is None:
        counts["conflict"] += 1
        return
    env, underscore, _ = made
    try:
        expected, refused = Bounded(env, enums, underscore).translate(node), None
    except REFUSED as e:
        expected, refused = None, e
    except (OverflowError, MemoryError):  # a shift by 2**40: beyond int64 in C as well
        counts["overflow"] += 1
        return
    except (LookupError, AttributeError):
        counts["conflict"] += 1
        return
    try:
        why, got = compiled.run(i, {name: v for name, (_leaf, v) in bound.items()})
    except Skip:
        counts["conflict"] += 1
        return
    where = f"{E.to_source(node)} with {bound}"
    if why in (E_OVERFLOW, E_UNSUPPORTED):
        counts["overflow" if why == E_OVERFLOW else "unsupported"] += 1
        return
    if refused is not None:
        assert why in (E_TYPE, E_ZERO, E_INDEX), f"{where}: Python refused ({refused!r}), C gave {got!r}"
    else:
        assert why == 0, f"{where}: C refused ({why}), Python gave {expected!r}"
        if isinstance(got, tuple) and got[0] == "list":
            assert isinstance(expected, list) and len(expected) == got[1], where
        else:
            assert got == expected and type(got) is type(expected), f"{where}: C {got!r}, Python {expected!r}"
    counts["compared"] += 1


# -- every expression the specs hold ----------------------------------------------------------

SPECS = load_specs()
ENUMS = SPECS.enum_values()


def spec_expressions():
    out, seen = {}, set()

    def walk(o):
        if isinstance(o, N.Node):
            out.setdefault(o, None)
        elif dataclasses.is_dataclass(o) and id(o) not in seen:
            seen.add(id(o))
            for f in dataclasses.fields(o):
                if f.name != "raw":
                    walk(getattr(o, f.name))
        elif isinstance(o, (list, tuple)):
            for x in o:
                walk(x)
        elif isinstance(o, dict):
            for x in o.values():
                walk(x)
    walk(SPECS)
    return list(out)


EXPRS = spec_expressions()


@pytest.fixture(scope="module")
def compiled_specs(tmp_path_factory):
    return Compiled(EXPRS, ENUMS, tmp_path_factory.mktemp("c_specs"))


def test_every_spec_expression_translates():
    assert len(EXPRS) > 150  # the specs' sizes, conditions, computed fields, switches
    for node in EXPRS:
        c_expr.CTranslator(ENUMS).translate(node)


def test_spec_expressions_in_c_equal_evaluate(compiled_specs):
    counts = {"compared": 0, "overflow": 0, "unsupported": 0, "conflict": 0}

    @settings(max_examples=100, deadline=None, derandomize=True,
              suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])
    @given(st.integers(0, 2**32))
    def run(seed):
        rnd = random.Random(seed)
        for i, node in enumerate(EXPRS):
            check_one(compiled_specs, i, node, ENUMS, rnd, counts)

    run()
    assert counts["compared"] > 0.9 * 100 * len(EXPRS), counts


# -- random expressions over the grammar ------------------------------------------------------

def _leaf():
    return st.one_of(
        st.integers(0, 300).map(N.Num), st.sampled_from([N.Num(1 << 21), N.Lit(None), N.Lit(True),
                                                          N.Lit(False), N.Ctx("x"), N.Name.of("_index")]),
        st.sampled_from(["a", "b", "c"]).map(N.Name.of),
        st.sampled_from(["a", "b"]).map(lambda n: N.Attr.of(N.Name.of("_parent"), n)),
        st.sampled_from(["length", "bits"]).map(
            lambda n: N.Attr.of(N.Attr.of(N.Name.of("col"), "meta"), n)))


def _grow(sub):
    ints = st.integers(0, 5).map(N.Num)
    bits = st.just(N.Name.of("bitmap"))
    return st.one_of(
        st.builds(N.Binary, st.sampled_from(list(E.PY_BIN)), sub, sub),
        st.builds(N.BoolOp, st.sampled_from(["and", "or"]), sub, sub),
        st.builds(N.Not, sub), st.builds(N.Unary, st.sampled_from(["-", "~"]), sub),
        st.builds(N.Cond, sub, sub, sub),
        st.builds(lambda f, a, b: N.Call.of(f, (a, b)), st.sampled_from(["min", "max"]), sub, sub),
        st.builds(lambda a: N.Call.of("abs", (a,)), sub),
        st.builds(lambda b: N.Call.of("popcount", (b,)), bits),
        st.builds(lambda b, i: N.Call.of("rank", (b, i)), bits, st.one_of(ints, sub)),
        st.builds(N.Index, bits, st.one_of(ints, sub)),
        st.builds(lambda a: N.Call.of("len", (a,)), st.just(N.Name.of("data"))),
        st.builds(lambda op, v: N.Binary(op, N.Call.of("version", (N.Name.of("server_version"),)), v),
                  st.sampled_from(["<", ">=", "==", "!="]),
                  st.sampled_from([N.Ver(Version("mysql", (5, 6, 1))), N.Ver(Version("mariadb", (10, 5))),
                                   N.Ctx("server")])))


EXPRESSIONS = st.recursive(_leaf(), _grow, max_leaves=12)


@settings(max_examples=25, deadline=None, derandomize=True,
          suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])
@given(st.lists(EXPRESSIONS, min_size=40, max_size=40), st.integers(0, 2**32))
def test_random_expressions_in_c_equal_evaluate(tmp_path_factory, exprs, seed):
    rnd = random.Random(seed)
    compiled = Compiled(exprs, {}, tmp_path_factory.mktemp("c_random"))
    counts = {"compared": 0, "overflow": 0, "unsupported": 0, "conflict": 0}
    for _ in range(10):
        for i, node in enumerate(exprs):
            check_one(compiled, i, node, {}, rnd, counts)
    assert counts["compared"] > 50, counts
