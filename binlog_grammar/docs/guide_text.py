"""Prose into blocks for the user guide's pages: the Markdown the project writes (docs/*.md:
headings, paragraphs, lists, fenced code, pipe tables, `code`, [links](...), **bold**) and
docstrings (paragraphs, `- ` lists, indented code). Only what those texts use is read; anything
else is kept as a paragraph of its own words, never dropped."""
from __future__ import annotations

import inspect
import posixpath
import re
import textwrap

from .blocks import C, CODE, H, P, ROW, SRC, T, TABLE

_INLINE = re.compile(r"(`+)(.+?)\1|(!?)\[([^\]]+)\]\(([^)\s]+)\)|\*\*(.+?)\*\*")
_FENCE = re.compile(r"^(\s*)(```+|~~~+)\s*([\w+-]*)\s*$")
_HEADING = re.compile(r"^(#{1,6})\s+(.*?)\s*#*\s*$")
_ITEM = re.compile(r"^([-*]|\d+\.)\s+(.*)$")


def inline(text: str, base: str = "") -> list:
    """Rich text of one Markdown run: `code`, [text](link) (its text), ![alt](image) (its alt and
    the image's path in the repository, from the folder `base`), **bold** (its text)."""
    out, pos = [], 0
    for m in _INLINE.finditer(text):
        if m.start() > pos:
            out.append(T(text[pos:m.start()]))
        if m.group(1):
            out.append(C(m.group(2).strip() if m.group(2).strip() else m.group(2)))
        elif m.group(3):
            path = posixpath.normpath(posixpath.join(base, m.group(5)))
            out += [T(f"(image: {m.group(4)}, "), SRC(path), T(")")]
        elif m.group(4):
            out.extend(inline(m.group(4), base))
        else:
            out.extend(inline(m.group(6), base))
        pos = m.end()
    if pos < len(text):
        out.append(T(text[pos:]))
    return out


def plain(text: str) -> str:
    """The words of a Markdown run, without its marks."""
    return "".join(s[1] for s in inline(text))


def slug(text: str) -> str:
    return re.sub(r"[^a-z0-9]+", "-", plain(text).lower()).strip("-") or "section"


def _cells(line: str) -> list:
    body = line.strip()
    if body.startswith("|"):
        body = body[1:]
    if body.endswith("|") and not body.endswith("\\|"):
        body = body[:-1]
    cells, cur, i = [], "", 0
    while i < len(body):
        ch = body[i]
        if ch == "\\" and i + 1 < len(body) and body[i + 1] == "|":
            cur += "|"
            i += 2
            continue
        if ch == "|":
            cells.append(cur.strip())
            cur = ""
        else:
            cur += ch
        i += 1
    cells.append(cur.strip())
    return cells


class Anchors:
    """Unique heading anchors of one page."""

    def __init__(self, prefix=""):
        self.prefix, self.seen = prefix, set()

    def __call__(self, text: str) -> str:
        base = self.prefix + slug(text)
        a, n = base, 2
        while a in self.seen:
            a, n = f"{base}-{n}", n + 1
        self.seen.add(a)
        return a


def markdown_blocks(text: str, anchors: Anchors, search: list, shift: int = 0,
                    base: str = "") -> list:
    """Blocks of a Markdown text (a file of the folder `base`, for its images' paths); every
    heading gets an anchor and a search entry."""
    lines = text.splitlines()

    def inline_b(run):
        return inline(run, base)

    blocks, para, items = [], [], []
    i = 0

    def flush():
        nonlocal para, items
        if para:
            blocks.append(P(inline_b(" ".join(s.strip() for s in para))))
            para = []
        if items:
            blocks.append({"kind": "list", "items": [inline_b(" ".join(it)) for it in items]})
            items = []

    while i < len(lines):
        line = lines[i]
        fence = _FENCE.match(line)
        if fence:
            flush()
            indent, mark, lang = fence.groups()
            body = []
            i += 1
            while i < len(lines) and not lines[i].strip().startswith(mark[:3]):
                body.append(lines[i])
                i += 1
            blocks.append(CODE(textwrap.dedent("\n".join(body)), lang or "text"))
            i += 1
            continue
        head = _HEADING.match(line)
        if head:
            flush()
            level = min(6, len(head.group(1)) + shift)
            anchor = anchors(head.group(2))
            blocks.append(H(level, inline_b(head.group(2)), anchor))
            search.append((plain(head.group(2)), anchor, "guide section", ""))
            i += 1
            continue
        if line.lstrip().startswith("|") and i + 1 < len(lines) and \
                re.fullmatch(r"\s*\|?\s*:?-{3,}:?\s*(\|\s*:?-{3,}:?\s*)*\|?\s*", lines[i + 1]):
            flush()
            head_cells = [plain(c) for c in _cells(line)]
            rows = []
            i += 2
            while i < len(lines) and lines[i].lstrip().startswith("|"):
                cells = _cells(lines[i])
                cells += [""] * (len(head_cells) - len(cells))
                rows.append(ROW([inline_b(c) for c in cells[:len(head_cells)]]))
                i += 1
            blocks.append(TABLE(head_cells, rows, cls="guide"))
            continue
        if not line.strip():
            flush()
            i += 1
            continue
        item = _ITEM.match(line)
        if item:
            if para:
                flush()
            items.append([item.group(2)])
            i += 1
            continue
        if items and line.startswith("  "):
            items[-1].append(line.strip())
            i += 1
            continue
        if items:
            flush()
        para.append(line)
        i += 1
    flush()
    return blocks


def docstring_blocks(doc) -> list:
    """Blocks of a docstring: paragraphs, `- ` lists, and indented lines as code."""
    if not doc:
        return []
    text = inspect.cleandoc(doc)
    blocks = []
    for chunk in re.split(r"\n\s*\n", text):
        lines = chunk.splitlines()
        if all(ln.startswith("    ") or not ln.strip() for ln in lines):
            blocks.append(CODE(textwrap.dedent(chunk), "python"))
            continue
        if lines and _ITEM.match(lines[0]) and lines[0].startswith(("- ", "* ")):
            items = []
            for ln in lines:
                m = _ITEM.match(ln)
                if m and ln.startswith(("- ", "* ")):
                    items.append([m.group(2)])
                else:
                    items[-1].append(ln.strip())
            blocks.append({"kind": "list", "items": [inline(" ".join(it)) for it in items]})
            continue
        # prose, with a code run (indented lines) after it kept as code
        prose, code = [], []
        for ln in lines:
            if code or (ln.startswith("    ") and prose):
                code.append(ln)
            else:
                prose.append(ln.strip())
        blocks.append(P(inline(" ".join(prose))))
        if code:
            blocks.append(CODE(textwrap.dedent("\n".join(code)), "python"))
    return blocks


__all__ = ["Anchors", "docstring_blocks", "inline", "markdown_blocks", "plain", "slug"]
