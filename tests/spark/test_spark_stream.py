"""The `binlog` streaming source (binlog_grammar.spark.streaming): a real MariaDB (ROW, FULL
metadata, 16 KiB binlog files) read by a real local Spark (local[2]) with readStream.

- A query from `earliest` runs (1-second micro-batches) while a seeded workload (inserts, updates
  including primary-key changes, deletes, multi-statement and rolled-back transactions, a FLUSH
  BINARY LOGS in the middle) writes; once it has caught up, the rows it delivered, batch after
  batch, are exactly the plain file reader's rows of the server's binlog files on disk (same rows,
  same order, nothing twice, nothing missing; tx_seq is NULL in a stream).
- Stopped, more work, restarted from the same checkpoint (Trigger.AvailableNow): exactly the new
  rows; restarted again with nothing new: no rows, and it ends.
- The reader itself: offsets from SHOW BINARY LOGS / SHOW MASTER STATUS with the GTID position, a
  range read stops exactly at its end (cut at transaction boundaries in several files, the pieces
  make the whole), the same range read twice gives the same rows, the typed `table` form equals
  the batch source's, the filters equal the plain reader's.
- A wrong password and a closed port: the query fails in a few seconds with one line naming the
  server and no password; a `password` option is refused.

The password reaches Spark's Python workers through an environment variable set when this module
is imported (collection comes before any test starts Spark's JVM, whose environment the workers
inherit). Skipped when pyspark/pyarrow, Java or mariadbd are missing, unless
BINLOG_GRAMMAR_REQUIRE_SERVICES=1 (then they fail).
"""
from __future__ import annotations

import json
import os
import socket
import time

import pytest

from binlog_grammar.binlog.reader import BinlogFile
from binlog_grammar.replication import position_key
from binlog_grammar.binlog.stream import Filters, gtid_of

from helpers.services import need_mariadb
from helpers.spark import SEED, TABLES, Workload, df_records, load, plain_records

pytestmark = [pytest.mark.server, pytest.mark.spark]

PASSWORD = "Strm-pw_58q"
PW_ENV = "BINLOG_GRAMMAR_TEST_STREAM_PW"
WRONG_ENV = "BINLOG_GRAMMAR_TEST_STREAM_WRONG_PW"
os.environ[PW_ENV] = PASSWORD
os.environ[WRONG_ENV] = "not-" + PASSWORD


@pytest.fixture(scope="module")
def server():
    need_mariadb()
    from binlog_grammar.testing import mariadb

    db = mariadb.MariaDB(["--binlog-row-metadata=FULL", "--default-time-zone=+00:00",
                          "--max-binlog-size=16384"])
    try:
        db.start()
        db.sql(f"SET sql_log_bin=0; CREATE USER repl@'%' IDENTIFIED BY '{PASSWORD}'; "
               f"GRANT REPLICATION SLAVE, BINLOG MONITOR ON *.* TO repl@'%';")
        db.sql("CREATE DATABASE test CHARACTER SET utf8mb4; USE test; "
               + "; ".join(TABLES.values()) + ";")
    except BaseException:
        db.cleanup()
        raise
    yield db
    db.cleanup()


@pytest.fixture(scope="module")
def sspark(spark):
    got = spark.sparkContext._jvm.System.getenv(PW_ENV)
    if got != PASSWORD:
        pytest.fail(f"Spark's JVM started before this module set {PW_ENV}: its Python workers "
                    f"cannot see the password")
    return spark


# -- helpers ------------------------------------------------------------------------------------

def master_status(db):
    f, p = db.sql("SHOW MASTER STATUS").split()[:2]
    return f, int(p)


def normal(records, tx_seq=None):
    """Records with the file's base name (the plain reader gives paths) and tx_seq set."""
    for r in records:
        r["source"]["file"] = os.path.basename(r["source"]["file"])
        r["source"]["tx_seq"] = tx_seq
    return records


def on_disk(db, flt=None):
    return normal(plain_records([str(p) for p in db.binlogs()], flt))


def arrow_records(batches):
    """The reader's Arrow batches in df_records' form."""
    out = []
    for b in batches:
        for d in b.to_pylist():
            for k in ("before", "after"):
                if isinstance(d[k], list):
                    d[k] = {c: json.loads(v) for c, v in d[k]}
            out.append(d)
    return out


def start(spark, port, checkpoint, batches, trigger=None, **options):
    r = (spark.readStream.format("binlog").option("port", str(port)).option("user", "repl")
         .option("password_env", PW_ENV))
    for k, v in options.items():
        r = r.option(k, str(v))

    def collect(df, batch_id):
        batches.append((batch_id, df_records(df)))

    w = r.load().writeStream.foreachBatch(collect).option("checkpointLocation", str(checkpoint))
    return w.trigger(**(trigger or {"processingTime": "1 second"})).start()


def rows_of(batches):
    return [r for _i, rows in sorted(batches, key=lambda b: b[0]) for r in rows]


def position(r):
    s = r["source"]
    return position_key(s["file"], s["pos"]), s["row"]


# -- the live query -----------------------------------------------------------------------------

