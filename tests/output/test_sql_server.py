"""`render_sql` against a real MariaDB: the SQL it writes from a binlog replays the binlog, and its
flashback undoes it, value for value.

One throwaway MariaDB server (binlog_format=ROW, binlog_row_metadata=FULL, time zone +00:00) runs:

  1. `src`: tables covering the column types (signed and unsigned integers, YEAR, BIT, DECIMAL,
     FLOAT/DOUBLE, temporal types with fractions, negative TIMEs, zero dates and a date no
     calendar has, strings in utf8mb4, latin1, cp1251 and utf16 with quotes, backslashes, NUL and
     control characters, BINARY/VARBINARY/BLOB/TEXT, ENUM, SET, JSON (a LONGTEXT in MariaDB),
     GEOMETRY, POINT, INET6, UUID), an AUTO_INCREMENT column holding 0, a TIMESTAMP with ON
     UPDATE, stored and virtual generated columns, a string and a composite primary key, a table without a primary key holding duplicate
     and collation-equal rows, a MyISAM table; initial rows (binlog B); the snapshot S0; a
     randomized but seeded workload in several client sessions (binlog C: multi-statement and
     multi-table transactions, autocommit statements, multi-row statements, primary-key changes,
     deletes, a rolled-back transaction that touched the MyISAM table (whose changes stay and are
     logged), one rolled back untouched by the binlog, XA transactions PREPAREd in one session and
     committed / rolled back by a later one with other transactions in between, a one-phase XA);
     the snapshot S1.
  2. replay: render_sql(B + C, db_map={"src": "dst"}) into an empty copy of the schema -> equals S1
     (MariaDB ignores the values given to generated columns); render_sql(B + C, qualify=False,
     update_set="changed", omit_columns=<the generated columns>) run in database dst2 -> equals S1.
  3. flashback: render_sql(C, flashback=True) applied to src -> equals S0; the forward script of C
     applied again -> equals S1.
  4. binlog_row_image=MINIMAL (database `mini`): the replay into a copy equals the source; the
     flashback is refused with an error naming the file and offset.
  5. binlog_row_metadata=MINIMAL (database `anon`): render_sql refuses (no column names) and says to
     use binlog_row_metadata=FULL; with a schema supplied the replay equals the source.

Every script runs after a session set up to break it (another time zone and client charset,
NO_BACKSLASH_ESCAPES, ANSI_QUOTES, strict mode, NO_ZERO_DATE): the script's own settings must
undo that. Transactions come from binlog_grammar.binlog.stream.open_stream(...).transactions().

Snapshots SELECT every column as unambiguous text (HEX() for strings, binaries, JSON, spatial,
INET6 and UUID; CAST(... AS CHAR) for numbers and temporals, CAST(f AS DOUBLE) for FLOAT; the index
or bitmask and HEX of ENUM/SET), rows sorted, so nothing is lost in the comparison.
"""
from __future__ import annotations

import datetime as dt
import ipaddress
import json
import random
import re
import struct
import uuid
from dataclasses import dataclass, field

import pytest

from binlog_grammar.testing import mariadb
from binlog_grammar.errors import BinlogError
from binlog_grammar.testing.selects import ColInfo, render

from helpers.services import need_mariadb

pytestmark = pytest.mark.server

SEED = 4_2024_05
SESSION = "SET time_zone = '+00:00'; SET sql_mode = '';\n"

SET64 = [f"m{i}" for i in range(64)]

