"""The format documentation, rendered from the specs alone.

`render(specs)` gives {relative path: text} of the whole documentation: Markdown pages (readable
on any git host, relative links) and, under html/, a static site with a navigation index and a
client-side search (a JSON index loaded by a small script; no network). Every table row comes from
a spec field, enum member or TLV case; every hex example is built by the generated struct from a
deterministic example value (binlog_grammar.docs.examples), parsed back, and numbered against the
field table with the span recorder of binlog_grammar.runtime.spans. Nothing here is written per event.

Pages are assembled in Python as a list of blocks (headings, paragraphs, fact lists, tables, hex
dumps); the jinja2 templates in binlog_grammar/docs/templates/ lay the blocks out as Markdown and
HTML. The modules, in the order they build on each other:

    blocks.py           rich text, the block types, Page, DocsError
    model.py            lookups over the specs: sizes, types, uses, page and anchor names
    examples.py         the deterministic example value of each event
    tables.py           field tables of structs, switches and TLV lists; hex examples
    pages_reference.py  column types, enums, named types, context, versions, the guide
    pages_events.py     event pages, the index, type codes, TLV pages; Builder (all pages)
    render.py           Markdown and HTML through the templates; the search index
"""
from __future__ import annotations

from pathlib import Path

from ..lang.loader import load_specs
from ..lang.model import SpecSet
from .blocks import DocsError, Page
from .model import iter_fields
from .pages_events import Builder
from .render import HTML_DIR, MD_HEADER, Renderer

__all__ = ["DOCS_DIR", "HTML_DIR", "MD_HEADER", "Builder", "DocsError", "Page", "Renderer",
           "diff", "iter_fields", "render", "write"]

DOCS_DIR = Path(__file__).resolve().parent.parent.parent / "generated" / "docs"


def render(specs: SpecSet | None = None) -> dict:
    """{path relative to the docs folder: text} of the whole documentation."""
    specs = specs or load_specs()
    pages = Builder(specs).build()
    return Renderer(pages).render()


def write(files: dict, out_dir: Path) -> list:
    """Write the rendered files into out_dir; files of an earlier render that are no longer
    rendered are removed (only inside a folder this command wrote before)."""
    out_dir = Path(out_dir)
    readme = out_dir / "README.md"
    if readme.exists() and readme.read_text(encoding="utf-8").startswith(MD_HEADER):
        for p in sorted(out_dir.rglob("*"), reverse=True):
            rel = p.relative_to(out_dir).as_posix()
            if p.is_file() and rel not in files:
                p.unlink()
            elif p.is_dir() and not any(p.iterdir()):
                p.rmdir()
    for rel, text in sorted(files.items()):
        p = out_dir / rel
        p.parent.mkdir(parents=True, exist_ok=True)
        p.write_text(text, encoding="utf-8")
    return sorted(files)


def diff(files: dict, out_dir: Path) -> list:
    """Paths that differ between a render and the files in out_dir (missing, extra, changed)."""
    out_dir = Path(out_dir)
    have = {p.relative_to(out_dir).as_posix() for p in out_dir.rglob("*") if p.is_file()} \
        if out_dir.exists() else set()
    changed = sorted(set(files) ^ have)
    for rel in sorted(set(files) & have):
        if (out_dir / rel).read_text(encoding="utf-8", errors="replace") != files[rel]:
            changed.append(rel)
    return changed
