"""`dump --flashback` (`-B`, as mariadb-binlog names it): the row events inverted as BINLOG
blocks that undo the binlog's row changes when piped into the client
(binlog_grammar.output.flashback_binlog). The `flashback` command (SQL statements) stays."""
from __future__ import annotations


def add_flashback_options(parser):
    """dump's --flashback / -B."""
    parser.add_argument("-B", "--flashback", action="store_true",
                        help="write the row events inverted (WRITE<->DELETE, UPDATE's images "
                             "swapped, statements and transactions last first) as BINLOG "
                             "statements that undo them, as mariadb-binlog --flashback does; "
                             "whole transactions only")


def run(args) -> int:
    """The script of `dump --flashback`; the exit status as dump's (a transaction that cannot be
    inverted is a comment in the script and a note on stderr, as in `flashback`'s, not a
    failure of a valid file)."""
    import sys

    from ..output import formats
    from .reading import open_input, report_damage, stdout

    if getattr(args, "hexdump", False) or getattr(args, "format", None) == "jsonl":
        print("binlog-grammar: dump: --flashback writes BINLOG statements; it takes no --hexdump "
              "or --format", file=sys.stderr)
        return 2
    stream, progress = open_input(args)
    stream.cut = "transactions"  # replayable output: a window keeps or drops whole transactions
    out = stdout()
    refused = []
    try:
        script = formats.get("flashback-binlog").render(stream.transactions(),
                                                        on_refused=refused.append)
        for line in script:
            out.write(line)
    finally:
        progress.close()
        out.flush()
    status = report_damage(stream)
    if refused:
        n = len(refused)
        print(f"binlog-grammar: note: {n} transaction{'s' * (n != 1)} could not be inverted "
              f"and {'is a comment' if n == 1 else 'are comments'} in the script; the first: "
              f"{refused[0]}", file=sys.stderr)
    return status
