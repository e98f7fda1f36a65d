"""`--jobs N` (issue 26, item 4) writes what `--jobs 1` writes: the same stdout, the same stderr
and the same exit status, for dump (text, JSON lines, --format hexdump), sql, flashback and stats.

BINLOG_GRAMMAR_SPLIT_BYTES forces a small split size, so that even the samples and the corpus
files are cut into many transaction-aligned splits (test_files_are_cut checks that they are);
one process pool serves every run of the module (cli.parallel.EXECUTOR).

- the samples and every corpus file, alone and together, with every command, with and without
  --skip-damaged, with --jobs 2 and 3;
- option combinations drawn with Hypothesis (filters by position, datetime, GTID, database and
  table; --follow-rotate; --skip-damaged; --rows-only; --top), derandomized and bounded;
- a binlog a MariaDB server writes with many transactions (several files, an XA transaction,
  DDL, a rotate), marker `server`.

Each would fail if the splits' output were merged out of order or if a split's tx_seq did not
start where the transactions before it end (the JSON lines carry tx_seq).
"""
import datetime as dt

import pytest
from hypothesis import HealthCheck, given, settings, strategies as st

from binlog_grammar.cli import parallel

from helpers.jobs import SPLIT, loads_folder, run
from helpers.paths import MARIADB_SAMPLES as SAMPLES, corpus_files, needs_corpus

COMMANDS = [("dump",), ("dump", "--format", "jsonl"), ("dump", "--format", "hexdump"), ("sql",),
            ("flashback",), ("stats",), ("stats", "--json"),
            # stats --jobs splits only what the compiled stats loop cannot read (cli/stats.py):
            # on the Python backend the splits' counts are merged
            ("--backend", "python", "stats"), ("--backend", "python", "stats", "--json")]


def _loading(argv):
    """dump's replay script writes LOAD DATA's files (SQL_LOAD_MB-<id>-<n>, the first free n,
    as mariadb-binlog): each run gets the same emptied -l folder, so both name the same file."""
    if not argv or argv[0] != "dump":
        return list(argv)
    return [argv[0], "-l", loads_folder(), *argv[1:]]


def same(argv, jobs=(2,)):
    one = run(_loading([*argv, "--jobs", "1"]))
    for n in jobs:
        many = run(_loading([*argv, "--jobs", str(n)]))
        assert many[0] == one[0], (argv, n, one[2], many[2])
        assert many[2] == one[2], (argv, n)
        assert many[1] == one[1], (argv, n)
    return one


def test_files_are_cut():
    """The forced split size cuts the samples and the larger corpus files into several splits
    (else the tests below would compare --jobs 1 with itself)."""
    pieces, gtids, whole = parallel.plan_file(SAMPLES[0], 0, 0, int(SPLIT), 0)
    assert whole and len(pieces) > 5 and gtids > 5
    assert [p.tx_seq_base for p in pieces] == sorted(p.tx_seq_base for p in pieces)
    assert len({p.tx_seq_base for p in pieces}) > 3


@pytest.mark.parametrize("argv", COMMANDS, ids=" ".join)
def test_samples(cut, argv):
    code, out, _err = same([*argv, *SAMPLES], jobs=(2, 3))
    assert code == 0 and out
    same([*argv, "--skip-damaged", SAMPLES[0]])
    same([*argv, "--follow-rotate", SAMPLES[0]])


def test_jsonl_tx_seq_counts_over_splits(cut):
    """The JSON lines number transactions over the whole input, split or not."""
    import json

    _c, out, _e = same(["dump", "--format", "jsonl", *SAMPLES], jobs=(2,))
    seqs = [(json.loads(line).get("source") or {}).get("tx_seq") for line in out.decode().splitlines()]
    seqs = [s for s in seqs if s is not None]
    assert seqs == sorted(seqs) and len(set(seqs)) > 3, seqs


@needs_corpus
@pytest.mark.parametrize("path", corpus_files(), ids=lambda p: p.name)
def test_corpus(cut, path):
    for argv in COMMANDS:
        same([*argv, path])
        same([*argv, "--skip-damaged", path])


@needs_corpus
def test_corpus_together(cut):
    """Every corpus file in one run: tx_seq, damage and notes go on from file to file."""
    files = corpus_files()
    for argv in COMMANDS:
        same([*argv, "--skip-damaged", *files])


def _options():
    ts = st.datetimes(min_value=dt.datetime(2024, 1, 1), max_value=dt.datetime(2027, 1, 1))
    return st.fixed_dictionaries({}, optional={
        "--start-position": st.integers(4, 5000),
        "--stop-position": st.integers(4, 6000),
        "--start-datetime": ts,
        "--stop-datetime": ts,
        "--include-gtids": st.sampled_from(["0-1-1-20", "0-1-5-40", "0-1-3"]),
        "--exclude-gtids": st.sampled_from(["0-1-1-10", "0-1-7-9"]),
        "--database": st.sampled_from(["shop", "test", "nope"]),
        "--table": st.sampled_from(["shop.orders", "shop.customers", "test.t1"]),
        "--exclude-table": st.sampled_from(["shop.orders", "shop.items"]),
        "--skip-damaged": st.just(None),
        "--follow-rotate": st.just(None),
        "--top": st.integers(0, 3),
        "--rows-only": st.just(None),
    })


