"""Long values with escapes in the pipeline's typed snapshots, written by a real MariaDB.

The typed snapshots check a value's JSON text with Java regular expressions before converting it
in Spark's engine. Java matches a repeated group by recursion, so a pattern with a group per
character (a JSON string as `"([^"\\\\]|\\\\.)*"`) overflowed the executor thread's stack on a
text of about a thousand characters holding an escape (a newline, a quote), and the
StackOverflowError ended the local JVM: every MariaDB JSON document over about 1 KB (JSON is a
LONGTEXT there: its quotes are escaped), any long TEXT with a newline, a SET whose members add up
to a few thousand characters. Here rows of such values, their lengths drawn from 0 to 300,000
characters (a fixed seed), go through inserts, updates and deletes; the snapshot must hold what
the server's SELECT says.
"""
from __future__ import annotations

import json
import random

import pytest

from helpers.services import need_mariadb
from helpers.spark import pipeline_run

pytestmark = [pytest.mark.spark, pytest.mark.server]

MEMBERS = [f"m{i:02d}-" + "s" * 196 for i in range(12)]  # 12 members of 200 characters
ALPHABET = "abc xyz\n\t\"\\/é☃𝄞\x01'"


def _text(rng, n) -> str:
    return "".join(rng.choice(ALPHABET) for _ in range(n))


def _length(rng) -> int:
    return rng.choice([0, 1, 900, 1500, 5000, 40000, rng.randrange(300000)])


def _hex(s: str) -> str:
    return s.encode("utf-8").hex()


def _row(rng, i):
    body = _text(rng, _length(rng))
    doc = json.dumps({"id": i, "text": _text(rng, _length(rng)),
                      "list": [_text(rng, 50) for _ in range(rng.randrange(60))]})
    tags = ",".join(m for m in MEMBERS if rng.random() < 0.7)
    blob = rng.randbytes(_length(rng))
    return (f"({i}, CONVERT(X'{_hex(body)}' USING utf8mb4), CONVERT(X'{_hex(doc)}' USING utf8mb4), "
            f"'{tags}', X'{blob.hex()}')")


@pytest.fixture(scope="module")
def binlogs(tmp_path_factory):
    from binlog_grammar.testing import mariadb

    need_mariadb()
    rng = random.Random(20261127)
    members = ",".join(f"'{m}'" for m in MEMBERS)
    stmts = ["CREATE DATABASE test; USE test;",
             f"CREATE TABLE t (id INT PRIMARY KEY, body LONGTEXT CHARACTER SET utf8mb4, doc JSON, "
             f"tags SET({members}), bin LONGBLOB) ENGINE=InnoDB;"]
    for i in range(1, 25):
        stmts.append(f"INSERT INTO t VALUES {_row(rng, i)};")
    for i in rng.sample(range(1, 25), 8):  # updates with new long values, and deletes
        body = _text(rng, _length(rng))
        stmts.append(f"UPDATE t SET body = CONVERT(X'{_hex(body)}' USING utf8mb4) WHERE id = {i};")
    for i in rng.sample(range(1, 25), 4):
        stmts.append(f"DELETE FROM t WHERE id = {i};")
    with mariadb.MariaDB(["--binlog-row-metadata=FULL", "--binlog-format=ROW",
                          "--max-allowed-packet=64M"]) as db:
        db.sql("\n".join(stmts))
        want = db.sql("SELECT id, HEX(body), HEX(doc), tags, HEX(bin) FROM t ORDER BY id",
                      database="test")
        keep = tmp_path_factory.mktemp("long")
        files = []
        for f in db.binlogs():
            (keep / f.name).write_bytes(f.read_bytes())
            files.append(str(keep / f.name))
    rows = [line.split("\t") for line in want.splitlines()]
    return files, rows


def test_long_values_with_escapes_reach_the_typed_snapshot(spark, binlogs, tmp_path):
    files, want = binlogs
    assert len(want) == 20 and max(len(r[1]) for r in want) > 2 * 5000  # long ones among them
    rc, text = pipeline_run(spark, files, tmp_path / "out")
    assert rc == 0, text
    df = spark.read.parquet(str(tmp_path / "out" / "snapshots" / "test.t"))
    got = sorted(([str(r.id), _hex(r.body).upper(), _hex(r.doc).upper(), ",".join(r.tags),
                   bytes(r.bin).hex().upper()] for r in df.collect()), key=lambda r: int(r[0]))
    assert [g[0] for g in got] == [w[0] for w in want]
    for g, w in zip(got, want):
        assert g == w, g[0]
