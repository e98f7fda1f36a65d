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
row values of the API (binlog/rows_native.py, with `_rows`), the row images of the `-vv` text and
of JSON lines (output/vv_native.py, output/jsonl_native.py), `dump`'s text of the events that make
up most of a row-based binlog (output/text_lane.py, with `_lane`) and the counts of `stats`
(output/stats_fast.py); everything else runs on the Python readers under either choice, and so
does any event the compiled readers refuse.
"""
from __future__ import annotations

import os

from ..errors import BinlogGrammarError

ENV = "BINLOG_GRAMMAR_BACKEND"
CHOICES = ("auto", "c", "python")
# what the compiled backend runs today
COMPILED_PARTS = ("framing", "row values", "row images of the -vv text and JSON lines",
                  "dump text of the hot events", "stats counts")

_chosen = None  # set by select()
_loaded = None  # (module or None, why not)
_rows_loaded = None  # (module or None, why not)
_lane_loaded = None  # (module or None, why not)


class BackendError(BinlogGrammarError):
    """A backend that cannot run was asked for (or an unknown one)."""


def _load():
    global _loaded
    if _loaded is None:
        try:
            from . import _framing as mod
        except ImportError as e:
            _loaded = (None, f"the extension binlog_grammar.native._framing is not built ({e})")
        else:
            _loaded = (mod, None)
    return _loaded


def _load_rows():
    global _rows_loaded
    if _rows_loaded is None:
        try:
            from . import _rows as mod
        except ImportError as e:
            _rows_loaded = (None, f"the extension binlog_grammar.native._rows is not built ({e})")
        else:
            _rows_loaded = (mod, None)
    return _rows_loaded


def _load_lane():
    global _lane_loaded
    if _lane_loaded is None:
        try:
            from . import _lane as mod
        except ImportError as e:
            _lane_loaded = (None, f"the extension binlog_grammar.native._lane is not built ({e})")
        else:
            _lane_loaded = (mod, None)
    return _lane_loaded


def unavailable():
    """Why the compiled backend cannot run (None when it can)."""
    return _load()[1] or _load_rows()[1] or _load_lane()[1]


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


def describe() -> str:
    """One line for --version and stats: which backend runs and what it covers."""
    if backend() == "c":
        return f"c (compiled: {', '.join(COMPILED_PARTS)}; the rest generated Python)"
    why = unavailable()
    return "python" + (" (compiled backend not built)" if why and requested() == "auto" else "")


__all__ = ["BackendError", "CHOICES", "ENV", "backend", "describe", "framing", "requested",
           "lane", "rows", "select", "unavailable"]
