"""What the server shows, for the differential checks (binlog_grammar.testing.differential).

A column is SELECTed rendered unambiguously (`render`: HEX() of binary values, HEX(CONVERT(...
USING utf8mb4)) of text, CAST(... AS CHAR) of numbers and temporal values, the index or bitmask of
ENUM and SET, ST_SRID() and ST_AsBinary() of geometry); `expected_value` turns that text into the
Python value the decoder's contract (README "Row changes and column values") gives, and `canon`
into a form that tells apart what `==` would not. `image_columns` says which columns MariaDB
10.11 writes in a row change's images. `run_script` runs SQL with the mariadb client, in the
session `SESSION` sets up.
"""
from __future__ import annotations

import datetime as dt
import json
import re
import subprocess
from dataclasses import dataclass
from decimal import Decimal

from .schema import Settings

UTC = dt.timezone.utc
SESSION = "SET time_zone = '+00:00'; SET sql_mode = ''; SET SESSION innodb_strict_mode = OFF;\n"

INTEGER_TYPES = {"tinyint", "smallint", "mediumint", "int", "bigint"}
GEOMETRY_TYPES = {"geometry", "point", "linestring", "polygon", "multipoint", "multilinestring",
                  "multipolygon", "geometrycollection"}
BLOB_TYPES = {"tinyblob", "blob", "mediumblob", "longblob", "tinytext", "text", "mediumtext",
              "longtext"}


# -- the SELECT side ------------------------------------------------------------------------------

@dataclass
class ColInfo:
    """A column as information_schema.COLUMNS states it."""

    name: str
    position: int  # 1-based
    data_type: str
    column_type: str
    charset: str | None
    nullable: bool
    key: bool  # part of the primary key
    extra: str

    @property
    def blob(self) -> bool:
        return self.data_type in BLOB_TYPES

    @property
    def compressed(self) -> bool:
        return "compressed" in self.column_type.lower()


def quote(name: str) -> str:
    return "`" + name.replace("`", "``") + "`"


def render(c: ColInfo) -> str:
    """A SELECT expression that shows the stored value of column c unambiguously."""
    n = quote(c.name)
    t = c.data_type
    if t in INTEGER_TYPES or t in ("decimal", "date", "datetime", "timestamp", "time"):
        return f"CAST({n} AS CHAR)"
    if t in ("float", "double"):  # the exact stored value, as the shortest text of a double
        return f"CAST({n} AS DOUBLE)"  # (CAST AS CHAR rounds a DOUBLE(M,D) to D digits)
    if t in ("bit", "year"):
        return f"CAST({n} AS UNSIGNED)"
    if t in ("enum", "set"):  # index or bitmask, and the member text
        return f"CONCAT(CAST({n} + 0 AS UNSIGNED), ':', HEX(CONVERT({n} USING utf8mb4)))"
    if t in GEOMETRY_TYPES:
        return f"CONCAT(ST_SRID({n}), ':', HEX(ST_AsBinary({n})))"
    if c.charset is not None and c.charset != "binary":  # text: what the server means by it
        return f"HEX(CONVERT({n} USING utf8mb4))"
    return f"HEX({n})"  # binary strings, INET4, INET6, UUID


_DATETIME_RE = re.compile(r"^(\d{4})-(\d{2})-(\d{2}) (\d{2}):(\d{2}):(\d{2})(?:\.(\d+))?$")
_TIME_RE = re.compile(r"^(-?)(\d+):(\d{2}):(\d{2})(?:\.(\d+))?$")


def _micro(frac):
    return int(frac.ljust(6, "0")) if frac else 0


