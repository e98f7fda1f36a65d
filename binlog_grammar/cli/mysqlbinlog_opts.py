"""dump's options of mysqlbinlog's selection and remote reading, with mysqlbinlog's names, short
forms and meaning (MariaDB's client/mysqlbinlog.cc option table; issue 28, item 1):

- `-h` is the host (`-h/--host`, `-P`, `-u`, `-p`, `-S`, option files, MYSQL_PWD: cli/login.py),
  so dump's help is `--help` alone, as mysqlbinlog's;
- short forms of dump's own options: `-d` (`--database`), `-H` (`--hexdump`), `-j`
  (`--start-position`); mysqlbinlog's `-o` is `--offset`;
- `-o/--offset N`: the first N events left out, counted from the first FORMAT_DESCRIPTION_EVENT
  (event 1, which is printed all the same), as mariadb-binlog counts them; `--server-id N`:
  only the events that server wrote, FORMAT_DESCRIPTION and ROTATE events kept, as
  mariadb-binlog keeps them. Both are read event by event in this process with the Python
  readers (a compiled lane writes runs of events past them);
- `-r/--result-file FILE`: the output into FILE instead of stdout; with `--raw` the folder
  (`DIR/`) the server's files are written into under their own names;
- `-F/--force-if-open`: mysqlbinlog's default (on): a file whose FORMAT_DESCRIPTION_EVENT has
  LOG_EVENT_BINLOG_IN_USE_F set is read all the same, as dump always does;
- `-R/--read-from-remote-server FILE...`: the named binlogs read from the server through the
  project's replication client (replication/backup.py writes them byte for byte into a temporary
  folder, then dump reads them as it reads local files, so the output is the one `dump FILE`
  gives of the server's own file); `-t/--to-last-log` goes on to the server's last binlog;
  `--raw -r DIR/` keeps the copies (the backup), `--stop-never` waits for new events;
- `-V/--version`: the version and the backend that runs, as the top level's `--version`.
"""
from __future__ import annotations

import argparse
import contextlib
import os
import sys

from .login import add_login_options
from .options import int_in

__all__ = ["add_mysqlbinlog_options"]


class _Version(argparse.Action):
    """-V/--version on a subcommand: the top level's line (cli/__init__._Version)."""

    def __call__(self, parser, namespace, values, option_string=None):
        from .. import __version__, native

        try:
            native.select(None)
            line = f"binlog-grammar {__version__} (backend: {native.describe()})"
        except native.BackendError as e:
            parser.exit(2, f"binlog-grammar: {e}\n")
        print(line)
        parser.exit(0)


def _drop_option(parser, string):
    """Take `string` off the parser (argparse's -h/--help, before -h becomes the host)."""
    action = parser._option_string_actions.pop(string, None)
    if action is None:
        return
    action.option_strings.remove(string)
    if not action.option_strings:
        parser._remove_action(action)
        for group in parser._action_groups:
            if action in group._group_actions:
                group._group_actions.remove(action)


def _alias(group, parser, long, short):
    """`short`, an option of its own storing what the option `long` stores (mysqlbinlog's short
    form; the long option's errors keep naming it alone)."""
    action = parser._option_string_actions[long]
    if action.nargs == 0:
        how = {"action": "store_true"}
    else:
        how = {"metavar": action.metavar or action.dest.upper(), "type": action.type,
               "action": "append" if isinstance(action.default, list) else "store"}
    group.add_argument(short, dest=action.dest, help=f"the same as {long} (mysqlbinlog's short "
                                                     "form)", **how)


