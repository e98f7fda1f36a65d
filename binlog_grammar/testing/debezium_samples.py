"""What the real Debezium connector emits for a table of every MariaDB column type, under its
default settings and under each other value of the options that change how values are written:
the samples the `debezium` envelope is written against (`tools/debezium_diff.py --samples DIR`).

Each scenario is written to DIR/<name>.json as `{"sql": [...], "options": {...}, "schemas":
bool, "records": [...], "binlog": PATH, "binlogs": [PATH, ...]}`, where the binlog files are
copies (DIR/<name>.<binlog name>) of the server's files holding the workload, so that
`binlog-grammar dump --format jsonl --envelope debezium` can be run on the same bytes.
"""
from __future__ import annotations

import json
import shutil
from pathlib import Path

from .debezium import OPTIONS, DebeziumServer
from .schema import Case, Settings, Statement

TABLE = "all_types"

COLUMNS = [
    ("id", "INT NOT NULL PRIMARY KEY"),
    ("ti", "TINYINT"), ("tiu", "TINYINT UNSIGNED"),
    ("si", "SMALLINT"), ("siu", "SMALLINT UNSIGNED"),
    ("mi", "MEDIUMINT"), ("miu", "MEDIUMINT UNSIGNED"),
    ("i", "INT"), ("iu", "INT UNSIGNED"),
    ("bi", "BIGINT"), ("biu", "BIGINT UNSIGNED"),
    ("d52", "DECIMAL(5,2)"), ("d100", "DECIMAL(10,0)"), ("d3010", "DECIMAL(30,10)"),
    ("f", "FLOAT"), ("db", "DOUBLE"),
    ("b1", "BIT(1)"), ("b12", "BIT(12)"), ("b64", "BIT(64)"),
    ("dt", "DATE"),
    *[(f"dtm{p}", f"DATETIME({p})") for p in range(7)],
    *[(f"ts{p}", f"TIMESTAMP({p}) NULL") for p in range(7)],
    *[(f"tm{p}", f"TIME({p})") for p in range(7)],
    ("y", "YEAR"), ("bo", "BOOL"),
    ("c", "CHAR(10) CHARACTER SET utf8mb4"),
    ("vc", "VARCHAR(40) CHARACTER SET utf8mb4"),
    ("vl", "VARCHAR(40) CHARACTER SET latin1"),
    ("bn", "BINARY(4)"), ("vb", "VARBINARY(16)"),
    ("bl", "BLOB"), ("tx", "TEXT CHARACTER SET utf8mb4"),
    ("e", "ENUM('small','medium','large')"), ("st", "SET('one','two','three')"),
    ("j", "JSON"),
    ("g", "GEOMETRY"), ("pt", "POINT"),
]

CREATE = (f"CREATE TABLE {TABLE} ("
          + ", ".join(f"`{n}` {t}" for n, t in COLUMNS) + ") ENGINE=InnoDB")

_ROW1 = {
    "ti": "-5", "tiu": "200", "si": "-300", "siu": "60000", "mi": "-70000", "miu": "16000000",
    "i": "-2000000000", "iu": "4000000000", "bi": "-9000000000000000000",
    "biu": "18446744073709551615",
    "d52": "-123.45", "d100": "1234567890", "d3010": "-12345678901234567890.0123456789",
    "f": "1.5", "db": "-2.25e100",
    "b1": "b'1'", "b12": "b'101000000101'", "b64": "b'1111111111111111111111111111111111111111111111111111111111111110'",
    "dt": "'2024-02-29'",
    **{f"dtm{p}": f"'2024-02-29 13:14:15{'.123456'[:p + 1] if p else ''}'" for p in range(7)},
    **{f"ts{p}": f"'2024-02-29 13:14:15{'.654321'[:p + 1] if p else ''}'" for p in range(7)},
    **{f"tm{p}": f"'-12:34:56{'.000001'[:p + 1] if p else ''}'" for p in range(7)},
    "y": "2024", "bo": "1",
    "c": "'abc'", "vc": "'héllo wörld ☃ 😀'", "vl": "'café'",
    "bn": "X'00FF10'", "vb": "X'DEADBEEF00'", "bl": "X'000102FF'", "tx": "'some text ✓'",
    "e": "'medium'", "st": "'one,three'",
    "j": "'{\"a\": [1, 2.5, \"x\", null, true], \"b\": {\"c\": \"d\"}}'",
    "g": "ST_GeomFromText('LINESTRING(0 0, 1 1, 2 1)')", "pt": "ST_GeomFromText('POINT(1.5 -2)')",
}

