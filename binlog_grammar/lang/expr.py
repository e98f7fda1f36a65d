"""The expression language of the specs: tokenizer, parser, checker, Python emitter, interpreter.

Expressions are parsed into a small AST (tuples), checked against the names a field may see, and
then either emitted as Python source for the generated modules or interpreted (for hypothesis
strategies). Nothing here calls `eval`.
"""
from __future__ import annotations

import re
from dataclasses import dataclass

from ..errors import SpecError
from ..runtime.functions import CALLS
from ..runtime.versions import Version, parse_version_literal, version_compare  # noqa: F401

FUNCTIONS = {  # name -> number of arguments
    "len": 1,
    "sizeof": 1,
    "popcount": 1,
    "version": 1,
    "min": 2,
    "max": 2,
    "tlv": 2,
    "matches": 2,
    "abs": 1,
    "rank": 2,
}

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

    def parse(self):
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
            return ("cond", cond, a, b)
        return cond

    def logic_or(self):
        node = self.logic_and()
        while self.peek() == ("name", "or"):
            self.take()
            node = ("bool", "or", node, self.logic_and())
        return node

    def logic_and(self):
        node = self.logic_not()
        while self.peek() == ("name", "and"):
            self.take()
            node = ("bool", "and", node, self.logic_not())
        return node

    def logic_not(self):
        if self.peek() == ("name", "not"):
            self.take()
            return ("not", self.logic_not())
        return self.comparison()

    def comparison(self):
        node = self.bit_or()
        while self.peek()[1] in ("==", "!=", "<", "<=", ">", ">="):
            op = self.take()[1]
            node = ("bin", op, node, self.bit_or())
        return node

    def _binary(self, ops, sub):
        node = sub()
        while self.peek()[0] == "op" and self.peek()[1] in ops:
            op = self.take()[1]
            node = ("bin", op, node, sub())
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
            return ("un", op, self.unary())
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
                node = ("attr", node, name)
            elif tok[1] == "[":
                self.take()
                idx = self.ternary()
                self.take("]")
                node = ("index", node, idx)
            else:
                return node

    def primary(self):
        kind, text = self.take()
        if kind == "num":
            return ("num", int(text, 0))
        if kind == "str":
            return ("str", text[1:-1])
        if kind == "ver":
            return ("ver", parse_version_literal(text))
        if kind == "op" and text == "(":
            node = self.ternary()
            self.take(")")
            return node
        if kind == "name":
            if text == "null":
                return ("lit", None)
            if text == "true":
                return ("lit", True)
            if text == "false":
                return ("lit", False)
            if text in KEYWORDS:
                raise SyntaxError(f"unexpected {text!r}")
            if self.peek()[1] == "::":
                self.take()
                k2, member = self.take()
                if k2 != "name":
                    raise SyntaxError(f"expected an enum member after '::', found {member!r}")
                return ("enum", text, member)
            if self.peek()[1] == "(":
                self.take()
                args = []
                if self.peek()[1] != ")":
                    args.append(self.ternary())
                    while self.peek()[1] == ",":
                        self.take()
                        args.append(self.ternary())
                self.take(")")
                return ("call", text, tuple(args))
            if text == "ctx":
                self.take(".")
                k2, name = self.take()
                if k2 != "name":
                    raise SyntaxError("expected a context name after 'ctx.'")
                return ("ctx", name)
            return ("name", text)
        raise SyntaxError(f"unexpected {text or 'end of expression'!r}")


def parse(src) -> tuple:
    """Parse an expression (a YAML int or bool is accepted as a literal)."""
    if isinstance(src, bool):
        return ("lit", src)
    if isinstance(src, int):
        return ("num", src)
    if not isinstance(src, str):
        raise SyntaxError(f"an expression must be a string or a number, not {type(src).__name__}")
    return _Parser(src).parse()