def add_mysqlbinlog_options(parser):
    """mysqlbinlog's selection and remote options on `parser` (dump), after its own options and
    its set_defaults(func=...), which this wraps."""
    _drop_option(parser, "-h")
    _drop_option(parser, "--help")
    add_login_options(parser, title="remote server for -R (as mysqlbinlog is told: option files "
                                    "[client]/[mysqlbinlog], MYSQL_PWD)")
    g = parser.add_argument_group("mysqlbinlog's options")
    _alias(g, parser, "--database", "-d")
    _alias(g, parser, "--hexdump", "-H")
    _alias(g, parser, "--start-position", "-j")
    g.add_argument("-V", "--version", action=_Version, nargs=0,
                   help="print the version and the backend that runs, and exit")
    g.add_argument("-o", "--offset", type=int_in(0, (1 << 64) - 1, "a count of events"),
                   default=0, metavar="N", help="leave out the first N events (as mysqlbinlog)")
    # one rule, as in mariadb-binlog (--do-server-ids is its alias of --server-id): the last wins
    g.add_argument("--server-id", dest="do_server_ids", type=_server_ids, default=None,
                   metavar="ID", help="only the events of this server id (as mysqlbinlog)")
    g.add_argument("--do-server-ids", type=_server_ids, default=None, metavar="ID,ID...",
                   help="only the events of these server ids (as mariadb-binlog; a list "
                        "--server-id)")
    g.add_argument("--ignore-server-ids", type=_server_ids, default=None, metavar="ID,ID...",
                   help="leave out the events of these server ids (as mariadb-binlog)")
    g.add_argument("--do-domain-ids", type=_domain_ids, default=None, metavar="ID,ID...",
                   help="only the transactions of these GTID domains (as mariadb-binlog)")
    g.add_argument("--ignore-domain-ids", type=_domain_ids, default=None, metavar="ID,ID...",
                   help="leave out the transactions of these GTID domains (as mariadb-binlog)")
    g.add_argument("-r", "--result-file", metavar="FILE",
                   help="write the output to FILE instead of stdout; with --raw, the folder "
                        "(DIR/) the server's binlog files are written into")
    g.add_argument("-F", "--force-if-open", action="store_true",
                   help="read a file whose in-use flag is set (not closed by its server): "
                        "mysqlbinlog's default, and dump's always")
    g.add_argument("-R", "--read-from-remote-server", "--read-from-remote-source",
                   "--read-from-remote-master", action="store_true",
                   help="FILE names binlogs of the server (-h, -P, -u, -p, -S), read through the "
                        "replication protocol")
    g.add_argument("-t", "--to-last-log", action="store_true",
                   help="with -R: go on from FILE to the server's last binlog")
    g.add_argument("--stop-never", action="store_true",
                   help="with -R: wait for new events at the end of the last binlog "
                        "(implies --to-last-log)")
    g.add_argument("--raw", action="store_true",
                   help="with -R: write the server's binlog files byte for byte under -r DIR/ "
                        "instead of printing them")
    g.add_argument("--stop-never-slave-server-id", dest="replica_server_id", metavar="ID",
                   type=int, default=None,
                   help="with -R: the server id the connection replicates as")
    inner = parser.get_default("func")
    parser.set_defaults(func=lambda args: run(args, inner))


def run(args, inner) -> int:
    """dump with mysqlbinlog's options: the remote read, then `inner` (dump.run) into -r FILE."""
    remote = args.read_from_remote_server
    for flag, name in ((args.raw, "--raw"), (args.stop_never, "--stop-never"),
                       (args.to_last_log, "--to-last-log")):
        if flag and not remote:
            return _usage(args, f"{name} reads a server's binlogs: give -R "
                                "(--read-from-remote-server)")
    login = [name for name, given in (("-h/--host", args.host), ("-P/--port", args.port),
                                      ("-u/--user", args.user), ("-p/--password", args.password),
                                      ("--password-env", args.password_env),
                                      ("-S/--socket", args.socket),
                                      ("--defaults-file", args.defaults_file)) if given]
    if login and not remote:  # named, never shown: a value may be a password
        return _usage(args, f"{login[0]} is how -R reaches the server: give -R "
                            "(--read-from-remote-server), or leave it out")
    if remote and args.raw:
        return _raw(args)
    if remote:
        import tempfile  # -R only (not loaded by a dump of files)

        with tempfile.TemporaryDirectory(prefix="binlog-grammar-R-") as folder:
            status = _fetch(args, folder)
            if status:
                return status
            with _result_file(args.result_file):
                return _selected(args, inner)
    with _result_file(args.result_file):
        return _selected(args, inner)


