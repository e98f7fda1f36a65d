"""The `binlog-grammar` command.

Exit status: 0 success; 1 the input had problems (a damaged event, a failed rebuild or checksum,
generated files that differ from the specs; everything before the damage has been written);
2 usage errors and spec errors.

The package, one module per command, each with `add(sub)` (its subcommand parser) and `run(args)`
(which calls into the package and returns the exit status):

    __init__.py   main() and build_parser(): the commands assembled in the order --help lists them
    parser.py     the argparse parser every command uses: options by full name only, errors that
                  name a refused option but never echo a value (it may be a password)
    options.py    the option checks (positions, dates and times, GTID sets, numbers, spec folders,
                  schema files), the reading options and TLS options shared by commands, and the
                  options that contradict each other
    datetimes.py  the datetime options read as mysqlbinlog reads them (MariaDB's forms, the
                  local zone or --utc)
    rewrite_opts.py  --rewrite-db (dump, sql) and --print-table-metadata (dump)
    mysqlbinlog_opts.py  dump's mysqlbinlog selection and remote options (-d, -j, -o, -H, -r,
                  --server-id, -F, -V, -R with -h/-P/-u/-p/-S, --to-last-log, --raw, --stop-never)
    reading.py    what dump, stats, sql and flashback share when they run: the stream their
                  options open, the progress bar, stdout, the damage report and its exit status
    parallel.py   --jobs N of dump, sql, flashback and stats: the splits in flight, the merge in
                  input order; plan.py plans the splits on the compiled walk, pieces.py is what
                  a worker does with one, forkpool.py the workers
    generate.py   generate    (binlog_grammar.codegen)
    docs.py       docs        (binlog_grammar.docs; docs_inputs.py gathers the user guide's inputs)
    verify.py     verify      (binlog_grammar.binlog.verify)
    dump.py       dump        (binlog_grammar.output.dump, output.hexdump)
    stats.py      stats       (binlog_grammar.output.stats)
    sql.py        sql, flashback (binlog_grammar.output.sql)
    pipeline.py   pipeline    (binlog_grammar.spark.pipeline)
    stream.py     stream      (binlog_grammar.replication)
    repair.py     repair      (binlog_grammar.repair)

Building the parser reads no generated module: each command imports what it runs on when it runs.
"""
from __future__ import annotations

import argparse
import contextlib
import importlib
import signal
import sys
import threading

from .. import __version__, native
from ..errors import BinlogGrammarError, SpecError
from .options import UsageError, contradictions, spec_dir
from .parser import Parser

# the commands in the order --help lists them, each with the module (cli/<module>.py) whose
# add(sub) makes its parser: a command line builds only its own command's parser, and imports
# no other command's module (the whole parser serves --help, errors before the command and docs)
COMMANDS = {"generate": "generate", "docs": "docs", "verify": "verify", "dump": "dump",
            "stats": "stats", "sql": "sql", "flashback": "sql", "pipeline": "pipeline",
            "stream": "stream", "repair": "repair"}
# the root options a command line may give before its command, and whether each takes a value
_ROOT_OPTIONS = {"--specs": True, "--backend": True}


def build_parser(command=None) -> argparse.ArgumentParser:
    """The whole command line's parser; with `command` (a name of COMMANDS), the root options
    and that command's parser alone (with any other its module adds), whose errors before the
    command are reported by the whole parser."""
    p = Parser(prog="binlog-grammar", description="Grammar-driven MySQL/MariaDB binlog tools.")
    if command is not None:
        p.whole = build_parser
    p.add_argument("--specs", dest="user_specs", action="append", default=[], metavar="DIR",
                   type=spec_dir,
                   help="read with the project's specs plus the spec files (events, types, version "
                        "overlays) of this folder (repeatable); compiled once into ~/.cache/binlog-grammar")
    p.add_argument("--backend", choices=native.CHOICES, default=None,
                   help="which readers run: the compiled backend (c), the generated Python readers "
                        f"(python), or c when it is built (auto; the default, or ${native.ENV})")
    p.add_argument("--version", action=_Version, nargs=0,
                   help="print the version and the backend that runs, and exit")
    sub = p.add_subparsers(dest="command", required=True, parser_class=Parser)
    modules = dict.fromkeys(COMMANDS.values() if command is None else [COMMANDS[command]])
    for module in modules:
        importlib.import_module(f"{__name__}.{module}").add(sub)
    for name, sp in sub.choices.items():
        sp.set_defaults(subparser=sp)
        if "--version" not in sp._option_string_actions:  # every command says it too
            names = ["--version"] if "-V" in sp._option_string_actions else ["-V", "--version"]
            sp.add_argument(*names, action=_Version, nargs=0,
                            help="print the version and the backend that runs, and exit")
    p.set_defaults(root_parser=p)  # the whole command line: docs' CLI reference walks it
    return p