SCHEMA = {
    "ints": """CREATE TABLE ints (id INT PRIMARY KEY AUTO_INCREMENT,
        ti TINYINT, tu TINYINT UNSIGNED, si SMALLINT, su SMALLINT UNSIGNED, mi MEDIUMINT,
        mu MEDIUMINT UNSIGNED, i INT, iu INT UNSIGNED, bi BIGINT, bu BIGINT UNSIGNED, y YEAR,
        b1 BIT(1), b64 BIT(64)) ENGINE=InnoDB""",
    "nums": """CREATE TABLE nums (id INT PRIMARY KEY, d65 DECIMAL(65,30), d5 DECIMAL(5,2),
        du DECIMAL(20,4) UNSIGNED, f FLOAT, fu FLOAT UNSIGNED, dbl DOUBLE) ENGINE=InnoDB""",
    "temporal": """CREATE TABLE temporal (id INT PRIMARY KEY, d DATE, t0 TIME, t3 TIME(3),
        t6 TIME(6), dt0 DATETIME, dt6 DATETIME(6), ts0 TIMESTAMP NULL DEFAULT NULL,
        ts6 TIMESTAMP(6) NULL DEFAULT NULL,
        tsu TIMESTAMP(3) NULL DEFAULT NULL ON UPDATE CURRENT_TIMESTAMP(3)) ENGINE=InnoDB""",
    "strs": """CREATE TABLE strs (k VARCHAR(20) PRIMARY KEY, c_l1 CHAR(10) CHARACTER SET latin1,
        v_u4 VARCHAR(60), v_l1 VARCHAR(60) CHARACTER SET latin1,
        v_1251 VARCHAR(20) CHARACTER SET cp1251, v16 VARCHAR(20) CHARACTER SET utf16,
        bn BINARY(6), vb VARBINARY(64), tx TEXT, bl BLOB, mtx MEDIUMTEXT CHARACTER SET latin1
        ) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4""",
    "misc": f"""CREATE TABLE misc (id INT PRIMARY KEY, e ENUM('a','b','ä x'),
        e_l1 ENUM('é','ü') CHARACTER SET latin1, s SET('a','b','c'),
        s64 SET({','.join(repr(m) for m in SET64)}), s_l1 SET('é','ü') CHARACTER SET latin1,
        j JSON, g GEOMETRY, p POINT, ip INET6, u UUID) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4""",
    "comp": """CREATE TABLE comp (a INT, b VARCHAR(10), v INT, g BIGINT AS (v * 2) STORED,
        gv VARCHAR(20) AS (CONCAT(b, '#')) VIRTUAL, PRIMARY KEY (b, a)) ENGINE=InnoDB""",
    "nopk": """CREATE TABLE nopk (a INT, s VARCHAR(20) CHARACTER SET latin1, f FLOAT, dbl DOUBLE,
        d DATETIME(2), t TEXT, bn BINARY(3), j JSON, g GEOMETRY) ENGINE=InnoDB
        DEFAULT CHARSET=utf8mb4""",
    "myi": """CREATE TABLE myi (id INT PRIMARY KEY, v VARCHAR(20)) ENGINE=MyISAM""",
    "xa_t": """CREATE TABLE xa_t (id INT PRIMARY KEY, v VARCHAR(20)) ENGINE=InnoDB""",
}
KEYS = {"ints": ["id"], "nums": ["id"], "temporal": ["id"], "strs": ["k"], "misc": ["id"],
        "comp": ["b", "a"], "myi": ["id"]}


# -- value generators: SQL literals written here, independently of binlog_grammar.output.sql -------

def _utf8(text: str) -> str:
    """A string literal that needs no escaping: its UTF-8 bytes behind an introducer."""
    return f"_utf8mb4 X'{text.encode('utf-8').hex()}'" if text else "''"


TRICKY = ["", "'", "\\", "\0", "a'b\\c\0d", "\n\r\x1a\t\b", "O'Brien \\n", "x ", " lead", "ab  ",
          "%_*", "NULL", "--", "/*", "\"dq\"", "`bt`"]
UNICODE = ["😀🎉", "Müller éà", "Ωжか한", "𝄞z", "naïve café", "Ærøskøbing", "\u200b"]
LATIN1 = ["Müller", "naïve café", "ÿÿÿ", "€ ‚ ƒ", "\x81\x8d\x8f\x90\x9d", "©®", "a", "A", "é"]
CP1251 = ["Привет", "Ёлка", "ъ"]


def _pick_text(rng, pools, limit):
    parts = [rng.choice(rng.choice(pools)) for _ in range(rng.randint(1, 3))]
    return "".join(parts)[:limit]


def _bytes(rng, n):
    return bytes(rng.choice([0, 0xFF, 0x27, 0x5C, 0x0A, rng.randrange(256)]) for _ in range(n))


def _hexlit(data: bytes) -> str:
    return f"X'{data.hex()}'" if data else "''"


def _float32(rng):
    while True:
        x = struct.unpack("<f", struct.pack("<I", rng.getrandbits(32)))[0]
        if x == x and abs(x) != float("inf"):
            return x


def _float64(rng):
    while True:
        x = struct.unpack("<d", struct.pack("<Q", rng.getrandbits(64)))[0]
        if x == x and abs(x) != float("inf"):
            return x


def _int(rng, bits, unsigned):
    lo, hi = (0, (1 << bits) - 1) if unsigned else (-(1 << bits - 1), (1 << bits - 1) - 1)
    return str(rng.choice([lo, hi, 0, 1, lo + 1, hi - 1, rng.randint(lo, hi), rng.randint(lo, hi)]))


def _decimal(rng, whole, frac, unsigned=False):
    sign = "" if unsigned or rng.random() < 0.5 else "-"
    w = "".join(rng.choice("0123456789") for _ in range(rng.randint(1, whole))) if whole else "0"
    f = "".join(rng.choice("0123456789") for _ in range(rng.randint(0, frac)))
    return f"{sign}{w}.{f}" if f else f"{sign}{w}"


def _date(rng):
    return rng.choice(["'0000-00-00'", "'2021-00-10'", "'2021-02-00'", "'1000-01-01'",
                       "'9999-12-31'", "'2024-02-29'",
                       f"'{rng.randint(1000, 9999)}-{rng.randint(1, 12):02d}-{rng.randint(1, 28):02d}'"])


def _time(rng):
    fixed = ["'-838:59:59'", "'838:59:59'", "'-00:00:01.5'", "'-00:00:00.000001'", "'00:00:00'",
             "'-12:00:00.000001'", "'-838:59:59.999999'", "'838:59:59.999999'"]
    if rng.random() < 0.4:
        return rng.choice(fixed)
    sign = rng.choice(["", "-"])
    return (f"'{sign}{rng.randint(0, 838)}:{rng.randint(0, 59):02d}:{rng.randint(0, 59):02d}"
            f".{rng.randint(0, 999999):06d}'")


