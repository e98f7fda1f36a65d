"""binlog-grammar: MySQL and MariaDB binary logs, parsed by structs generated from YAML specs.

The public surface, importable from here; everything else is internal and may move
(binlog_grammar/README.md maps the package; the README's "Python API" section has examples):

    from binlog_grammar import open_stream

    s = open_stream("logs/mariadb-bin.index", tables=["shop.orders"])   # files, a glob, a server
    for change in s.row_changes():       # Change: op (c/u/d), db, table, before, after, gtid, pos
        print(change.gtid, change.op, change.table, change.after)
    for tx in s.transactions():          # Transaction: gtid, file, start_pos, end_pos, end, changes
        ...
    for se in s.events():                # StreamEvent: event (file, offset, name), table, gtid
        ...

    s = open_stream("mysql://repl:pw@127.0.0.1:3306?until_now=1")   # a live server
    s = open_stream(ReplicationSource("127.0.0.1", 3306, "repl", password=pw, gtid="0-1-100"))

Filters (or its fields as open_stream keywords) are checked when made: `tables="shop.items"` is
one table, `tables=["items"]` is `items` in any database, datetimes may be ISO text (UTC unless an
offset is given); a wrong type or value raises TypeError or ValueError.

python-mysql-replication's API runs on this package too: `binlog_grammar.compat.pymysqlreplication`
(BinLogStreamReader and its event classes), or `binlog_grammar.compat.install()` and then
`import pymysqlreplication` unchanged.

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
    "open_stream": "binlog_grammar.compat.api",
    "Change": "binlog_grammar.binlog.api",
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