class _Version(argparse.Action):
    """--version: the version and which backend runs (with the --backend given before it)."""

    def __call__(self, parser, namespace, values, option_string=None):
        try:
            native.select(getattr(namespace, "backend", None))  # a command's: no --backend
            line = f"binlog-grammar {__version__} (backend: {native.describe()})"
        except native.BackendError as e:
            parser.exit(2, f"binlog-grammar: {e}\n")
        print(line)
        parser.exit(0)


def command_of(words):
    """The command a command line runs, when only root options (_ROOT_OPTIONS) come before it;
    else None (no command, --help, an unknown option or command: the whole parser says)."""
    words = iter(words)
    for w in words:
        if w in COMMANDS:
            return w
        name, eq, _value = w.partition("=")
        if name not in _ROOT_OPTIONS:
            return None
        if _ROOT_OPTIONS[name] and not eq:
            next(words, None)
    return None


def main(argv=None) -> int:
    words = sys.argv[1:] if argv is None else list(argv)
    command = command_of(words)
    # docs renders the whole command line (args.root_parser)
    parser = build_parser(None if command == "docs" else command)
    args = parser.parse_args(words)
    problem = contradictions(args)
    if problem:
        args.subparser.error(problem)
    with _sigint_exits() as interrupted:
        status = _run(args)
    return 130 if interrupted else status


@contextlib.contextmanager
def _sigint_exits():
    """A Ctrl-C ends the command with status 130 and no traceback wherever it lands, also in a
    generator being finalized or a cleanup, where Python would print and drop the
    KeyboardInterrupt and the command would go on to another status. Yields a list that is
    not empty once SIGINT came. Only the main thread of a process with Python's own handler
    changes it, and only while the command runs."""
    seen = []
    if threading.current_thread() is not threading.main_thread() or \
            signal.getsignal(signal.SIGINT) is not signal.default_int_handler:
        yield seen
        return
    hook = sys.unraisablehook

    def on_sigint(signum, frame):
        seen.append(signum)
        raise KeyboardInterrupt

    def unraisable(u):
        if not (seen and u.exc_type is not None and issubclass(u.exc_type, KeyboardInterrupt)):
            hook(u)

    signal.signal(signal.SIGINT, on_sigint)
    sys.unraisablehook = unraisable
    try:
        yield seen
    finally:
        signal.signal(signal.SIGINT, signal.default_int_handler)
        sys.unraisablehook = hook


def _run(args) -> int:
    """The command, its errors as one line and an exit status."""
    try:
        native.select(args.backend)  # a backend that cannot run: one line, exit 2
        if args.user_specs and args.command not in ("generate", "docs"):
            from ..codegen.grammar import use_specs

            use_specs(args.user_specs)
        return args.func(args)
    except SpecError as e:
        print(f"binlog-grammar: spec error: {e}", file=sys.stderr)
        return 2
    except native.BackendError as e:
        print(f"binlog-grammar: {e}", file=sys.stderr)
        return 2
    except UsageError as e:
        print(f"binlog-grammar: {e}", file=sys.stderr)
        return 2
    except BinlogGrammarError as e:
        print(f"binlog-grammar: {e}", file=sys.stderr)
        return 1
    except KeyboardInterrupt:
        return 130
    except BrokenPipeError as e:
        # a reader gone while a SIGINT unwinds (the last flush meets the closed pipe) is still
        # the interrupt's exit status
        return 130 if isinstance(e.__context__, KeyboardInterrupt) else 0


__all__ = ["COMMANDS", "build_parser", "command_of", "main"]


if __name__ == "__main__":
    sys.exit(main())
