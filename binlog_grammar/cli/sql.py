"""`binlog-grammar sql` and `flashback`: the row changes as a replayable SQL script, or as one
that undoes them, last transaction first (binlog_grammar.output.sql)."""
from __future__ import annotations

import sys

from . import parallel
from .options import add_reading_options
from .reading import open_input, report_damage, stdout


def add(sub):
    sq = sub.add_parser("sql", help="replayable SQL from the row changes, transaction by transaction")
    add_reading_options(sq)
    parallel.add_option(sq)
    sq.set_defaults(func=run)

    fb = sub.add_parser("flashback", help="SQL that undoes the row changes, last transaction first")
    add_reading_options(fb)
    parallel.add_option(fb)
    fb.set_defaults(func=lambda a: run(a, flashback=True))


def run(args, flashback=False) -> int:
    from ..output.sql import render_sql

    stream, progress = open_input(args)
    refused = []  # transactions written as comments: the script says why, stderr how many
    try:
        if parallel.wanted(args, stream, "flashback" if flashback else "sql"):
            stream, refused = _parallel(args, stream, flashback)
            txs = None
        else:
            txs = stream.transactions()
        if flashback and txs is not None:
            txs = list(txs)  # the inverse runs from the last transaction back
        out = stdout()
        if txs is not None:
            for line in render_sql(txs, flashback=flashback, on_refused=refused.append):
                out.write(line if line.endswith("\n") else line + "\n")
    except ValueError as e:
        print(f"binlog-grammar: {e}", file=sys.stderr)
        return 1
    finally:
        progress.close()
        sys.stdout.flush()
    status = report_damage(stream)
    if refused:
        n = len(refused)
        print(f"binlog-grammar: note: {n} transaction{'s' * (n != 1)} could not be "
              f"{'inverted' if flashback else 'written as SQL'} and "
              f"{'is a comment' if n == 1 else 'are comments'} in the script; the first: "
              f"{refused[0]}", file=sys.stderr)
    return status


def _parallel(args, stream, flashback):
    """--jobs N: the script's header (forwards, before anything is read, as render_sql gives it;
    flashback once all is read), then the splits' blocks (parallel.run)."""
    from ..output.sql import render_sql

    out = stdout()
    header = list(render_sql((), flashback=flashback))
    if not flashback:
        out.write("".join(header))
        outcome, _ = parallel.run(args, stream, "sql", out.write)
    else:
        blocks = []
        outcome, _ = parallel.run(args, stream, "flashback", blocks.append)
        out.write("".join(header))
        out.write("".join(blocks))
    return outcome, outcome.refused
