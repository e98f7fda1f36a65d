"""`dump --jobs N` for mariadb-binlog's forms (cli/replay_jobs.py): the replay script, -v, -vv,
-s, --skip-gtids and -vv --base64-output=decode-rows split across worker processes write what
`--jobs 1` writes, byte for byte, with the same stderr and exit status.

BINLOG_GRAMMAR_SPLIT_BYTES cuts even the samples into many splits; one process pool serves the
module (cli.parallel.EXECUTOR) and one MariaDB server its server tests. Where a test says the
workers wrote every split (`workers_only`), the parent's own reading (Merge.sequential, for
LOAD DATA, damage and the like) is refused, so a split that started with the wrong Replay state
(the statements' session, the GTID session lines, the format event, a new file's lines) shows
as different bytes: each test here failed with replay_at's statements, or its GTID, left out.
"""
import contextlib
import shutil

import pytest
from hypothesis import HealthCheck, given, settings, strategies as st

from binlog_grammar.cli import parallel, replay_jobs

from helpers.jobs import SPLIT, loads_folder, run
from helpers.paths import REPLAY_IDENTICAL, ROOT, corpus_files, needs_corpus

SAMPLES = sorted(str(p) for p in (ROOT / "samples").glob("mariadb-*"))
FORMS = [(), ("-v",), ("-vv",), ("-s",), ("--skip-gtids",),
         ("-vv", "--base64-output=decode-rows"), ("-v", "-s", "--skip-gtids"),
         ("-D", "--skip-print-row-count", "--skip-annotate-row-events"),
         ("--base64-output=decode-rows", "--skip-print-row-event-positions")]


def same(argv, jobs=(2, 3)):
    """`dump ARGV` with --jobs 1 and each of `jobs`: the same status, stdout and stderr. Each run
    writes LOAD DATA's files into the same emptied -l folder (their names are in the script)."""
    def once(n):
        return run(["dump", "-l", loads_folder(), *argv, "--jobs", str(n)])

    one = once(1)
    for n in jobs:
        many = once(n)
        assert many[0] == one[0], (argv, n, one[2], many[2])
        assert many[2] == one[2], (argv, n)
        assert many[1] == one[1], (argv, n)
    return one


@contextlib.contextmanager
def workers_only(monkeypatch):
    """The parent reads none of the input itself: every split is a worker's."""
    def refuse(self, cfg, pieces, outcome, emit):
        raise AssertionError(f"the parent read from {pieces[0].path} at {pieces[0].skip_to}")

    with monkeypatch.context() as m:
        m.setattr(replay_jobs.Merge, "sequential", refuse)
        yield


def test_splits_start_with_the_state_before_them():
    """replay_at gives a split the session the sequential Replay holds at its start: the sample's
    statements set the database, the character set and flags2, its GTIDs the domain and server."""
    from binlog_grammar.cli.plan import cut_walk
    from binlog_grammar.output.replay import Replay
    from binlog_grammar.binlog.stream import Stream

    kw = {}  # Replay's defaults: the replay script
    planned = list(cut_walk(SAMPLES[0], int(SPLIT)))[1:]
    cuts = [c["start"] for c in planned]
    assert len(cuts) > 5
    replay, at = Replay(**kw), {}
    for se in Stream([SAMPLES[0]]).events():
        if int(se.event.offset) in cuts:
            at[int(se.event.offset)] = _session(replay)
        replay.lines(se)
    assert set(at) == set(cuts)
    for c in planned:
        # from the walk of a worker, and from the events the planner listed (no walk)
        assert _session(replay_jobs.replay_at(SAMPLES[0], c["start"], kw)) == at[c["start"]], c
        assert c["state"] is not None
        assert _session(replay_jobs.replay_from(SAMPLES[0], c["state"], kw)) == at[c["start"]], c
    assert any(s[0] for s in at.values()) and any(s[-1] is not None for s in at.values())


def _session(rp):
    return (rp.db, rp.thread_id, rp.flags2, rp.sql_mode, rp.auto_inc, rp.charset, rp.time_zone,
            rp.lc_time_names, rp.collation_db, rp.mariadb, rp.header_len, rp.parallel,
            rp.domain, rp.server)


@pytest.mark.parametrize("form", FORMS, ids=" ".join)
def test_samples(cut, monkeypatch, form):
    with workers_only(monkeypatch):
        code, out, _err = same([*form, *SAMPLES])
        assert code == 0 and out.count(b"DELIMITER ;\nDELIMITER /*!*/;\n") == 1
        same([*form, SAMPLES[1]])


