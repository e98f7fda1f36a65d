"""mariadb-binlog as an independent oracle for row values.

`run(path)` runs `mariadb-binlog --no-defaults -vv --base64-output=decode-rows FILE` and parses the
`###` lines it prints for rows events into `OracleChange`s:

    ### UPDATE `shop`.`customers`
    ### WHERE
    ###   @1=1 /* INT meta=0 nullable=0 is_null=0 */
    ### SET
    ###   @1=1 /* INT meta=0 nullable=0 is_null=0 */

becomes OracleChange(op="u", db="shop", table="customers", before={1: ("1", "INT meta=0 nullable=0
is_null=0")}, after={1: (...)}, at=...). Keys are column numbers (1-based, as `@N`); values are
(the text after `@N=`, the type comment without `/* */`). The text is taken as printed, trailing
spaces included (a FLOAT is printed with `%-20g`, padded to 20 characters).

Where the rows are: mariadb-binlog prints the rows of a statement's rows events together, when it
reaches the event flagged STMT_END_F. `at` is the `# at` offset of that event, so every change
printed with it comes from a rows event at or before `at`, and after the previous group's `at`.

Multi-line values: mariadb-binlog writes every byte below 0x20 of a string as `\\xNN`, so a value
never holds a newline and one `###   @N=` line is one value. Should a value ever span lines (another
build or version of the tool), the lines that follow it up to the one ending with the type comment
are joined back with `\\n`; the comment is the last ` /* ... */` of the joined text.

The output is read as bytes and decoded as UTF-8 with surrogateescape: strings are printed as their
stored bytes in whatever charset the column has, and `.encode("utf-8", "surrogateescape")` gives
them back exactly.

When mariadb-binlog cannot go on (a damaged file, an event it does not know, a column type it
cannot print), it stops: `OracleRun.stopped_at` is then the offset where it stopped, when known,
and the rows of a statement group still unprinted at that point are missing from `changes`.
"""
from __future__ import annotations

import os
import re
import shutil
import subprocess
from dataclasses import dataclass, field
from functools import lru_cache
from typing import Optional

TOOL = "mariadb-binlog"
ARGS = ["--no-defaults", "-vv", "--base64-output=decode-rows"]

_AT = re.compile(r"^# at (\d+)$")
_HEAD = re.compile(r"^### (INSERT INTO|UPDATE|DELETE FROM) `((?:[^`]|``)*)`\.`((?:[^`]|``)*)`$")
_COLUMN = re.compile(r"^###   @(\d+)=(.*) /\* (.*?) \*/$", re.S)
_STOP_OFFSET = re.compile(r"Could not read entry at offset (\d+)")
_OPS = {"INSERT INTO": "c", "UPDATE": "u", "DELETE FROM": "d"}
_IMAGE = {("c", "SET"): "after", ("u", "WHERE"): "before", ("u", "SET"): "after",
          ("d", "WHERE"): "before"}
_MAX_JOINED_LINES = 10000


@dataclass
class OracleChange:
    """One row change as mariadb-binlog prints it."""

    op: str  # c insert, u update, d delete
    db: str
    table: str
    before: Optional[dict] = None  # {column number: (text, type comment)}
    after: Optional[dict] = None
    at: Optional[int] = None  # `# at` offset of the event whose output holds this change
    line: int = 0  # line number (1-based) of its `###` header in the output


@dataclass
class OracleRun:
    """The parsed output of one mariadb-binlog run."""

    path: str
    returncode: int
    stderr: str
    changes: list = field(default_factory=list)
    positions: list = field(default_factory=list)  # every `# at` offset, in order
    problems: list = field(default_factory=list)  # `###` lines that could not be parsed

    @property
    def stopped_at(self) -> Optional[int]:
        """Where mariadb-binlog stopped reading, or None when it read the whole file: the offset
        its error names, else the last event it announced before exiting with an error."""
        m = _STOP_OFFSET.search(self.stderr)
        if m:
            return int(m[1])
        if self.returncode != 0:
            return self.positions[-1] if self.positions else 4
        return None

    @property
    def last_flush(self) -> Optional[int]:
        """`at` of the last group of changes printed."""
        return self.changes[-1].at if self.changes else None


def tool() -> Optional[str]:
    """Path of mariadb-binlog, or None when it is not installed."""
    return shutil.which(TOOL)


def _unquote_ident(text: str) -> str:
    return text.replace("``", "`")


