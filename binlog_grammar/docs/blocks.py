"""The building blocks of a documentation page: rich text (runs of plain text, code, links and
repository paths, which the templates render as Markdown or HTML), the block types (headings,
paragraphs, fact lists, code, tables) and Page. What is here knows nothing of the specs' model; it
only prints an expression or a version range as rich text."""
from __future__ import annotations

from dataclasses import dataclass, field as dc_field

from ..lang import expr as E


class DocsError(Exception):
    """The documentation cannot be rendered (an example does not round-trip, a spec is missing)."""


# ---------------------------------------------------------------------------------------------
# rich text: a list of segments the templates render as Markdown or HTML
#   ("t", text)  ("c", code)  ("l", text, page, anchor)  ("lc", code, page, anchor)
#   ("src", repository path)  ("br",)

def T(text):
    return ("t", str(text))


def C(text):
    return ("c", str(text))


def L(text, page, anchor=None, code=True):
    return ("lc" if code else "l", str(text), page, anchor)


def SRC(path):
    return ("src", str(path))


BR = ("br",)


def join(parts, sep=", "):
    out = []
    for i, p in enumerate(parts):
        if i:
            out.append(T(sep))
        out.extend(p)
    return out


def plain_text(rich) -> str:
    return "".join(s[1] for s in rich if len(s) > 1)


# ---------------------------------------------------------------------------------------------
# blocks

@dataclass
class Page:
    id: str  # "index", "types", "events/query_event"
    title: str
    blocks: list
    nav: str = ""  # nav label
    group: str = ""  # "pages" or "events"
    search: list = dc_field(default_factory=list)  # [(title, anchor, kind, text)]

    @property
    def md_path(self):
        return "README.md" if self.id == "index" else f"{self.id}.md"

    @property
    def html_path(self):
        return f"{self.id}.html"


def H(level, text, anchor=None):
    return {"kind": "h", "level": level, "text": text if isinstance(text, list) else [T(text)],
            "anchor": anchor}


def P(*rich):
    segs = []
    for r in rich:
        segs.extend(r if isinstance(r, list) else [r])
    return {"kind": "p", "text": segs}


def FACTS(items):
    return {"kind": "facts", "items": [(label, value) for label, value in items if value]}


def CODE(text, lang="yaml"):
    return {"kind": "code", "text": text.rstrip("\n"), "lang": lang}


def TABLE(head, rows, cls="", name=""):
    """rows: [{"cells": [rich], "anchor": str|None}]; name: the struct it lists (data-struct)"""
    return {"kind": "table", "head": head, "rows": rows, "cls": cls, "name": name}


def ROW(cells, anchor=None, cls=""):
    return {"cells": [c if isinstance(c, list) else [T(c)] for c in cells], "anchor": anchor,
            "cls": cls}


# ---------------------------------------------------------------------------------------------
# expressions and versions as rich text

def src(node) -> str:
    """An expression in spec syntax, without the outermost parentheses."""
    if node is None:
        return ""
    s = E.to_source(node)
    if s.startswith("(") and s.endswith(")"):
        depth = 0
        for i, ch in enumerate(s):
            depth += ch == "("
            depth -= ch == ")"
            if depth == 0 and i != len(s) - 1:
                return s
        return s[1:-1]
    return s


def version_rich(since, until):
    parts = []
    if since is not None:
        parts.append([T("since "), C(str(since))])
    if until is not None:
        parts.append([T("until "), C(str(until))])
    return join(parts, "; ")
