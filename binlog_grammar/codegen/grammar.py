"""Which grammar the package runs on: the generated modules of the project's specs, or those of a
user's spec folders (`binlog-grammar --specs DIR ...`), compiled once into a cache folder.

`use_specs(dirs)` must run before anything imports the reader (the CLI calls it first). The user's
folders are loaded on top of the project's specs (extra event files, types, version overlays), so
a new server version can be read without forking the package; a mistake in them is a SpecError
naming their file and line.
"""
from __future__ import annotations

import hashlib
import os
import sys
from pathlib import Path

from ..lang.cache import cache_root


def use_specs(dirs, specs_root=None) -> Path:
    """Compile the project's specs plus `dirs` and make `binlog_grammar.generated` load from the
    result. Returns the folder of the generated modules."""
    from . import construct as compiler
    from ..lang.loader import default_specs_dir, load_specs

    root = Path(specs_root) if specs_root else default_specs_dir()
    specs = load_specs(root, [Path(d) for d in dirs])
    files = compiler.render(specs)
    digest = hashlib.sha256()
    for rel in sorted(files):
        digest.update(rel.encode() + b"\0" + files[rel].encode() + b"\0")
    out = cache_root() / digest.hexdigest()[:16]
    if not (out / "catalog.py").exists():
        tmp = out.with_name(out.name + f".tmp{os.getpid()}")
        compiler.write(specs, tmp)
        try:
            tmp.rename(out)
        except OSError:  # another process wrote it first
            pass
    loaded = [m for m in sys.modules if m.startswith("binlog_grammar.generated.")]
    if loaded:
        raise RuntimeError("use_specs() must run before the generated modules are imported "
                           f"({loaded[0]} already is)")
    import binlog_grammar.generated as g

    g.__path__[:] = [str(out)]
    return out