def _datetime(rng):
    fixed = ["'0000-00-00 00:00:00'", "'2021-02-00 10:11:12.5'", "'1000-01-01 00:00:00'",
             "'9999-12-31 23:59:59.999999'", "'0000-01-01 00:00:00'"]
    if rng.random() < 0.3:
        return rng.choice(fixed)
    return (f"'{rng.randint(1000, 9999)}-{rng.randint(1, 12):02d}-{rng.randint(1, 28):02d} "
            f"{rng.randint(0, 23):02d}:{rng.randint(0, 59):02d}:{rng.randint(0, 59):02d}"
            f".{rng.randint(0, 999999):06d}'")


def _timestamp(rng):
    fixed = ["'0000-00-00 00:00:00'", "'1970-01-01 00:00:01'", "'2038-01-19 03:14:07.999999'",
             "'1999-12-31 23:59:59.5'"]
    if rng.random() < 0.3:
        return rng.choice(fixed)
    t = dt.datetime.fromtimestamp(rng.randint(1, 2**31 - 1), dt.timezone.utc)
    return f"'{t:%Y-%m-%d %H:%M:%S}.{rng.randint(0, 999999):06d}'"


def _json(rng, depth=0):
    r = rng.random()
    if depth > 2 or r < 0.4:
        return rng.choice([None, True, False, rng.randint(-10**18, 10**18), _float64(rng),
                           rng.choice(TRICKY + UNICODE), 0.5, -0.0])
    if r < 0.7:
        return [_json(rng, depth + 1) for _ in range(rng.randint(0, 4))]
    return {rng.choice(TRICKY + UNICODE + ["k", "a b"]): _json(rng, depth + 1)
            for _ in range(rng.randint(0, 4))}


def _geometry(rng):
    srid = rng.choice([0, 4326, 3857])
    pts = [f"{rng.uniform(-180, 180)!r} {rng.uniform(-90, 90)!r}" for _ in range(3)]
    wkt = rng.choice([f"POINT({pts[0]})", f"LINESTRING({pts[0]},{pts[1]})",
                      f"MULTIPOINT({pts[0]},{pts[1]},{pts[2]})", "GEOMETRYCOLLECTION EMPTY"])
    return f"ST_GeomFromText('{wkt}', {srid})"


def _null(rng, literal, p=0.1):
    return "NULL" if rng.random() < p else literal


COLUMNS = {
    "ints": {
        "ti": lambda r: _int(r, 8, False), "tu": lambda r: _int(r, 8, True),
        "si": lambda r: _int(r, 16, False), "su": lambda r: _int(r, 16, True),
        "mi": lambda r: _int(r, 24, False), "mu": lambda r: _int(r, 24, True),
        "i": lambda r: _int(r, 32, False), "iu": lambda r: _int(r, 32, True),
        "bi": lambda r: _int(r, 64, False), "bu": lambda r: _int(r, 64, True),
        "y": lambda r: str(r.choice([0, 1901, 2155, 2000, r.randint(1901, 2155)])),
        "b1": lambda r: str(r.randint(0, 1)), "b64": lambda r: str(r.getrandbits(64)),
    },
    "nums": {
        "d65": lambda r: _decimal(r, 35, 30), "d5": lambda r: _decimal(r, 3, 2),
        "du": lambda r: _decimal(r, 16, 4, True),
        "f": lambda r: r.choice([repr(_float32(r)), "1e-45", "3.4028234e38", "16777217", "0.1",
                                 "-0e0"]),
        "fu": lambda r: repr(abs(_float32(r))),
        "dbl": lambda r: r.choice([repr(_float64(r)), repr(_float64(r)), "5e-324", "1e300",
                                   "-2.2250738585072014e-308", "0.1", "-0e0"]),
    },
    "temporal": {
        "d": _date, "t0": _time, "t3": _time, "t6": _time, "dt0": _datetime, "dt6": _datetime,
        "ts0": _timestamp, "ts6": _timestamp, "tsu": _timestamp,
    },
    "strs": {
        "c_l1": lambda r: _utf8(_pick_text(r, [LATIN1, TRICKY], 10).rstrip(" ")),
        "v_u4": lambda r: _utf8(_pick_text(r, [TRICKY, UNICODE, LATIN1], 60)),
        "v_l1": lambda r: _utf8(_pick_text(r, [TRICKY, LATIN1], 60)),
        "v_1251": lambda r: _utf8(_pick_text(r, [TRICKY, CP1251], 20)),
        "v16": lambda r: _utf8(_pick_text(r, [TRICKY, UNICODE], 20)),
        "bn": lambda r: _hexlit(_bytes(r, r.randint(0, 6))),
        "vb": lambda r: _hexlit(_bytes(r, r.randint(0, 64))),
        "tx": lambda r: _utf8(_pick_text(r, [TRICKY, UNICODE], 200) * r.randint(1, 50)),
        "bl": lambda r: _hexlit(_bytes(r, r.choice([0, 1, 5, 300, 2000]))),
        "mtx": lambda r: _utf8(r.choice(LATIN1) * r.randint(0, 3000)),
    },
    "misc": {
        "e": lambda r: _utf8(r.choice(["a", "b", "ä x", "", "zz"])),
        "e_l1": lambda r: _utf8(r.choice(["é", "ü", ""])),
        "s": lambda r: _utf8(",".join(m for m in "abc" if r.random() < 0.5)),
        "s64": lambda r: _utf8(",".join(m for m in SET64 if r.random() < 0.3)),
        "s_l1": lambda r: _utf8(",".join(m for m in ("é", "ü") if r.random() < 0.5)),
        "j": lambda r: _utf8(json.dumps(_json(r), ensure_ascii=r.random() < 0.5)),
        "g": _geometry, "p": lambda r: f"ST_GeomFromText('POINT({r.uniform(-9, 9)!r} 1)', "
                                       f"{r.choice([0, 4326])})",
        "ip": lambda r: "'" + str(ipaddress.IPv6Address(r.getrandbits(128))) + "'",
        "u": lambda r: f"'{uuid.UUID(int=r.getrandbits(128))}'",
    },
    "comp": {"v": lambda r: _int(r, 32, False)},
    "nopk": {
        "a": lambda r: str(r.randint(0, 4)), "s": lambda r: _utf8(r.choice(["a", "A", "x", "x ", "é", "É"])),
        "f": lambda r: r.choice(["0.1", "1.5", repr(_float32(r))]),
        "dbl": lambda r: r.choice(["0.1", repr(_float64(r))]),
        "d": lambda r: r.choice(["'2020-01-01 00:00:00.5'", "'0000-00-00 00:00:00'", _datetime(r)]),
        "t": lambda r: _utf8(r.choice(["", "a'b", "😀"])),
        "bn": lambda r: _hexlit(r.choice([b"", b"a", b"a\0", b"\0\0\0"])),
        "j": lambda r: _utf8(json.dumps(r.choice([[], {}, {"a": 1}, "x"]))),
        "g": lambda r: r.choice(["ST_GeomFromText('POINT(1 1)')", "ST_GeomFromText('POINT(1 1)', 4326)",
                                 "ST_GeomFromText('LINESTRING(1 1,1 1)')"]),
    },
    "myi": {"v": lambda r: _utf8(_pick_text(r, [TRICKY, UNICODE], 20))},
}