@settings(max_examples=40, derandomize=True, deadline=None,
          suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow])
@given(argv=st.sampled_from(COMMANDS), opts=_options(), both=st.booleans(),
       split=st.sampled_from(["200", "700", "2000"]))
def test_drawn_options(pool, monkeypatch, argv, opts, both, split):
    monkeypatch.setenv(parallel.ENV_SPLIT, split)
    args = list(argv)
    for name, value in opts.items():
        if name == "--top" and "stats" not in argv or name == "--rows-only" and "jsonl" not in argv:
            continue
        args.append(name)
        if value is not None:
            args.append(value.isoformat(" ") if isinstance(value, dt.datetime) else value)
    same([*args, *(SAMPLES if both else SAMPLES[:1])])


@pytest.mark.server
def test_server_binlog(pool, monkeypatch, tmp_path):
    """Hundreds of transactions a MariaDB server wrote (rows of every operation, DDL, an XA
    transaction, a rotate, latin1 text), cut into splits of 4 KiB."""
    from helpers.services import need_mariadb
    from binlog_grammar.testing.mariadb import MariaDB

    need_mariadb()
    import shutil

    # latin1 by default and no charset metadata in the TABLE_MAPs (MariaDB's default): the JSON
    # lines read the VARCHAR with the server's character set, which only the file's first
    # statements name, so a split must learn it from the file before it
    with MariaDB(["--character-set-server=latin1", "--collation-server=latin1_swedish_ci"]) as db:
        statements = ["CREATE DATABASE shop;", "CREATE TABLE shop.t (id INT PRIMARY KEY, "
                      "v VARCHAR(40), n BIGINT) ENGINE=InnoDB;"]
        for i in range(300):
            statements.append(f"BEGIN; INSERT INTO shop.t (id, v, n) VALUES ({i}, 'vé{i}', {i * 7}); "
                              f"UPDATE shop.t SET n = n + 1 WHERE id = {i // 2}; COMMIT;")
            if i % 50 == 49:
                statements.append(f"DELETE FROM shop.t WHERE id < {i // 3}; FLUSH BINARY LOGS;")
            if i == 120:
                statements.append("XA START 'x1'; INSERT INTO shop.t (id, v, n) VALUES (100000, 'xa', 1); "
                                  "XA END 'x1'; XA PREPARE 'x1'; XA COMMIT 'x1';")
            if i == 200:
                statements.append("ALTER TABLE shop.t ADD COLUMN w INT DEFAULT 3;")
        db.sql("\n".join(statements))
        db.sql("FLUSH BINARY LOGS;")
        files = []
        for p in db.binlogs():
            files.append(tmp_path / p.name)
            shutil.copy(p, files[-1])
    monkeypatch.setenv(parallel.ENV_SPLIT, "4096")
    assert len(files) > 3
    assert len(parallel.plan_file(str(files[1]), 1, 0, 4096, 0)[0]) > 3
    for argv in COMMANDS:
        same([*argv, *files[:-1]])
    same(["dump", "--format", "jsonl", "--follow-rotate", files[0]])
    same(["sql", "--table", "shop.t", "--start-position", "1000", *files[1:3]])


@pytest.mark.parametrize("how", ["truncated", "flipped"])
def test_damaged_copies(cut, tmp_path, how):
    """A sample cut short or with a byte changed in a later split (the header walk stops early,
    or a split meets a bad CRC32 or field): the same output up to the damage, the same error or
    the same skipped bytes, the same exit status."""
    data = open(SAMPLES[0], "rb").read()
    # the middle of the file, its end, and inside a TABLE_MAP_EVENT of a later transaction (3219
    # in the sample: --jobs 1 decodes its rows with the map of the same table id before it)
    for at in (len(data) // 3, len(data) // 2, len(data) - 40, 3219 + 60):
        bad = bytearray(data[:at] if how == "truncated" else data)
        if how == "flipped":
            bad[at] ^= 0x5A
        path = tmp_path / f"{how}-{at}.bin"
        path.write_bytes(bytes(bad))
        for argv in COMMANDS:
            same([*argv, path, SAMPLES[1]])
            same([*argv, "--skip-damaged", path, SAMPLES[1]])


def test_stats_jobs_reads_with_the_compiled_loop(cut, monkeypatch):
    """stats --jobs 2 on the compiled backend counts with the compiled stats loop in one process
    (it was 5x slower split on the Python path); the splits are for what that loop cannot read."""
    from binlog_grammar import native
    from binlog_grammar.output import stats_fast

    native.select(None)  # as main() does: an earlier test's --backend python is forgotten
    if native.backend() != "c" or stats_fast.compiled() is None:
        pytest.skip("the compiled backend is not built here")

    def no_split(*_a, **_k):
        raise AssertionError("stats --jobs split an input the compiled loop reads")

    monkeypatch.setattr(parallel, "run", no_split)
    code, out, err = run(["stats", "--jobs", "2", *SAMPLES])
    assert code == 0 and b"events by type" in out, err