@pytest.fixture(scope="module")
def first_run(sspark, server, tmp_path_factory):
    """A query from `earliest` while the workload writes; stopped once caught up."""
    work = Workload(SEED)
    server.sql(work.transactions(60), database="test")  # already there when the query starts
    checkpoint = tmp_path_factory.mktemp("stream") / "checkpoint"
    batches = []
    started = time.monotonic()
    q = start(sspark, server.port, checkpoint, batches, starting_offsets="earliest")
    try:
        for i in range(6):  # the workload goes on while the query runs
            server.sql(work.transactions(25), database="test")
            if i == 2:
                server.sql("FLUSH BINARY LOGS")
                deadline = time.monotonic() + 30
                while not any(rows for _b, rows in batches) and time.monotonic() < deadline:
                    time.sleep(0.1)  # rows delivered while the server still writes
            time.sleep(0.3)
        during = sum(1 for _b, rows in batches if rows)
        t_loop = time.monotonic() - started
        q.processAllAvailable()
        end = master_status(server)
        assert q.exception() is None
    finally:
        q.stop()
    print(f"first run: {time.monotonic() - started:.1f} s ({t_loop:.1f} s with the workload), batches "
          f"{[(b, len(r)) for b, r in batches]}")
    return dict(work=work, checkpoint=checkpoint, batches=batches, during=during, end=end)


def test_live_query_equals_the_binlog_files(first_run, server):
    batches = first_run["batches"]
    got = rows_of(batches)
    expected = on_disk(server)
    assert len(expected) > 300
    assert got == expected  # same rows, same order: nothing lost, nothing twice
    keys = [position(r) for r in got]
    assert len(set(keys)) == len(keys) and keys == sorted(keys)
    assert first_run["during"] >= 1  # a batch came while the workload ran
    assert sum(1 for _b, rows in batches if rows) >= 2
    assert len({r["source"]["file"] for r in got}) >= 3  # the stream crossed files
    assert {r["op"] for r in got} == {"c", "u", "d"}
    assert {r["table"] for r in got} == set(TABLES)
    offsets = first_run["checkpoint"] / "offsets"
    last = max((p for p in offsets.iterdir() if p.name.isdigit()), key=lambda p: int(p.name))
    end = json.loads(last.read_text().splitlines()[-1])  # the last batch's end, as checkpointed
    assert (end["file"], end["pos"]) == first_run["end"]
    assert end["gtid"] == server.sql("SELECT @@gtid_binlog_pos").strip()


def test_restart_from_the_checkpoint_delivers_exactly_the_new_rows(first_run, sspark, server):
    before = on_disk(server)
    assert rows_of(first_run["batches"]) == before
    work = first_run["work"]
    server.sql(work.transactions(40) + "\nFLUSH BINARY LOGS;\n" + work.transactions(20),
               database="test")
    batches = []
    q = start(sspark, server.port, first_run["checkpoint"], batches, {"availableNow": True},
              starting_offsets="earliest")
    assert q.awaitTermination(60), "Trigger.AvailableNow did not end"
    assert q.exception() is None
    after = on_disk(server)
    new = rows_of(batches)
    assert len(new) > 50 and after[:len(before)] == before
    assert new == after[len(before):]  # exactly the new rows
    assert min(b for b, _r in batches) > max(b for b, _r in first_run["batches"])
    # nothing new: no rows, and the query ends
    again = []
    t0 = time.monotonic()
    q = start(sspark, server.port, first_run["checkpoint"], again, {"availableNow": True})
    assert q.awaitTermination(60) and q.exception() is None
    assert rows_of(again) == [] and time.monotonic() - t0 < 30


# -- the reader: offsets, exact ranges, determinism ---------------------------------------------