@dataclass
class Workload:
    rng: random.Random
    ids: dict = field(default_factory=dict)  # table -> set of live keys (tuples)
    next_id: int = 1000

    def fresh_key(self, table):
        self.next_id += 1
        n = self.next_id
        if table == "strs":
            return (self.rng.choice(["k", "K'", "k\\", "ключ", "k😀"]) + str(n),)
        if table == "comp":
            return (self.rng.choice(["x", "y", "ü"]), n)
        return (n,)

    def key_where(self, table, key):
        names = KEYS[table]
        if table == "comp":
            key = (key[0], key[1])
        return " AND ".join(f"`{n}` = {self.key_lit(table, n, v)}" for n, v in zip(names, key))

    @staticmethod
    def key_lit(table, name, v):
        return _utf8(v) if isinstance(v, str) else str(v)

    def row(self, table, key, nulls=True):
        r = self.rng
        cols = dict(zip(KEYS.get(table, []), (self.key_lit(table, n, v)
                                               for n, v in zip(KEYS.get(table, []), key))))
        for name, gen in COLUMNS[table].items():
            cols[name] = _null(r, gen(r)) if nulls else gen(r)
        return cols

    def insert(self, table, n=1):
        rows = []
        for _ in range(n):
            key = self.fresh_key(table)
            if table == "nopk":
                rows.append(self.row(table, ()))
            else:
                self.ids.setdefault(table, set()).add(key)
                rows.append(self.row(table, key))
        names = list(rows[0])
        values = ", ".join("(" + ", ".join(r[c] for c in names) + ")" for r in rows)
        return f"INSERT INTO `{table}` ({', '.join(f'`{c}`' for c in names)}) VALUES {values}"

    def live(self, table, k=1):
        keys = sorted(self.ids.get(table, ()), key=repr)
        return self.rng.sample(keys, min(k, len(keys)))

    def update(self, table):
        r = self.rng
        if table == "nopk":
            col = r.choice(list(COLUMNS["nopk"]))
            limit = " LIMIT 1" if r.random() < 0.5 else ""
            return (f"UPDATE nopk SET `{col}` = {COLUMNS['nopk'][col](r)} "
                    f"WHERE a = {r.randint(0, 4)}{limit}")
        keys = self.live(table, r.choice([1, 1, 1, 3]))
        if not keys:
            return self.insert(table)
        cols = r.sample(list(COLUMNS[table]), r.randint(1, min(3, len(COLUMNS[table]))))
        sets = [f"`{c}` = {_null(r, COLUMNS[table][c](r))}" for c in cols]
        if len(keys) == 1 and r.random() < 0.25:  # a primary-key change
            new = self.fresh_key(table)
            self.ids[table].discard(keys[0])
            self.ids[table].add(new)
            sets += [f"`{n}` = {self.key_lit(table, n, v)}" for n, v in zip(KEYS[table], new)]
        where = " OR ".join(f"({self.key_where(table, k)})" for k in keys)
        return f"UPDATE `{table}` SET {', '.join(sets)} WHERE {where}"

    def delete(self, table):
        r = self.rng
        if table == "nopk":
            return f"DELETE FROM nopk WHERE a = {r.randint(0, 4)} LIMIT 1"
        keys = self.live(table, r.choice([1, 1, 2]))
        if not keys:
            return self.insert(table)
        for k in keys:
            self.ids[table].discard(k)
        return f"DELETE FROM `{table}` WHERE " + " OR ".join(
            f"({self.key_where(table, k)})" for k in keys)

    def statement(self, tables):
        table = self.rng.choice(tables)
        op = self.rng.random()
        if op < 0.4:
            return self.insert(table, self.rng.choice([1, 1, 2, 3]))
        if op < 0.8:
            return self.update(table)
        return self.delete(table)


