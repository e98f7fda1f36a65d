"""Load the YAML specs, check them, and give the validated model (binlog_grammar.lang.model).

Every mistake is a SpecError naming the file, the line and the field, raised before anything is
generated. The checks live beside this module, one kind of definition each:

- binlog_grammar.lang.source: YAML with line numbers, version literals;
- binlog_grammar.lang.overlays: version overlays, applied to the YAML before it is checked;
- binlog_grammar.lang.definitions: context values, enums and flag sets, named sets, named types;
- binlog_grammar.lang.fields: fields, types and expressions;
- binlog_grammar.lang.events: events;
- binlog_grammar.lang.cache: the model kept in the user's cache folder;
- binlog_grammar.lang.build: the builder that reads and checks the files (imported on a cache miss).
"""
from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

from ..errors import SpecError
from .cache import model_cache, read_model, write_model

if TYPE_CHECKING:
    from .model import SpecSet


def default_specs_dir() -> Path:
    """specs/ of the source tree, or the copy installed with the package."""
    here = Path(__file__).resolve().parent.parent
    for cand in (here.parent / "specs", here / "specs_data"):
        if (cand / "context.yaml").exists():
            return cand
    raise SpecError("cannot find the specs folder (looked beside the package)")


def load_specs(root=None, extra_dirs=()) -> SpecSet:
    """Read every spec file under `root` (and user folders), validate, and return the model.

    The validated model is kept in the user's cache folder, under a hash of the spec files and of
    this package's spec modules, so a process that needs it again (the per-table readers of
    binlog_grammar.codegen.table) skips the YAML: same bytes in, same model out."""
    root = Path(root) if root else default_specs_dir()
    files = sorted(p for p in root.rglob("*.yaml"))
    for d in extra_dirs:
        files += sorted(Path(d).rglob("*.yaml"))
    cached = model_cache(root, files)
    specs = read_model(cached)
    if specs is None:
        from .build import Builder  # the YAML reader and the checks: only when nothing is cached

        specs = Builder(root, files).build()
        write_model(cached, specs)
    return specs
