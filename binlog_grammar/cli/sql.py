"""`binlog-grammar sql` and `flashback`: the row changes as a replayable SQL script, or as one
that undoes them, last transaction first (binlog_grammar.output.sql)."""
from __future__ import annotations

import contextlib
import sys

from . import parallel
from .login import add_login_options, login
from .options import UsageError, add_reading_options
from .reading import open_input, report_damage, stdout
from .rewrite_opts import add_rewrite_options


def add(sub):
    sq = sub.add_parser("sql", add_help=False,
                        help="replayable SQL from the row changes and statements, in binlog order")
    add_reading_options(sq)
    parallel.add_option(sq)
    _add_server_schema(sq)
    add_rewrite_options(sq, table_metadata=False)
    sq.set_defaults(func=run)

    fb = sub.add_parser("flashback", add_help=False,
                        help="SQL that undoes the row changes, last transaction first")
    add_reading_options(fb)
    parallel.add_option(fb)
    _add_server_schema(fb)
    fb.set_defaults(func=lambda a: run(a, flashback=True))


def _add_server_schema(p):
    p.add_argument("--schema-from-server", action="store_true",
                   help="column names, signedness, ENUM/SET members and primary keys of binlogs "
                        "written without full metadata from the server's information_schema "
                        "(its tables now, not when the binlog was written; --schema wins)")
    add_login_options(p, "server, for --schema-from-server (as the mysql client is told)")
    p.set_defaults(contradictions=_login_without_server)


LOGIN = ("host", "port", "user", "password", "password_env", "socket", "defaults_file")


def _login_without_server(args):
    """Login options are for --schema-from-server only: without it, `sql -p FILE` would read
    FILE and `-p SECRET` would take the password for a file to read."""
    given = [name for name in LOGIN if getattr(args, name) is not None] + \
        (["no_defaults"] if args.no_defaults else [])
    if given and not args.schema_from_server:
        return ("the server options (-h, -P, -u, -p, -S, --password-env, --defaults-file, "
                "--no-defaults) are for --schema-from-server: give it, or leave them out")
    return None


def _server_schemas(args):
    """--schema-from-server: the server's schemas under those of --schema, and the caveat."""
    from ..binlog.rows import load_schemas
    from ..replication.connection import Connection
    from ..replication.schema import CAVEAT, server_schemas

    conn = Connection(**login(args)).connect()
    try:
        found = server_schemas(conn, args.database or None)
    finally:
        conn.close()
    if args.schema:
        try:
            found.update(load_schemas(args.schema))
        except (OSError, ValueError) as e:
            raise UsageError(f"--schema: {e}") from None
    print(f"binlog-grammar: note: --schema-from-server: {CAVEAT}", file=sys.stderr)
    return found


def run(args, flashback=False) -> int:
    from ..output import formats

    fmt = formats.get("flashback" if flashback else "sql")  # the registry's entry, as dump's
    if args.schema_from_server:
        args.schema = _server_schemas(args)
    stream, progress = open_input(args)
    refused = []  # transactions written as comments: the script says why, stderr how many
    try:
        if parallel.wanted(args, stream, "flashback" if flashback else "sql"):
            stream, refused = _parallel(args, stream, flashback)
            txs = None
        else:
            txs = stream.transactions()  # (flashback: each inverse waits on disk, output/spill.py)
        out = stdout()
        if txs is not None:
            # closed here, not by the garbage collector, whatever ends the loop: a SIGINT that
            # lands while the renderer cleans up (its spill) is then raised, not ignored
            with contextlib.closing(fmt.render(txs, on_refused=refused.append)) as lines:
                for line in lines:
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
    from ..output import formats

    out = stdout()
    header = list(formats.get("flashback" if flashback else "sql").render(()))
    if not flashback:
        out.write("".join(header))
        outcome, _ = parallel.run(args, stream, "sql", out.write)
    else:  # parallel.run holds the splits' blocks on disk and gives them last first, once all
        head = ["".join(header)]  # is read: the header goes before the first of them

        def write(text):
            if head:
                out.write(head.pop())
            out.write(text)

        outcome, _ = parallel.run(args, stream, "flashback", write)
        write("")
    return outcome, outcome.refused
