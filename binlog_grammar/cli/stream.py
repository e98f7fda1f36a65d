"""`binlog-grammar stream`: a live server's binlog over the replication protocol
(binlog_grammar.replication), printed as `dump` prints files."""
from __future__ import annotations

import os
import sys

from .envelopes import add_options as add_envelope_options
from .envelopes import output_format
from .options import add_tls_options, add_utc_option, gtid_position, int_in, schema_file, seconds
from .parser import unset_variable
from .reading import stdout


def add(sub):
    st = sub.add_parser("stream", help="read a live server's binlog as a replica and print it as "
                                       "dump does")
    c = st.add_argument_group("server")
    c.add_argument("--host", default="127.0.0.1", help="server host (default 127.0.0.1)")
    c.add_argument("--port", type=int_in(1, 65535, "a port"), default=3306,
                   help="server port (default 3306)")
    c.add_argument("--user", default="root", help="account with REPLICATION SLAVE (and BINLOG MONITOR / "
                                                  "REPLICATION CLIENT for --until-now)")
    c.add_argument("--password-env", metavar="VAR",
                   help="environment variable holding the password (never on the command line)")
    c.add_argument("--server-id", type=int_in(1, (1 << 32) - 1, "a server id"),
                   help="replica server id (default: a random one, kept across reconnects)")
    w = st.add_argument_group("where to start and stop")
    w.add_argument("--file", help="binlog file to start in (default: the first one)")
    w.add_argument("--pos", type=int_in(4, (1 << 32) - 1, "a binlog position"),  # COM_BINLOG_DUMP u32le
                   help="position in --file to start at (default 4)")
    w.add_argument("--gtid", type=gtid_position,
                   help="start after this GTID position: MariaDB domain-server-seq,... or MySQL uuid:1-100")
    w.add_argument("--until-now", action="store_true",
                   help="stop at the end of the binlog as it is when connecting (else follow new events)")
    o = st.add_argument_group("output")
    o.add_argument("--format", choices=["text", "jsonl"], default="text", help="as dump: text or jsonl")
    add_utc_option(o)
    o.add_argument("--rows-only", action="store_true", help="jsonl: only row changes")
    add_envelope_options(o)
    o.add_argument("--database", action="append", default=[], help="keep only this database (repeatable)")
    o.add_argument("--table", action="append", default=[],
                   help="keep only db.table (shell patterns; repeatable)")
    o.add_argument("--exclude-table", action="append", default=[],
                   help="drop db.table (shell patterns; repeatable)")
    o.add_argument("--schema", type=schema_file,
                   help="JSON or YAML file of table schemas for binlogs without full metadata")
    o.add_argument("--no-checksum", action="store_true", help="do not verify CRC32s")
    o.add_argument("--raw", action="store_true",
                   help="a backup: write the server's binlog files byte for byte into the folder "
                        "of --result-file, following rotations and restarts, going on where an "
                        "earlier backup there stopped (mysqlbinlog -R --raw --stop-never)")
    o.add_argument("--result-file", metavar="DIR",
                   help="--raw: the folder the binlog files are written to")
    o.add_argument("--any-binlog-format", action="store_true",
                   help="read a server whose binlog_format is not ROW (row changes may be missing)")
    n = st.add_argument_group("connection")
    n.add_argument("--heartbeat", type=seconds(), default=5.0, help="heartbeat period in seconds (default 5)")
    n.add_argument("--connect-timeout", type=seconds(), default=10.0,
                   help="seconds to connect and log in (default 10)")
    n.add_argument("--read-timeout", type=seconds(), default=30.0,
                   help="seconds to wait for an answer (default 30)")
    n.add_argument("--no-reconnect", action="store_true", help="end with an error when the connection drops")
    n.add_argument("--reconnect-timeout", type=seconds(False), default=None,
                   help="give up reconnecting after this many seconds (default: never while "
                        "following, 60 with --until-now); attempts back off from 0.1 s to 5 s")
    add_tls_options(n, "TLS, as the mysql client's --ssl-mode (default preferred)",
                    "server's RSA public key, to send the password without TLS "
                    "(caching_sha2_password, sha256_password)",
                    "ask the server for its RSA public key when needed (trusts the network)")
    st.set_defaults(func=run, contradictions=contradictions)


