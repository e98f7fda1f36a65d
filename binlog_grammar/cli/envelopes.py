"""The JSON-lines envelope options `dump` and `stream` share: `--envelope native|debezium` and
`--debezium-option KEY=VALUE` (Debezium's own property names, binlog_grammar.output.debezium),
and the output format (binlog_grammar.output.formats) they name."""
from __future__ import annotations

import argparse


def key_value(text: str):
    key, sep, value = text.partition("=")
    if not sep or not key.strip():
        raise argparse.ArgumentTypeError(f"expected KEY=VALUE, got {text!r}")
    return key.strip(), value.strip()


def add_options(group) -> None:
    """--envelope and --debezium-option on a parser or argument group."""
    group.add_argument("--envelope", choices=["native", "debezium"], default="native",
                       help="jsonl: native (every event, readable values; the default) or debezium "
                            "(each row change as the Debezium MySQL/MariaDB connector emits it)")
    group.add_argument("--debezium-option", action="append", default=[], type=key_value,
                       metavar="KEY=VALUE",
                       help="a Debezium connector property for --envelope debezium (repeatable): "
                            "topic.prefix, decimal.handling.mode, time.precision.mode, "
                            "binary.handling.mode, bigint.unsigned.handling.mode, "
                            "provide.transaction.metadata, tombstones.on.delete, include.query, "
                            "include.schema.changes, connector, kafka.records, schemas.enable, "
                            "enable.time.adjuster; snapshot.mode=initial|initial_only with "
                            "database.hostname, database.port, database.user, database.password "
                            "(or MYSQL_PWD), database.include.list, table.include.list: the "
                            "tables' rows read from that server first (docs/debezium.md)")


def output_format(args):
    """(format, options) for the parsed arguments, or raises ValueError saying what is wrong:
    the registry's Format and the writer's options, checked before anything is read."""
    from ..output import formats

    options = dict(args.debezium_option or ())
    if options and args.envelope != "debezium":
        raise ValueError("--debezium-option needs --envelope debezium")
    if args.envelope != "native" and args.format != "jsonl":
        raise ValueError("--envelope is for --format jsonl")
    fmt = formats.lookup(args.format, args.envelope)
    fmt.writer(rows_only=args.rows_only, options=options)  # its options checked now
    if options.get("snapshot.mode", "no_data").strip().lower() != "no_data":
        fmt = _with_snapshot(fmt, options)
    return fmt, options


def _with_snapshot(fmt, options):
    """The format whose writers take their snapshot (snapshot.mode=initial) from the server
    that the connector's own properties name: database.hostname, database.port (3306),
    database.user, database.password (else MYSQL_PWD), database.include.list,
    table.include.list."""
    import dataclasses
    import os

    if not options.get("database.hostname"):
        raise ValueError("snapshot.mode=initial reads the tables from a server: give "
                         "--debezium-option database.hostname=HOST (and database.port, "
                         "database.user, database.password or MYSQL_PWD)")
    try:
        port = int(options.get("database.port") or 3306)
    except ValueError:
        raise ValueError("database.port: expected a port number") from None

    def source():
        from ..replication.connection import Connection
        from ..replication.snapshot import read_snapshot

        conn = Connection(host=options["database.hostname"], port=port,
                          user=options.get("database.user") or "root",
                          password=options.get("database.password", os.environ.get("MYSQL_PWD")))
        conn.connect()
        try:
            return read_snapshot(conn, _list(options.get("database.include.list")),
                                 _list(options.get("table.include.list")))
        finally:
            conn.close()

    def make(rows_only, opts):
        writer = fmt.make(rows_only, opts)
        writer.snapshot_source = source
        return writer

    return dataclasses.replace(fmt, make=make)


def _list(text):
    return [p for p in str(text).split(",") if p.strip()] if text else None
