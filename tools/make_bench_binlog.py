#!/usr/bin/env python3
"""Write a deterministic benchmark binlog with a real MariaDB server.

    python tools/make_bench_binlog.py OUT_DIR [--mb 120] [--seed 1]

Starts a throwaway MariaDB (binlog_grammar.testing.mariadb: root on loopback, temporary datadir,
binlog_format=ROW, binlog_row_metadata=FULL), runs a sysbench-like workload on `sbtest1` (id, k,
c CHAR(120), pad CHAR(60)) plus a wide table of every common column type, in rounds: multi-row
inserts, range updates and deletes, then 150 small OLTP transactions as sysbench's oltp_write_only
makes them (point updates, a delete and an insert each; some also update the wide table), until the binlog holds at least --mb megabytes, then copies the binlog files to
OUT_DIR and prints their names and sizes. The same seed gives the same statements (the bytes differ
only in timestamps and server-generated values).
"""
from __future__ import annotations

import argparse
import random
import shutil
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from binlog_grammar.testing.mariadb import MariaDB, available  # noqa: E402

SCHEMA = """
CREATE DATABASE bench;
USE bench;
CREATE TABLE sbtest1 (id INT NOT NULL PRIMARY KEY, k INT NOT NULL DEFAULT 0,
  c CHAR(120) NOT NULL DEFAULT '', pad CHAR(60) NOT NULL DEFAULT '', KEY k_1 (k)) ENGINE=InnoDB;
CREATE TABLE wide (id INT NOT NULL PRIMARY KEY, ti TINYINT, si SMALLINT UNSIGNED, mi MEDIUMINT,
  bi BIGINT, dc DECIMAL(18,4), fl FLOAT, db DOUBLE, dt DATE, tm TIME(3), dtm DATETIME(6),
  ts TIMESTAMP(3) NULL, yr YEAR, vc VARCHAR(200), tx TEXT, bl BLOB, en ENUM('a','b','c'),
  st SET('x','y','z'), bt BIT(12), js JSON) ENGINE=InnoDB;
"""


def _sb_rows(rng, start, n):
    out = []
    for i in range(start, start + n):
        c = "-".join(f"{rng.randrange(10**11):011d}" for _ in range(10))
        pad = "-".join(f"{rng.randrange(10**11):011d}" for _ in range(5))
        out.append(f"({i},{rng.randrange(1, 10**6)},'{c}','{pad}')")
    return out


def _wide_rows(rng, start, n):
    out = []
    for i in range(start, start + n):
        null = rng.random() < 0.1
        out.append("(" + ",".join([
            str(i), str(rng.randrange(-128, 128)), str(rng.randrange(0, 65536)),
            str(rng.randrange(-8388608, 8388608)), str(rng.randrange(-2**63, 2**63)),
            f"{rng.randrange(-10**13, 10**13)}.{rng.randrange(10**4):04d}",
            repr(round(rng.uniform(-1e6, 1e6), 2)), repr(rng.uniform(-1e12, 1e12)),
            f"'{rng.randrange(1000, 9999)}-{rng.randrange(1, 13):02d}-{rng.randrange(1, 29):02d}'",
            f"'{'-' if rng.random() < .3 else ''}{rng.randrange(0, 838):02d}:{rng.randrange(60):02d}:"
            f"{rng.randrange(60):02d}.{rng.randrange(1000):03d}'",
            f"'{rng.randrange(1000, 9999)}-{rng.randrange(1, 13):02d}-{rng.randrange(1, 29):02d} "
            f"{rng.randrange(24):02d}:{rng.randrange(60):02d}:{rng.randrange(60):02d}.{rng.randrange(10**6):06d}'",
            "NULL" if null else f"'20{rng.randrange(10, 37)}-{rng.randrange(1, 13):02d}-{rng.randrange(1, 29):02d} 12:00:00.{rng.randrange(1000):03d}'",
            str(rng.choice([0, rng.randrange(1901, 2156)])),
            f"'v{rng.randrange(10**9)}{'x' * rng.randrange(0, 150)}'",
            "NULL" if null else f"'{'t' * rng.randrange(0, 400)}'",
            f"UNHEX('{rng.randbytes(rng.randrange(0, 64)).hex()}')",
            f"'{rng.choice('abc')}'", f"'{','.join(sorted(rng.sample('xyz', rng.randrange(0, 4))))}'",
            f"b'{rng.randrange(4096):012b}'",
            f"'{{\"n\": {rng.randrange(10**6)}, \"s\": \"{rng.randrange(10**6)}\"}}'",
        ]) + ")")
    return out


