"""The expression language's tokenizer and parser: source text to the typed tree of
lang.expr.nodes. Nothing here calls `eval`."""
from __future__ import annotations

import re

from ...runtime.versions import parse_version_literal
from .nodes import (Attr, Binary, BoolOp, Call, Cond, Ctx, EnumRef, Index, Lit, Name, Node, Not,
                    Num, Str, Unary, Ver)

_TOKEN = re.compile(
    r"""
    (?P<ws>\s+)
  | (?P<ver>(?:mysql|mariadb)-\d+(?:\.\d+){0,2}\b)
  | (?P<num>0[xX][0-9a-fA-F]+|\d+)
  | (?P<str>"[^"]*")
  | (?P<name>[A-Za-z_][A-Za-z0-9_]*)
  | (?P<op>::|==|!=|<=|>=|<<|>>|[-+*/%&|^~<>?:().\[\],])
    """,
    re.VERBOSE,
)

KEYWORDS = {"and", "or", "not", "null", "true", "false"}
_LITERALS = {"null": None, "true": True, "false": False}


def tokenize(src: str):
    pos = 0
    out = []
    while pos < len(src):
        m = _TOKEN.match(src, pos)
        if not m:
            raise SyntaxError(f"unexpected character {src[pos]!r} at column {pos + 1}")
        pos = m.end()
        kind = m.lastgroup
        if kind == "ws":
            continue
        out.append((kind, m.group()))
    out.append(("end", ""))
    return out


class _Parser:
    """Recursive descent, one method per precedence level (lowest first)."""

    def __init__(self, src: str):
        self.src = src
        self.toks = tokenize(src)
        self.i = 0

    def peek(self):
        return self.toks[self.i]

    def take(self, value=None):
        tok = self.toks[self.i]
        if value is not None and tok[1] != value:
            raise SyntaxError(f"expected {value!r}, found {tok[1] or 'end of expression'!r}")
        self.i += 1
        return tok

    def parse(self) -> Node:
        node = self.ternary()
        if self.peek()[0] != "end":
            raise SyntaxError(f"unexpected {self.peek()[1]!r}")
        return node

    def ternary(self):
        cond = self.logic_or()
        if self.peek()[1] == "?":
            self.take("?")
            a = self.ternary()
            self.take(":")
            b = self.ternary()
            return Cond(cond, a, b)
        return cond

    def logic_or(self):
        node = self.logic_and()
        while self.peek() == ("name", "or"):
            self.take()
            node = BoolOp("or", node, self.logic_and())
        return node

    def logic_and(self):
        node = self.logic_not()
        while self.peek() == ("name", "and"):
            self.take()
            node = BoolOp("and", node, self.logic_not())
        return node

    def logic_not(self):
        if self.peek() == ("name", "not"):
            self.take()
            return Not(self.logic_not())
        return self.comparison()

    def comparison(self):
        node = self.bit_or()
        while self.peek()[1] in ("==", "!=", "<", "<=", ">", ">="):
            op = self.take()[1]
            node = Binary(op, node, self.bit_or())
        return node

    def _binary(self, ops, sub):
        node = sub()
        while self.peek()[0] == "op" and self.peek()[1] in ops:
            op = self.take()[1]
            node = Binary(op, node, sub())
        return node

    def bit_or(self):
        return self._binary(("|",), self.bit_xor)

    def bit_xor(self):
        return self._binary(("^",), self.bit_and)

    def bit_and(self):
        return self._binary(("&",), self.shift)

    def shift(self):
        return self._binary(("<<", ">>"), self.additive)

    def additive(self):
        return self._binary(("+", "-"), self.multiplicative)

    def multiplicative(self):
        return self._binary(("*", "/", "%"), self.unary)

    def unary(self):
        if self.peek()[1] in ("-", "~"):
            op = self.take()[1]
            return Unary(op, self.unary())
        return self.postfix()

    def postfix(self):
        node = self.primary()
        while True:
            tok = self.peek()
            if tok[1] == ".":
                self.take()
                kind, name = self.take()
                if kind != "name":
                    raise SyntaxError(f"expected a name after '.', found {name!r}")
                node = Attr.of(node, name)
            elif tok[1] == "[":
                self.take()
                idx = self.ternary()
                self.take("]")
                node = Index(node, idx)
            else:
                return node

    def primary(self):
        kind, text = self.take()
        if kind == "num":
            return Num(int(text, 0))
        if kind == "str":
            return Str(text[1:-1])
        if kind == "ver":
            return Ver(parse_version_literal(text))
        if kind == "op" and text == "(":
            node = self.ternary()
            self.take(")")
            return node
        if kind == "name":
            if text in _LITERALS:
                return Lit(_LITERALS[text])
            if text in KEYWORDS:
                raise SyntaxError(f"unexpected {text!r}")
            if self.peek()[1] == "::":
                self.take()
                k2, member = self.take()
                if k2 != "name":
                    raise SyntaxError(f"expected an enum member after '::', found {member!r}")
                return EnumRef(text, member)
            if self.peek()[1] == "(":
                return Call.of(text, self.arguments())
            if text == "ctx":
                self.take(".")
                k2, name = self.take()
                if k2 != "name":
                    raise SyntaxError("expected a context name after 'ctx.'")
                return Ctx(name)
            return Name.of(text)
        raise SyntaxError(f"unexpected {text or 'end of expression'!r}")

    def arguments(self) -> tuple:
        self.take("(")
        args = []
        if self.peek()[1] != ")":
            args.append(self.ternary())
            while self.peek()[1] == ",":
                self.take()
                args.append(self.ternary())
        self.take(")")
        return tuple(args)


def parse(src) -> Node:
    """Parse an expression (a YAML int or bool is accepted as a literal)."""
    if isinstance(src, bool):
        return Lit(src)
    if isinstance(src, int):
        return Num(src)
    if not isinstance(src, str):
        raise SyntaxError(f"an expression must be a string or a number, not {type(src).__name__}")
    return _Parser(src).parse()
