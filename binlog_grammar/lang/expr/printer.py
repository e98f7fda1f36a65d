"""The expression written back in spec syntax (for the docs and error messages)."""
from __future__ import annotations

from .translate import Translator

_LITERALS = {None: "null", True: "true", False: "false"}


class SourcePrinter(Translator):
    """Spec syntax, every operation in parentheses (the docs take off the outermost)."""

    def on_num(self, node):
        return str(node.value)

    def on_str(self, node):
        return f'"{node.value}"'

    def on_lit(self, node):
        return _LITERALS[node.value]

    def on_ver(self, node):
        return str(node.version)

    def on_enum(self, node):
        return f"{node.enum}::{node.member}"

    def on_name(self, node):
        return node.id

    def on_ctx(self, node):
        return f"ctx.{node.name}"

    def on_attr(self, node):
        return f"{self.translate(node.base)}.{node.name}"

    def on_index(self, node):
        return f"{self.translate(node.base)}[{self.translate(node.index)}]"

    def on_call(self, node):
        return f"{node.func}({', '.join(self.translate(a) for a in node.args)})"

    def on_binary(self, node):
        return f"({self.translate(node.left)} {node.op} {self.translate(node.right)})"

    on_bool_op = on_binary

    def on_not_(self, node):
        return f"not {self.translate(node.operand)}"

    def on_unary(self, node):
        return f"{node.op}{self.translate(node.operand)}"

    def on_cond(self, node):
        return (f"({self.translate(node.test)} ? {self.translate(node.then)} : "
                f"{self.translate(node.other)})")


_PRINTER = SourcePrinter()


def to_source(node) -> str:
    """The expression written back in spec syntax (for docs and error messages)."""
    return _PRINTER.translate(node)
