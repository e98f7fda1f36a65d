"""Write the sample binlogs the project ships (samples/), with a real MariaDB server.

    python tools/make_samples.py [--output samples]

Starts MariaDB on loopback with a temporary datadir, runs a small deterministic workload
(DDL, multi-row inserts, updates, deletes, a rolled-back transaction, statement- and
row-based events, full row metadata and compressed events), rotates the log, and copies the
binlog files out. The files differ from run to run only in timestamps and server UUIDs.
"""
import argparse
import shutil
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
from binlog_grammar.testing.mariadb import MariaDB  # noqa: E402

WORKLOAD = """
CREATE DATABASE shop;
USE shop;
CREATE TABLE customers (id INT PRIMARY KEY, name VARCHAR(40) CHARACTER SET utf8mb4, city VARCHAR(30),
  balance DECIMAL(12,2), born DATE, seen DATETIME(6), note TEXT, flags SET('a','b','c'),
  tier ENUM('free','pro','team'), ratio DOUBLE, small TINYINT UNSIGNED, big BIGINT);
CREATE TABLE orders (id BIGINT UNSIGNED AUTO_INCREMENT PRIMARY KEY, customer_id INT, amount DECIMAL(10,2),
  placed TIMESTAMP(3) NOT NULL DEFAULT '2024-01-01 00:00:00', payload JSON, KEY (customer_id));
INSERT INTO customers VALUES
  (1, 'Ada', 'London', 1200.50, '1815-12-10', '2024-03-01 10:00:00.123456', 'first', 'a,c', 'pro', 0.25, 255, -9223372036854775808),
  (2, 'Grace', 'Arlington', -3.10, '1906-12-09', '2024-03-02 11:30:00.5', '', '', 'free', -1e300, 0, 9223372036854775807),
  (3, 'Linus', 'Helsinki', 0.00, '1969-12-28', NULL, NULL, 'b', 'team', NULL, 7, 0),
  (4, 'Émilie 😀', 'Paris', 99999999.99, '0000-00-00', '0000-00-00 00:00:00', REPEAT('x', 300), 'a,b,c', NULL, 3.5, 1, 1);
BEGIN;
INSERT INTO orders (customer_id, amount, placed, payload) VALUES
  (1, 10.00, '2024-03-01 10:00:01.001', '{"items": [1, 2, 3], "gift": false}'),
  (2, 20.50, '2024-03-01 10:00:02.002', '{"items": [], "note": "rush"}'),
  (1, 5.25, '2024-03-01 10:00:03.003', NULL);
UPDATE customers SET balance = balance - 10.00, city = 'Cambridge' WHERE id = 1;
COMMIT;
BEGIN;
DELETE FROM orders WHERE id = 2;
UPDATE customers SET id = 5 WHERE id = 3;
COMMIT;
BEGIN;
INSERT INTO orders (customer_id, amount) VALUES (9, 1.00);
ROLLBACK;
SET SESSION binlog_format = 'STATEMENT';
UPDATE orders SET amount = amount + 1 WHERE customer_id = 1;
SET SESSION binlog_format = 'ROW';
SET GLOBAL log_bin_compress = ON;
INSERT INTO orders (customer_id, amount, payload) VALUES (4, 42.00, '{"compressed": "yes, a long enough value to be worth compressing compressing compressing"}');
UPDATE orders SET amount = 43.00 WHERE customer_id = 4;
SET GLOBAL log_bin_compress = OFF;
FLUSH BINARY LOGS;
DELETE FROM customers WHERE id = 2;
"""


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--output", default=str(Path(__file__).resolve().parent.parent / "samples"))
    args = ap.parse_args()
    out = Path(args.output)
    out.mkdir(parents=True, exist_ok=True)
    opts = ["--binlog-row-metadata=FULL", "--binlog-annotate-row-events=ON",
            "--log-bin-compress-min-len=10", "--binlog-checksum=CRC32"]
    with MariaDB(opts) as db:
        db.sql(WORKLOAD)
        db.sql("FLUSH BINARY LOGS;")
        files = db.binlogs()[:-1]  # the last file is still open
        for i, f in enumerate(files, 1):
            dest = out / f"mariadb-10.11-sample.{i:06d}"
            shutil.copyfile(f, dest)
            print(f"wrote {dest} ({dest.stat().st_size} bytes)")


if __name__ == "__main__":
    main()
