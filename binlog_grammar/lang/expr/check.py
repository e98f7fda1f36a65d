"""The checker: every name, context value, enum member and function call of an expression
exists, and the operands whose type the expression says are of the type they must be. Run once,
when the spec is read (lang.fields); the errors name the spec file, the line and the field."""
from __future__ import annotations

import re

from ...errors import SpecError
from ...runtime.functions import ANY, BITS, BOOL, FUNCTIONS, INT, LIST, NULL, STR, VERSION
from .nodes import ARITHMETIC, Name, Parent, Str
from .translate import Walker

# arguments written as literals, not values: the node class they must be, and the message
_WRITTEN = {
    "field": (Name, "{f}() takes the name of a field of the same struct"),
    "regex": (Str, '{f}(text, "regex") takes a regular expression as a string'),
    "id": (Str, '{f}(list, "id") takes the id of a TLV case as a string'),
}
# the types a value of each expected type may have (bool is a number, as in Python)
_ACCEPTS = {INT: {INT, BOOL, ANY}, BITS: {BITS, ANY}, LIST: {LIST, BITS, ANY}, ANY: None}
_NOT_NUMBERS = {STR, VERSION, NULL}


class Checker(Walker):
    def __init__(self, *, visible, enums, context, where, allow_underscore=False):
        self.visible, self.enums, self.context = visible, enums, context
        self.where, self.allow_underscore = where, allow_underscore

    def fail(self, message):
        raise SpecError(message, *self.where)

    def on_name(self, node):
        if node.id not in self.visible:
            self.fail(f"name {node.id!r} is used before it is defined (or not defined at all)")

    def on_remaining(self, node):
        pass

    on_loop_index = on_parent = on_col = on_remaining

    def on_underscore(self, node):
        if not self.allow_underscore:
            self.fail("'_' is only defined in repeat-until")

    def on_ctx(self, node):
        if node.name not in self.context:
            self.fail(f"unknown context value ctx.{node.name} (see specs/context.yaml)")

    def on_enum(self, node):
        if node.enum not in self.enums:
            self.fail(f"unknown enum {node.enum!r}")
        if node.member not in self.enums[node.enum]:
            self.fail(f"enum {node.enum!r} has no member {node.member!r}")

    def on_attr(self, node):
        if not isinstance(node.base, Parent):  # _parent.x: resolved against the enclosing struct
            self.translate(node.base)

    def on_call(self, node):
        f = FUNCTIONS.get(node.func)
        if f is None:
            self.fail(f"unknown function {node.func}()")
        if len(node.args) != f.arity:
            self.fail(f"{node.func}() takes {f.arity} argument(s)")
        for i, (param, arg) in enumerate(zip(f.params, node.args)):
            if param in _WRITTEN:
                cls, message = _WRITTEN[param]
                if not isinstance(arg, cls):
                    self.fail(message.format(f=node.func))
                if param == "regex":
                    try:
                        re.compile(arg.value)
                    except re.error as e:
                        self.fail(f"bad regular expression: {e}")
            elif _ACCEPTS.get(param) is not None and arg.type not in _ACCEPTS[param]:
                self.fail(f"{node.func}() takes a {param} as argument {i + 1}, not a {arg.type}")
        self.on_node(node)

    def on_binary(self, node):
        if node.op in ARITHMETIC:
            for side in (node.left, node.right):
                if side.type in _NOT_NUMBERS:
                    self.fail(f"operator {node.op} takes numbers, not a {side.type}")
        self.on_node(node)

    def on_unary(self, node):
        if node.operand.type in _NOT_NUMBERS:
            self.fail(f"operator {node.op} takes a number, not a {node.operand.type}")
        self.on_node(node)


def check(node, *, visible, enums, context, where, allow_underscore=False):
    """Raise SpecError for names, functions, enum members or context values that do not exist,
    and for operands of the wrong type."""
    Checker(visible=visible, enums=enums, context=context, where=where,
            allow_underscore=allow_underscore).translate(node)
