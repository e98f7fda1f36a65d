"""The Python API reference of the user guide, read from the objects themselves (given by the
caller, binlog_grammar/cli/docs.py): each public name's signature by `inspect` and its own
docstring (a name without one says so on the page, and tests/docs/test_guide.py fails), with the
public methods and properties a class defines."""
from __future__ import annotations

import inspect
import re

from .blocks import C, CODE, H, L, P, ROW, T, TABLE, Page
from .guide_text import docstring_blocks, inline

_ADDRESS = re.compile(r" at 0x[0-9a-f]+")
NO_DOC = "(no docstring)"


def own_doc(obj):
    """The docstring the object itself has (a class's, not its base's), or None."""
    if inspect.isclass(obj):
        return obj.__dict__.get("__doc__")
    if isinstance(obj, property):
        return obj.__doc__
    return getattr(obj, "__doc__", None)


def signature(name, obj) -> str:
    """`name(args)` as inspect gives it (`class Name(args)` for a class), never an address."""
    try:
        sig = str(_unquoted(inspect.signature(obj)))
    except (TypeError, ValueError):
        sig = "(...)"
    sig = _ADDRESS.sub("", sig)
    if inspect.isclass(obj):
        bases = [b.__name__ for b in obj.__bases__ if b is not object]
        if issubclass(obj, BaseException):
            return f"class {name}({', '.join(bases)})"
        return f"class {name}{sig}" + (f"  # a {', '.join(bases)}" if bases else "")
    return f"{name}{sig}"


class _Text:
    """An annotation kept as text (`from __future__ import annotations`), shown without quotes."""

    def __init__(self, text):
        self.text = text

    def __repr__(self):
        return self.text


def _unquoted(sig: inspect.Signature) -> inspect.Signature:
    def bare(a):
        return _Text(a) if isinstance(a, str) else a

    return sig.replace(parameters=[p.replace(annotation=bare(p.annotation))
                                   for p in sig.parameters.values()],
                       return_annotation=bare(sig.return_annotation))


def members(cls):
    """(name, object) of the public methods and properties a class defines itself."""
    out = []
    for name, value in cls.__dict__.items():
        if name.startswith("_"):
            continue
        if isinstance(value, (staticmethod, classmethod)):
            value = value.__func__
        if inspect.isfunction(value) or isinstance(value, property):
            out.append((name, value))
    return out


def anchor(section_id, name) -> str:
    return f"{section_id}-{name}"


def object_blocks(section_id, name, obj, search, level=3):
    a = anchor(section_id, name)
    doc = own_doc(obj)
    blocks = [H(level, [C(name)], a), CODE(signature(name, obj), "python")]
    blocks += docstring_blocks(doc) if doc else [P(T(NO_DOC))]
    search.append((name, a, "Python API", " ".join((doc or "").split())[:160]))
    if inspect.isclass(obj) and not issubclass(obj, BaseException):
        for mname, m in members(obj):
            ma = anchor(section_id, f"{name}.{mname}")
            mdoc = own_doc(m)
            if isinstance(m, property):
                head = f"{name}.{mname}  # property"
            else:
                head = signature(f"{name}.{mname}", m).replace("(self, ", "(").replace("(self)", "()")
            blocks += [H(min(level + 1, 4), [C(f"{name}.{mname}")], ma), CODE(head, "python")]
            blocks += docstring_blocks(mdoc) if mdoc else [P(T(NO_DOC))]
            search.append((f"{name}.{mname}", ma, "Python API", " ".join((mdoc or "").split())[:160]))
    return blocks


def api_page(sections) -> Page:
    """sections: [(id, title, import line, module docstring, [(name, object)])]."""
    search = []
    blocks = [H(1, "Python API reference"),
              P(T("The public names of the package, each with its signature and docstring as the "
                  "code has them: this page is generated from the objects by "),
                C("binlog-grammar docs"), T(". Everything else in the package is internal and may "
                                            "move."))]
    rows = []
    for sid, title, _imp, _doc, names in sections:
        for name, obj in names:
            first = (own_doc(obj) or NO_DOC).strip().split("\n\n")[0]
            rows.append(ROW([[L(name, "guide/api", anchor(sid, name))], [T(title)],
                             inline(" ".join(first.split()))]))
    blocks.append(TABLE(["Name", "From", "What it is"], rows, cls="apinames"))
    for sid, title, imp, doc, names in sections:
        blocks.append(H(2, title, sid))
        blocks.append(CODE(imp, "python"))
        blocks += docstring_blocks(doc)
        for name, obj in names:
            blocks += object_blocks(sid, name, obj, search)
    return Page("guide/api", "Python API reference", blocks, nav="Python API", group="guide",
                search=search)


__all__ = ["NO_DOC", "anchor", "api_page", "members", "own_doc", "signature"]
