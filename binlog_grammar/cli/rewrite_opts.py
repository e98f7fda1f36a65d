"""Two of mariadb-binlog's options on dump that change what the stream hands on:
`--rewrite-db='from->to'` (repeatable: binlog/rewrite.py reads the rules and rebuilds the TABLE_MAP
events; the stream applies them as it reads, binlog.stream.Stream.rewrite, so the text, JSON lines
and the replayable output name the new database) and `--print-table-metadata` (the `# Columns` and
`# Primary Key` lines after each TABLE_MAP, output/table_metadata.py). With either, the compiled
lanes and --jobs stand by: the events are read in this process."""
from __future__ import annotations

import argparse


def rewrite_rule(text):
    """One --rewrite-db text as a (from, to) pair; mariadb-binlog's syntax."""
    from ..binlog.rewrite import parse_rule

    try:
        return parse_rule(text)
    except ValueError as e:
        raise argparse.ArgumentTypeError(f"{text!r}: {e}")


def add_rewrite_options(parser, table_metadata=True):
    """--rewrite-db, and --print-table-metadata where the output is dump's text."""
    parser.add_argument("--rewrite-db", action="append", default=[], type=rewrite_rule,
                        metavar="'FROM->TO'",
                        help="name database TO wherever the binlog names FROM: the default "
                             "database of statements and the TABLE_MAP events, which are rebuilt "
                             "(new length and CRC32), as mariadb-binlog does; repeatable, the "
                             "first rule for a name wins; the events are read in one process with it")
    if not table_metadata:
        parser.set_defaults(rewrite_rules=rules_of)
        return
    parser.add_argument("--print-table-metadata", action="store_true",
                        help="after each TABLE_MAP event, its columns (names, types, UNSIGNED, "
                             "NOT NULL, ENUM/SET members, character sets) and primary key, as "
                             "mariadb-binlog prints them")
    parser.set_defaults(rewrite_rules=rules_of)


def rules_of(args):
    """The binlog.rewrite.Rules of args.rewrite_db, or None."""
    from ..binlog.rewrite import Rules

    pairs = getattr(args, "rewrite_db", None) or []
    return Rules(pairs) if pairs else None
