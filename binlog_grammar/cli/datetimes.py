"""Dates and times as mysqlbinlog reads and prints them: in the local time zone.

mysqlbinlog and mariadb-binlog print each event's time (the `#YYMMDD HH:MM:SS` header lines) with
the C library's localtime_r and read --start-datetime/--stop-datetime in the same zone, the one
`TZ` or the system names. This project does the same; `--utc` chooses UTC for both (as `TZ=UTC`
does: --utc sets it, so the compiled lane and the workers of --jobs follow). JSON lines keep
their times in UTC, ISO form, whatever the zone.

The text of a datetime option is read by MariaDB's rules (sql-common/my_time.c,
str_to_datetime): digits in any punctuation (`2026-11-26 6:39:30`, `2026/11/26 06.39.30`,
`26-11-26 6:39`), `T` or spaces between date and time, the digits alone
(`20261126063930`, `261126063930`), two-digit years (70-99 are 19xx, 00-69 20xx), up to six
digits of a second's fraction, which the comparison drops (event times are whole seconds), as
mysqlbinlog does. A text mariadb-binlog refuses (a date that does not exist, 25 o'clock, trailing
garbage, seven fraction digits) is refused with one line. Beyond mariadb-binlog, a date alone
means its midnight, and an ISO text with an offset (`2026-11-26T06:39:30+09:00`, `...Z`) is that
instant whatever the zone. The local time is turned into seconds as MariaDB's my_system_gmt_sec
does, from its first guess of the zone's offset: a time that happens twice (the hour the clocks
go back) is the occurrence mysqlbinlog picks (the second, in New York), and a time the clocks skip (the hour they go forward) is the start of the next real hour. A time before
1970 is the epoch and one after 2106 the end of 4-byte event times (mariadb-binlog turns any
time outside 1970 to 2038-01-19 into 0: a --stop-datetime after 2038 there selects nothing).
"""
from __future__ import annotations

import datetime as _dt
import os
import string
import time
from dataclasses import dataclass

UTC = _dt.timezone.utc
_PUNCT = frozenset(string.punctuation)  # my_ispunct on latin1 ASCII
_SPACE = frozenset(" \t\n\v\f\r")


@dataclass(frozen=True)
class LocalText:
    """A datetime option's text read by MariaDB's rules: a wall-clock time in the zone the
    command runs in, turned into an instant by `instant()` once --utc is known."""
    text: str
    year: int
    month: int
    day: int
    hour: int
    minute: int
    second: int
    microsecond: int
    fields: int = 6  # how many of year..second the text gives (3: a date alone)

    def instant(self) -> _dt.datetime:
        """The UTC instant of this wall-clock time in the local zone (whole seconds, as
        mysqlbinlog compares them)."""
        return _dt.datetime.fromtimestamp(local_seconds(self), UTC)


def parse(text: str):
    """The option's text as a LocalText, or an aware datetime for an ISO text with an offset;
    ValueError with what is wrong."""
    iso = _with_offset(text)
    if iso is not None:
        return iso
    fields, fraction, given = _str_to_datetime(text)
    y, mo, d, h, mi, s = fields
    return LocalText(text, y, mo, d, h, mi, s, fraction, given)


def _with_offset(text):
    t = text.strip()
    if not (t.endswith(("Z", "z")) or (len(t) > 6 and t[-6] in "+-" and t[-3] == ":")):
        return None
    try:
        d = _dt.datetime.fromisoformat(t[:-1] + "+00:00" if t[-1] in "Zz" else t)
    except ValueError:
        return None
    return d if d.tzinfo else None


def _number(s, i, end):
    """get_number: the digits at i (an empty field is no field)."""
    j = i
    while j < end and s[j].isdigit() and s[j] in string.digits:
        j += 1
    return (int(s[i:j]), j) if j > i else (None, i)


def _find_body(s: str) -> str:
    """find_body: the text without its leading spaces and sign and its trailing spaces; trailing
    garbage (letters but a T after a digit) is refused, as a warning makes mysqlbinlog refuse."""
    s = s.lstrip(" \t\n\v\f\r")
    if s[:1] == "-":
        raise ValueError("a date and time is not negative")
    s = s[1:] if s[:1] == "+" else s
    s = s.lstrip(" \t\n\v\f\r")
    n = len(s)
    while n > 0:
        c = s[n - 1]
        if c in string.digits or c in _PUNCT or (c == "T" and n >= 2 and s[n - 2] in string.digits):
            break
        if c not in _SPACE:
            raise ValueError(f"{s[n - 1:].rstrip()!r} after the date and time")
        n -= 1
    if not n or s[0] not in string.digits:
        raise ValueError("it does not begin with a digit")
    return s[:n]


