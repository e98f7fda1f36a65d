"""The interpreter of expressions (used by the Hypothesis strategies and the docs' examples,
which build values field by field), the operators' meaning in Python, and constant folding."""
from __future__ import annotations

from ...runtime.functions import CALLS
from ...runtime.versions import Version, version_compare
from .translate import Translator

# spec operator -> Python operator (integer division for `/`)
PY_BIN = {"+": "+", "-": "-", "*": "*", "/": "//", "%": "%", "<<": "<<", ">>": ">>", "&": "&",
          "|": "|", "^": "^", "==": "==", "!=": "!=", "<": "<", "<=": "<=", ">": ">", ">=": ">="}


def apply_bin(op, a, b):
    """The value of `a op b` for a binary operator of the language: versions compare within their
    line, a comparison with null is false, and arithmetic on null is an error."""
    if op in ("==", "!="):
        return (a == b) if op == "==" else (a != b)
    if op in ("<", "<=", ">", ">="):
        if isinstance(a, Version) or isinstance(b, Version):
            return version_compare(op, a, b)
        if a is None or b is None:
            return False
        return {"<": a < b, "<=": a <= b, ">": a > b, ">=": a >= b}[op]
    if a is None or b is None:
        raise TypeError(f"operator {op} on a missing value")
    return {
        "+": lambda: a + b, "-": lambda: a - b, "*": lambda: a * b, "/": lambda: a // b,
        "%": lambda: a % b, "<<": lambda: a << b, ">>": lambda: a >> b, "&": lambda: a & b,
        "|": lambda: a | b, "^": lambda: a ^ b,
    }[op]()


class _Constant(Translator):
    """Numbers, enum members and arithmetic on them."""

    def __init__(self, enums):
        self.enums = enums

    def on_node(self, node):
        raise SyntaxError("a case key must be a constant (a number or enum::MEMBER)")

    def on_num(self, node):
        return node.value

    def on_enum(self, node):
        return self.enums[node.enum][node.member]

    def on_unary(self, node):
        if node.op != "-":
            return self.on_node(node)
        return -self.translate(node.operand)

    def on_binary(self, node):
        return apply_bin(node.op, self.translate(node.left), self.translate(node.right))


def constant_value(node, enums):
    """Value of a constant expression (numbers, enum members, arithmetic on them)."""
    return _Constant(enums).translate(node)


class Env:
    """What an interpreted expression sees: the fields so far, the parent env, context, index."""

    def __init__(self, values, parent=None, ctx=None, index=None, remaining=None, sizeof=None,
                 col=None):
        self.values = values
        self.parent = parent
        self.col = col if col is not None else (parent.col if parent else None)
        self.ctx = ctx if ctx is not None else (parent.ctx if parent else {})
        self.index = index if index is not None else (parent.index if parent else None)
        self.remaining = remaining
        self.sizeof = sizeof


class Evaluator(Translator):
    """The value of an expression in an Env (LookupError for a value not known yet)."""

    def __init__(self, env: Env, enums, underscore=None):
        self.env, self.enums, self.underscore = env, enums, underscore

    def on_num(self, node):
        return node.value

    on_str = on_lit = on_num

    def on_ver(self, node):
        return Version(node.version.flavor, node.version.number)

    def on_enum(self, node):
        return self.enums[node.enum][node.member]

    def on_name(self, node):
        if node.id not in self.env.values:
            raise LookupError(node.id)
        return self.env.values[node.id]

    def on_remaining(self, node):
        if self.env.remaining is None:
            raise LookupError("remaining is not known while generating")
        return self.env.remaining

    def on_loop_index(self, node):
        return self.env.index

    def on_underscore(self, node):
        return self.underscore

    def on_parent(self, node):
        return self.env.parent

    def on_col(self, node):
        if self.env.col is None:
            raise LookupError("col: no column is being decoded")
        return self.env.col

    def on_ctx(self, node):
        return self.env.ctx.get(node.name)

    def on_attr(self, node):
        base = self.translate(node.base)
        if isinstance(base, Env) and node.name == "_parent":
            return base.parent
        if isinstance(base, Env):
            if node.name not in base.values:
                raise LookupError(node.name)
            return base.values[node.name]
        return base[node.name]

    def on_index(self, node):
        return self.translate(node.base)[self.translate(node.index)]

    def on_call(self, node):
        return CALLS[node.func](*[self.translate(a) for a in node.args])

    def on_sizeof(self, node):
        return self.env.sizeof(node.args[0].id)

    def on_binary(self, node):
        return apply_bin(node.op, self.translate(node.left), self.translate(node.right))

    def on_bool_op(self, node):
        a = self.translate(node.left)
        if node.op == "and":
            return a and self.translate(node.right)
        return a or self.translate(node.right)

    def on_not_(self, node):
        return not self.translate(node.operand)

    def on_unary(self, node):
        v = self.translate(node.operand)
        return -v if node.op == "-" else ~v

    def on_cond(self, node):
        return self.translate(node.then if self.translate(node.test) else node.other)


def evaluate(node, env: Env, enums, underscore=None):
    return Evaluator(env, enums, underscore).translate(node)