def contradictions(args):
    """Where to start, given twice; --raw with what it does not take: what is wrong, or None."""
    if args.raw:
        if not args.result_file:
            return "--raw writes binlog files: give the folder with --result-file DIR"
        odd = [o for o, given in (("--pos", args.pos is not None), ("--gtid", args.gtid),
                                  ("--format", args.format != "text"), ("--rows-only", args.rows_only),
                                  ("--database", args.database), ("--table", args.table),
                                  ("--exclude-table", args.exclude_table), ("--schema", args.schema))
               if given]
        if odd:
            return (f"--raw copies whole files from where the folder's copy ends (or --file's "
                    f"start): {', '.join(odd)} do not apply")
    elif args.result_file:
        return "--result-file is the folder of --raw"
    if args.gtid is not None and args.file is not None:
        return "give either --file (and --pos) or --gtid, not both"
    if args.gtid is not None and args.pos is not None:
        return "--pos is a position in --file; with --gtid the server finds the position"
    return None


def run(args) -> int:
    """Print a server's binlog live, as `dump` prints files."""
    import logging

    from ..binlog.rows import load_schemas
    from ..binlog.stream import Filters
    from ..replication import ReplicationSource, open_replication_stream
    from ..replication.source import log

    try:
        fmt, options = output_format(args)
    except ValueError as e:
        print(f"binlog-grammar: stream: {e}", file=sys.stderr)
        return 2
    password = None
    if args.password_env:
        problem = unset_variable(args.password_env, "--password-env")
        if problem:
            print(f"binlog-grammar: stream: {problem}", file=sys.stderr)
            return 2
        password = os.environ[args.password_env]
    schemas = None
    if args.schema:
        try:
            schemas = load_schemas(args.schema)
        except (OSError, ValueError) as e:
            print(f"binlog-grammar: --schema: {e}", file=sys.stderr)
            return 2
    handler = logging.StreamHandler(sys.stderr)
    handler.setFormatter(logging.Formatter("binlog-grammar: %(message)s"))
    log.addHandler(handler)
    log.setLevel(logging.WARNING)
    if args.raw:
        try:
            return _raw(args, password)
        finally:
            log.removeHandler(handler)
    try:
        src = ReplicationSource(
            file=args.file, pos=args.pos if args.pos is not None else 4, gtid=args.gtid,
            require_row_format=not args.any_binlog_format, **_source_options(args, password))
    except ValueError as e:
        print(f"binlog-grammar: stream: {e}", file=sys.stderr)
        return 2
    flt = Filters(databases=args.database, tables=args.table, exclude_tables=args.exclude_table)
    stream = open_replication_stream(src, flt, schemas)
    out = stdout()
    # one writer of the format for the whole stream (output.formats), as dump's: what an event
    # says about later ones is kept; the header is written with the first event, so that a
    # connection that fails prints nothing on stdout, and the footer after the last
    writer = fmt.writer(rows_only=args.rows_only, options=options)
    started = False
    try:
        for se in stream.events():
            if not started:
                out.write("".join(line + "\n" for line in fmt.header))
                started = True
            for line in writer.lines(se):
                out.write(line + "\n")
            out.flush()
    finally:
        src.stop()
        log.removeHandler(handler)
        if started:
            out.write("".join(line + "\n" for line in writer.end()))
            out.write("".join(line + "\n" for line in fmt.footer))
        out.flush()
    return 0


def _source_options(args, password) -> dict:
    """The ReplicationSource keywords of the server and connection options (both outputs)."""
    from ..replication import TLSOptions

    return dict(
        host=args.host, port=args.port, user=args.user, password=password,
        server_id=args.server_id, until_now=args.until_now, heartbeat=args.heartbeat,
        connect_timeout=args.connect_timeout, read_timeout=args.read_timeout,
        reconnect=not args.no_reconnect, reconnect_timeout=args.reconnect_timeout,
        tls=TLSOptions(args.ssl_mode, args.ssl_ca, args.ssl_cert, args.ssl_key,
                       allow_cleartext=args.enable_cleartext_plugin),
        server_public_key=args.server_public_key,
        get_server_public_key=args.get_server_public_key, verify_checksum=not args.no_checksum)


def _raw(args, password) -> int:
    """--raw: the backup (replication/backup.py) until --until-now's end, or until interrupted."""
    from ..replication.backup import RawBackup

    try:
        backup = RawBackup(args.result_file, file=args.file, **_source_options(args, password))
    except (OSError, ValueError) as e:
        print(f"binlog-grammar: stream --raw: {e}", file=sys.stderr)
        return 2
    backup.run()
    return 0