INNODB = ["ints", "nums", "temporal", "strs", "misc", "comp", "nopk"]


def initial_rows(w: Workload) -> str:
    out = ["SET SESSION sql_mode = 'NO_AUTO_VALUE_ON_ZERO'",
           "INSERT INTO ints (id, ti, y) VALUES (0, 1, 0)",  # an AUTO_INCREMENT column holding 0
           "SET SESSION sql_mode = ''",
           "INSERT INTO ints (ti) VALUES (7)"]  # an id the server picks
    w.ids["ints"] = {(0,), (1,)}
    out += ["SET SESSION sql_mode = 'ALLOW_INVALID_DATES'",  # a date no calendar has
            "INSERT INTO temporal (id, d, dt6) VALUES (1, '2021-02-30', '2021-04-31 10:00:00.5')",
            "INSERT INTO temporal (id, d) VALUES (2, '2020-01-01')",
            "SET SESSION sql_mode = ''"]
    for table in INNODB + ["myi"]:
        out.append("BEGIN")
        for _ in range(3):
            out.append(w.insert(table, 2))
        out.append("COMMIT")
    # duplicates and collation-equal rows in the table without a primary key
    out.append("INSERT INTO xa_t VALUES (100, 'a'), (101, 'b'), (102, 'c')")
    # (no random statement touches a = 9)
    out.append("INSERT INTO nopk (a, s, f, d, t) VALUES (9, 'a', 0.1, '2020-01-01 00:00:00.5', 'x'), "
               "(9, 'a', 0.1, '2020-01-01 00:00:00.5', 'x'), (9, 'A', 0.1, NULL, 'x'), "
               "(9, 'a ', 0.1, NULL, 'x'), (9, NULL, NULL, NULL, NULL), (9, NULL, NULL, NULL, NULL), "
               "(2, NULL, NULL, NULL, NULL)")
    return ";\n".join(out) + ";\n"


def workload(w: Workload, transactions=120) -> list:
    """The workload as client sessions (scripts run one after another, each in its own
    connection): the XA transactions PREPAREd in one session are committed or rolled back by a
    later one, with other transactions in between."""
    r = w.rng
    out = [  # rows of the table without a primary key that its collation cannot tell apart
        "UPDATE nopk SET t = 'upd' WHERE a = 9 AND BINARY s = 'a ' LIMIT 1",
        "UPDATE nopk SET t = 'upd2' WHERE a = 9 AND BINARY s = 'a' LIMIT 1",
        "DELETE FROM nopk WHERE a = 9 AND s IS NULL LIMIT 1",
        "UPDATE temporal SET d = '2021-02-31' WHERE id = 2"]
    for n in range(transactions):
        kind = r.random()
        if n == transactions // 2:  # rolled back after touching MyISAM: those changes stay
            saved = {t: set(k) for t, k in w.ids.items()}
            out += ["BEGIN", w.statement(["ints", "strs"]), w.insert("myi"), w.update("myi"),
                    w.statement(["nums"]), "ROLLBACK"]
            myi = w.ids["myi"]
            w.ids = saved
            w.ids["myi"] = myi
        elif n == transactions // 3:  # rolled back, InnoDB only: not in the binlog at all
            saved = {t: set(k) for t, k in w.ids.items()}
            out += ["BEGIN", w.statement(INNODB), w.statement(INNODB), "ROLLBACK"]
            w.ids = saved
        elif n == transactions // 4:  # XA with one phase: an ordinary transaction in the binlog
            out += ["XA START 'one'", w.statement(["ints"]), w.statement(["misc"]), "XA END 'one'",
                    "XA COMMIT 'one' ONE PHASE"]
        elif kind < 0.25:  # one statement, autocommit
            out.append(w.statement(INNODB))
        else:
            tables = r.sample(INNODB, r.randint(1, 3))
            out += ["BEGIN"] + [w.statement(tables) for _ in range(r.randint(2, 6))] + ["COMMIT"]
        if n == transactions // 2 + 1:
            out.append("")  # end of the first session
    # bulk statements: many rows per event
    out += ["UPDATE ints SET ti = IF(ti IS NULL, 1, -ti DIV 2), y = 2001 WHERE id > 0",
            "UPDATE nopk SET f = 2.5 WHERE a = 1",
            "DELETE FROM nums WHERE id % 3 = 0"]
    text = ";\n".join(out) + ";\n"
    first, rest = text.split(";\n;\n", 1)
    # XA PREPAREd here, completed in the last session (xa_t is only touched by them)
    prepare = ("XA START 'x1', 'b', 7; INSERT INTO xa_t VALUES (1, 'x1'), (2, 'x1');"
               " UPDATE xa_t SET v = 'x1b' WHERE id = 100; DELETE FROM xa_t WHERE id = 101;"
               " XA END 'x1', 'b', 7; XA PREPARE 'x1', 'b', 7;\n")
    prepare2 = ("XA START 'x2'; INSERT INTO xa_t VALUES (3, 'x2'); UPDATE xa_t SET v = 'x2'"
                " WHERE id = 102; XA END 'x2'; XA PREPARE 'x2';\n")
    complete = "XA COMMIT 'x1', 'b', 7; XA ROLLBACK 'x2';\n"
    return [first + ";\n", prepare, prepare2, rest, complete]