@needs_corpus
@pytest.mark.parametrize("path", corpus_files(), ids=lambda p: p.name)
def test_corpus(cut, path):
    for form in FORMS[:6]:
        same([*form, path], jobs=(2,))


@needs_corpus
def test_corpus_together(cut):
    """The corpus files that read to their end in one run, then all of them: the lines between
    files and the parent's reading (a file the workers cannot start: LOAD DATA, payloads, MySQL
    5.0's format) go on from file to file, up to the first damaged file's error."""
    whole = [p for p in corpus_files() if p.name in REPLAY_IDENTICAL]
    for form in FORMS[:3] + FORMS[5:6]:
        code, out, _err = same([*form, *whole, *SAMPLES], jobs=(2,))
        assert code == 0 and out.count(b"DELIMITER ;\nDELIMITER /*!*/;\n") == len(whole) + 1
        same([*form, *corpus_files(), *SAMPLES], jobs=(2,))


@pytest.mark.parametrize("how", ["truncated", "flipped"])
def test_damaged_copies(cut, tmp_path, how):
    """A sample cut short or with a byte changed in a later split: the same output up to the
    damage, the same error, the same exit status, the next file as --jobs 1 reads it."""
    data = open(SAMPLES[0], "rb").read()
    for at in (len(data) // 3, len(data) // 2, len(data) - 40, 3219 + 60):
        bad = bytearray(data[:at] if how == "truncated" else data)
        if how == "flipped":
            bad[at] ^= 0x5A
        path = tmp_path / f"{how}-{at}.bin"
        path.write_bytes(bytes(bad))
        for form in FORMS[:3] + FORMS[5:6]:
            same([*form, SAMPLES[1], path, SAMPLES[1]], jobs=(2,))


@settings(max_examples=12, derandomize=True, deadline=None,
          suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow])
@given(form=st.sampled_from(FORMS), split=st.integers(100, 4000), both=st.booleans())
def test_drawn_split_sizes(pool, monkeypatch, form, split, both):
    monkeypatch.setenv(parallel.ENV_SPLIT, str(split))
    with workers_only(monkeypatch):
        same([*form, *(SAMPLES if both else SAMPLES[:1])], jobs=(2,))


@pytest.mark.parametrize("form", [FORMS[0], FORMS[2], FORMS[5]], ids=" ".join)
def test_python_backend(cut, monkeypatch, form):
    """On the Python backend (no compiled lane: Replay writes every event) the workers' splits
    are the compiled backend's and --jobs 1's bytes."""
    with workers_only(monkeypatch):
        one = run(["--backend", "python", "dump", *form, "--jobs", "1", *SAMPLES])
        assert run(["--backend", "python", "dump", *form, "--jobs", "2", *SAMPLES]) == one
        assert run(["dump", *form, "--jobs", "2", *SAMPLES]) == one and one[0] == 0


def test_no_split_without_jobs(pool, monkeypatch):
    """--jobs's default (the cores) leaves these forms on one process (replay_jobs.BY_DEFAULT);
    --jobs 2 and $BINLOG_GRAMMAR_JOBS split them."""
    monkeypatch.setenv(parallel.ENV_SPLIT, SPLIT)
    monkeypatch.delenv(parallel.ENV_JOBS, raising=False)
    calls = []
    real = parallel.run
    monkeypatch.setattr(parallel, "run", lambda *a, **k: calls.append(a[2]) or real(*a, **k))
    one = run(["dump", "-vv", *SAMPLES])
    assert one[0] == 0 and calls == []
    assert run(["dump", "-vv", "--jobs", "2", *SAMPLES]) == one and calls == ["replay"]
    monkeypatch.setenv(parallel.ENV_JOBS, "2")
    assert run(["dump", "-vv", *SAMPLES]) == one and calls == ["replay", "replay"]


def test_small_files_stay_on_one_process(pool, monkeypatch):
    """Without the forced split size the samples (under 8 MiB) are read by one process."""
    monkeypatch.delenv(parallel.ENV_SPLIT, raising=False)

    def no_split(*_a, **_k):
        raise AssertionError("dump's replay form split a small file")

    monkeypatch.setattr(parallel, "run", no_split)
    code, out, _err = run(["dump", "--jobs", "2", *SAMPLES])
    assert code == 0 and out


# --- a server's binlogs ----------------------------------------------------------------------

