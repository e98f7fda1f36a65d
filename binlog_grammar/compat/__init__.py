"""Where users of other tools find this package: the public reading API's one entry point
(`api.py`: binlog_grammar.open_stream) and python-mysql-replication's API over this package's
reader and replication client (the package `pymysqlreplication/`: BinLogStreamReader and the event classes; `install()` makes
`import pymysqlreplication` resolve to it).

    from binlog_grammar.compat import pymysqlreplication     # or: install(), then
    from pymysqlreplication import BinLogStreamReader        # the same script, unchanged
"""
from __future__ import annotations

import sys


def install(force: bool = False):
    """Make `import pymysqlreplication` (and its submodules `.row_event`, `.event`,
    `.binlogstream`) resolve to binlog_grammar.compat.pymysqlreplication, so that a script
    written for python-mysql-replication runs unchanged. When the real library is already
    imported it is left in place unless `force`. Returns the module now under that name."""
    import importlib

    from . import pymysqlreplication as shim

    if "pymysqlreplication" in sys.modules and not force \
            and sys.modules["pymysqlreplication"] is not shim:
        return sys.modules["pymysqlreplication"]
    sys.modules["pymysqlreplication"] = shim
    for sub in ("row_event", "event", "binlogstream"):
        sys.modules[f"pymysqlreplication.{sub}"] = importlib.import_module(f"{shim.__name__}.{sub}")
    return shim


__all__ = ["install"]