def expected_value(c: ColInfo, text: str, full_metadata: bool):
    """The Python value the decoder must give for a column whose SELECT rendering is `text`."""
    if text == "NULL":
        return None
    t = c.data_type
    if t in INTEGER_TYPES or t in ("bit", "year"):
        return int(text)
    if t == "decimal":
        return Decimal(text)
    if t in ("float", "double"):
        return float(text)
    if t == "date":
        y, m, d = (int(x) for x in text.split("-"))
        try:
            return dt.date(y, m, d)
        except ValueError:
            return text
    if t in ("datetime", "timestamp"):
        m = _DATETIME_RE.match(text)
        if not m:
            raise ValueError(f"{c.name}: unexpected {t} text {text!r}")
        parts = [int(x) for x in m.groups()[:6]] + [_micro(m[7])]
        if t == "timestamp" and not any(parts):
            return text  # the zero timestamp
        try:
            return dt.datetime(*parts, tzinfo=UTC if t == "timestamp" else None)
        except ValueError:
            return text
    if t == "time":
        m = _TIME_RE.match(text)
        if not m:
            raise ValueError(f"{c.name}: unexpected TIME text {text!r}")
        td = dt.timedelta(hours=int(m[2]), minutes=int(m[3]), seconds=int(m[4]),
                          microseconds=_micro(m[5]))
        return -td if m[1] else td
    if t in ("enum", "set"):
        number, hexed = text.split(":", 1)
        if not full_metadata:  # no member names in the binlog: index / bitmask
            return int(number)
        s = bytes.fromhex(hexed).decode("utf-8")
        if t == "enum":
            return s
        return frozenset(s.split(",")) if s else frozenset()
    if t in GEOMETRY_TYPES:
        from ..binlog.rows import Geometry

        srid, wkb = text.split(":", 1)
        return Geometry(int(srid), bytes.fromhex(wkb))
    data = bytes.fromhex(text)
    if c.charset is None or c.charset == "binary":
        return data
    return data.decode("utf-8")


def canon(v):
    """A hashable form of a value that tells apart what `==` would not: types, DECIMAL scales,
    the sign of a zero float, time zones."""
    if isinstance(v, Decimal):
        return ("Decimal", str(v))
    if isinstance(v, float):
        return ("float", repr(v))
    if isinstance(v, dt.datetime):
        return ("datetime", v.isoformat())
    if isinstance(v, (dict, list)):
        return (type(v).__name__, json.dumps(v, sort_keys=True, default=str))
    if isinstance(v, (bytearray, memoryview)):
        return ("bytearray", bytes(v))
    return (type(v).__name__, v)


def short(v, limit=160):
    r = repr(v)
    return r if len(r) <= limit else f"{r[:limit - 30]}...({len(r)} chars)"


# -- which columns an image holds -------------------------------------------------------------

def image_columns(settings: Settings, cols: list, op: str, named) -> tuple:
    """(before, after) sets of column names MariaDB 10.11 writes in a row change's images (None
    for an image the change has not), for binlog_row_image FULL / MINIMAL / NOBLOB:

    - FULL, and any table without a primary key: every column in every image;
    - MINIMAL: before images the primary key; after images the columns the statement names (the
      INSERT's column list and an AUTO_INCREMENT key, the columns an UPDATE assigns);
    - NOBLOB: every column but the BLOB/TEXT ones (JSON included, GEOMETRY and VARCHAR COMPRESSED
      not), plus the primary key in before images and the named BLOB/TEXT columns in after images.
    """
    every = {c.name for c in cols}
    key = {c.name for c in cols if c.key}
    named = set(named or ())
    if op == "c":
        named |= {c.name for c in cols if "auto_increment" in c.extra}
    if settings.row_image == "FULL" or not key:
        before = after = every
    elif settings.row_image == "MINIMAL":
        before, after = key, named & every
    else:
        plain = {c.name for c in cols if not c.blob}
        before, after = plain | key, plain | (named & every)
    return (None if op == "c" else before), (None if op == "d" else after)


# -- running SQL ----------------------------------------------------------------------------------

def run_script(db, script: str, database=None):
    """Run a script with the mariadb client, going on after errors: (stdout, [error lines])."""
    cmd = db._client() + ["--batch", "--skip-column-names", "--force"]
    if database:
        cmd.append(database)
    r = subprocess.run(cmd, input=script.encode("utf-8", "surrogateescape"), capture_output=True)
    errors = [line for line in r.stderr.decode("utf-8", "replace").splitlines()
              if line.startswith("ERROR")]
    return r.stdout.decode("utf-8", "surrogateescape"), errors