def _str_to_datetime(s: str):
    """MariaDB's str_to_datetime_or_date with flags 0, and mysqlbinlog's demand of no warning."""
    s = _find_body(s)
    end = len(s)
    i = 0
    p = i
    while p < end and s[p] in string.digits:
        p += 1
    digits = p - i
    if p < end and s[p] == "T":
        p += 1
        q = p
        while p < end and s[p] in string.digits:
            p += 1
        digits += p - q
    if p < end and s[p] == "." and digits >= 12:
        p += 1
        while p < end and s[p] in string.digits:
            p += 1
    parts = []
    cut = False
    if p == end:  # digits alone: [YY]YYMMDD[T][hhmmss[.ffffff]]
        widths = [4 if digits in (4, 8) or digits >= 14 else 2, 2, 2, 2, 2, 2]
        year_length = widths[0]
        for n, width in enumerate(widths):
            if n == 3 and i < end and s[i] == "T":
                i += 1
            if i >= end:
                break
            if s[i] not in string.digits:
                cut = True
                break
            j = i
            while j < min(end, i + width) and s[j] in string.digits:
                j += 1
            parts.append(int(s[i:j]))
            i = j
    else:
        start = i
        v, i = _number(s, i, end)
        parts.append(v)
        year_length = i - start
        for n in range(5):
            if i >= end:
                break
            c = s[i]
            if n == 2:  # the date and time separator: T, a punctuation, or spaces
                if c == "T" or c in _PUNCT:
                    i += 1
                elif c in _SPACE:
                    while i < end and s[i] in _SPACE:
                        i += 1
                else:
                    cut = True
                    break
            elif c in _PUNCT:
                i += 1
            else:
                cut = True
                break
            if i >= end:
                break
            v, i = _number(s, i, end)
            if v is None:
                cut = True
                break
            parts.append(v)
    if len(parts) < 3:
        raise ValueError("it has no year, month and day")
    fraction = 0
    if not cut and i < end and s[i] == ".":
        i += 1
        j = i
        while j < end and s[j] in string.digits:
            j += 1
        if j - i > 6:
            raise ValueError("more than six digits of a second's fraction")
        fraction = int((s[i:j] or "0").ljust(6, "0"))
        i = j
    if cut:
        raise ValueError(f"it cannot be read past {s[:i]!r}")
    fields = parts + [0] * (6 - len(parts))
    y, mo, d, h, mi, sec = fields
    if year_length == 2 and any(fields) | bool(fraction):
        y += 2000 if y < 70 else 1900
    if y > 9999 or mo > 12 or d > 31 or h > 23 or mi > 59 or sec > 59:
        raise ValueError("a field is out of range")
    if any(fields) or fraction:
        if mo and d > _days_in_month(y, mo):
            raise ValueError("that day does not exist")
    if i != end:
        raise ValueError(f"{s[i:]!r} after the date and time")
    return (y, mo, d, h, mi, sec), fraction, len(parts)


def _days_in_month(y, mo):
    if mo == 2:
        return 29 if (y % 4 == 0 and (y % 100 or (y % 400 == 0 and y))) else 28
    return (31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31)[mo - 1]


def _cdiv(a, b):
    """C's integer division (towards zero)."""
    q = abs(a) // abs(b)
    return q if (a >= 0) == (b > 0) else -q


def _calc_daynr(year, month, day):
    """MariaDB's calc_daynr: days since year 0 (month 0 allowed)."""
    if year == 0 and month == 0:
        return 0
    y = year
    delsum = 365 * y + 31 * (month - 1) + day
    if month <= 2:
        y -= 1
    else:
        delsum -= _cdiv(month * 4 + 23, 10)
    temp = _cdiv((_cdiv(y, 100) + 1) * 3, 4)
    return delsum + _cdiv(y, 4) - temp


_DAYS_AT_EPOCH = 719528
_LAST = 2 ** 32  # after every event's time (a 4-byte count of seconds)


def local_seconds(t) -> int:
    """my_system_gmt_sec: the seconds since the epoch of wall-clock time t (year .. second) in
    the local zone, found with localtime from MariaDB's first guess as MariaDB finds them (so a
    repeated hour is the one mysqlbinlog picks, a skipped hour the next real hour)."""
    tmp, _ = _gmt_sec(t, _my_time_zone())
    return min(max(tmp, 0), _LAST)


def _my_time_zone() -> int:
    """my_init_time: MariaDB's first guess of the zone's offset, found from the time now with a
    guess of 3600 (which it compensates twice)."""
    now = time.localtime()
    here = _Wall(now.tm_year, now.tm_mon, now.tm_mday, now.tm_hour, now.tm_min, now.tm_sec)
    return _gmt_sec(here, 3600)[1]


@dataclass(frozen=True)
class _Wall:
    year: int
    month: int
    day: int
    hour: int
    minute: int
    second: int


def _gmt_sec(t, zone):
    tmp = ((_calc_daynr(t.year, t.month, t.day) - _DAYS_AT_EPOCH) * 86400 + t.hour * 3600
           + t.minute * 60 + t.second + zone - 3600)
    if not -2 * 86400 < tmp < _LAST + 2 * 86400:
        return (0 if tmp < 0 else _LAST), zone
    current = zone
    lt = time.localtime(tmp)
    loop = 0
    while loop < 2 and (t.hour, t.minute, t.second) != (lt.tm_hour, lt.tm_min, lt.tm_sec):
        diff = _diff(t, lt)
        current += diff + 3600
        tmp += diff
        lt = time.localtime(tmp)
        loop += 1
    if loop == 2 and t.hour != lt.tm_hour:
        diff = _diff(t, lt)
        if diff == 3600:
            tmp += 3600 - t.minute * 60 - t.second
        elif diff == -3600:
            tmp -= t.minute * 60 + t.second
    return tmp, current


def _diff(t, lt):
    days = t.day - lt.tm_mday
    days = 1 if days < -1 else -1 if days > 1 else days
    return (3600 * (days * 24 + t.hour - lt.tm_hour) + 60 * (t.minute - lt.tm_min)
            + (t.second - lt.tm_sec))


def use_utc() -> None:
    """--utc: UTC for printed times and datetime options, here, in the compiled lane and in the
    workers, as TZ=UTC would."""
    os.environ["TZ"] = "UTC"
    time.tzset()


def resolve(args) -> None:
    """After parsing: apply --utc, then turn the datetime options' wall-clock texts into
    instants (aware UTC datetimes, which binlog.stream.Filters takes)."""
    if getattr(args, "utc", False):
        use_utc()
    given = {}
    for name in ("start_datetime", "stop_datetime"):
        value = getattr(args, name, None)
        if isinstance(value, LocalText):
            given[name] = value.text
            setattr(args, name, value.instant())
    args.datetime_texts = given  # the texts as typed, for messages and stats' filters