def parse(output: str, path: str = "", returncode: int = 0, stderr: str = "") -> OracleRun:
    """Parse mariadb-binlog -vv output (already decoded to str) into an OracleRun."""
    run = OracleRun(path, returncode, stderr)
    lines = output.split("\n")
    at = None
    current = None
    image = None
    i = 0
    while i < len(lines):
        line = lines[i]
        i += 1
        m = _AT.match(line)
        if m:
            at = int(m[1])
            run.positions.append(at)
            current = image = None
            continue
        if not line.startswith("###"):
            current = image = None
            continue
        m = _HEAD.match(line)
        if m:
            current = OracleChange(_OPS[m[1]], _unquote_ident(m[2]), _unquote_ident(m[3]), at=at,
                                   line=i)
            run.changes.append(current)
            image = None
            continue
        if line in ("### SET", "### WHERE"):
            key = _IMAGE.get((current.op, line[4:])) if current is not None else None
            if key is None:
                run.problems.append((i, line, "image clause outside a change"))
                continue
            image = {}
            setattr(current, key, image)
            continue
        if line.startswith("###   @"):
            text, first = line, i
            m = _COLUMN.match(text)
            while m is None and i < len(lines) and i - first < _MAX_JOINED_LINES:
                nxt = lines[i]
                if nxt.startswith("###") or _AT.match(nxt):
                    break
                text += "\n" + nxt
                i += 1
                m = _COLUMN.match(text)
            if m is None:
                run.problems.append((first, line, "column value without a type comment"))
                continue
            if image is None:
                run.problems.append((first, line, "column value outside an image"))
                continue
            image[int(m[1])] = (m[2], m[3])
            continue
        run.problems.append((i, line, "unknown ### line"))
    return run


@lru_cache(maxsize=None)
def run(path) -> OracleRun:
    """Run mariadb-binlog on one binlog file and parse what it prints."""
    exe = tool()
    if exe is None:
        raise FileNotFoundError(f"{TOOL} is not installed")
    env = dict(os.environ, TZ="UTC", LC_ALL="C")
    proc = subprocess.run([exe, *ARGS, os.fspath(path)], capture_output=True, env=env,
                          timeout=300)
    return parse(proc.stdout.decode("utf-8", "surrogateescape"), os.fspath(path),
                 proc.returncode, proc.stderr.decode("utf-8", "replace"))


