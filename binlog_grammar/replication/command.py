"""The `stream` command: a server's binlog printed live, as `dump` prints files. (It moves to
the CLI package when cli.py is split.)"""
from __future__ import annotations

import logging
import os

from .connection import TLSOptions
from .source import ReplicationSource, log
from .stream import open_replication_stream


def cmd_stream(args) -> int:
    """binlog-grammar stream: print a server's binlog live, as `dump` prints files."""
    import sys

    from ..output import dump
    from ..binlog.rows import load_schemas
    from ..binlog.stream import Filters

    password = None
    if args.password_env:
        password = os.environ.get(args.password_env)
        if password is None:
            print(f"binlog-grammar: stream: the environment variable {args.password_env} "
                  f"(--password-env) is not set", file=sys.stderr)
            return 2
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
    try:
        src = ReplicationSource(
            args.host, args.port, args.user, password, server_id=args.server_id, file=args.file,
            pos=args.pos if args.pos is not None else 4, gtid=args.gtid, until_now=args.until_now,
            heartbeat=args.heartbeat, connect_timeout=args.connect_timeout,
            read_timeout=args.read_timeout, reconnect=not args.no_reconnect,
            reconnect_timeout=args.reconnect_timeout,
            tls=TLSOptions(args.ssl_mode, args.ssl_ca, args.ssl_cert, args.ssl_key),
            server_public_key=args.server_public_key,
            get_server_public_key=args.get_server_public_key,
            verify_checksum=not args.no_checksum, require_row_format=not args.any_binlog_format)
    except ValueError as e:
        print(f"binlog-grammar: stream: {e}", file=sys.stderr)
        return 2
    flt = Filters(databases=args.database, tables=args.table, exclude_tables=args.exclude_table)
    stream = open_replication_stream(src, flt, schemas)
    out = sys.stdout
    try:
        out.reconfigure(errors="surrogateescape")
    except (AttributeError, ValueError):
        pass
    try:
        for se in stream.events():
            if args.format == "jsonl":
                if args.rows_only and not (se.event.type is not None and se.event.type.row_op):
                    continue
                lines = dump.jsonl_lines(se)
            else:
                lines = dump.text_lines(se)
            for line in lines:
                out.write(line + "\n")
            out.flush()
    finally:
        src.stop()
        log.removeHandler(handler)
        out.flush()
    return 0