# -- snapshots ------------------------------------------------------------------------------------

def snapshot(db, schema) -> dict:
    cols = {}
    for line in db.sql("SELECT TABLE_NAME, COLUMN_NAME, DATA_TYPE, CHARACTER_SET_NAME FROM "
                       f"information_schema.COLUMNS WHERE TABLE_SCHEMA = '{schema}' "
                       "ORDER BY TABLE_NAME, ORDINAL_POSITION").splitlines():
        t, c, typ, charset = line.split("\t")
        cols.setdefault(t, []).append(ColInfo(c, 0, typ, typ, None if charset == "NULL" else charset,
                                              True, False, ""))
    out = {}
    for t, cs in cols.items():
        text = db.sql(SESSION + f"SELECT {', '.join(render(c) for c in cs)} FROM `{t}`",
                      database=schema)
        out[t] = sorted(tuple(line.split("\t")) for line in text.splitlines())
    return out


def diff(a: dict, b: dict) -> list:
    out = []
    for t in sorted(set(a) | set(b)):
        ra, rb = a.get(t, []), b.get(t, [])
        if ra != rb:
            only_a = [r for r in ra if r not in rb][:3]
            only_b = [r for r in rb if r not in ra][:3]
            out.append(f"{t}: {len(ra)} vs {len(rb)} rows; only in first {only_a!r:.600}; "
                       f"only in second {only_b!r:.600}")
    return out


# -- transactions of binlog files -----------------------------------------------------------------

def transactions(paths, schemas=None):
    from binlog_grammar.binlog.stream import open_stream

    return list(open_stream([str(p) for p in paths], schemas=schemas).transactions())


# -- the server run -------------------------------------------------------------------------------

@dataclass
class Run:
    s0: dict = field(default_factory=dict)
    s1: dict = field(default_factory=dict)
    replay: dict = field(default_factory=dict)
    replay2: dict = field(default_factory=dict)
    flashback: dict = field(default_factory=dict)
    again: dict = field(default_factory=dict)
    txs_c: list = field(default_factory=list)
    scripts: dict = field(default_factory=dict)
    errors: dict = field(default_factory=dict)
    mini_src: dict = field(default_factory=dict)
    mini_replay: dict = field(default_factory=dict)
    mini_flashback_error: object = None
    mini_files: list = field(default_factory=list)
    anon_src: dict = field(default_factory=dict)
    anon_replay: dict = field(default_factory=dict)
    anon_error: object = None


def _mark(db):
    """Start a new binlog file; `_new_files(db, mark)` then gives the files written since."""
    before = set(db.binlogs())
    db.sql("FLUSH BINARY LOGS")
    return before


def _new_files(db, before):
    db.sql("FLUSH BINARY LOGS")
    return [f for f in db.binlogs() if f not in before][:-1]  # the last one was just opened


def _create(db, schema, creates):
    db.sql(f"CREATE DATABASE {schema} CHARACTER SET utf8mb4")
    db.sql(";\n".join(creates) + ";\n", database=schema)


# A session the script must not depend on: its own SET statements have to put things right.
HOSTILE = ("SET time_zone = '+05:30'; SET NAMES latin1; "
           "SET sql_mode = 'STRICT_ALL_TABLES,NO_BACKSLASH_ESCAPES,NO_ZERO_DATE,ANSI_QUOTES';\n")


def _script(lines) -> str:
    return HOSTILE + "".join(lines)


def _attempt(run, key, fn):
    try:
        return fn()
    except Exception as e:  # noqa: BLE001 - reported by the test that needs it
        run.errors[key] = e
        return None


