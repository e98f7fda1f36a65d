"""binlog-grammar: MySQL and MariaDB binary logs, parsed by structs generated from YAML specs.

The public surface, importable from here; everything else is internal and may move
(binlog_grammar/README.md maps the package):

    from binlog_grammar import open_stream, Filters

    s = open_stream(["mariadb-bin.index"], Filters(tables=["shop.orders"]))
    for tx in s.transactions():          # Transaction: gtid, file, start_pos, end_pos, end
        for change in tx.changes:        # RowChange: op (c/u/d), db, table, before, after
            print(tx.gtid, change.op, change.table, change.after)

    from binlog_grammar import ReplicationSource, open_replication_stream

    src = ReplicationSource("127.0.0.1", 3306, "repl", password=pw, until_now=True)
    for se in open_replication_stream(src).events():
        print(se.event.name, se.changes)

Every error the package raises for bad input is a BinlogGrammarError: SpecError for a spec (file
and line), BinlogError for a binlog's bytes (file, offset, event type; TruncatedError,
ChecksumError, EventFormatError, UndecodableRowsError), ReplicationError for a server.

Names are loaded when first used, so that `import binlog_grammar` reads no generated module.
"""
from __future__ import annotations

import importlib

from .errors import (BinlogError, BinlogGrammarError, ChecksumError, EventFormatError,
                     ReplicationError, SpecError, TruncatedError, UndecodableRowsError)

__version__ = "0.1.0"

# public name -> the module that defines it
_LAZY = {
    "open_stream": "binlog_grammar.binlog.stream",
    "Filters": "binlog_grammar.binlog.stream",
    "Stream": "binlog_grammar.binlog.stream",
    "StreamEvent": "binlog_grammar.binlog.stream",
    "Transaction": "binlog_grammar.binlog.stream",
    "RowChange": "binlog_grammar.binlog.rows",
    "load_schemas": "binlog_grammar.binlog.rows",
    "BinlogFile": "binlog_grammar.binlog.reader",
    "ReplicationSource": "binlog_grammar.replication",
    "open_replication_stream": "binlog_grammar.replication",
}

__all__ = sorted([*_LAZY, "BinlogError", "BinlogGrammarError", "ChecksumError",
                  "EventFormatError", "ReplicationError", "SpecError", "TruncatedError",
                  "UndecodableRowsError", "__version__"])


def __getattr__(name: str):
    module = _LAZY.get(name)
    if module is None:
        raise AttributeError(f"module 'binlog_grammar' has no attribute {name!r}")
    value = getattr(importlib.import_module(module), name)
    globals()[name] = value
    return value


def __dir__():
    return __all__