def _server_ids(text: str) -> frozenset:
    """A comma-separated list of server ids (mariadb-binlog's --do/--ignore-server-ids)."""
    one = int_in(0, (1 << 32) - 1, "a server id")
    return frozenset(one(part.strip()) for part in str(text).split(",") if part.strip())


def _domain_ids(text: str) -> frozenset:
    """A comma-separated list of GTID domain ids (mariadb-binlog's --do/--ignore-domain-ids)."""
    one = int_in(0, (1 << 32) - 1, "a GTID domain id")
    return frozenset(one(part.strip()) for part in str(text).split(",") if part.strip())


def _kept_domains(args):
    """(a test of a GTID domain id, or None for every domain; an error message or None)."""
    keep, drop = args.do_domain_ids, args.ignore_domain_ids
    if keep is not None and drop is not None:
        return None, ("--ignore-domain-ids cannot be given with --do-domain-ids "
                      "(mariadb-binlog refuses both rules too)")
    if keep is not None:
        return keep.__contains__, None
    if drop is not None:
        return (lambda domain: domain not in drop), None
    return None, None


def _kept_ids(args):
    """(ids kept or None, ids left out, None) from --server-id or --do-server-ids (one rule)
    and --ignore-server-ids; an error message when a do rule and an ignore rule are both given,
    as mariadb-binlog refuses them."""
    keep = args.do_server_ids
    drop = args.ignore_server_ids or frozenset()
    if keep is not None and drop:
        return None, None, ("--ignore-server-ids cannot be given with --do-server-ids or "
                            "--server-id (mariadb-binlog refuses both rules too)")
    return keep, drop, None


def _selected(args, inner) -> int:
    """inner(args) with --offset and the server id rules applied to the stream dump opens."""
    keep, drop, error = _kept_ids(args)
    domain, error = (None, error) if error else _kept_domains(args)
    if error:
        return _usage(args, error)
    if not args.offset and keep is None and not drop and domain is None:
        return inner(args)
    from .. import native
    from . import reading

    dump_module = sys.modules[inner.__module__]  # cli/dump.py, which imports this module

    native.select("python")  # event by event: no compiled lane writes past the filter
    args.jobs = 1
    opened = reading.open_input

    def open_input(a):
        stream, progress = opened(a)
        stream.events = _filter(stream.events, args.offset, keep, drop, domain)
        return stream, progress

    # dump's text imported it by name; the replay form (replay_opts) imports it when it runs
    dump_module.open_input = reading.open_input = open_input
    try:
        return inner(args)
    finally:
        dump_module.open_input = reading.open_input = opened


def _filter(events, offset, keep, drop, domain=None):
    """The events of `events()` mariadb-binlog keeps with --offset, its server id rules
    (`keep`: the ids kept, None for all; `drop`: the ids left out) and its GTID domain rules
    (`domain`: does a domain pass, None for all). A domain rule leaves out a MariaDB GTID of
    another domain and every event after it up to the next GTID that passes (or the next file),
    as mariadb-binlog does: whole transactions, and what lies between them."""
    def kept():
        n, passing = 0, True
        for se in events():
            n += 1
            name = se.event.name
            if name == "FORMAT_DESCRIPTION_EVENT":
                passing = True
                yield se
                continue
            if domain is not None:
                d = se.event.data
                if name == "GTID_EVENT" and d is not None:  # (a damaged one read as bytes: as is)
                    passing = domain(int(d.domain_id))
                if not passing:
                    continue
            if n <= offset:
                continue
            if name != "ROTATE_EVENT":
                sid = int(se.event.header["server_id"])
                if (keep is not None and sid not in keep) or sid in drop:
                    continue
            yield se
    return kept


