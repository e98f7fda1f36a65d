"""binlog_grammar.open_stream: the one call that opens binlogs, wherever they are.

    from binlog_grammar import open_stream

    s = open_stream("logs/mariadb-bin.0*", tables=["shop.orders"])
    for change in s.row_changes():
        print(change.gtid, change.op, change.table, change.after)

A source is a path (str or os.PathLike), a list of them, a glob, a `.index` file, a
replication.ReplicationSource, or a server's address as `mysql://user:password@host:port` (also
`mariadb://`) with the ReplicationSource's options as query parameters (`?gtid=0-1-5&until_now=1`,
`?file=mariadb-bin.000002&pos=4&blocking=0`). Filters are a stream.Filters or its fields as
keywords; the Stream's other options are keywords too.
"""
from __future__ import annotations

import dataclasses
import urllib.parse
from typing import Optional

from ..binlog import api
from ..binlog.stream import Filters, Stream, open_stream as open_files
from ..replication import ReplicationSource, open_replication_stream

FILTER_FIELDS = tuple(f.name for f in dataclasses.fields(Filters))
FILE_OPTIONS = ("verify_checksum", "schemas", "skip_damaged", "progress", "server_version",
                "follow_rotate", "raw_rows", "cut")
# ReplicationSource options a server URL's query may set, and how their text is read
_URL_OPTIONS = {"file": str, "pos": int, "gtid": str, "server_id": int, "heartbeat": float,
                "connect_timeout": float, "read_timeout": float, "until_now": "bool",
                "blocking": "bool", "reconnect": "bool", "verify_checksum": "bool",
                "require_row_format": "bool"}
_TRUE, _FALSE = {"1", "true", "yes", "on"}, {"0", "false", "no", "off"}


def open_stream(source, filters: Optional[Filters] = None, **options) -> Stream:
    """Open `source` for reading and return a stream.Stream.

    source: a binlog file (str or os.PathLike), a list of files (read in the order given), a
    glob (`"logs/mariadb-bin.0*"`, its files in binlog order), a `.index` file (the files it
    lists), a replication.ReplicationSource, or a server as `"mysql://user:pw@host:3306"` with
    ReplicationSource options as query parameters (`?gtid=0-1-5`, `?until_now=1`).

    filters: a Filters, or its fields as keywords (`tables=["shop.orders"]`,
    `start_datetime="2026-01-31 12:00:00"`, `include_gtids="0-1-1-100"`); both at once is an error.
    Other keywords: for files, verify_checksum, schemas, skip_damaged, progress,
    server_version, follow_rotate, raw_rows, cut (see binlog.stream.open_stream); for a server,
    schemas.

    The Stream gives `events()` (StreamEvent: event, table, gtid, changes), `transactions()`
    (Transaction: gtid, file, start_pos, end_pos, end, changes) and `row_changes()`
    (binlog.api.Change: op, db, table, before, after, gtid, file, pos). An unknown keyword,
    a wrong type or a filter that could match nothing raises TypeError or ValueError."""
    flt_kw = {k: options.pop(k) for k in list(options) if k in FILTER_FIELDS}
    if flt_kw and filters is not None:
        raise TypeError("open_stream() takes a Filters or filter keywords, not both")
    if filters is not None and not isinstance(filters, Filters):
        raise TypeError(f"open_stream(filters=...) takes a Filters, not {type(filters).__name__}")
    flt = filters if filters is not None else Filters(**flt_kw)
    if isinstance(source, str) and source.startswith(("mysql://", "mariadb://")):
        source = source_from_url(source)
    if isinstance(source, ReplicationSource):
        unknown = sorted(set(options) - {"schemas"})
        if unknown:
            raise TypeError(f"open_stream() of a server takes no {', '.join(unknown)} (its "
                            f"options are the ReplicationSource's)")
        if flt.start_position is not None or flt.stop_position is not None:
            raise ValueError("position filters do not apply to a server: give the "
                             "ReplicationSource a file and pos (or until=(file, pos)) instead")
        return open_replication_stream(source, flt, options.get("schemas"))
    unknown = sorted(set(options) - set(FILE_OPTIONS))
    if unknown:
        raise TypeError(f"open_stream() got unknown keyword(s) {', '.join(unknown)}; filters: "
                        f"{', '.join(FILTER_FIELDS)}; options: {', '.join(FILE_OPTIONS)}")
    return open_files(api.paths_of(source), flt, **options)


def source_from_url(url: str) -> ReplicationSource:
    """A ReplicationSource from `mysql://user:password@host:port?option=value&...`."""
    u = urllib.parse.urlsplit(url)
    kwargs = {}
    for key, values in urllib.parse.parse_qs(u.query, keep_blank_values=True).items():
        kind = _URL_OPTIONS.get(key)
        if kind is None:
            raise ValueError(f"unknown option {key!r} in a server URL (options: "
                             f"{', '.join(_URL_OPTIONS)})")
        text = values[-1]
        if kind == "bool":
            if text.lower() not in _TRUE | _FALSE:
                raise ValueError(f"server URL option {key}={text!r}: write 1 or 0")
            kwargs[key] = text.lower() in _TRUE
        else:
            try:
                kwargs[key] = kind(text)
            except ValueError:
                raise ValueError(f"server URL option {key}={text!r} is not a "
                                 f"{kind.__name__}") from None
    password = urllib.parse.unquote(u.password) if u.password is not None else None
    return ReplicationSource(u.hostname or "127.0.0.1", u.port or 3306,
                             urllib.parse.unquote(u.username or "root"), password, **kwargs)
