"""The typed expression tree: one class per construct of the language, each with its type.

The parser (lang.expr.parse) builds these; the translators (lang.expr.translate) dispatch on their
class. The names the language gives a meaning to are classes of their own (`remaining`, `_index`,
`_`, `_parent`, `col`, `col.meta`, `col.meta.x`, `x._parent`, `sizeof(x)`), so that a translator
says what each means in one method instead of testing names.

A node is also the tuple it was before the tree was typed, `(kind, *parts)`
(`("name", "x")`, `("call", "len", (arg,))`), equal to it and pickled as it: code that reads the
shape of an expression (the docs' example maker, the test strategies) reads it unchanged. New
code uses the classes and their attributes.
"""
from __future__ import annotations

from ...runtime.functions import ANY, BITS, BOOL, FUNCTIONS, INT, LIST, NULL, STR, VERSION  # noqa: F401

COMPARISONS = ("==", "!=", "<", "<=", ">", ">=")
ARITHMETIC = ("+", "-", "*", "/", "%", "<<", ">>", "&", "|", "^")


class Node(tuple):
    """An expression. `visit` names the translator method that handles it (lang.expr.translate:
    a class without its own method is handled as its base class)."""

    __slots__ = ()
    kind = ""  # the first item of the tuple form
    visit = "node"
    type = ANY

    def __new__(cls, *parts):
        return tuple.__new__(cls, (cls.kind, *parts))

    def __getnewargs__(self):
        return tuple(self[1:])

    @property
    def children(self) -> tuple:
        """The sub-expressions, in source order."""
        return tuple(p for p in self[1:] if isinstance(p, Node))


# -- literals ---------------------------------------------------------------------------------

class Num(Node):
    __slots__ = ()
    kind, visit, type = "num", "num", INT
    value = property(lambda self: self[1])


class Str(Node):
    __slots__ = ()
    kind, visit, type = "str", "str", STR
    value = property(lambda self: self[1])


class Lit(Node):
    """null, true or false."""
    __slots__ = ()
    kind, visit = "lit", "lit"
    value = property(lambda self: self[1])

    @property
    def type(self):
        return NULL if self[1] is None else BOOL


class Ver(Node):
    """A version literal (mysql-8.0.1)."""
    __slots__ = ()
    kind, visit, type = "ver", "ver", VERSION
    version = property(lambda self: self[1])


class EnumRef(Node):
    """enum::MEMBER, a number known when the spec is read."""
    __slots__ = ()
    kind, visit, type = "enum", "enum", INT
    enum = property(lambda self: self[1])
    member = property(lambda self: self[2])


# -- names ------------------------------------------------------------------------------------

class Name(Node):
    """A field of the struct being read (the names below are the language's own)."""
    __slots__ = ()
    kind, visit = "name", "name"
    id = property(lambda self: self[1])

    @staticmethod
    def of(name: str) -> "Name":
        return _SPECIAL.get(name, Name)(name)


class Remaining(Name):
    """`remaining`: the bytes left in the region being read."""
    __slots__ = ()
    visit, type = "remaining", INT


class LoopIndex(Name):
    """`_index`: the index of the array element being read."""
    __slots__ = ()
    visit, type = "loop_index", INT


class Underscore(Name):
    """`_`: the element just read, in repeat-until."""
    __slots__ = ()
    visit = "underscore"


class Parent(Name):
    """`_parent`: the enclosing struct."""
    __slots__ = ()
    visit = "parent"


class Col(Name):
    """`col`: the column being decoded (its type, metadata, signedness ...)."""
    __slots__ = ()
    visit = "col"


_SPECIAL = {"remaining": Remaining, "_index": LoopIndex, "_": Underscore, "_parent": Parent,
            "col": Col}
SPECIAL_NAMES = set(_SPECIAL)


class Ctx(Node):
    """ctx.x: a value of the context the event is read in (specs/context.yaml)."""
    __slots__ = ()
    kind, visit = "ctx", "ctx"
    name = property(lambda self: self[1])

    @property
    def type(self):
        return VERSION if self[1] == "server" else ANY


class Attr(Node):
    """base.x: a member of a record (or of an enclosing struct, base being _parent)."""
    __slots__ = ()
    kind, visit = "attr", "attr"
    base = property(lambda self: self[1])
    name = property(lambda self: self[2])

    @staticmethod
    def of(base: Node, name: str) -> "Attr":
        if name == "_parent":
            return ParentAttr(base, name)
        if isinstance(base, Col) and name == "meta":
            return ColMeta(base, name)
        if isinstance(base, ColMeta):
            return ColMetaField(base, name)
        return Attr(base, name)


class ParentAttr(Attr):
    """x._parent: the struct enclosing x's."""
    __slots__ = ()
    visit = "parent_attr"


class ColMeta(Attr):
    """col.meta: the column's metadata as a number."""
    __slots__ = ()
    visit = "col_meta"


class ColMetaField(Attr):
    """col.meta.x: a field of the column's metadata record."""
    __slots__ = ()
    visit = "col_meta_field"


class Index(Node):
    """a[i]: an element of a list or a bit of a bitmap."""
    __slots__ = ()
    kind, visit = "index", "index"
    base = property(lambda self: self[1])
    index = property(lambda self: self[2])


# -- calls and operators ----------------------------------------------------------------------

class Call(Node):
    """f(args): a function of runtime.functions.FUNCTIONS."""
    __slots__ = ()
    kind, visit = "call", "call"
    func = property(lambda self: self[1])
    args = property(lambda self: self[2])

    @staticmethod
    def of(func: str, args: tuple) -> "Call":
        return (SizeOf if func == "sizeof" else Call)(func, tuple(args))

    @property
    def children(self):
        return tuple(self[2])

    @property
    def function(self):
        return FUNCTIONS.get(self[1])

    @property
    def type(self):
        f = FUNCTIONS.get(self[1])
        return f.returns if f else ANY


class SizeOf(Call):
    """sizeof(x): the bytes field x of the same struct took."""
    __slots__ = ()
    visit = "sizeof"


class Binary(Node):
    """a op b: arithmetic, bitwise or a comparison."""
    __slots__ = ()
    kind, visit = "bin", "binary"
    op = property(lambda self: self[1])
    left = property(lambda self: self[2])
    right = property(lambda self: self[3])

    @property
    def type(self):
        return BOOL if self[1] in COMPARISONS else INT


class BoolOp(Node):
    """a and b, a or b."""
    __slots__ = ()
    kind, visit, type = "bool", "bool_op", BOOL
    op = property(lambda self: self[1])
    left = property(lambda self: self[2])
    right = property(lambda self: self[3])


class Not(Node):
    __slots__ = ()
    kind, visit, type = "not", "not_", BOOL
    operand = property(lambda self: self[1])


class Unary(Node):
    """-a, ~a."""
    __slots__ = ()
    kind, visit, type = "un", "unary", INT
    op = property(lambda self: self[1])
    operand = property(lambda self: self[2])


class Cond(Node):
    """test ? then : other."""
    __slots__ = ()
    kind, visit = "cond", "cond"
    test = property(lambda self: self[1])
    then = property(lambda self: self[2])
    other = property(lambda self: self[3])

    @property
    def type(self):
        a, b = self[2].type, self[3].type
        return a if a == b else ANY