@pytest.fixture(scope="module")
def server_binlogs(tmp_path_factory):
    """Binlogs a MariaDB server wrote: statements with their session changing from one to the
    next (database, sql_mode, character set, time zone, lc_time_names, auto_increment, several
    connections), GTIDs of three domains and four server ids, row events,
    XA, rotates; LOAD DATA in the last file. (first files, the LOAD DATA file)"""
    from helpers.services import need_mariadb
    from binlog_grammar.testing.mariadb import MariaDB

    need_mariadb()
    out = tmp_path_factory.mktemp("replay-jobs")
    data = out / "load.tsv"
    data.write_text("".join(f"{i}\tline {i}\n" for i in range(2000)))
    modes = ["", "ANSI_QUOTES", "NO_BACKSLASH_ESCAPES", "STRICT_TRANS_TABLES,ANSI_QUOTES"]
    with MariaDB(["--local-infile=1"]) as db:
        db.sql("CREATE DATABASE d1; CREATE DATABASE `d 2`; CREATE TABLE d1.t (id INT "
               "AUTO_INCREMENT PRIMARY KEY, v VARCHAR(40), n INT) ENGINE=InnoDB; CREATE TABLE "
               "`d 2`.u (id INT PRIMARY KEY, v TEXT) ENGINE=InnoDB;")
        for conn in range(3):
            # row events from the first connection, statements from the others (each its
            # thread id)
            row = conn == 0
            lines = [f"SET SESSION binlog_format='{'ROW' if row else 'STATEMENT'}';",
                     f"SET SESSION gtid_domain_id={conn};",
                     f"CREATE TABLE d1.tmp{conn} (x INT) ENGINE=MyISAM;"]
            for i in range(60):
                k = conn * 1000 + i
                lines += [f"SET SESSION gtid_domain_id={i % 3};" if row else "",
                          f"SET SESSION server_id={1 + i % 4};",
                          f"SET SESSION sql_mode='{modes[i % 4]}';",
                          f"SET NAMES {'latin1' if i % 5 == 0 else 'utf8mb4'};",
                          f"SET SESSION time_zone='+0{i % 3}:00';",
                          f"SET SESSION lc_time_names='{'fr_FR' if i % 7 == 0 else 'en_US'}';",
                          f"SET SESSION auto_increment_increment={1 + i % 2};",
                          f"USE {'d1' if i % 2 else '`d 2`'};",
                          f"INSERT INTO d1.t (v, n) VALUES ('v{k}', {k});",
                          f"INSERT INTO d1.tmp{conn} VALUES ({k});",
                          f"BEGIN; INSERT INTO `d 2`.u VALUES ({k}, 'u{k}'); UPDATE d1.t SET n = n "
                          f"+ 1 WHERE id % 7 = {i % 7}; COMMIT;"]
                if i == 30:
                    lines.append(f"XA START 'x{conn}'; INSERT INTO `d 2`.u VALUES ({k + 500}, "
                                 f"'xa'); XA END 'x{conn}'; XA PREPARE 'x{conn}'; "
                                 f"XA COMMIT 'x{conn}';")
            lines.append("FLUSH BINARY LOGS;")
            db.sql("\n".join(lines))
        db.sql("SET SESSION binlog_format='STATEMENT'; USE d1; LOAD DATA LOCAL INFILE '"
               f"{data}' INTO TABLE d1.t (id, v); INSERT INTO d1.t (v) VALUES ('after'); "
               "FLUSH BINARY LOGS;")
        files = []
        for p in db.binlogs():
            files.append(out / p.name)
            shutil.copy(p, files[-1])
    return files[:-2], files[-2]


@pytest.mark.server
@pytest.mark.parametrize("form", FORMS[:7], ids=" ".join)
def test_server_binlogs(pool, monkeypatch, server_binlogs, form):
    """Splits of 2 KiB: each starts with the session, GTID and format state before it; several
    files in one run; every split a worker's."""
    files, _load = server_binlogs
    monkeypatch.setenv(parallel.ENV_SPLIT, "2048")
    assert len(files) >= 3 and len(parallel.plan_file(str(files[1]), 1, 0, 2048, 0)[0]) > 5
    with workers_only(monkeypatch):
        code, out, _err = same([*form, *files])
    assert code == 0 and out.count(b"DELIMITER ;\nDELIMITER /*!*/;\n") == len(files) - 1


@pytest.mark.server
def test_server_load_data(pool, monkeypatch, server_binlogs):
    """LOAD DATA: its blocks and statement make the script's files in order, so the parent reads
    from the split that holds them (and the files are named as --jobs 1 names them)."""
    files, load = server_binlogs
    monkeypatch.setenv(parallel.ENV_SPLIT, "1024")
    for form in FORMS[:3] + FORMS[5:6]:
        code, out, _err = same([*form, files[-1], load])
        assert code == 0
    assert b"LOAD DATA LOCAL INFILE" in out or b"Begin_load_query" in out
