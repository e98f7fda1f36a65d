"""What the Spark tests share: the plain reader's row changes and a DataFrame's rows in one
comparable form, reading with the `binlog` data source, and a seeded random workload of
statements on three tables for a real server."""
from __future__ import annotations

import json
import os
import random
import shutil

from binlog_grammar.binlog.stream import open_stream
from binlog_grammar.binlog.rows import OPS
from binlog_grammar.output.dump import change_record, raw_rows_record


def missing() -> str | None:
    try:
        import pyarrow  # noqa: F401
        import pyspark  # noqa: F401
    except ImportError as e:
        return f"{e.name} is not installed (pip install -e '.[spark]')"
    if not (shutil.which("java") or os.environ.get("JAVA_HOME")):
        return "java is not installed (apt-get install -y openjdk-17-jre-headless)"
    return None


def need_spark():
    """Skip a test that needs a local Spark when pyspark, pyarrow or Java is missing; under
    BINLOG_GRAMMAR_REQUIRE_SERVICES=1 (set by .ci/run) fail instead."""
    import pytest

    from helpers.services import REQUIRE_SERVICES, need_marker

    need_marker("spark")
    why = missing()
    if why:
        if REQUIRE_SERVICES:
            pytest.fail(f"{why} and BINLOG_GRAMMAR_REQUIRE_SERVICES=1")
        pytest.skip(why)


# -- the plain reader and the DataFrame in one comparable form ----------------------------------

def plain_records(paths, flt=None, skip_damaged=False):
    """The plain reader's row changes in the data source's form (dump.change_record plus db,
    table and NULL rows_raw, undecoded), and a rows event it shows raw as raw_record."""
    out = []
    for se in open_stream(paths, flt, skip_damaged=skip_damaged, raw_rows=True).events():
        changes = se.changes
        if not changes and se.undecoded is not None:
            out.append(raw_record(se))
        for i, ch in enumerate(changes):
            r = json.loads(json.dumps(change_record(ch, se, i)))
            r["db"], r["table"] = ch.db, ch.table
            r["rows_raw"] = r["undecoded"] = None
            out.append(r)
    return out


def raw_record(se):
    """A rows event not decoded, in the data source's form, from the record dump --format jsonl
    writes for it (dump.raw_rows_record)."""
    rec = raw_rows_record(se)
    source = {k: rec[k] for k in ("file", "pos", "end_log_pos", "server_id", "gtid", "timestamp",
                                  "db", "table", "table_id")}
    source.update(event_type=rec["event"], tx_seq=se.tx_seq, row=0)
    return {"op": OPS[se.event.type.row_op], "before": None, "after": None, "source": source,
            "ts_ms": rec["timestamp"] * 1000, "db": rec["db"], "table": rec["table"],
            "rows_raw": bytes.fromhex(rec["rows_raw"]), "undecoded": rec["undecoded"]}


def df_records(df):
    out = []
    for row in df.collect():
        d = row.asDict(recursive=True)
        for k in ("before", "after"):
            if d[k] is not None:
                d[k] = {c: json.loads(v) for c, v in d[k].items()}
        if d.get("rows_raw") is not None:
            d["rows_raw"] = bytes(d["rows_raw"])
        out.append(d)
    return out


def load(spark, paths, **options):
    r = spark.read.format("binlog")
    for k, v in options.items():
        r = r.option(k, str(v))
    return r.load(paths)


# -- a seeded workload for a real server -------------------------------------------------------

SEED = int(os.environ.get("BINLOG_GRAMMAR_SEED", "20240607"))

TABLES = {
    "users": """CREATE TABLE users (id INT PRIMARY KEY, name VARCHAR(40) CHARACTER SET utf8mb4,
        balance DECIMAL(12,2), born DATE, seen DATETIME(6), flags SET('a','b','c'),
        tier ENUM('free','pro','team'), score DOUBLE, token VARBINARY(16),
        ts TIMESTAMP(3) NULL DEFAULT NULL, dur TIME(2)) ENGINE=InnoDB""",
    "orders": """CREATE TABLE orders (id BIGINT UNSIGNED PRIMARY KEY, user_id INT,
        amount DECIMAL(10,2) NOT NULL DEFAULT 0, note TEXT, big BIGINT UNSIGNED) ENGINE=InnoDB""",
    "pairs": """CREATE TABLE pairs (a INT, b VARCHAR(10), v INT, PRIMARY KEY (a, b)) ENGINE=InnoDB""",
}