def _usage(args, message) -> int:
    parser = getattr(args, "subparser", None)
    if parser is not None:
        parser.error(message)
    print(f"binlog-grammar dump: {message}", file=sys.stderr)
    return 2


@contextlib.contextmanager
def _result_file(path):
    """stdout (file descriptor 1, so the compiled lanes' writes go there too) into `path`."""
    if not path:
        yield
        return
    sys.stdout.flush()
    saved = os.dup(1)
    try:
        fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o644)
    except OSError as e:
        os.close(saved)
        raise SystemExit(f"binlog-grammar dump: --result-file: {e}")
    try:
        os.dup2(fd, 1)
        os.close(fd)
        yield
    finally:
        sys.stdout.flush()
        os.dup2(saved, 1)
        os.close(saved)


def _source_options(args, until_now) -> dict:
    """ReplicationSource keywords of the login options: the local server's socket file for
    localhost (-S, the option files' socket, the usual paths) as mysqlbinlog connects, else TCP."""
    from .login import login
    from .options import UsageError

    try:
        conn = login(args)
    except UsageError as e:
        raise SystemExit(f"binlog-grammar dump: {e}")
    host = "127.0.0.1" if conn["host"] == "localhost" else conn["host"]
    return dict(host=host, port=conn["port"], user=conn["user"], password=conn["password"],
                unix_socket=conn.get("unix_socket"),
                server_id=args.replica_server_id, until_now=until_now,
                verify_checksum=not args.no_checksum)


def _copy(args, folder, until_now):
    """The server's binlogs from args.files[0] on, copied into `folder` (RawBackup): the names
    written, or an exit status."""
    from ..errors import ReplicationError
    from ..replication.backup import RawBackup

    names = [os.path.basename(f) for f in args.files]
    try:
        backup = RawBackup(folder, file=names[0], **_source_options(args, until_now))
        backup.run()
    except (OSError, ValueError, ReplicationError) as e:
        print(f"binlog-grammar dump: -R: {e}", file=sys.stderr)
        return 1
    return backup.files


def _fetch(args, folder) -> int:
    """-R: the named binlogs (or, with --to-last-log, all from the first) into `folder`, and
    args.files pointed at the copies; 0, or an exit status."""
    from .options import resolve_positions

    names = [os.path.basename(f) for f in args.files]
    written = _copy(args, folder, until_now=not args.stop_never)
    if isinstance(written, int):
        return written
    if args.to_last_log or args.stop_never:
        keep = [n for n in written]
    else:
        missing = [n for n in names if n not in written]
        if missing:
            print(f"binlog-grammar dump: -R: the server has no binlog {missing[0]} "
                  f"(after {names[0]})", file=sys.stderr)
            return 1
        keep = names
    args.files = [os.path.join(folder, n) for n in keep]
    if args.start_position is not None or args.stop_position is not None:
        problem = resolve_positions(args, args.start_position, args.stop_position)
        if problem:
            return _usage(args, problem)
    return 0


def _raw(args) -> int:
    """-R --raw -r DIR/: the server's binlog files byte for byte in DIR (replication/backup.py);
    without --to-last-log or --stop-never only the named ones are kept."""
    folder = args.result_file or "."
    if not (folder.endswith(os.sep) or os.path.isdir(folder)):
        return _usage(args, "--raw writes the server's files under their names: give -r DIR/ "
                            "(a folder, with its trailing /)")
    os.makedirs(folder, exist_ok=True)
    before = set(os.listdir(folder))
    written = _copy(args, folder, until_now=not args.stop_never)
    if isinstance(written, int):
        return written
    if not (args.to_last_log or args.stop_never):
        names = {os.path.basename(f) for f in args.files}
        for name in written:
            if name not in names and name not in before:
                os.remove(os.path.join(folder, name))
    return 0
