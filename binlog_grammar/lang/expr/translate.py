"""The base of every translator of the expression tree, and the walkers that read what an
expression uses.

A translator has one method per node class, `on_<visit>` (lang.expr.nodes gives each class its
`visit` name); `translate(node)` calls the method of the node's class, or of the nearest base
class that has one (`on_name` handles `remaining`, `_index`, `col` ... unless the translator says
otherwise), or `on_node`. The targets are translators: the checker (lang.expr.check), the source
printer of the docs (lang.expr.printer), the evaluator (lang.expr.evaluate), the Python emitter of
the construct modules and of generated/fast.py (lang.expr.python), the partial evaluator of
codegen.table and the C translator of codegen.c_expr. No target tests a node's kind itself.
"""
from __future__ import annotations

from .nodes import Node, Parent, ParentAttr


class Translator:
    """Dispatches a node to the method of its class (see the module's doc)."""

    def translate(self, node: Node):
        cls = type(self)
        table = cls.__dict__.get("_table")
        if table is None:
            table = {}
            cls._table = table
        name = table.get(type(node))
        if name is None:
            name = next((f"on_{c.__dict__['visit']}" for c in type(node).__mro__
                         if "visit" in c.__dict__ and hasattr(cls, f"on_{c.__dict__['visit']}")),
                        "on_node")
            table[type(node)] = name
        return getattr(self, name)(node)

    def on_node(self, node):
        raise NotImplementedError(f"{type(self).__name__} does not translate {type(node).__name__}")


class Walker(Translator):
    """A translator that visits every sub-expression unless a method says otherwise."""

    def on_node(self, node):
        for sub in node.children:
            self.translate(sub)


class _NamesUsed(Walker):
    def __init__(self, acc):
        self.acc = acc

    def on_name(self, node):
        self.acc.add(node.id)


def names_used(node, acc=None) -> set:
    """Top-level names an expression reads (fields and the language's own names such as
    `remaining` and `col`; not ctx, not members of `_parent` or of a record)."""
    acc = set() if acc is None else acc
    _NamesUsed(acc).translate(node)
    return acc


def uses_remaining(node) -> bool:
    return "remaining" in names_used(node)


def is_parent_chain(node) -> bool:
    """`_parent`, `_parent._parent`, ...: an enclosing struct's context."""
    return isinstance(node, Parent) or isinstance(node, ParentAttr) and is_parent_chain(node.base)


class _ContextKeys(Walker):
    def __init__(self, acc):
        self.acc = acc

    def on_name(self, node):
        self.acc.add(node.id)

    def on_remaining(self, node):
        pass

    on_col = on_underscore = on_parent = on_remaining

    def on_attr(self, node):
        if not is_parent_chain(node.base):
            self.translate(node.base)
        elif node.name != "_parent":
            self.acc.add(node.name)


def context_keys(node, acc=None) -> set:
    """The keys an expression reads from the contexts it is evaluated in: the fields it names
    (and `_index`) from its own struct's, and the `x` of `_parent.x` (`_parent._parent.x`, ...)
    from an enclosing one. Not ctx values, not members of a record or of the column."""
    acc = set() if acc is None else acc
    _ContextKeys(acc).translate(node)
    return acc


class _SizeofNames(Walker):
    def __init__(self, acc):
        self.acc = acc

    def on_sizeof(self, node):
        self.acc.add(node.args[0].id)
        self.on_node(node)


def sizeof_names(node, acc=None) -> set:
    """The fields an expression takes the size of (sizeof(x)); nothing for what is not an
    expression (a size of "rest", None)."""
    acc = set() if acc is None else acc
    if isinstance(node, Node):
        _SizeofNames(acc).translate(node)
    return acc
