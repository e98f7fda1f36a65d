"""The `binlog-grammar` command.

Exit status: 0 success; 1 the input had problems (a damaged event, a failed rebuild or checksum,
generated files that differ from the specs); 2 usage errors and spec errors.
"""
from __future__ import annotations

import argparse
import filecmp
import json
import sys
import tempfile
from pathlib import Path

from .errors import BinlogGrammarError, SpecError


def _cmd_generate(args) -> int:
    from .compiler import generate

    out = Path(args.output) if args.output else None
    if args.check:
        target = out or Path(__file__).resolve().parent.parent / "generated"
        with tempfile.TemporaryDirectory() as tmp:
            generate(args.specs, Path(tmp), args.extra_specs)
            diff = _tree_diff(Path(tmp), target)
        if diff:
            print(f"generated files differ from the specs ({len(diff)}): " + ", ".join(diff[:20]))
            print("run `binlog-grammar generate` and commit the result")
            return 1
        print(f"{target}: up to date with the specs")
        return 0
    files = generate(args.specs, out, args.extra_specs)
    print(f"wrote {len(files)} files to {out or 'generated/'}")
    return 0


def _tree_diff(a: Path, b: Path) -> list:
    fa = {p.relative_to(a).as_posix() for p in a.rglob("*.py")}
    fb = {p.relative_to(b).as_posix() for p in b.rglob("*.py")} if b.exists() else set()
    diff = sorted(fa ^ fb)
    for rel in sorted(fa & fb):
        if not filecmp.cmp(a / rel, b / rel, shallow=False):
            diff.append(rel)
    return diff


def _cmd_docs(args) -> int:
    import time

    from . import docs
    from .spec.loader import load_specs

    started = time.monotonic()
    specs = load_specs(args.specs)
    try:
        files = docs.render(specs)
    except docs.DocsError as e:
        print(f"binlog-grammar: docs: {e}", file=sys.stderr)
        return 1
    out = Path(args.output) if args.output else docs.DOCS_DIR
    if args.check:
        diff = docs.diff(files, out)
        if diff:
            print(f"docs differ from the specs ({len(diff)} files): " + ", ".join(diff[:20]))
            print("run `binlog-grammar docs` and commit the result")
            return 1
        print(f"{out}: up to date with the specs ({len(files)} files)")
        return 0
    docs.write(files, out)
    print(f"wrote {len(files)} files to {out} in {time.monotonic() - started:.1f}s")
    return 0


def _cmd_verify(args) -> int:
    from .verify import verify_file

    ok = True
    for path in args.files:
        report = verify_file(path, verify_checksum=not args.no_checksum)
        ok = ok and report["ok"]
        if args.json:
            print(json.dumps(report, sort_keys=True))
        else:
            print(_verify_text(report))
    return 0 if ok else 1


def _verify_text(r) -> str:
    lines = [f"{r['file']}: {r['events']} events, {r['byte_identical']} rebuilt byte-identical, "
             f"{r['checksums_verified']} checksums verified, {r['checksum_failures']} checksum failures"
             + (f", {r['inner_events']} events inside payloads" if r.get("inner_events") else "")]
    for e in r["errors"]:
        where = f"at offset {e['offset']}" if e["offset"] is not None else "in the file"
        what = f" ({e['event_type']})" if e["event_type"] else ""
        lines.append(f"  error {where}{what}: {e['message']}")
    lines.append("  OK" if r["ok"] else "  FAILED")
    return "\n".join(lines)


def build_parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog="binlog-grammar",
                                description="Grammar-driven MySQL/MariaDB binlog tools.")
    sub = p.add_subparsers(dest="command", required=True)

    g = sub.add_parser("generate", help="compile specs/ into construct modules under generated/")
    g.add_argument("--specs", help="specs folder (default: the project's specs/)")
    g.add_argument("--extra-specs", action="append", default=[],
                   help="another folder of spec files to load with the main ones (repeatable)")
    g.add_argument("--output", help="where to write (default: generated/)")
    g.add_argument("--check", action="store_true",
                   help="do not write; exit 1 if the committed files differ from a fresh generation")
    g.set_defaults(func=_cmd_generate)

    d = sub.add_parser("docs", help="render the format documentation (Markdown and HTML) from the specs")
    d.add_argument("--specs", help="specs folder (default: the project's specs/)")
    d.add_argument("--output", help="where to write (default: generated/docs/; the HTML site goes "
                                    "to its html/ folder)")
    d.add_argument("--check", action="store_true",
                   help="do not write; exit 1 if the committed docs differ from a fresh render")
    d.set_defaults(func=_cmd_docs)

    v = sub.add_parser("verify", help="parse and rebuild every event, check CRC32s")
    v.add_argument("files", nargs="+", metavar="FILE")
    v.add_argument("--json", action="store_true", help="one JSON object per file")
    v.add_argument("--no-checksum", action="store_true", help="do not verify CRC32s")
    v.set_defaults(func=_cmd_verify)
    return p


def main(argv=None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    try:
        return args.func(args)
    except SpecError as e:
        print(f"binlog-grammar: spec error: {e}", file=sys.stderr)
        return 2
    except BinlogGrammarError as e:
        print(f"binlog-grammar: {e}", file=sys.stderr)
        return 1
    except KeyboardInterrupt:
        return 130
    except BrokenPipeError:
        return 0


if __name__ == "__main__":
    sys.exit(main())