class Workload:
    """Random statements over the three tables; ids come from counters, so keys never clash."""

    def __init__(self, seed):
        self.rng = random.Random(seed)
        self.next = {"users": 1, "orders": 1, "pairs": 1}
        self.ids = {"users": [], "orders": [], "pairs": []}

    def _new(self, t):
        n = self.next[t]
        self.next[t] += 1
        return n

    def _val(self, kind):
        r = self.rng
        if r.random() < 0.12:
            return "NULL"
        if kind == "name":
            return "'" + r.choice(["Ada", "Grace", "Émilie 😀", "O''Brien", "tab\\tnew\\nline", ""]) + \
                str(r.randrange(100)) + "'"
        if kind == "money":
            return f"{r.randrange(-10**8, 10**8) / 100:.2f}"
        if kind == "date":
            return r.choice(["'0000-00-00'", f"'{r.randrange(1000, 9999)}-{r.randrange(1, 13):02d}-"
                                              f"{r.randrange(1, 29):02d}'"])
        if kind == "datetime":
            return f"'{r.randrange(1970, 2100)}-{r.randrange(1, 13):02d}-{r.randrange(1, 29):02d} " \
                   f"{r.randrange(24):02d}:{r.randrange(60):02d}:{r.randrange(60):02d}.{r.randrange(10**6):06d}'"
        if kind == "set":
            return "'" + ",".join(m for m in "abc" if r.random() < 0.5) + "'"
        if kind == "enum":
            return r.choice(["'free'", "'pro'", "'team'"])
        if kind == "double":
            return repr(round(r.uniform(-1e6, 1e6), 3))
        if kind == "bytes":
            return "0x" + r.randbytes(r.randrange(1, 16)).hex()
        if kind == "ts":
            return f"'{r.randrange(1971, 2037)}-{r.randrange(1, 13):02d}-{r.randrange(1, 29):02d} " \
                   f"{r.randrange(24):02d}:{r.randrange(60):02d}:{r.randrange(60):02d}.{r.randrange(1000):03d}'"
        if kind == "time":
            return f"'{r.choice(['-', ''])}{r.randrange(839):02d}:{r.randrange(60):02d}:" \
                   f"{r.randrange(60):02d}.{r.randrange(100):02d}'"
        if kind == "int":
            return str(r.randrange(-2**31, 2**31))
        if kind == "ubig":
            return str(r.randrange(0, 2**64))
        if kind == "text":
            return "'" + "x" * r.randrange(0, 300) + "'"
        raise AssertionError(kind)

    def insert(self, t):
        if t == "users":
            i = self._new(t)
            vals = [str(i)] + [self._val(k) for k in ("name", "money", "date", "datetime", "set",
                                                        "enum", "double", "bytes", "ts", "time")]
            self.ids[t].append(i)
            return f"INSERT INTO users VALUES ({', '.join(vals)});"
        if t == "orders":
            rows = []
            for _ in range(self.rng.randrange(1, 4)):  # multi-row inserts
                i = self._new(t)
                self.ids[t].append(i)
                rows.append(f"({i}, {self._val('int')}, {self._val('money').replace('NULL', '0')}, "
                            f"{self._val('text')}, {self._val('ubig')})")
            return f"INSERT INTO orders VALUES {', '.join(rows)};"
        a, b = self._new(t), f"k{self.rng.randrange(5)}"
        self.ids[t].append((a, b))
        return f"INSERT INTO pairs VALUES ({a}, '{b}', {self._val('int')});"

    def update(self, t):
        if not self.ids[t]:
            return self.insert(t)
        r = self.rng
        key = r.choice(self.ids[t])
        if r.random() < 0.3:  # change the primary key
            if t == "pairs":
                new = (key[0], f"m{self._new(t)}")
                self.ids[t][self.ids[t].index(key)] = new
                return f"UPDATE pairs SET b = '{new[1]}', v = v + 1 WHERE a = {key[0]} AND b = '{key[1]}';"
            new = self._new(t)
            self.ids[t][self.ids[t].index(key)] = new
            return f"UPDATE {t} SET id = {new} WHERE id = {key};"
        if t == "users":
            return f"UPDATE users SET balance = {self._val('money')}, tier = {self._val('enum')}, " \
                   f"seen = {self._val('datetime')}, dur = {self._val('time')} WHERE id = {key};"
        if t == "orders":
            if r.random() < 0.3:  # a multi-row update
                return f"UPDATE orders SET amount = amount + 1 WHERE id BETWEEN {key} AND {key + 5};"
            return f"UPDATE orders SET note = {self._val('text')}, big = {self._val('ubig')} WHERE id = {key};"
        return f"UPDATE pairs SET v = {self._val('int')} WHERE a = {key[0]} AND b = '{key[1]}';"

    def delete(self, t):
        if not self.ids[t]:
            return self.insert(t)
        key = self.rng.choice(self.ids[t])
        self.ids[t].remove(key)
        if t == "pairs":
            return f"DELETE FROM pairs WHERE a = {key[0]} AND b = '{key[1]}';"
        return f"DELETE FROM {t} WHERE id = {key};"

    def transactions(self, n):
        out = ["SET SESSION sql_mode = '';"]
        for _ in range(n):
            saved = {k: list(v) for k, v in self.ids.items()}
            stmts = []
            for _ in range(self.rng.randrange(1, 5)):
                t = self.rng.choice(list(TABLES))
                op = self.rng.choices(["insert", "update", "delete"], [5, 4, 2])[0]
                stmts.append(getattr(self, op)(t))
            if self.rng.random() < 0.12:
                out += ["BEGIN;", *stmts, "ROLLBACK;"]
                self.ids = saved
            elif len(stmts) == 1 and self.rng.random() < 0.5:
                out += stmts  # autocommit
            else:
                out += ["BEGIN;", *stmts, "COMMIT;"]
        return "\n".join(out)


def pipeline_args(inputs, output, **kw):
    """The pipeline command's arguments for inputs and output, on local[2]; kw overrides."""
    import argparse

    a = argparse.Namespace(input=[str(p) for p in inputs], output=str(output), master="local[2]",
                           table=[], exclude_table=[], schema=None, no_checksum=False,
                           split_bytes=64 << 20, debezium=False, debezium_option=[])
    for k, v in kw.items():
        setattr(a, k, v)
    return a


def pipeline_run(spark, inputs, output, **kw):
    """run_pipeline on `spark` in this process: (exit status, what it printed)."""
    from binlog_grammar.spark.pipeline import run_pipeline

    import io

    out = io.StringIO()
    rc = run_pipeline(pipeline_args(inputs, output, **kw), spark, out=out)
    return rc, out.getvalue()


def change_log(spark, output):
    """The pipeline's change log under output, as sorted JSON texts of its rows."""
    df = spark.read.parquet(f"{output}/changes")
    rows = []
    for r in df.collect():
        d = r.asDict(recursive=True)
        rows.append(json.dumps(d, sort_keys=True, default=str))
    return sorted(rows)