def test_offsets_and_exact_deterministic_ranges(first_run, sspark, server, tmp_path, monkeypatch):
    from binlog_grammar.spark import streaming
    from binlog_grammar.spark.schema import MAP, change_schema
    from binlog_grammar.spark.streaming import BinlogStreamReader, error_line, offset, stream_schema

    pw_file = tmp_path / "pw"
    pw_file.write_text(PASSWORD + "\n")
    opts = {"port": str(server.port), "user": "repl", "password_file": str(pw_file),
            "starting_offsets": "earliest", "heartbeat": "0.5"}
    r = BinlogStreamReader(opts, change_schema(MAP))
    files = [p.name for p in server.binlogs()]
    first = r.initialOffset()
    assert (first["file"], first["pos"]) == (files[0], 4)
    end = r.latestOffset(first, None)
    assert (end["file"], end["pos"]) == master_status(server)
    assert end["gtid"] == server.sql("SELECT @@gtid_binlog_pos").strip()
    assert r.latestOffset(end, None) == end  # nothing new: the start itself, no batch
    assert r.partitions(end, end) == [] and len(r.partitions(first, end)) == 1

    def read(a, b):
        (part,) = r.partitions(a, b)
        return arrow_records(list(r.read(part)))

    # cut at transaction boundaries (ends of XID events, with the GTID position there) in
    # different files; a FILE:POS start gets its GTID position from the server
    bounds = []
    for p in server.binlogs():
        for ev in BinlogFile(p):
            if ev.name == "GTID_EVENT":
                gtid = gtid_of(ev)
            elif ev.name == "XID_EVENT":
                bounds.append(offset(p.name, ev.end, gtid))
    cuts = [first, bounds[len(bounds) // 3], bounds[2 * len(bounds) // 3], end]
    assert len({c["file"] for c in cuts}) >= 3
    at = BinlogStreamReader(dict(opts, starting_offsets=f"{cuts[1]['file']}:{cuts[1]['pos']}"),
                            change_schema(MAP))
    assert at.initialOffset() == cuts[1]
    latest = BinlogStreamReader(dict(opts, starting_offsets="latest"), change_schema(MAP))
    assert latest.initialOffset() == end
    pieces = [read(a, b) for a, b in zip(cuts, cuts[1:])]
    whole = read(first, end)
    assert whole == on_disk(server) and sum(pieces, []) == whole
    for (a, b), piece in zip(zip(cuts, cuts[1:]), pieces):
        assert piece
        for row in piece:  # nothing before the start, nothing after the end
            where = position_key(row["source"]["file"], row["source"]["end_log_pos"])
            assert position_key(a["file"], a["pos"]) < where <= position_key(b["file"], b["pos"])
    assert read(cuts[1], cuts[2]) == pieces[1]  # the same range again: the same rows

    # filters, and the typed form of one table (columns from its first TABLE_MAP on the server)
    f = BinlogStreamReader(dict(opts, tables="test.*", exclude_tables="test.users"), change_schema(MAP))
    (part,) = f.partitions(first, end)
    assert arrow_records(list(f.read(part))) == \
        on_disk(server, Filters(tables=["test.*"], exclude_tables=["test.users"]))
    typed_opts = dict(opts, table="test.pairs")
    schema = stream_schema(typed_opts)
    assert [x.name for x in schema["after"].dataType.fields] == ["a", "b", "v"]
    t = BinlogStreamReader(typed_opts, schema)
    (part,) = t.partitions(first, end)
    streamed = [(d["op"], d["before"], d["after"], d["source"]["pos"], d["source"]["row"])
                for b in t.read(part) for d in b.to_pylist()]
    batch = load(sspark, [str(p) for p in server.binlogs()], table="test.pairs")
    assert batch.schema == schema
    assert streamed == [(x.op, x.before and x.before.asDict(), x.after and x.after.asDict(),
                         x.source.pos, x.source.row) for x in batch.collect()]
    assert len(streamed) > 20
    for x in (r, f, t, at, latest):
        x.stop()

    # an end the server never reaches (its binlog reset, another server): the read gives up
    monkeypatch.setattr(streaming, "STALL_SECONDS", 1.0)
    t0 = time.monotonic()
    with pytest.raises(RuntimeError) as ei:
        read(end, offset(end["file"], end["pos"] + 1000))
    assert time.monotonic() - t0 < 15
    assert f"the server's binlog stops at {end['file']}:{end['pos']}" in error_line(ei.value)
    # purged files: the start offset and a batch's first file
    server.sql(f"PURGE BINARY LOGS TO '{files[1]}'")
    with pytest.raises(RuntimeError) as ei:
        BinlogStreamReader(dict(opts, starting_offsets=f"{files[0]}:4"), change_schema(MAP)).initialOffset()
    assert error_line(ei.value) == (f"127.0.0.1:{server.port}: starting_offsets: {files[0]} is not one of "
                                    f"the server's binlog files ({files[1]} to {files[-1]}; purged, or "
                                    f"another server?)")
    with pytest.raises(RuntimeError) as ei:
        read(first, end)
    line = error_line(ei.value)
    assert line.startswith(f"127.0.0.1:{server.port}: ") and "Could not find first log file" in line
    assert PASSWORD not in str(ei.value)


# -- failures -----------------------------------------------------------------------------------

def test_failures_are_one_line_without_the_password(sspark, server, tmp_path):
    from binlog_grammar.spark.streaming import error_line

    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        closed = s.getsockname()[1]
    for port, env, what in ((server.port, WRONG_ENV, "Access denied for user 'repl'"),
                            (closed, PW_ENV, "cannot connect: Connection refused")):
        t0 = time.monotonic()
        q = start(sspark, port, tmp_path / f"checkpoint-{port}", [], password_env=env,
                  starting_offsets="earliest")
        with pytest.raises(Exception) as ei:
            q.awaitTermination(60)
            pytest.fail("the query did not fail")
        assert time.monotonic() - t0 < 30
        text = str(ei.value)
        line = error_line(ei.value)
        assert line is not None and line.startswith(f"127.0.0.1:{port}: ") and what in line, text
        assert "\n" not in line and PASSWORD not in text
    with pytest.raises(Exception) as ei:
        (sspark.readStream.format("binlog").option("port", str(server.port)).option("user", "repl")
         .option("password", PASSWORD).load())
    assert "password_env" in error_line(ei.value) and PASSWORD not in str(ei.value)
