"""`binlog-grammar dump`: events and row changes as mysqlbinlog -vv style text, JSON lines
(binlog_grammar.output.dump) or the labelled hex view (binlog_grammar.output.hexdump)."""
from __future__ import annotations

from . import parallel
from .options import add_reading_options
from .reading import open_input, report_damage, stdout


def add(sub):
    du = sub.add_parser("dump", help="print events and row changes (mysqlbinlog -vv style, or JSON lines)")
    add_reading_options(du)
    du.add_argument("--format", choices=["text", "jsonl"], default="text",
                    help="text (mysqlbinlog -vv style, the default) or jsonl (one JSON object per line; "
                         "row changes in the Debezium envelope)")
    du.add_argument("--rows-only", action="store_true", help="jsonl: only row changes")
    du.add_argument("--hexdump", action="store_true",
                    help="hex view of every event with each byte run labelled by its spec field")
    parallel.add_option(du)
    du.set_defaults(func=run)


def run(args) -> int:
    from ..output import dump

    stream, progress = open_input(args)
    out = stdout()
    kind = "hexdump" if args.hexdump else args.format if args.format == "jsonl" else "text"
    try:
        if parallel.wanted(args, stream, kind):
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

            writer = dump.JsonlWriter(rows_only=args.rows_only)
            lane = attach_jsonl(stream, writer)
            if lane is None:
                for se in stream.events():
                    for line in writer.lines(se):
                        out.write(line + "\n")
            else:
                _jsonl_with_lane(stream, writer, lane, out)
        else:
            from ..binlog.stream import Written
            from ..output import dump_text
            from ..output.text_lane import attach

            out.write("".join(line + "\n" for line in dump_text.TEXT_HEADER))
            attach(stream)
            for se in stream.events():
                if type(se) is Written:  # a run of events the compiled lane wrote
                    out.write(se.text)
                    continue
                for line in dump_text.text_lines(se):
                    out.write(line + "\n")
            out.write("".join(line + "\n" for line in dump_text.TEXT_FOOTER))
    finally:
        progress.close()
        out.flush()
    return report_damage(stream)


def _jsonl_with_lane(stream, writer, lane, out):
    """JSON lines with runs the compiled lane wrote (bytes: to stdout's buffer as they are)."""
    from ..binlog.stream import Written

    import codecs

    raw = getattr(out, "buffer", None)
    try:  # the runs are UTF-8: as they are only where stdout writes UTF-8
        if codecs.lookup(out.encoding).name != "utf-8":
            raw = None
    except (AttributeError, TypeError, LookupError):
        raw = None
    pending = False  # text written through `out` since the last run
    for se in stream.events():
        if type(se) is Written:
            if raw is None:
                out.write(se.text.decode("utf-8", "surrogateescape"))
                continue
            if pending:
                out.flush()
                pending = False
            raw.write(se.text)
            continue
        lane.seen(se)
        for line in writer.lines(se):
            out.write(line + "\n")
            pending = True
