"""`binlog-grammar dump`: mysqlbinlog's forms (binlog_grammar.output.replay): by default what it
prints for replay (BINLOG statements of the events' bytes), with -vv --base64-output=decode-rows its
### text; or this project's forms: `--format text`, the ### text with every event's lines whole in
themselves (binlog_grammar.output.dump_text), JSON lines (binlog_grammar.output.dump) or the
labelled hex view (`--format hexdump`, binlog_grammar.output.hexdump)."""
from __future__ import annotations

from . import parallel
from .dump_flashback import add_flashback_options
from .envelopes import add_options as add_envelope_options
from .envelopes import output_format
from .mysqlbinlog_opts import add_mysqlbinlog_options
from .options import add_reading_options
from .replay_opts import add_replay_options, replay_wanted, run_replay
from .reading import open_input, report_damage, stdout
from .rewrite_opts import add_rewrite_options


def add(sub):
    du = sub.add_parser("dump", help="print the events as mysqlbinlog does: the replay script by default, "
                                     "the ### text with -vv --base64-output=decode-rows; "
                                     "or as this project's text, JSON lines or labelled hex")
    add_reading_options(du)
    du.add_argument("--format", choices=["text", "jsonl", "hexdump"], default=None,
                    help="without it, mysqlbinlog's output (the replay script, or with "
                         "--base64-output=decode-rows its ### text); text: this project's ### "
                         "text, each event's lines whole in themselves (each statement with its "
                         "session), which --jobs splits across cores; jsonl: one JSON object per "
                         "line (--envelope says which); hexdump: every event's bytes, each run "
                         "labelled by its spec field")
    du.add_argument("--rows-only", action="store_true", help="jsonl: only row changes")
    add_envelope_options(du)
    du.add_argument("--hexdump", dest="mysql_hexdump", action="store_true",
                    help="each event's bytes in hex in its header comment, as mysqlbinlog "
                         "--hexdump (in the replay script or --base64-output=decode-rows; "
                         "--format hexdump labels every byte run instead)")
    parallel.add_option(du)
    add_rewrite_options(du)
    add_flashback_options(du)
    add_replay_options(du)
    du.set_defaults(func=run)
    add_mysqlbinlog_options(du)


def run(args) -> int:
    import sys

    args.hexdump = args.format == "hexdump"  # this project's labelled view
    if args.hexdump:
        args.format = "text"
    if getattr(args, "flashback", False):
        from .dump_flashback import run as run_flashback

        return run_flashback(args)
    if replay_wanted(args):
        return run_replay(args)
    if args.base64_output in ("auto", "never"):
        print(f"binlog-grammar: dump: --base64-output={args.base64_output.upper()} writes the "
              "replay script; it takes no --format", file=sys.stderr)
        return 2
    if args.format is None:  # an --envelope without --format jsonl, which output_format refuses
        args.format = "text"
    try:
        fmt, options = output_format(args)
    except ValueError as e:
        print(f"binlog-grammar: dump: {e}", file=sys.stderr)
        return 2
    stream, progress = open_input(args)
    out = stdout()
    kind = "hexdump" if args.hexdump else args.format if args.format == "jsonl" else "text"
    try:
        if fmt.name == "debezium" and not args.hexdump:
            # one writer in stream order (its transactions and keys span events): no --jobs;
            # runs of row changes written by the compiled lane when it runs (debezium_lane)
            from ..output.debezium_lane import attach as attach_debezium

            writer = fmt.writer(rows_only=args.rows_only, options=options)
            _lines_with(stream, out, writer, attach_debezium(stream, writer))
            out.write("".join(line + "\n" for line in writer.end()))
        elif parallel.wanted(args, stream, kind):
            from ..output import dump_text

            if kind == "text":
                out.write("".join(line + "\n" for line in dump_text.TEXT_HEADER))
            stream, _ = parallel.run(args, stream, kind, out.write, out=out)
            if kind == "text":
                out.write("".join(line + "\n" for line in dump_text.TEXT_FOOTER))
        elif args.hexdump:
            from ..output.hexdump import render

            for se in stream.events():
                out.write(render(se) + "\n")
        elif args.format == "jsonl":
            from ..output.jsonl_lane import attach as attach_jsonl

            writer = fmt.writer(rows_only=args.rows_only)  # output.dump.JsonlWriter
            _lines_with(stream, out, writer, attach_jsonl(stream, writer))
        else:
            from ..output import dump_text
            from ..output.text_lane import attach

            out.write("".join(line + "\n" for line in dump_text.TEXT_HEADER))
            attach(stream)
            raw = _raw_of(out) if stream.lane is not None else None
            if raw is not None:
                stream.lane.raw = True  # its runs as the UTF-8 bytes it wrote
            _with_lane(stream, out, raw, dump_text.text_lines)
            out.write("".join(line + "\n" for line in dump_text.TEXT_FOOTER))
    finally:
        progress.close()
        out.flush()
    return report_damage(stream)


def _lines_with(stream, out, writer, lane):
    """Every event's JSON lines by `writer`, with the runs of `lane` (a compiled JSON-lines lane
    attached to the stream, which learns from each event the writer writes; None: no lane)."""
    if lane is None:
        for se in stream.events():
            for line in writer.lines(se):
                out.write(line + "\n")
        return

    def lines(se):
        lane.seen(se)
        return writer.lines(se)

    _with_lane(stream, out, _raw_of(out), lines)


def _raw_of(out):
    """stdout's byte buffer where stdout writes UTF-8 (the compiled lanes' runs are UTF-8 bytes,
    undecodable bytes kept as they are: what `out` writes of their surrogateescape text), else
    None."""
    import codecs

    raw = getattr(out, "buffer", None)
    try:
        if codecs.lookup(out.encoding).name != "utf-8" or out.errors != "surrogateescape":
            return None
    except (AttributeError, TypeError, LookupError):
        return None
    return raw


def _with_lane(stream, out, raw, lines):
    """The stream's events as lines(se) gives them, and the runs of events a compiled lane wrote
    (Written): bytes to stdout's buffer as they are when raw is given, else through `out`."""
    from ..binlog.stream import Written

    pending = True  # text written through `out` since the last run
    for se in stream.events():
        if type(se) is Written:
            text = se.text
            if raw is None:
                out.write(text if isinstance(text, str) else text.decode("utf-8", "surrogateescape"))
                continue
            if pending:
                out.flush()
                pending = False
            raw.write(text)
            continue
        for line in lines(se):
            out.write(line + "\n")
            pending = True
