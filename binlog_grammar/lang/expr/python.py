"""The Python emitter: the construct modules and generated/fast.py contain the specs'
expressions as plain Python expressions, written by `Emitter` in a `Dialect`."""
from __future__ import annotations

from dataclasses import dataclass

from ...runtime.functions import VERSION
from .evaluate import PY_BIN
from .translate import Translator


@dataclass(frozen=True)
class Dialect:
    """How emitted code reaches what is not a field of the struct being read: a context value
    (`ctx.x`), the column being decoded (`col`), its metadata (`col.meta`, `col.meta.x`) and the
    bytes left in the region (`remaining`). Each is a format string of `this` (the Python name of
    the struct's context), `name` and `col` (the source of the column). The defaults are the
    construct modules' form: runtime.construct helpers that look in a construct context."""
    ctx: str = "rt.ctx({this}, {name!r})"
    col: str = "rt.col({this})"
    meta: str = "{col}['meta']"
    meta_field: str = "{col}['meta'][{name!r}]"
    remaining: str = "rt.remaining({this})"


CONSTRUCT = Dialect()


class Emitter(Translator):
    """Turns an expression into Python source. `this` is the Python name of the current struct's
    context; `dialect` says how the code reaches the context values, the column and the region;
    `sizeof_ref(field)` gives the Python source of a field's construct (for sizeof)."""

    def __init__(self, enums, sizeof_ref=None, this="this", underscore="obj", dialect=CONSTRUCT):
        self.enums = enums
        self.sizeof_ref = sizeof_ref
        self.this = this
        self.underscore = underscore
        self.dialect = dialect

    def emit(self, node) -> str:
        return self.translate(node)

    def on_num(self, node):
        return hex(node.value) if node.value > 255 else str(node.value)

    def on_str(self, node):
        return repr(node.value)

    on_lit = on_str

    def on_ver(self, node):
        v = node.version
        return f"rt.Version({v.flavor!r}, {v.number!r})"

    def on_enum(self, node):
        return f"{self.enums[node.enum][node.member]}"  # resolved at compile time

    def on_name(self, node):
        return f"{self.this}[{node.id!r}]"

    def on_remaining(self, node):
        return self.dialect.remaining.format(this=self.this)

    def on_loop_index(self, node):
        return f"{self.this}['_index']"

    def on_underscore(self, node):
        return self.underscore

    def on_parent(self, node):
        return f"{self.this}['_']"

    def on_col(self, node):
        return self.dialect.col.format(this=self.this)

    def on_ctx(self, node):
        return self.dialect.ctx.format(this=self.this, name=node.name)

    def on_attr(self, node):
        return f"{self.translate(node.base)}[{node.name!r}]"

    def on_parent_attr(self, node):
        return f"{self.translate(node.base)}['_']"

    def on_col_meta(self, node):
        return self.dialect.meta.format(col=self.translate(node.base))

    def on_col_meta_field(self, node):
        return self.dialect.meta_field.format(col=self.translate(node.base.base), name=node.name)

    def on_index(self, node):
        return f"{self.translate(node.base)}[{self.translate(node.index)}]"

    def on_call(self, node):
        return f"{node.function.python}({', '.join(self.translate(a) for a in node.args)})"

    def on_sizeof(self, node):
        arg = node.args[0]
        return f"{node.function.python}({self.sizeof_ref(arg.id)}, {self.translate(arg)}, {self.this})"

    def on_binary(self, node):
        op, a, b = node.op, self.translate(node.left), self.translate(node.right)
        if op in ("<", "<=", ">", ">=") and VERSION in (node.left.type, node.right.type):
            return f"rt.vcmp({op!r}, {a}, {b})"
        return f"({a} {PY_BIN[op]} {b})"

    def on_bool_op(self, node):
        return f"({self.translate(node.left)} {node.op} {self.translate(node.right)})"

    def on_not_(self, node):
        return f"(not {self.translate(node.operand)})"

    def on_unary(self, node):
        return f"({node.op}{self.translate(node.operand)})"

    def on_cond(self, node):
        return (f"({self.translate(node.then)} if {self.translate(node.test)} "
                f"else {self.translate(node.other)})")