def _main_phase(db, run):
    from binlog_grammar.output.sql import render_sql

    w = Workload(random.Random(SEED))
    _create(db, "src", list(SCHEMA.values()))
    before = _mark(db)
    db.sql(SESSION + initial_rows(w), database="src")
    files_b = _new_files(db, before)
    run.s0 = snapshot(db, "src")
    before = _mark(db)
    for session in workload(w):
        db.sql(SESSION + session, database="src")
    files_c = _new_files(db, before)
    run.s1 = snapshot(db, "src")
    txs_b = transactions(files_b)
    run.txs_c = transactions(files_c)

    def replay():
        _create(db, "dst", list(SCHEMA.values()))
        script = _script(render_sql(txs_b + run.txs_c, db_map={"src": "dst"}))
        run.scripts["replay"] = script
        db.sql(script)
        return snapshot(db, "dst")

    def replay2():
        _create(db, "dst2", list(SCHEMA.values()))
        script = _script(render_sql(txs_b + run.txs_c, qualify=False, update_set="changed",
                                    omit_columns={"src.comp": ["g", "gv"]}))
        run.scripts["replay2"] = script
        db.sql(script, database="dst2")
        return snapshot(db, "dst2")

    def flashback():
        script = _script(render_sql(run.txs_c, flashback=True))
        run.scripts["flashback"] = script
        db.sql(script)
        return snapshot(db, "src")

    def again():
        db.sql(_script(render_sql(run.txs_c)))
        return snapshot(db, "src")

    run.replay = _attempt(run, "replay", replay)
    run.replay2 = _attempt(run, "replay2", replay2)
    run.flashback = _attempt(run, "flashback", flashback)
    if run.flashback is not None:
        run.again = _attempt(run, "again", again)


MINI_TABLES = ["CREATE TABLE t (id INT PRIMARY KEY, a INT DEFAULT 5, s VARCHAR(20), j TEXT, "
               "ts TIMESTAMP(3) NULL DEFAULT NULL) ENGINE=InnoDB",
               "CREATE TABLE np (a INT, b VARCHAR(10) DEFAULT 'dflt') ENGINE=InnoDB"]
MINI_WORK = """SET SESSION binlog_row_image = MINIMAL;
INSERT INTO t (id, s) VALUES (1, 'one'), (2, 'two'), (3, 'three');
INSERT INTO t VALUES (4, 4, 'four', '{"a": 1}', '2001-02-03 04:05:06.789');
INSERT INTO np (a) VALUES (1), (1), (2);
BEGIN;
UPDATE t SET a = a + 1, s = CONCAT(s, '''!') WHERE id IN (1, 4);
UPDATE t SET id = 10 WHERE id = 2;
UPDATE np SET b = 'x\\\\y' WHERE a = 1 LIMIT 1;
DELETE FROM t WHERE id = 3;
COMMIT;
DELETE FROM np WHERE a = 2;
"""


def _minimal_phase(db, run):
    from binlog_grammar.output.sql import render_sql

    _create(db, "mini", MINI_TABLES)
    before = _mark(db)
    db.sql(SESSION + MINI_WORK, database="mini")
    run.mini_files = _new_files(db, before)
    run.mini_src = snapshot(db, "mini")
    txs = transactions(run.mini_files)

    def replay():
        _create(db, "mini_dst", MINI_TABLES)
        db.sql(_script(render_sql(txs, db_map={"mini": "mini_dst"})))
        return snapshot(db, "mini_dst")

    run.mini_replay = _attempt(run, "mini_replay", replay)
    try:
        _script(render_sql(txs, flashback=True))
    except BinlogError as e:
        run.mini_flashback_error = e


ANON_TABLE = ["CREATE TABLE t (id INT PRIMARY KEY, v VARCHAR(20), n BIGINT UNSIGNED) ENGINE=InnoDB"]


def _anon_phase(db, run):
    from binlog_grammar.output.sql import render_sql

    db.sql("SET GLOBAL binlog_row_metadata = MINIMAL")
    _create(db, "anon", ANON_TABLE)
    before = _mark(db)
    db.sql(SESSION + "INSERT INTO t VALUES (1, 'a', 18446744073709551615), (2, 'b''', 0); "
           "UPDATE t SET v = 'c', id = 3 WHERE id = 1; DELETE FROM t WHERE id = 2;", database="anon")
    files = _new_files(db, before)
    db.sql("SET GLOBAL binlog_row_metadata = FULL")
    run.anon_src = snapshot(db, "anon")
    try:
        _script(render_sql(transactions(files)))
    except BinlogError as e:
        run.anon_error = e
    schemas = {"anon.t": {"columns": ["id", "v", "n"], "primary_key": ["id"]}}

    def replay():
        _create(db, "anon_dst", ANON_TABLE)
        db.sql(_script(render_sql(transactions(files, schemas), db_map={"anon": "anon_dst"})))
        return snapshot(db, "anon_dst")

    run.anon_replay = _attempt(run, "anon_replay", replay)


@pytest.fixture(scope="module")
def server_run():
    need_mariadb()
    run = Run()
    with mariadb.MariaDB(["--binlog-row-metadata=FULL", "--default-time-zone=+00:00",
                          "--max-allowed-packet=64M"]) as db:
        _main_phase(db, run)
        _minimal_phase(db, run)
        _anon_phase(db, run)
    return run


