#!/usr/bin/env python3
"""The same python-mysql-replication script through the real library and through
binlog_grammar.compat.pymysqlreplication, timed side by side on one throwaway MariaDB.

    python3 tools/compat_bench.py --rows 200000 --repeat 3

A table of mixed column types gets ROWS rows (inserted 1,000 per transaction, then a tenth of
them updated and deleted); each run reads the whole binlog without blocking from
mariadb-bin.000001:4, touching every row's values (no printing), in a fresh interpreter; prints
each side's best wall time, events and values per second and the ratio. (With is_mariadb=True and
no auto_position the library restarts from the first binlog whenever pymysql reports a lost
connection, which it did under load here, and then reads the same events again.)
"""
from __future__ import annotations

import argparse
import os
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from binlog_grammar.testing.mariadb import MariaDB  # noqa: E402

SCRIPT = '''
import os
from pymysqlreplication import BinLogStreamReader
from pymysqlreplication.row_event import DeleteRowsEvent, UpdateRowsEvent, WriteRowsEvent
s = BinLogStreamReader(connection_settings={"host": "127.0.0.1", "port": int(os.environ["PORT"]),
                       "user": "bench", "passwd": "bench-pw"}, server_id=99, resume_stream=True,
                       log_file="mariadb-bin.000001", log_pos=4,
                       only_events=[WriteRowsEvent, UpdateRowsEvent, DeleteRowsEvent])
events = rows = 0
for e in s:
    events += 1
    for r in e.rows:
        rows += len(r.get("values") or r["after_values"])
s.close()
print(events, rows)
'''


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[1])
    ap.add_argument("--rows", type=int, default=100_000)
    ap.add_argument("--repeat", type=int, default=3)
    args = ap.parse_args()
    db = MariaDB(["--binlog-row-metadata=FULL"]).start()
    try:
        db.sql("SET sql_log_bin=0; CREATE USER bench@'%' IDENTIFIED BY 'bench-pw';"
               "GRANT REPLICATION SLAVE, BINLOG MONITOR, SELECT ON *.* TO bench@'%';")
        db.sql("CREATE DATABASE b; USE b; CREATE TABLE t (id INT PRIMARY KEY, name VARCHAR(40), "
               "price DECIMAL(10,2), at DATETIME(3), note TEXT, flags SET('a','b','c'), "
               "n BIGINT, d DOUBLE)")
        step = 1000
        for lo in range(0, args.rows, step):
            db.sql("USE b; BEGIN; INSERT INTO t VALUES " + ", ".join(
                f"({i}, 'name {i}', {i % 997}.25, '2024-01-01 00:00:{i % 60:02d}.123', "
                f"'note note {i}', 'a,c', {i * 7919}, {i / 3})"
                for i in range(lo, min(lo + step, args.rows))) + "; COMMIT;")
        db.sql(f"USE b; UPDATE t SET price = price + 1 WHERE id % 10 = 0; "
               f"DELETE FROM t WHERE id % 10 = 5;")
        print(f"workload written ({args.rows} rows)", file=sys.stderr, flush=True)
        env = {**os.environ, "PORT": str(db.port), "PYTHONPATH": str(ROOT)}
        best = {}
        for how, text in (("python-mysql-replication", SCRIPT),
                          ("binlog_grammar.compat", SCRIPT.replace(
                              "from pymysqlreplication", "from binlog_grammar.compat.pymysqlreplication"))):
            for _ in range(args.repeat):
                t = time.perf_counter()
                out = subprocess.run([sys.executable, "-c", text], capture_output=True, text=True,
                                     env=env, check=True).stdout.split()
                took = time.perf_counter() - t
                print(f"  {how}: {took:.2f} s", file=sys.stderr, flush=True)
                if how not in best or took < best[how][0]:
                    best[how] = (took, int(out[0]), int(out[1]))
        for how, (took, events, values) in best.items():
            print(f"{how:26} {took:7.2f} s  {events} rows events, {values / took:,.0f} values/s")
        real, shim = best["python-mysql-replication"][0], best["binlog_grammar.compat"][0]
        print(f"ratio (shim / library): {shim / real:.2f}x")
        same = best["python-mysql-replication"][1:] == best["binlog_grammar.compat"][1:]
        print("same events and values: " + ("yes" if same else "NO"))
        return 0 if same else 1
    finally:
        db.stop()
        db.cleanup()


def _stop_on_sigterm():
    """A SIGTERM (timeout) ends main() through its finally, which stops the server."""
    import signal

    def stop(*_):
        raise KeyboardInterrupt
    signal.signal(signal.SIGTERM, stop)


if __name__ == "__main__":
    _stop_on_sigterm()
    sys.exit(main())