OLTP_PER_ROUND = 150


def workload(db, rng, target_bytes):
    db.sql(SCHEMA)
    next_sb, next_wide = 1, 1
    while True:
        size = sum(p.stat().st_size for p in db.binlogs())
        if size >= target_bytes:
            return size
        stmts = ["USE bench;", "BEGIN;"]
        stmts.append("INSERT INTO sbtest1 VALUES " + ",".join(_sb_rows(rng, next_sb, 1000)) + ";")
        next_sb += 1000
        stmts.append("INSERT INTO wide VALUES " + ",".join(_wide_rows(rng, next_wide, 200)) + ";")
        next_wide += 200
        stmts.append("COMMIT;")
        lo = max(1, next_sb - 3000)
        stmts.append(f"UPDATE sbtest1 SET k = k + 1 WHERE id BETWEEN {lo} AND {lo + 400};")
        stmts.append(f"UPDATE wide SET vc = CONCAT(vc, 'u'), dc = dc + 1 WHERE id BETWEEN "
                     f"{max(1, next_wide - 600)} AND {max(1, next_wide - 600) + 80};")
        stmts.append(f"DELETE FROM sbtest1 WHERE id BETWEEN {lo + 500} AND {lo + 600};")
        stmts.append(f"DELETE FROM wide WHERE id BETWEEN {max(1, next_wide - 400)} AND "
                     f"{max(1, next_wide - 400) + 10};")
        # OLTP transactions as sysbench's oltp_write_only makes them: two point UPDATEs, a point
        # DELETE and an INSERT of the deleted id, so most events are small and per-event costs
        # count as they do on a busy server's binlog
        for _ in range(OLTP_PER_ROUND):
            i = rng.randrange(1, next_sb)
            (row,) = _sb_rows(rng, i, 1)
            c = "-".join(f"{rng.randrange(10**11):011d}" for _ in range(10))
            stmts += ["BEGIN;", f"UPDATE sbtest1 SET k = k + 1 WHERE id = {rng.randrange(1, next_sb)};",
                      f"UPDATE sbtest1 SET c = '{c}' WHERE id = {rng.randrange(1, next_sb)};",
                      f"DELETE FROM sbtest1 WHERE id = {i};", f"INSERT INTO sbtest1 VALUES {row};"]
            if rng.random() < 0.2:
                w = rng.randrange(1, next_wide)
                stmts.append(f"UPDATE wide SET bi = bi + 1, tm = '01:02:03.5' WHERE id = {w};")
            stmts.append("COMMIT;")
        db.sql("\n".join(stmts))


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("out")
    ap.add_argument("--mb", type=int, default=120)
    ap.add_argument("--seed", type=int, default=1)
    args = ap.parse_args(argv)
    if not available():
        sys.exit("mariadbd is not installed (apt-get install mariadb-server)")
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    with MariaDB(["--binlog-row-metadata=FULL", "--max-binlog-size=1073741824",
                  "--max-allowed-packet=256M", "--default-time-zone=+00:00"]) as db:
        workload(db, random.Random(args.seed), args.mb << 20)
        db.sql("FLUSH BINARY LOGS;")
        for p in db.binlogs()[:-1]:
            shutil.copy(p, out / p.name)
            print(f"{out / p.name}\t{p.stat().st_size}")


if __name__ == "__main__":
    main()
