"""The user's cache folder, and the validated spec model kept in it.

`cache_root()` is the one folder the package caches in: $XDG_CACHE_HOME/binlog-grammar, else
~/.cache/binlog-grammar. It holds `models/` (the pickled model of a set of spec files, see
`model_cache`) and the generated modules of users' spec folders (binlog_grammar.codegen.grammar).
"""
from __future__ import annotations

import gc
import hashlib
import os
import pickle
from pathlib import Path
from typing import Optional

# the modules of the spec language whose code shapes the model: a change to any of them is a
# new cache key
MODEL_SOURCES = ("loader.py", "build.py", "model.py", "source.py", "overlays.py", "fields.py",
                 "definitions.py", "events.py",
                 *(f"expr/{m}.py" for m in ("__init__", "nodes", "parse", "check", "translate",
                                            "evaluate")))


def cache_root() -> Path:
    """$XDG_CACHE_HOME/binlog-grammar, else ~/.cache/binlog-grammar."""
    base = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    return Path(base) / "binlog-grammar"


def model_cache(root: Path, files) -> Optional[Path]:
    """Where the model of these spec files is cached (None: BINLOG_GRAMMAR_NO_CACHE is set)."""
    if os.environ.get("BINLOG_GRAMMAR_NO_CACHE"):
        return None
    h = hashlib.sha256()
    here = Path(__file__).parent
    for p in [*(here / n for n in MODEL_SOURCES), *files]:
        try:
            data = p.read_bytes()
        except OSError:
            return None
        if p.is_relative_to(here):
            rel = p.relative_to(here).as_posix()
        else:
            rel = str(p.relative_to(root) if p.is_relative_to(root) else p)
        h.update(f"{rel}\0{len(data)}\0".encode() + data)
    return cache_root() / "models" / f"{h.hexdigest()[:32]}.pickle"


def read_model(path: Optional[Path]):
    """The cached model at `path`, or None (no cache, an old or a damaged one)."""
    if path is None:
        return None
    # the model is tens of thousands of small objects: the collector, run every few hundred of them
    # while they are made and finding nothing to free, took about half of a load's time
    enabled = gc.isenabled()
    try:
        with open(path, "rb") as fh:
            data = fh.read()
        gc.disable()
        return pickle.loads(data)
    except Exception:  # noqa: BLE001 - no cache, an old or a damaged one: read the YAML
        return None
    finally:
        if enabled:
            gc.enable()


def write_model(path: Optional[Path], specs) -> None:
    """Keep `specs` at `path` (written whole or not at all; a read-only home keeps nothing)."""
    if path is None:
        return
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        tmp = path.with_suffix(f".{os.getpid()}.tmp")
        with open(tmp, "wb") as fh:
            pickle.dump(specs, fh, protocol=pickle.HIGHEST_PROTOCOL)
        os.replace(tmp, path)
    except OSError:  # a read-only home: no cache, nothing lost
        pass
