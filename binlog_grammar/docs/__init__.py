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
    guide_text.py       the user guide's prose: Markdown files and docstrings as blocks
    guide_cli.py        the guide's command-line reference, from the argparse parser
    guide_api.py        the guide's Python API reference, from the objects and their docstrings
    guide_data.py       the guide's Spark and JSON-lines pages, its first page, GuideInputs
    render.py           Markdown and HTML through the templates; the search index

The user guide (guide/) is rendered into the same site when `render` is given a GuideInputs:
`binlog-grammar docs` gathers one (binlog_grammar/cli/docs.py) from the parser, the public
names, the Spark source and the output writers, which this package does not import.
"""
from __future__ import annotations

from pathlib import Path

from ..lang.loader import load_specs
from ..lang.model import SpecSet
from .blocks import DocsError, Page
from .guide_data import GuideInputs, guide_pages, index_note
from .model import iter_fields
from .pages_events import Builder
from .render import HTML_DIR, MD_HEADER, Renderer

__all__ = ["DOCS_DIR", "HTML_DIR", "MD_HEADER", "Builder", "DocsError", "GuideInputs", "Page",
           "Renderer", "diff", "iter_fields", "render", "write"]

DOCS_DIR = Path(__file__).resolve().parent.parent.parent / "generated" / "docs"


def render(specs: SpecSet | None = None, guide: GuideInputs | None = None) -> dict:
    """{path relative to the docs folder: text} of the whole documentation; with `guide`, the
    user guide's pages too (guide/), in the same navigation and search."""
    specs = specs or load_specs()
    pages = Builder(specs).build()
    if guide is not None:
        pages[0].blocks.insert(1, index_note())
        pages += guide_pages(guide)
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