_ROW2 = {
    "ti": "127", "tiu": "255", "si": "-32768", "siu": "65535", "mi": "8388607",
    "miu": "16777215", "i": "2147483647", "iu": "4294967295", "bi": "-9223372036854775808",
    "biu": "9223372036854775808",
    "d52": "999.99", "d100": "-9999999999", "d3010": "0.0000000001",
    "f": "-3.4028234e38", "db": "2.2250738585072014e-308",
    "b1": "b'0'", "b12": "b'111111111111'", "b64": "b'1'",
    "dt": "'1000-01-01'",
    **{f"dtm{p}": f"'9999-12-31 23:59:59{'.999999'[:p + 1] if p else ''}'" for p in range(7)},
    **{f"ts{p}": f"'1970-01-01 00:00:01{'.000001'[:p + 1] if p else ''}'" for p in range(7)},
    **{f"tm{p}": f"'838:59:59{'.000000'[:p + 1] if p else ''}'" for p in range(7)},
    "y": "1901", "bo": "116",
    "c": "''", "vc": "'x'", "vl": "'\\\\ \\' \"'",
    "bn": "X'00000000'", "vb": "X''", "bl": "X''", "tx": "''",
    "e": "'small'", "st": "''",
    "j": "'[]'",
    "g": "ST_GeomFromText('POLYGON((0 0, 4 0, 4 4, 0 0))')", "pt": "ST_GeomFromText('POINT(0 0)')",
}

# zero dates (sql_mode '' lets them in): Debezium writes null for them
_ROW3 = {"dt": "'0000-00-00'", **{f"dtm{p}": "'0000-00-00 00:00:00'" for p in range(7)},
         **{f"ts{p}": "'0000-00-00 00:00:00'" for p in range(7)},
         "y": "0", "tm0": "'00:00:00'", "e": "''"}


def _insert(row_id: int, values: dict) -> str:
    names = ["id", *values]
    return (f"INSERT INTO {TABLE} ({', '.join(f'`{n}`' for n in names)}) VALUES "
            f"({row_id}, {', '.join(values.values())})")


# years 0-99 of DATE and DATETIME: Debezium reads them as two-digit years (its
# enable.time.adjuster, on by default: 0-69 are 2000-2069, 70-99 are 1970-1999)
_ROW5 = {"dt": "'0001-01-01'", "dtm0": "'0069-12-31 10:00:00'", "dtm6": "'0070-01-01 00:00:00.5'",
         "ts0": "NULL", "bo": "0"}


WORKLOAD = [
    "SET SESSION sql_mode = ''",
    CREATE,
    _insert(1, _ROW1),
    _insert(2, _ROW2),
    _insert(3, _ROW3),
    f"INSERT INTO {TABLE} (id) VALUES (4)",
    _insert(5, _ROW5),
    # one transaction of several changes
    "BEGIN",
    f"UPDATE {TABLE} SET vc = 'updated', d52 = 0.5, st = 'two', b12 = b'1' WHERE id = 1",
    f"UPDATE {TABLE} SET id = 20 WHERE id = 2",
    "COMMIT",
    f"DELETE FROM {TABLE} WHERE id = 3",
    f"UPDATE {TABLE} SET tiu = 1 WHERE id IN (1, 4)",
]


def all_types_case() -> Case:
    """The workload as a Case of the differential suite (its CREATE TABLE and changes; the
    session's sql_mode='' is set by whoever runs a Case)."""
    return Case(Settings(), CREATE, tuple(Statement("sql", s) for s in WORKLOAD[2:]))


def scenarios():
    """(name, options, schemas): the defaults, each other option value alone, the defaults with
    Kafka Connect's schema/payload."""
    yield "default", {}, False
    for key, values in OPTIONS.items():
        for value in values[1:]:
            yield f"{key}={value}", {key: value}, False
    yield "default-schemas", {}, True


def write_samples(out_dir, server: DebeziumServer | None = None, log=print) -> list:
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    written = []
    own = server is None
    server = server or DebeziumServer().start()
    try:
        for name, options, schemas in scenarios():
            cap = server.capture(WORKLOAD, options, schemas=schemas)
            copies = []
            for path in cap.binlogs:
                copy = out / f"{name}.{path.name}"
                shutil.copyfile(path, copy)
                copies.append(str(copy))
            sample = {"sql": WORKLOAD, "options": options, "schemas": schemas, "db": cap.db,
                      "records": cap.records, "binlog": copies[0], "binlogs": copies}
            target = out / f"{name}.json"
            target.write_text(json.dumps(sample, indent=1, ensure_ascii=False) + "\n",
                              encoding="utf-8")
            written.append(target)
            log(f"{target}: {len(cap.records)} records, connector started in "
                f"{cap.start_seconds:.1f} s, capture {cap.seconds:.1f} s")
    finally:
        if own:
            server.stop()
    return written