# Every column type MariaDB writes, at its edges, so that the rules of textfmt are checked against
# mariadb-binlog for types the corpus and samples lack (FLOAT, BIT, TIME, YEAR, multi-byte ENUM
# and SET, control bytes and quotes in strings, GEOMETRY, the pre-5.6 temporal formats).
TYPES_WORKLOAD = r"""
SET time_zone = '+00:00';
SET sql_mode = '';
CREATE TABLE ints (a TINYINT, b TINYINT UNSIGNED, c SMALLINT, d SMALLINT UNSIGNED, e MEDIUMINT,
  f MEDIUMINT UNSIGNED, g INT, h INT UNSIGNED, i BIGINT, j BIGINT UNSIGNED);
INSERT INTO ints VALUES (-128, 255, -32768, 65535, -8388608, 16777215, -2147483648, 4294967295,
  -9223372036854775808, 18446744073709551615), (127, 0, 32767, 0, 8388607, 0, 2147483647, 0,
  9223372036854775807, 0), (-1, 128, -1, 32768, -1, 8388608, -1, 2147483648, -1, 9223372036854775808);
CREATE TABLE nums (f FLOAT, d DOUBLE, f2 FLOAT, d2 DOUBLE, a DECIMAL(10,2), b DECIMAL(65,30),
  c DECIMAL(5,0), e DECIMAL(4,4), u DECIMAL(18,9) UNSIGNED);
INSERT INTO nums VALUES (1.5, 0.1, -3.4e38, 1e-300, -12345678.99,
  -12345678901234567890123456789012345.123456789012345678901234567890, -99999, -0.9999, 999999999.999999999),
  (0, -0, 123456789, 123456789012345678, 0, 0, 0, 0, 0),
  (0.1, 2.5e-5, 1e-40, 1.7976931348623157e308, 0.01, 0.000000000000000000000000000001, 1, 0.0001, 0.000000001),
  (-1.17549e-38, 3.141592653589793, 100000, 1e16, -0.01, -1, -1, -0.0001, 1);
CREATE TABLE temporal (y YEAR, d DATE, dt DATETIME, dt3 DATETIME(3), dt6 DATETIME(6), ts TIMESTAMP NULL,
  ts1 TIMESTAMP(1) NULL, ts6 TIMESTAMP(6) NULL, t TIME, t2 TIME(2), t6 TIME(6), t5 TIME(5));
INSERT INTO temporal VALUES (2024, '2024-02-29', '2024-02-29 23:59:59', '1000-01-01 00:00:00.999',
  '9999-12-31 23:59:59.999999', '1970-01-01 00:00:01', '2038-01-19 03:14:07.9',
  '2001-09-09 01:46:40.000001', '-838:59:59', '-00:00:00.01', '838:59:59.999999', '-12:34:56.78901'),
  (0, '0000-00-00', '0000-00-00 00:00:00', '0000-00-00 00:00:00.000', '2024-00-00 00:00:00',
  '0000-00-00 00:00:00', '0000-00-00 00:00:00.0', NULL, '00:00:00', '00:00:00.5', '-00:00:01.000001',
  '100:00:00.00001'),
  (1901, '2024-13-01', '2024-02-30 10:00:00', NULL, '0001-01-01 00:00:00.1', NULL, NULL, NULL,
  '-01:00:00', NULL, '-838:59:59.000000', NULL);
SET GLOBAL mysql56_temporal_format = OFF;
CREATE TABLE old_temporal (dt DATETIME, t TIME, ts TIMESTAMP NULL);
SET GLOBAL mysql56_temporal_format = ON;
INSERT INTO old_temporal VALUES ('2024-02-29 23:59:59', '-838:59:59', '2038-01-19 03:14:07'),
  ('0000-00-00 00:00:00', '00:00:00', '0000-00-00 00:00:00'), ('2024-00-15 01:02:03', '-00:00:01', NULL);
CREATE TABLE bits (a BIT(1), b BIT(7), c BIT(8), d BIT(10), e BIT(64), f BIT(17));
INSERT INTO bits VALUES (b'1', b'1010101', b'11111111', b'1000000001', 0xFFFFFFFFFFFFFFFF,
  b'10000000000000001'), (b'0', 0, 0, 0, 0, 0), (b'1', 1, 1, 1, 1, 1);
CREATE TABLE enum_set (e ENUM('a','b','c'), s SET('a','b','c','d','e','f','g','h','i','j'),
  s3 SET('x','y','z','w','v','u','t','s','r','q','p','o','n','m','l','k','j'));
INSERT INTO enum_set VALUES ('c', 'a,j', 'x,j'), ('', '', ''), (NULL, 'b,c,d,e,f,g,h,i', 'q,p,o');
CREATE TABLE strs (c CHAR(10) CHARACTER SET latin1, vc VARCHAR(300) CHARACTER SET utf8mb4,
  b BINARY(5), vb VARBINARY(10), bl BLOB, tx TINYTEXT CHARACTER SET latin1, mt MEDIUMTEXT,
  lb LONGBLOB, c2 CHAR(100) CHARACTER SET utf8mb4, c3 CHAR(255) CHARACTER SET utf8mb3);
INSERT INTO strs VALUES ('it''s', 'back\\slash \'q\' "dq"', 'ab', 0x00FF0A0D, 0x000102031F207F80FF,
  'café', 'tab\there\nnew\rline', REPEAT('z', 70000), 'ünï 😀 ', 'trailing   '),
  ('', '', '', '', '', '', '', '', '', ''),
  ('é€', 'a/* b */c', 0x6162000000, 0x00, 0x27, CONCAT('x', CHAR(0), 'y'), '\\', 0x5C27, 'x', 'y'),
  (' lead', REPEAT('ä', 300), 0x0000000001, 0x0A, 0x0d0a, CHAR(0x80, 0x81, 0x9F, 0xFF), NULL, NULL,
  NULL, NULL);
CREATE TABLE geo (g GEOMETRY, p POINT);
INSERT INTO geo VALUES (ST_GeomFromText('LINESTRING(0 0, 1 1)'), ST_GeomFromText('POINT(1 2)', 4326)),
  (NULL, ST_GeomFromText('POINT(-1.5 1e300)'));
UPDATE ints SET a = a + 1 WHERE a < 0;
UPDATE strs SET vc = CONCAT(vc, '!') WHERE c = 'it''s';
DELETE FROM strs WHERE c = '';
""" + (  # an ENUM stored in two bytes and a SET in eight
    "CREATE TABLE wide (e ENUM(" + ", ".join(f"'v{i}'" for i in range(300)) + "), s SET("
    + ", ".join(f"'m{i}'" for i in range(64)) + "));\n"
    "INSERT INTO wide VALUES ('v0', 'm0,m63'), ('v299', ''), ('v255', 'm8,m9,m31,m32');\n")
# What mariadb-binlog calls the types TYPES_WORKLOAD writes: each must be compared at least once.
WORKLOAD_TYPES = {
    "TINYINT", "SHORTINT", "MEDIUMINT", "INT", "LONGINT", "FLOAT", "DOUBLE", "DECIMAL(10,2)",
    "DECIMAL(65,30)", "DECIMAL(5,0)", "DECIMAL(4,4)", "DECIMAL(18,9)", "YEAR", "DATE", "DATETIME",
    "DATETIME(0)", "DATETIME(3)", "DATETIME(6)", "TIMESTAMP", "TIMESTAMP(0)", "TIMESTAMP(1)",
    "TIMESTAMP(6)", "TIME", "TIME(0)", "TIME(2)", "TIME(5)", "TIME(6)", "BIT(1)", "BIT(7)",
    "BIT(8)", "BIT(10)", "BIT(64)", "BIT(17)", "ENUM(1 byte)", "ENUM(2 bytes)", "SET(2 bytes)",
    "SET(3 bytes)", "SET(8 bytes)",
    "STRING(10)", "STRING(5)", "STRING(400)", "STRING(765)", "VARSTRING(1200)", "VARSTRING(10)",
    "BLOB/TEXT", "TINYBLOB/TINYTEXT", "MEDIUMBLOB/MEDIUMTEXT", "LONGBLOB/LONGTEXT", "GEOMETRY",
}
