"""`binlog-grammar stats`: counts and bytes by event type, by table and by transaction size
(binlog_grammar.output.stats), as text or one JSON object."""
from __future__ import annotations

from . import parallel
from .options import add_reading_options, int_in
from .reading import open_input, report_damage


def add(sub):
    stt = sub.add_parser("stats", help="counts and bytes by event type, by table, by transaction size")
    add_reading_options(stt)
    stt.add_argument("--json", action="store_true", help="the figures as one JSON object")
    stt.add_argument("--top", type=int_in(0, what="a number of transactions"), default=10,
                     help="how many largest/longest transactions to list")
    parallel.add_option(stt)
    stt.set_defaults(func=run)


def run(args) -> int:
    import json

    from ..output import stats_fast
    from ..output.stats import Stats

    stream, progress = open_input(args)
    st, fast = Stats(top=args.top), None
    try:
        split = parallel.wanted(args, stream, "stats")
        if not split or stats_fast.usable(stream):
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
    print(json.dumps(st.as_dict(), indent=2) if args.json else st.text())
    return report_damage(stream)