def _ok(run, key):
    if key in run.errors:
        e = run.errors[key]
        pytest.fail(f"{key} failed: {type(e).__name__}: {str(e)[:3000]}")


# -- tests ----------------------------------------------------------------------------------------

def test_workload_is_what_the_test_claims(server_run):
    """The binlog of the workload has what the other tests rely on: multi-statement and
    multi-table transactions, primary-key changes, inserts, deletes, XA PREPAREd transactions,
    every table touched, and S0 != S1."""
    txs = server_run.txs_c
    changes = [ch for tx in txs for ch in tx.changes]
    assert sum(1 for tx in txs if tx.end == "xa_prepare") == 2
    assert any(len({(c.db, c.table) for c in tx.changes}) > 1 for tx in txs)
    assert sum(1 for tx in txs if len(tx.changes) > 3) > 5
    assert {ch.op for ch in changes} == {"c", "u", "d"}
    assert {ch.table for ch in changes} == set(SCHEMA)
    pk_moves = [ch for ch in changes if ch.op == "u" and ch.primary_key
                and any(ch.before[k] != ch.after[k] for k in ch.primary_key)]
    assert len(pk_moves) >= 3
    assert server_run.s0 != server_run.s1
    assert len(changes) > 200


def test_replay_into_copy_equals_source(server_run):
    _ok(server_run, "replay")
    d = diff(server_run.s1, server_run.replay)
    assert not d, "replay into dst differs from src:\n" + "\n".join(d)


def test_replay_unqualified_changed_columns_equals_source(server_run):
    _ok(server_run, "replay2")
    d = diff(server_run.s1, server_run.replay2)
    assert not d, "replay (qualify=False, update_set='changed') differs from src:\n" + "\n".join(d)


def test_flashback_restores_snapshot(server_run):
    _ok(server_run, "flashback")
    d = diff(server_run.s0, server_run.flashback)
    assert not d, "flashback did not restore the snapshot before the workload:\n" + "\n".join(d)
    script = server_run.scripts["flashback"]
    assert "-- XA transaction X'7831',X'62',7: PREPAREd here, committed at " in script
    assert "-- XA transaction X'7832',X'',1: PREPAREd here, rolled back at " in script


def test_replay_after_flashback_equals_source_again(server_run):
    _ok(server_run, "flashback")
    _ok(server_run, "again")
    d = diff(server_run.s1, server_run.again)
    assert not d, "\n".join(d)


def test_minimal_row_image_replays_but_is_not_flashed_back(server_run):
    _ok(server_run, "mini_replay")
    d = diff(server_run.mini_src, server_run.mini_replay)
    assert not d, "\n".join(d)
    e = server_run.mini_flashback_error
    assert e is not None, "flashback of a binlog_row_image=MINIMAL update was not refused"
    assert e.file and str(e.file) in {str(f) for f in server_run.mini_files} and e.offset > 4
    assert "binlog_row_image" in str(e) and "UPDATE_ROWS" in str(e)


def test_minimal_metadata_needs_names(server_run):
    e = server_run.anon_error
    assert e is not None, "SQL was written for columns the binlog does not name"
    assert "binlog_row_metadata=FULL" in str(e) and "anon.t" in str(e) and e.offset > 4
    _ok(server_run, "anon_replay")
    d = diff(server_run.anon_src, server_run.anon_replay)
    assert not d, "\n".join(d)


def test_script_shape(server_run):
    """Statements name `db`.`table`, one transaction per BEGIN/COMMIT with a GTID header, the
    session settings come first."""
    _ok(server_run, "replay")
    lines = server_run.scripts["replay"].splitlines()
    assert lines[2:6] == ["/*!\\C utf8mb4 */;", "SET NAMES utf8mb4;", "SET time_zone='+00:00';",
                          "SET sql_mode='NO_AUTO_VALUE_ON_ZERO,ALLOW_INVALID_DATES,"
                          "NO_ENGINE_SUBSTITUTION';"]
    begins = [i for i, line in enumerate(lines) if line == "BEGIN;"]
    headers = []
    for i in begins:
        j = i - 1
        while lines[j].startswith("-- XA transaction "):  # a note between header and BEGIN
            j -= 1
        headers.append(lines[j])
    bad = [h for h in headers if not re.match(r"-- GTID 0-1-\d+, mariadb-bin\.\d+:\d+-\d+, "
                                              r"\d{4}-\d\d-\d\d \d\d:\d\d:\d\d UTC, server 1$", h)]
    assert begins and not bad, bad[:3]
    assert lines.count("COMMIT;") == len(begins)
    stmts = [line for line in lines if not line.startswith("--") and line.endswith(";")]
    dml = [s for s in stmts if s.split()[0] in ("INSERT", "UPDATE", "DELETE")]
    assert all("`dst`.`" in s for s in dml)
    assert any(s.startswith("DELETE FROM `dst`.`nopk` WHERE ") and s.endswith(" LIMIT 1;")
               for s in dml)

