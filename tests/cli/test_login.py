"""The mysql client's login habits (cli/login.py, issue 28): -h/-P/-u/-p/-S, option files and
MYSQL_PWD, in the clients' order; a bare -p asks and leaves the next word alone."""
from __future__ import annotations

import argparse
import os
import subprocess
import sys

import pytest

from binlog_grammar.cli import build_parser
from binlog_grammar.cli.login import login
from binlog_grammar.cli.options import UsageError
from binlog_grammar.cli.parser import PROMPT

from helpers.paths import ROOT

SAMPLE = str(ROOT / "samples" / "mariadb-10.11-sample.000001")


def args_of(*words) -> argparse.Namespace:
    return build_parser().parse_args(["sql", *words, SAMPLE])


@pytest.fixture
def env(monkeypatch, tmp_path):
    """No option file of the machine, no MYSQL_PWD: each test sets what it needs."""
    monkeypatch.setattr("binlog_grammar.cli.login.OPTION_FILES", (str(tmp_path / "my.cnf"),))
    monkeypatch.setattr("binlog_grammar.cli.login.SOCKETS", (str(tmp_path / "none.sock"),))
    monkeypatch.delenv("MYSQL_PWD", raising=False)
    return tmp_path


def test_short_options_as_the_client_has_them(env):
    a = args_of("-h", "db.example", "-P", "3307", "-u", "repl", "-pSECRET")
    assert login(a) == dict(host="db.example", port=3307, user="repl", password="SECRET",
                            unix_socket=None)
    a = args_of("--host=h2", "--password=two words")
    assert login(a)["password"] == "two words" and login(a)["host"] == "h2"


def test_bare_p_asks_and_leaves_the_next_word(env):
    a = build_parser().parse_args(["sql", "-p", SAMPLE])
    assert a.password == PROMPT and a.files == [SAMPLE]
    a = build_parser().parse_args(["sql", "--password", SAMPLE])
    assert a.password == PROMPT and a.files == [SAMPLE]


def test_bare_p_without_a_terminal_is_a_usage_error():
    r = subprocess.run([sys.executable, "-m", "binlog_grammar", "sql", "--schema-from-server",
                        "-h", "127.0.0.1", "-P", "9", "-p", SAMPLE], capture_output=True,
                       text=True, stdin=subprocess.DEVNULL, start_new_session=True, cwd=ROOT)
    assert r.returncode == 2, r.stderr
    assert "asks for the password on the terminal, and there is none" in r.stderr
    assert "Traceback" not in r.stderr


def test_option_files_groups_and_precedence(env, monkeypatch):
    (env / "my.cnf").write_text(
        "!includedir /nowhere\n[client]\nuser = fileuser\npassword = \"from file\"\nport=3310\n"
        "[mysqld]\nuser = notme\n[mysqlbinlog]\nhost = binloghost\n")
    monkeypatch.setenv("MYSQL_PWD", "from env")
    got = login(args_of())
    assert got == dict(host="binloghost", port=3310, user="fileuser", password="from file",
                       unix_socket=None)
    assert login(args_of("-u", "cli", "-pcli", "-P", "1"))["user"] == "cli"
    assert login(args_of("-pcli"))["password"] == "cli"
    assert login(args_of("--no-defaults"))["password"] == "from env"  # MYSQL_PWD comes last
    other = env / "other.cnf"
    other.write_text("[client]\nsocket=/x.sock\n")
    got = login(args_of("--defaults-file", str(other)))
    assert got["unix_socket"] == "/x.sock" and got["host"] == "localhost"
    assert got["password"] == "from env"


def test_localhost_is_the_socket_file(env):
    sock = env / "mysqld.sock"
    got = login(args_of("-S", str(sock)))
    assert got["host"] == "localhost" and got["unix_socket"] == str(sock)
    assert login(args_of())["unix_socket"] is None  # none of the usual paths: TCP
    assert login(args_of())["host"] == "127.0.0.1"


def test_password_env_and_bad_files(env, monkeypatch):
    monkeypatch.setenv("REPL_PW", "pw")
    assert login(args_of("--password-env", "REPL_PW"))["password"] == "pw"
    with pytest.raises(UsageError, match="REPL_NONE"):
        login(args_of("--password-env", "REPL_NONE"))
    with pytest.raises(UsageError, match="no such file"):
        login(args_of("--defaults-file", str(env / "absent.cnf")))
    (env / "my.cnf").write_text("user = before any group\n")
    with pytest.raises(UsageError, match="option file"):
        login(args_of())


def test_help_is_long_only_where_h_is_the_host():
    r = subprocess.run([sys.executable, "-m", "binlog_grammar", "sql", "--help"],
                       capture_output=True, text=True, cwd=ROOT)
    assert r.returncode == 0 and "-h HOST, --host HOST" in r.stdout
    r = subprocess.run([sys.executable, "-m", "binlog_grammar", "sql", "-h"],
                       capture_output=True, text=True, cwd=ROOT)
    assert r.returncode == 2 and "-h/--host: expected one argument" in r.stderr
