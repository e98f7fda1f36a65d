"""What a stream.Filters is given, checked and put in the form the stream reads, once, when it is
made (from Python, the CLI or the Spark options alike), so that an easy mistake is either taken
in its obvious meaning or refused with a message, never a filter that silently keeps nothing:

- names: `tables="shop.items"` (one str) is the list `["shop.items"]`; a set or tuple is a list;
  anything else (an int, a list of ints) is refused.
- a table without its database (`items`, `ord*`): the table in any database, `*.items`, as
  mariadb-binlog's `--table` is a table name (`db.table` patterns stay as they are).
- datetimes: a datetime (naive is UTC), a date (its midnight, UTC), ISO text as `--start-datetime`
  takes it (`2026-01-31 12:00:00`, `2026-01-31T12:00:00+02:00`, a trailing `Z`), or seconds since
  the epoch (int or float); anything else is refused.
- GTIDs: a GtidSet or its text (`0-1-100,0-2-5`, `uuid:1-5`).
- positions: a non-negative int (bool refused).
"""
from __future__ import annotations

import datetime as _dt
from typing import Optional

from .gtid import GtidSet

UTC = _dt.timezone.utc


def names(value, what: str) -> list:
    """A list of names or shell patterns from None, one str, or an iterable of str."""
    if value is None:
        return []
    if isinstance(value, (str, bytes)):
        value = [value]
    try:
        items = list(value)
    except TypeError:
        raise TypeError(f"Filters({what}=...) takes a name or a list of names, not "
                        f"{type(value).__name__} {value!r}") from None
    for item in items:
        if not isinstance(item, str) or not item:
            raise TypeError(f"Filters({what}=...): {item!r} is not a name (a non-empty str)")
    return items


def table_patterns(value, what: str) -> list:
    """`db.table` patterns; a name without a dot is that table in any database (`*.name`)."""
    return [p if "." in p else f"*.{p}" for p in names(value, what)]


def when(value, what: str) -> Optional[_dt.datetime]:
    """A datetime with a time zone (UTC unless one was given), or None."""
    if value is None:
        return None
    if isinstance(value, bool):
        raise TypeError(f"Filters({what}=...) takes a datetime, not a bool")
    if isinstance(value, _dt.datetime):
        d = value
    elif isinstance(value, _dt.date):
        d = _dt.datetime(value.year, value.month, value.day)
    elif isinstance(value, (int, float)):
        d = _dt.datetime.fromtimestamp(value, UTC)
    elif isinstance(value, str):
        text = value.strip()
        if text.endswith(("Z", "z")):
            text = text[:-1] + "+00:00"
        try:
            d = _dt.datetime.fromisoformat(text)
        except ValueError:
            raise ValueError(f"Filters({what}={value!r}): not a date and time (write "
                             f"'2026-01-31 12:00:00', UTC unless an offset is given)") from None
    else:
        raise TypeError(f"Filters({what}=...) takes a datetime, a date, ISO text or seconds since "
                        f"the epoch, not {type(value).__name__}")
    return d if d.tzinfo else d.replace(tzinfo=UTC)


def gtids(value, what: str) -> Optional[GtidSet]:
    if value is None or isinstance(value, GtidSet):
        return value
    if isinstance(value, str):
        try:
            return GtidSet(value)
        except ValueError as e:
            raise ValueError(f"Filters({what}=...): {e}") from None
    raise TypeError(f"Filters({what}=...) takes a GtidSet or its text ('0-1-100', 'uuid:1-5'), "
                    f"not {type(value).__name__}")


def position(value, what: str) -> Optional[int]:
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, int):
        raise TypeError(f"Filters({what}=...) takes a byte offset (an int), not "
                        f"{type(value).__name__} {value!r}")
    if value < 0:
        raise ValueError(f"Filters({what}={value}): a byte offset is not negative")
    return value


def check(flt) -> None:
    """Check and normalise the fields of a stream.Filters in place."""
    flt.start_position = position(flt.start_position, "start_position")
    flt.stop_position = position(flt.stop_position, "stop_position")
    flt.start_datetime = when(flt.start_datetime, "start_datetime")
    flt.stop_datetime = when(flt.stop_datetime, "stop_datetime")
    if flt.start_datetime and flt.stop_datetime and flt.stop_datetime <= flt.start_datetime:
        raise ValueError(f"Filters: stop_datetime {flt.stop_datetime.isoformat(' ')} is not after "
                         f"start_datetime {flt.start_datetime.isoformat(' ')}: nothing would be kept")
    flt.include_gtids = gtids(flt.include_gtids, "include_gtids")
    flt.exclude_gtids = gtids(flt.exclude_gtids, "exclude_gtids")
    flt.databases = names(flt.databases, "databases")
    flt.tables = table_patterns(flt.tables, "tables")
    flt.exclude_tables = table_patterns(flt.exclude_tables, "exclude_tables")