def names_used(node, acc=None):
    """Top-level field names an expression reads (not ctx, not _parent members)."""
    if acc is None:
        acc = set()
    kind = node[0]
    if kind == "name":
        acc.add(node[1])
    elif kind in ("attr",):
        names_used(node[1], acc)
    elif kind == "index":
        names_used(node[1], acc)
        names_used(node[2], acc)
    elif kind == "call":
        for a in node[2]:
            names_used(a, acc)
    elif kind in ("bin", "bool"):
        names_used(node[2], acc)
        names_used(node[3], acc)
    elif kind in ("un",):
        names_used(node[2], acc)
    elif kind == "not":
        names_used(node[1], acc)
    elif kind == "cond":
        for n in node[1:]:
            names_used(n, acc)
    return acc


def context_keys(node, acc=None) -> set:
    """The keys an expression reads from the contexts it is evaluated in: the fields it names
    (and `_index`) from its own struct's, and the `x` of `_parent.x` (`_parent._parent.x`, ...)
    from an enclosing one. Not ctx values, not members of a record or of the column."""
    if acc is None:
        acc = set()
    kind = node[0]
    if kind == "name":
        if node[1] not in ("remaining", "col", "_", "_parent"):
            acc.add(node[1])
    elif kind == "attr":
        if _parent_chain(node[1]):
            if node[2] != "_parent":
                acc.add(node[2])
        else:
            context_keys(node[1], acc)
    elif kind == "call":
        for a in node[2]:
            context_keys(a, acc)
    elif kind in ("index", "bin", "bool", "un", "not", "cond"):
        for sub in node[1:]:
            if isinstance(sub, tuple):  # not an operator
                context_keys(sub, acc)
    return acc


def _parent_chain(node) -> bool:
    """`_parent`, `_parent._parent`, ...: an enclosing struct's context."""
    return node == ("name", "_parent") or node[0] == "attr" and node[2] == "_parent" \
        and _parent_chain(node[1])


def uses_remaining(node) -> bool:
    return "remaining" in names_used(node)


SPECIAL_NAMES = {"remaining", "_index", "_", "_parent", "col"}


def check(node, *, visible, enums, context, where, allow_underscore=False):
    """Raise SpecError for names, functions, enum members or context values that do not exist."""
    kind = node[0]
    if kind == "name":
        n = node[1]
        if n in ("remaining", "_index", "_parent", "col"):
            return
        if n == "_":
            if not allow_underscore:
                raise SpecError(f"'_' is only defined in repeat-until", *where)
            return
        if n not in visible:
            raise SpecError(f"name {n!r} is used before it is defined (or not defined at all)", *where)
    elif kind == "ctx":
        if node[1] not in context:
            raise SpecError(f"unknown context value ctx.{node[1]} (see specs/context.yaml)", *where)
    elif kind == "enum":
        if node[1] not in enums:
            raise SpecError(f"unknown enum {node[1]!r}", *where)
        if node[2] not in enums[node[1]]:
            raise SpecError(f"enum {node[1]!r} has no member {node[2]!r}", *where)
    elif kind == "call":
        if node[1] not in FUNCTIONS:
            raise SpecError(f"unknown function {node[1]}()", *where)
        if len(node[2]) != FUNCTIONS[node[1]]:
            raise SpecError(f"{node[1]}() takes {FUNCTIONS[node[1]]} argument(s)", *where)
        if node[1] == "sizeof" and node[2][0][0] != "name":
            raise SpecError("sizeof() takes the name of a field of the same struct", *where)
        if node[1] == "matches" and node[2][1][0] != "str":
            raise SpecError('matches(text, "regex") takes a regular expression as a string', *where)
        if node[1] == "matches":
            try:
                re.compile(node[2][1][1])
            except re.error as e:
                raise SpecError(f"bad regular expression: {e}", *where) from None
        if node[1] == "tlv" and node[2][1][0] != "str":
            raise SpecError('tlv(list, "id") takes the id of a TLV case as a string', *where)
        for a in node[2]:
            check(a, visible=visible, enums=enums, context=context, where=where,
                  allow_underscore=allow_underscore)
    elif kind == "attr":
        base = node[1]
        if base == ("name", "_parent"):
            return  # resolved against the enclosing struct at parse time
        check(base, visible=visible, enums=enums, context=context, where=where,
              allow_underscore=allow_underscore)
    else:
        for sub in node[1:]:
            if isinstance(sub, tuple) and sub and isinstance(sub[0], str) and sub[0] in _KINDS:
                check(sub, visible=visible, enums=enums, context=context, where=where,
                      allow_underscore=allow_underscore)


