"""`binlog-grammar docs`: render the format documentation from the specs and the user guide from
the code it describes (binlog_grammar.docs; the guide's inputs are gathered by docs_inputs.py),
or with --check say whether the committed documentation is up to date."""
from __future__ import annotations

import sys
from pathlib import Path

from .options import spec_dir


def add(sub):
    d = sub.add_parser("docs", help="render the format documentation (Markdown and HTML) from the "
                                    "specs, with the user guide (command line, Python API, Spark, "
                                    "JSON lines) from the code")
    d.add_argument("--specs", type=spec_dir, help="specs folder (default: the project's specs/)")
    d.add_argument("--output", help="where to write (default: generated/docs/; the HTML site goes "
                                    "to its html/ folder)")
    d.add_argument("--check", action="store_true",
                   help="do not write; exit 1 if the committed docs differ from a fresh render")
    d.add_argument("--no-guide", action="store_true",
                   help="the format documentation alone, without the user guide's pages")
    d.set_defaults(func=run)


def run(args) -> int:
    import time

    from .. import docs
    from ..lang.loader import load_specs
    from .docs_inputs import guide_inputs

    started = time.monotonic()
    specs = load_specs(args.specs)
    try:
        guide = None if args.no_guide else guide_inputs(args.root_parser)
        files = docs.render(specs, guide)
    except docs.DocsError as e:
        print(f"binlog-grammar: docs: {e}", file=sys.stderr)
        return 1
    out = Path(args.output) if args.output else docs.DOCS_DIR
    if args.check:
        diff = docs.diff(files, out)
        if diff:
            guide = [p for p in diff if p.startswith(("guide/", f"{docs.HTML_DIR}/guide/"))]
            formats = [p for p in diff if p not in guide and p != f"{docs.HTML_DIR}/search.html"]
            if not guide:
                source = "the specs"
            elif formats:
                source = "the specs and the code the user guide describes"
            else:
                source = ("the code the user guide describes (an option, a docstring, a Spark "
                          "option or schema, a writer)")
            print(f"docs differ from {source} ({len(diff)} files): " + ", ".join(diff[:20]))
            print("run `binlog-grammar docs` and commit the result")
            return 1
        print(f"{out}: up to date with the specs{'' if args.no_guide else ' and the code'} "
              f"({len(files)} files)")
        return 0
    docs.write(files, out)
    print(f"wrote {len(files)} files to {out} in {time.monotonic() - started:.1f}s")
    return 0
