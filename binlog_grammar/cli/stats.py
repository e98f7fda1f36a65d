"""`binlog-grammar stats`: counts and bytes by event type, by table and by transaction size
(binlog_grammar.output.stats), as text or one JSON object."""
from __future__ import annotations

import sys

from . import parallel
from .options import add_reading_options, int_in
from .reading import open_input, report_damage


def add(sub):
    stt = sub.add_parser("stats", help="counts and bytes by event type, by table, by transaction size")
    add_reading_options(stt)
    stt.add_argument("--json", action="store_true", help="the figures as one JSON object")
    stt.add_argument("--top", type=int_in(0, what="a number of transactions"), default=10,
                     help="how many largest/longest transactions to list")
    stt.add_argument("--figures", action="store_true",
                     help="also count what --html draws (writes per interval by table, sizes and "
                          "durations, row image kinds, metadata levels, server ids, GTID domains, "
                          "gaps, hot rows); reads every event in one process")
    stt.add_argument("--html", metavar="FILE",
                     help="also write the figures as one offline HTML page to FILE ('-': to "
                          "stdout, instead of the text or JSON); implies --figures")
    parallel.add_option(stt)
    stt.set_defaults(func=run)


def run(args) -> int:
    import json

    from ..output import stats_fast
    from ..output.stats import Stats

    figures = args.figures or args.html is not None
    stream, progress = open_input(args)
    st, fast = Stats(top=args.top, figures=figures), None
    try:
        # the figures need every event's timestamp and rows, which the compiled loop and the
        # splits' partial counts do not give: they are counted in one process on the Python path
        split = not figures and parallel.wanted(args, stream, "stats")
        if not figures and (not split or stats_fast.usable(stream)):
            # the compiled stats loop (output/stats_fast) when nothing needs every event parsed:
            # in one process it reads about 1 GB/s of CPU, more than --jobs N splits read on the
            # Python path (0.3 s against 1.5 s for --jobs 2 on the 127 MB bench binlog), so the
            # splits take only the inputs it cannot read
            fast = stats_fast.read(stream, args.top)
            st = fast or st
        if split and fast is None:
            stream, st = parallel.run(args, stream, "stats", None)
        for item in () if isinstance(stream, parallel.Outcome) or fast else stream._grouped():
            if hasattr(item, "events"):
                st.add_transaction(item)
            else:
                st.add_event(item)
    finally:
        progress.close()
    st.fallbacks = stream.fallbacks
    time_details(args, stream, st)
    if figures:
        st.filters = run_filters(args)
    if args.html is not None:
        from ..output.report_html import page

        text = page(st.as_dict())
        if args.html == "-":
            sys.stdout.write(text)
            return report_damage(stream)
        try:
            with open(args.html, "w", encoding="utf-8") as f:
                f.write(text)
        except OSError as e:
            print(f"binlog-grammar: --html: {e}", file=sys.stderr)
            return 2
    print(json.dumps(st.as_dict(), indent=2) if args.json else st.text())
    return report_damage(stream)


def time_details(args, stream, st) -> None:
    """The time span of what was read (unless the compiled loop took it as it counted) and, for
    each listed transaction, its time and tables (output/stats_span.py), the same whichever way
    the counts were made."""
    from ..binlog.window import epoch
    from ..output import stats_span

    formats = {}  # each file's format state, read once
    st.largest = [(n, stats_span.describe(s, formats)) for n, s in st.largest]
    st.longest = [(n, stats_span.describe(s, formats)) for n, s in st.longest]
    if st.span is not None:
        return  # output/stats_fast.py's, read in its one pass
    paths = list(stream.paths)
    where = getattr(args, "positions", None)
    if where is not None:
        start, stop = where.start, where.stop
    else:
        start, stop = (p.pos if p is not None and p.file is None else None
                       for p in (args.start_position, args.stop_position))
    st.span = stats_span.span(paths, None if start is None else (0, start),
                              None if stop is None else (len(paths) - 1, stop),
                              (epoch(args.start_datetime), epoch(args.stop_datetime)))


def run_filters(args) -> dict:
    """The run's filters as text, for the page's head (and --json's "filters")."""
    def pos(p):
        return None if p is None else f"{p.file}:{p.pos}" if p.file is not None else str(p.pos)

    def text(v):
        return None if v is None else v.isoformat() if hasattr(v, "isoformat") else str(v)

    typed = getattr(args, "datetime_texts", {})  # as typed: a local time (cli/datetimes.py)
    out = {"start_position": pos(args.start_position), "stop_position": pos(args.stop_position),
           "start_datetime": typed.get("start_datetime", text(args.start_datetime)),
           "stop_datetime": typed.get("stop_datetime", text(args.stop_datetime)),
           "include_gtids": text(args.include_gtids), "exclude_gtids": text(args.exclude_gtids),
           "databases": list(args.database), "tables": list(args.table),
           "exclude_tables": list(args.exclude_table)}
    return {k: v for k, v in out.items() if v not in (None, [])}