_KINDS = {"num", "str", "ver", "lit", "enum", "name", "ctx", "attr", "index", "call", "bin", "bool",
          "un", "not", "cond"}


def constant_value(node, enums):
    """Value of a constant expression (numbers, enum members, arithmetic on them)."""
    kind = node[0]
    if kind == "num":
        return node[1]
    if kind == "enum":
        return enums[node[1]][node[2]]
    if kind == "un" and node[1] == "-":
        return -constant_value(node[2], enums)
    if kind == "bin" and node[1] in PY_BIN:
        return apply_bin(node[1], constant_value(node[2], enums), constant_value(node[3], enums))
    raise SyntaxError("a case key must be a constant (a number or enum::MEMBER)")


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


# ---------------------------------------------------------------------------------------------
# Python emitter: the generated modules contain these expressions as plain lambdas.

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


class Emitter:
    """Turns an AST into Python source. `this` is the Python name of the current struct's context;
    `dialect` says how the code reaches the context values, the column and the region."""

    def __init__(self, enums, sizeof_ref=None, this="this", underscore="obj", dialect=CONSTRUCT):
        self.enums = enums
        self.sizeof_ref = sizeof_ref  # callable(field_name) -> python source of that field's construct
        self.this = this
        self.underscore = underscore
        self.dialect = dialect

    def emit(self, node) -> str:
        kind = node[0]
        t = self.this
        if kind == "num":
            return hex(node[1]) if node[1] > 255 else str(node[1])
        if kind == "str":
            return repr(node[1])
        if kind == "lit":
            return repr(node[1])
        if kind == "ver":
            v = node[1]
            return f"rt.Version({v.flavor!r}, {v.number!r})"
        if kind == "enum":
            return f"{self.enums[node[1]][node[2]]}"  # enum::member resolved at compile time
        if kind == "name":
            n = node[1]
            if n == "remaining":
                return self.dialect.remaining.format(this=t)
            if n == "_index":
                return f"{t}['_index']"
            if n == "_":
                return self.underscore
            if n == "_parent":
                return f"{t}['_']"
            if n == "col":
                return self.dialect.col.format(this=t)
            return f"{t}[{n!r}]"
        if kind == "ctx":
            return self.dialect.ctx.format(this=t, name=node[1])
        if kind == "attr":
            if node[1] == ("name", "col") and node[2] == "meta":
                return self.dialect.meta.format(col=self.emit(node[1]))
            if node[1] == ("attr", ("name", "col"), "meta") and node[2] != "_parent":
                return self.dialect.meta_field.format(col=self.emit(node[1][1]), name=node[2])
            if node[2] == "_parent":
                return f"{self.emit(node[1])}['_']"
            return f"{self.emit(node[1])}[{node[2]!r}]"
        if kind == "index":
            return f"{self.emit(node[1])}[{self.emit(node[2])}]"
        if kind == "call":
            f, args = node[1], node[2]
            if f == "sizeof":
                return f"rt.sizeof({self.sizeof_ref(args[0][1])}, {self.emit(args[0])}, {t})"
            if f in ("min", "max", "abs"):
                return f"{f}({', '.join(self.emit(a) for a in args)})"
            fn = {"len": "rt.length", "popcount": "rt.popcount", "version": "rt.version",
                  "tlv": "rt.tlv_value", "matches": "rt.matches", "rank": "rt.rank"}[f]
            return f"{fn}({', '.join(self.emit(a) for a in args)})"
        if kind == "bin":
            op = node[1]
            a, b = self.emit(node[2]), self.emit(node[3])
            if op in ("<", "<=", ">", ">=") and (node[2][0] == "ver" or node[3][0] == "ver"
                                                   or node[2] == ("ctx", "server")
                                                   or node[3] == ("ctx", "server")):
                return f"rt.vcmp({op!r}, {a}, {b})"
            return f"({a} {PY_BIN[op]} {b})"
        if kind == "bool":
            return f"({self.emit(node[2])} {node[1]} {self.emit(node[3])})"
        if kind == "not":
            return f"(not {self.emit(node[1])})"
        if kind == "un":
            return f"({node[1]}{self.emit(node[2])})"
        if kind == "cond":
            return f"({self.emit(node[2])} if {self.emit(node[1])} else {self.emit(node[3])})"
        raise AssertionError(node)


