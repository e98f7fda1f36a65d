"""The C translator of the expression language: a spec expression written as a C expression of
type `bg_val` over named C variables, calling the helpers of templates/bg_expr.h.j2 (`header()`).

The compiled backend reads the specs' sizes, conditions and computed fields through it; nothing
else in it knows what an expression means. Names become variables by their path: a field `x` is
`v_x`, `_parent.x` is `v_up__x`, `col.meta.length` is `v_col__meta__length`, `ctx.x` is `ctx_x`,
`sizeof(x)` reads `sz_x`, `remaining` is `v_remaining`, `_index` `v__index` (`CNames` says so;
a backend with other storage gives its own). Operators and functions are the header's (the
registry runtime.functions.FUNCTIONS names each function's helper), with the meaning they have in
Python (tests/codegen/test_c_expressions.py compiles every expression of the specs and random
ones with gcc and compares them with lang.expr.evaluate).
"""
from __future__ import annotations

import json
import re

from ..lang import expr as E
from ..runtime.functions import FUNCTIONS
from .python import template

_OPS = {"+": "bg_add", "-": "bg_sub", "*": "bg_mul", "/": "bg_div", "%": "bg_mod",
        "<<": "bg_shl", ">>": "bg_shr", "&": "bg_band", "|": "bg_bor", "^": "bg_bxor",
        "==": "bg_eq", "!=": "bg_ne", "<": "bg_lt", "<=": "bg_le", ">": "bg_gt", ">=": "bg_ge"}
_FLAVORS = {"mysql": 0, "mariadb": 1}
# Python's regular expressions that POSIX extended ones read otherwise (classes, groups' options)
_NOT_POSIX = re.compile(r"\\[A-Za-z0-9]|\(\?|[*+?}]\?")


class Unsupported(Exception):
    """An expression this translator cannot write in C (said at generation time)."""


def header() -> str:
    """The C header of the values and functions expressions use."""
    return template("bg_expr.h.j2").render(functions=FUNCTIONS.values())


class CNames:
    """The C variable of a name, a path of names (`_parent.x`, `col.meta.x`), a context value or
    a field's size."""

    def path(self, parts) -> str:
        return "v_" + "__".join(parts)

    def ctx(self, name) -> str:
        return f"ctx_{name}"

    def sizeof(self, name) -> str:
        return f"sz_{name}"


def _c_string(text: str) -> str:
    return json.dumps(text, ensure_ascii=True)  # a C string literal for printable ASCII


class CTranslator(E.Translator):
    """An expression as a C expression of type bg_val. `variables` collects the C variables it
    reads (to declare or bind them)."""

    def __init__(self, enums, names: CNames | None = None):
        self.enums = enums
        self.names = names or CNames()
        self.variables = set()
        self.n = 0

    def on_node(self, node):
        raise Unsupported(f"{type(node).__name__} in C: {E.to_source(node)}")

    def var(self, name) -> str:
        self.variables.add(name)
        return name

    def path_of(self, node) -> list:
        """The names from a field or `_parent`/`col` to a member (`_parent` is `up`)."""
        if isinstance(node, E.nodes.Parent) or isinstance(node, E.nodes.ParentAttr):
            return (self.path_of(node.base) if isinstance(node, E.nodes.ParentAttr) else []) + ["up"]
        if isinstance(node, E.nodes.Name):
            return [node.id]
        if isinstance(node, E.nodes.Attr):
            return self.path_of(node.base) + [node.name]
        raise Unsupported(f"a member of {E.to_source(node)} in C")

    def on_num(self, node):
        if not 0 <= node.value < (1 << 63):
            raise Unsupported(f"{node.value} does not fit an int64")
        return f"bg_int({node.value}LL)"

    def on_str(self, node):
        data = node.value.encode("utf-8")
        return f"bg_str({_c_string(node.value)}, {len(data)})"

    def on_lit(self, node):
        return "bg_null()" if node.value is None else f"bg_bool({int(node.value)})"

    def on_ver(self, node):
        v = node.version
        parts = list(v.number) + [0] * (3 - len(v.number))
        return f"bg_ver({_FLAVORS[v.flavor]}, {len(v.number)}, {', '.join(f'{p}LL' for p in parts)})"

    def on_enum(self, node):
        return f"bg_int({self.enums[node.enum][node.member]}LL)"

    def on_name(self, node):
        return self.var(self.names.path(self.path_of(node)))

    on_attr = on_name

    def on_ctx(self, node):
        return self.var(self.names.ctx(node.name))

    def on_index(self, node):
        return f"bg_index({self.translate(node.base)}, {self.translate(node.index)})"

    def on_call(self, node):
        f = node.function
        args = []
        for param, a in zip(f.params, node.args):
            if param == "regex" and _NOT_POSIX.search(a.value):
                raise Unsupported(f"the regular expression {a.value!r} reads otherwise in POSIX")
            args.append(_c_string(a.value) if param in ("regex", "id") else self.translate(a))
        return f"{f.c}({', '.join(args)})"

    def on_sizeof(self, node):
        return f"{node.function.c}({self.var(self.names.sizeof(node.args[0].id))})"

    def on_binary(self, node):
        return f"{_OPS[node.op]}({self.translate(node.left)}, {self.translate(node.right)})"

    def on_bool_op(self, node):
        # the value of the operand that decides, as in Python (a GNU C statement expression)
        self.n += 1
        t = f"_t{self.n}"
        left, right = self.translate(node.left), self.translate(node.right)
        test = f"bg_truth({t})" if node.op == "and" else f"!bg_truth({t})"
        return f"({{ bg_val {t} = {left}; {test} ? {right} : {t}; }})"

    def on_not_(self, node):
        return f"bg_not({self.translate(node.operand)})"

    def on_unary(self, node):
        return f"{'bg_neg' if node.op == '-' else 'bg_inv'}({self.translate(node.operand)})"

    def on_cond(self, node):
        return (f"(bg_truth({self.translate(node.test)}) ? {self.translate(node.then)} : "
                f"{self.translate(node.other)})")
