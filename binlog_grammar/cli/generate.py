"""`binlog-grammar generate`: compile the specs into the modules under generated/
(binlog_grammar.codegen), or with --check say whether the committed ones are up to date."""
from __future__ import annotations

from pathlib import Path

from .options import spec_dir


def add(sub):
    g = sub.add_parser("generate", help="compile specs/ into construct modules under generated/")
    g.add_argument("--specs", type=spec_dir, help="specs folder (default: the project's specs/)")
    g.add_argument("--extra-specs", action="append", default=[], type=spec_dir,
                   help="another folder of spec files to load with the main ones (repeatable)")
    g.add_argument("--output", "--out", help="where to write (default: generated/)")
    g.add_argument("--check", action="store_true",
                   help="do not write; exit 1 if the committed files differ from a fresh generation")
    g.set_defaults(func=run)


def run(args) -> int:
    import tempfile

    from ..codegen import c as native_c
    from ..codegen.construct import generate, generated_dir

    out = Path(args.output) if args.output else None
    if args.check:
        target = out or generated_dir()
        with tempfile.TemporaryDirectory() as tmp:
            generate(args.specs, Path(tmp), args.extra_specs)
            native_c.generate(args.specs, Path(tmp), args.extra_specs)
            diff = tree_diff(Path(tmp), target)
        if diff:
            print(f"generated files differ from the specs ({len(diff)}): " + ", ".join(diff[:20]))
            print("run `binlog-grammar generate` and commit the result")
            return 1
        print(f"{target}: up to date with the specs")
        return 0
    files = generate(args.specs, out, args.extra_specs)
    files += native_c.generate(args.specs, out, args.extra_specs)  # the compiled backend's C
    print(f"wrote {len(files)} files to {out or 'generated/'}")
    return 0


GENERATED = ("*.py", "native/*.c", "native/*.h")  # what generate writes (C: codegen/c.py)


def _files(root: Path) -> set:
    return {p.relative_to(root).as_posix() for pattern in GENERATED for p in root.rglob(pattern)
            if "__pycache__" not in p.parts} if root.exists() else set()


def tree_diff(a: Path, b: Path) -> list:
    """The generated files (relative paths) that are in one tree only or differ between the two."""
    import filecmp

    fa, fb = _files(a), _files(b)
    diff = sorted(fa ^ fb)
    for rel in sorted(fa & fb):
        if not filecmp.cmp(a / rel, b / rel, shallow=False):
            diff.append(rel)
    return diff
