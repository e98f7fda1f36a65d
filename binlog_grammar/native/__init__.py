"""The compiled backend, and which backend runs.

`binlog-grammar generate` writes the C of generated/native/ from the specs (codegen/c.py);
setup.py builds it with crc32.c (hand-written: an algorithm) into the extension `_framing` here.
The extension is optional: a machine without a compiler runs the generated Python readers.

Which backend runs: `select()` (the CLI's --backend), else the environment variable
BINLOG_GRAMMAR_BACKEND, else auto:
    auto    the compiled backend when its extension imports and matches the specs it was
            generated from, the Python one otherwise
    c       the compiled backend; its absence is a BackendError (the CLI: one line, exit 2)
    python  the generated Python readers, even when the extension is there
The compiled backend covers framing (binlog.framing: header walks and CRC32 footers), the
row values of the API (binlog/rows_native.py, with `_rows`), the API's events framed and made
in batches (binlog/batch.py: `_rows.frame_events`, `rows_head`, `slot_maker`), the row images
of the `-vv` text and of JSON lines (output/vv_native.py, output/jsonl_native.py), `dump`'s text and JSON lines of the events
that make up most of a row-based binlog (output/text_lane.py with `_lane`, output/jsonl_lane.py
with `_jsonl_lane`) and the counts of `stats`
(output/stats_fast.py); everything else runs on the Python readers under either choice, and so
does any event the compiled readers refuse.
"""
from __future__ import annotations

import os

from ..errors import BinlogGrammarError

ENV = "BINLOG_GRAMMAR_BACKEND"
CHOICES = ("auto", "c", "python")
# what the compiled backend runs today
COMPILED_PARTS = ("framing", "the API's events (batches)", "row values",
                  "row images of the -vv text and JSON lines",
                  "dump text of the hot events", "stats counts", "dump JSON lines of the hot events")

_chosen = None  # set by select()
_loaded: dict = {}  # extension name -> (module or None, why not)


class BackendError(BinlogGrammarError):
    """A backend that cannot run was asked for (or an unknown one)."""


def _extension(name: str) -> tuple:
    """(the extension binlog_grammar.native.<name>, None), or (None, why it does not import)."""
    got = _loaded.get(name)
    if got is None:
        import importlib

        try:
            got = (importlib.import_module(f"{__name__}.{name}"), None)
        except ImportError as e:
            got = (None, f"the extension {__name__}.{name} is not built ({e})")
        _loaded[name] = got
    return got


def _load():
    return _extension("_framing")


def _load_rows():
    return _extension("_rows")


def _load_lane():
    return _extension("_lane")


def _load_jsonl_lane():
    return _extension("_jsonl_lane")


def unavailable():
    """Why the compiled backend cannot run (None when it can)."""
    return _load()[1] or _load_rows()[1] or _load_lane()[1] or _load_jsonl_lane()[1]


def select(name=None) -> str:
    """Choose the backend (None: the environment's choice, or auto) and return what runs,
    "c" or "python"; BackendError for an unknown name or "c" without the extension."""
    global _chosen
    if name is not None and name not in CHOICES:
        raise BackendError(f"unknown backend {name!r} (choose one of {', '.join(CHOICES)})")
    _chosen = name
    return backend()


def requested() -> str:
    """What was asked for: select()'s choice, else the environment's, else auto."""
    name = _chosen or os.environ.get(ENV) or "auto"
    if name not in CHOICES:
        raise BackendError(f"{ENV}={name!r} is not a backend (choose one of {', '.join(CHOICES)})")
    return name


def backend() -> str:
    """The backend that runs: "c" or "python"."""
    name = requested()
    if name == "python":
        return "python"
    why = unavailable()
    if why is None:
        return "c"
    if name == "c":
        raise BackendError(f"the compiled backend was asked for but cannot run: {why}; "
                           f"reinstall with a C compiler (pip install -e .) or use --backend python")
    return "python"


def framing():
    """The compiled framing module when the compiled backend runs, else None."""
    return _load()[0] if backend() == "c" else None


def rows():
    """The compiled row-image module when the compiled backend runs, else None."""
    return _load_rows()[0] if backend() == "c" else None


def lane():
    """The compiled text lane of `dump` when the compiled backend runs, else None."""
    return _load_lane()[0] if backend() == "c" else None


def jsonl_lane():
    """The compiled JSON-lines lane of `dump` when the compiled backend runs, else None."""
    return _load_jsonl_lane()[0] if backend() == "c" else None


def stats_loop():
    """The compiled loop of `stats` (output/stats_fast.py) when the compiled backend runs and it is
    built, else None (stats_fast then counts on its Python loop over the compiled walk)."""
    return _extension("_stats")[0] if backend() == "c" else None


def describe() -> str:
    """One line for --version and stats: which backend runs and what it covers."""
    if backend() == "c":
        return f"c (compiled: {', '.join(COMPILED_PARTS)}; the rest generated Python)"
    why = unavailable()
    return "python" + (" (compiled backend not built)" if why and requested() == "auto" else "")


__all__ = ["BackendError", "CHOICES", "ENV", "backend", "describe", "framing", "requested",
           "jsonl_lane", "lane", "rows", "select", "stats_loop", "unavailable"]