def to_source(node) -> str:
    """The expression written back in spec syntax (for docs and error messages)."""
    kind = node[0]
    if kind == "num":
        return str(node[1])
    if kind == "str":
        return f'"{node[1]}"'
    if kind == "lit":
        return {None: "null", True: "true", False: "false"}[node[1]]
    if kind == "ver":
        return str(node[1])
    if kind == "enum":
        return f"{node[1]}::{node[2]}"
    if kind == "name":
        return node[1]
    if kind == "ctx":
        return f"ctx.{node[1]}"
    if kind == "attr":
        return f"{to_source(node[1])}.{node[2]}"
    if kind == "index":
        return f"{to_source(node[1])}[{to_source(node[2])}]"
    if kind == "call":
        return f"{node[1]}({', '.join(to_source(a) for a in node[2])})"
    if kind in ("bin", "bool"):
        return f"({to_source(node[2])} {node[1]} {to_source(node[3])})"
    if kind == "not":
        return f"not {to_source(node[1])}"
    if kind == "un":
        return f"{node[1]}{to_source(node[2])}"
    if kind == "cond":
        return f"({to_source(node[1])} ? {to_source(node[2])} : {to_source(node[3])})"
    raise AssertionError(node)


# ---------------------------------------------------------------------------------------------
# Interpreter: used by the hypothesis strategies, which build values field by field.

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


def evaluate(node, env: Env, enums, underscore=None):
    def ev(n):
        return evaluate(n, env, enums, underscore)

    kind = node[0]
    if kind in ("num", "str", "lit"):
        return node[1]
    if kind == "ver":
        return Version(node[1].flavor, node[1].number)
    if kind == "enum":
        return enums[node[1]][node[2]]
    if kind == "name":
        n = node[1]
        if n == "remaining":
            if env.remaining is None:
                raise LookupError("remaining is not known while generating")
            return env.remaining
        if n == "_index":
            return env.index
        if n == "_":
            return underscore
        if n == "_parent":
            return env.parent
        if n == "col":
            if env.col is None:
                raise LookupError("col: no column is being decoded")
            return env.col
        if n not in env.values:
            raise LookupError(n)
        return env.values[n]
    if kind == "ctx":
        return env.ctx.get(node[1])
    if kind == "attr":
        base = ev(node[1])
        if isinstance(base, Env) and node[2] == "_parent":
            return base.parent
        if isinstance(base, Env):
            if node[2] not in base.values:
                raise LookupError(node[2])
            return base.values[node[2]]
        return base[node[2]]
    if kind == "index":
        return ev(node[1])[ev(node[2])]
    if kind == "call":
        f, args = node[1], node[2]
        if f == "sizeof":
            return env.sizeof(args[0][1])
        return CALLS[f](*[ev(a) for a in args])
    if kind == "bin":
        return apply_bin(node[1], ev(node[2]), ev(node[3]))
    if kind == "bool":
        a = ev(node[2])
        if node[1] == "and":
            return a and ev(node[3])
        return a or ev(node[3])
    if kind == "not":
        return not ev(node[1])
    if kind == "un":
        v = ev(node[2])
        return -v if node[1] == "-" else ~v
    if kind == "cond":
        return ev(node[2]) if ev(node[1]) else ev(node[3])
    raise AssertionError(node)
