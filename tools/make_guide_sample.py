"""Write the binlog the user guide's JSON-lines examples are read from
(docs/guide/binlog/mariadb-10.11-types.000001), with a real MariaDB server.

    python tools/make_guide_sample.py [--output docs/guide/binlog]

Starts MariaDB on loopback with a temporary datadir (binlog_row_metadata=FULL, time zone UTC),
creates one table per column type of binlog_grammar/cli/docs_inputs.py's GUIDE_TYPES in
database `guide` (`id INT PRIMARY KEY, v TYPE`), inserts one row into each, then updates and
deletes a row, rotates the log and copies the binlog out. `binlog-grammar docs` runs the real
JSON-lines writers on this file: each table's first row change is the guide's example line for
its column type.
The file differs from run to run only in timestamps.
"""
import argparse
import shutil
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
from binlog_grammar.cli.docs_inputs import (  # noqa: E402
    GUIDE_BINLOG, GUIDE_DELETE, GUIDE_TYPES, GUIDE_UPDATE)
from binlog_grammar.testing.mariadb import MariaDB  # noqa: E402


def workload() -> str:
    out = ["SET time_zone = '+00:00'", "SET sql_mode = ''", "CREATE DATABASE guide", "USE guide"]
    for suffix, _label, sql_type, value in GUIDE_TYPES:
        out.append(f"CREATE TABLE t_{suffix} (id INT PRIMARY KEY, v {sql_type})")
        out.append(f"INSERT INTO t_{suffix} VALUES (1, {value})")
    out += [GUIDE_UPDATE, GUIDE_DELETE]
    return ";\n".join(out) + ";\n"


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    root = Path(__file__).resolve().parent.parent
    ap.add_argument("--output", default=str((root / GUIDE_BINLOG).parent))
    args = ap.parse_args()
    out = Path(args.output)
    out.mkdir(parents=True, exist_ok=True)
    opts = ["--binlog-row-metadata=FULL", "--binlog-checksum=CRC32", "--default-time-zone=+00:00"]
    with MariaDB(opts) as db:
        db.sql(workload())
        db.sql("FLUSH BINARY LOGS;")
        first = db.binlogs()[0]
        dest = out / Path(GUIDE_BINLOG).name
        shutil.copyfile(first, dest)
        print(f"wrote {dest} ({dest.stat().st_size} bytes)")


if __name__ == "__main__":
    main()
