"""One registry of output formats (binlog_grammar/output/formats.py, issue 27 item 3): dump, stream
and the Spark source find a format by name, and one writer follows a whole stream, so `stream`
of a live server prints what `dump` prints of its files, line for line, in both JSON-lines
envelopes: also text without charset metadata, which follows the server's character set (a
writer made per event, as stream had, read it as UTF-8)."""
from __future__ import annotations

import json
import os
import subprocess
import sys

import pytest

from binlog_grammar.output import formats

from helpers.services import need_mariadb

PASSWORD = "Fmt-pw_27x"


def test_every_format_is_one_entry_found_by_name():
    assert formats.names() == ["debezium", "flashback", "flashback-binlog", "hexdump", "jsonl",
                               "sql", "text"]
    assert formats.lookup("jsonl").name == "jsonl"
    assert formats.lookup("jsonl", "debezium").name == "debezium"
    assert formats.lookup("text").header and formats.lookup("text").footer
    assert formats.get("sql").executable and not formats.get("debezium").executable
    with pytest.raises(KeyError, match="known: debezium, flashback, flashback-binlog, hexdump, "
                                       "jsonl, sql, text"):
        formats.get("csv")
    with pytest.raises(ValueError, match="--envelope is for --format jsonl"):
        formats.lookup("text", "debezium")
    with pytest.raises(ValueError, match="needs|envelope debezium"):
        formats.get("jsonl").writer(options={"topic.prefix": "x"})
    with pytest.raises(TypeError):
        formats.get("sql").writer()


@pytest.mark.parametrize("name,argv", [("jsonl", ["--format", "jsonl"]), ("text", ["--format", "text"]),
                                       ("hexdump", ["--format", "hexdump"]),
                                       ("debezium", ["--format", "jsonl", "--envelope", "debezium"])])
def test_lines_of_is_the_writer_loop(name, argv):
    """lines_of (what the Spark source calls) gives what dump writes, for every lines format."""
    from binlog_grammar.binlog.stream import open_stream

    from helpers.paths import ROOT

    path = str(ROOT / "samples" / "mariadb-10.11-sample.000001")
    got = list(formats.lines_of(open_stream([path]).events(), name))
    r = subprocess.run([sys.executable, "-m", "binlog_grammar", "dump", *argv, path],
                       capture_output=True, text=True, timeout=120)
    assert r.returncode == 0, r.stderr
    assert "\n".join(got).splitlines() == r.stdout.splitlines() and got


@pytest.fixture(scope="module")
def latin1_server():
    """A MariaDB whose server charset is latin1 and whose binlog has no optional row metadata (NO_LOG): the
    rows carry no charset, so their text is the server's."""
    need_mariadb()
    from binlog_grammar.testing import mariadb

    with mariadb.MariaDB(["--character-set-server=latin1", "--collation-server=latin1_swedish_ci",
                          "--binlog-row-metadata=NO_LOG", "--default-time-zone=+00:00"]) as db:
        db.sql(f"SET sql_log_bin=0; CREATE USER repl@'%' IDENTIFIED BY '{PASSWORD}'; "
               "GRANT REPLICATION SLAVE, BINLOG MONITOR ON *.* TO repl@'%';")
        db.sql("CREATE DATABASE shop; USE shop; "
               "CREATE TABLE t (id INT PRIMARY KEY, s VARCHAR(20), d DECIMAL(6,2), "
               "ts TIMESTAMP(3) NULL) DEFAULT CHARSET latin1; "
               "INSERT INTO t VALUES (1, 'café', 1.50, '2024-01-02 03:04:05.678'), "
               "(2, 'naïve ÿ', -0.01, NULL); "
               "UPDATE t SET s = 'crème' WHERE id = 1; UPDATE t SET id = 3 WHERE id = 2; "
               "DELETE FROM t WHERE id = 1;")
        yield db


@pytest.mark.server
@pytest.mark.parametrize("envelope", ["native", "debezium"])
def test_stream_prints_what_dump_prints_text_in_the_servers_charset(latin1_server, envelope):
    db = latin1_server
    names = [p.name for p in db.binlogs()]
    opts = ["--format", "jsonl", "--rows-only"] + (["--envelope", envelope] if envelope != "native"
                                                   else [])
    env = dict(os.environ, REPL_PW=PASSWORD)
    r = subprocess.run([sys.executable, "-m", "binlog_grammar", "stream", "--port", str(db.port),
                        "--user", "repl", "--password-env", "REPL_PW", "--until-now",
                        "--heartbeat", "0.5", *opts], capture_output=True, text=True, env=env,
                       timeout=120)
    assert r.returncode == 0, r.stderr
    d = subprocess.run([sys.executable, "-m", "binlog_grammar", "dump", *opts, *names],
                       capture_output=True, text=True, cwd=db.datadir, timeout=120)
    assert d.returncode == 0, d.stderr
    streamed, dumped = r.stdout.splitlines(), d.stdout.splitlines()
    assert streamed == dumped and len(dumped) >= 5
    rows = [json.loads(line) for line in dumped]
    texts = {v["@2"] for rec in rows for v in (rec["before"], rec["after"]) if v}
    assert {"café", "naïve ÿ", "crème"} <= texts, texts  # latin1, not UTF-8 with \xNN
