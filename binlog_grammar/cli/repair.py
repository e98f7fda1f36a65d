"""`binlog-grammar repair`: the command line of binlog_grammar.repair.

    binlog-grammar repair --host H --port P --user U --password-env VAR      # dry run: the plan as SQL
    binlog-grammar repair ... --apply [--undo FILE]                          # repair and restart

Exit status: 0 the plan was printed (dry run), or the replica runs and has caught up (--apply), or
it was running already; 1 the repair failed (a connection, a trial run, a stop after a repair
that is not a row conflict, no catching up in --wait seconds); 2 usage errors and stops the
repair does not act on (one line saying why; nothing was changed).
"""
from __future__ import annotations

import sys

from .options import add_quiet_option, add_tls_options, int_in, seconds
from .parser import unset_variable

PROG = "binlog-grammar repair"


def add(sub):
    """Register `repair` on the CLI's subcommand parsers (building it reads no generated module)."""
    p = sub.add_parser("repair", help="repair a replica stopped on a row conflict (1032/1062): "
                                      "print the plan, or --apply it and restart replication",
                       description="Repair a row-based replica whose SQL thread stopped on error "
                                   "1032 or 1062: find the failing transaction (relay log or "
                                   "primary), compute the rows to insert and delete for all of it, "
                                   "print that as SQL (dry run) or --apply it with sql_log_bin=0 "
                                   "and restart replication. Nothing is skipped.")
    c = p.add_argument_group("the replica")
    c.add_argument("--host", default="127.0.0.1", help="replica host (default 127.0.0.1)")
    c.add_argument("--port", type=int_in(1, 65535, "a port"), default=3306, help="replica port (default 3306)")
    c.add_argument("--user", default="root", help="account on the replica (SUPER or BINLOG ADMIN "
                                                  "for sql_log_bin=0, REPLICATION SLAVE ADMIN)")
    c.add_argument("--password-env", metavar="VAR", help="environment variable holding the password")
    c.add_argument("--connection-name", metavar="NAME",
                   help="multi-source: the replication connection (MariaDB) or channel (MySQL)")
    c.add_argument("--relay-log-dir", metavar="DIR",
                   help="where the relay logs are, when not where the server says (@@relay_log_basename, "
                        "@@datadir)")
    s = p.add_argument_group("the primary (to fetch the transaction when the relay logs are not "
                             "readable here, and the columns MINIMAL/NOBLOB before-images lack)")
    s.add_argument("--primary-user", help="account on the primary (REPLICATION SLAVE, SELECT)")
    s.add_argument("--primary-password-env", metavar="VAR",
                   help="environment variable holding the primary account's password")
    s.add_argument("--primary-host", help="primary host (default: Master_Host of the status)")
    s.add_argument("--primary-port", type=int_in(1, 65535, "a port"),
                   help="primary port (default: Master_Port of the status)")
    s.add_argument("--from-primary", action="store_true",
                   help="read the failing transaction from the primary even when the relay logs are readable")
    a = p.add_argument_group("applying")
    a.add_argument("--apply", action="store_true",
                   help="apply the repair (default: print it and change nothing)")
    a.add_argument("--undo", metavar="FILE",
                   help="--apply: where to write the undo SQL (default: "
                        "binlog-grammar-repair-undo-TIME.sql in the current folder)")
    a.add_argument("--max-rounds", type=int_in(1, 1000, "a number of rounds"), default=10,
                   help="--apply: repair at most this many stops in a row (default 10)")
    a.add_argument("--wait", type=seconds(), default=300.0,
                   help="--apply: seconds to wait for the replica to catch up (default 300)")
    a.add_argument("--no-start", action="store_true",
                   help="--apply: repair, but leave the SQL thread stopped")
    n = p.add_argument_group("connection")
    n.add_argument("--connect-timeout", type=seconds(), default=10.0, help="seconds to connect (default 10)")
    n.add_argument("--read-timeout", type=seconds(), default=60.0,
                   help="seconds to wait for an answer (default 60)")
    add_tls_options(n, "TLS for both servers, as the mysql client's --ssl-mode (default preferred)",
                    "server's RSA public key (caching_sha2_password without TLS)",
                    "ask the server for its RSA public key when needed")
    add_quiet_option(n)
    p.set_defaults(func=lambda args: run(args, p))
    return p


def contradiction(args):
    """Options that each parse but together make no sense: what is wrong, or None."""
    if not args.apply:
        for opt, given in (("--undo", args.undo is not None), ("--no-start", args.no_start),
                           ("--max-rounds", args.max_rounds != 10), ("--wait", args.wait != 300.0)):
            if given:
                return f"{opt} applies to --apply (without it nothing is changed)"
    if args.primary_password_env and not args.primary_user:
        return "--primary-password-env goes with --primary-user"
    if args.from_primary and not args.primary_user:
        return "--from-primary needs --primary-user (and --primary-password-env)"
    return None


def run(args, parser) -> int:
    problem = contradiction(args)
    if problem:
        parser.error(problem)
    for var, option in ((args.password_env, "--password-env"),
                        (args.primary_password_env, "--primary-password-env")):
        problem = var and unset_variable(var, option)
        if problem:
            print(f"{PROG}: {problem}", file=sys.stderr)
            return 2
    # imported here, so that building the CLI's parser reads no generated module
    from ..errors import BinlogError, ReplicationError
    from ..repair.runner import Repair
    from ..repair.status import Refused, RepairError

    from .reading import Progress, progress_wanted

    # the relay logs' scan for the failing transaction (repair/locate.relay_events); the plan
    # is printed after the bar is cleared
    args.progress = Progress(progress_wanted(args, False), "repair: reading relay logs")
    try:
        return Repair(args).run()
    except Refused as e:
        print(f"{PROG}: {e}", file=sys.stderr)
        return 2
    except (RepairError, ReplicationError, BinlogError) as e:
        print(f"{PROG}: {e}", file=sys.stderr)
        return 1
    finally:
        args.progress.close()
