"""binlog_grammar.output.quoting: the one module that puts binlog text into scripts.

Unit rules first (no server), then the judge: the real `mariadb` client, under each client
character set, reading lines this module wrote, against a real server with a canary table.
"""
import os
import subprocess

import pytest
from hypothesis import HealthCheck, example, given, settings, strategies as st

from binlog_grammar.output import quoting
from helpers.services import need_mariadb

# Bytes and sequences a client or a server gives a meaning to.
DANGER = ["'", '"', "`", "\\", "\0", "\x1a", "\r", "\n", "\r\n", "*/", "/*", "/*!", "--", "-- ",
          "#", ";", "/*!*/;", "\\!", "\\C", "\\G", "\\q", "DELIMITER ", "use ", "€", "ソ", "表",
          "\udcac", "\udce9", "\u2028", "\x85", "a", " ", "\\! touch FLAG\n"]
hostile = st.lists(st.sampled_from(DANGER), max_size=12).map("".join)


@given(hostile)
@settings(max_examples=400, derandomize=True)
def test_a_comment_is_one_printable_line_without_a_comment_end(text):
    c = quoting.comment(text)
    assert not any(ch in c for ch in "\n\r\0\x1a\x85\u2028\u2029")
    assert "*/" not in c and "/*" not in c
    assert not any(0xD800 <= ord(ch) <= 0xDFFF for ch in c)
    c.encode("utf-8")  # writable as UTF-8


def test_comment_escapes_read_back_one_way():
    assert quoting.comment("a\nb\\nc\0*/\udce9\ttab/*!") == "a\\nb\\\\nc\\0*\\/\\xe9\ttab/\\*!"
    assert quoting.comment_line("x\ny") == "-- x\\ny\n"


@given(hostile)
@settings(max_examples=300, derandomize=True)
def test_plain_names_hold_no_byte_a_client_line_changes(name):
    if quoting.ident_is_plain(name):
        assert not any(ord(ch) < 0x20 or ch in "\\\x7f" for ch in name)
        name.encode("utf-8")
    assert quoting.ident(name).count("`") == 2 + 2 * name.count("`")


@pytest.mark.parametrize("stmt, verbatim", [
    ("CREATE TABLE t (a INT)", True),
    ("INSERT INTO t VALUES ('it''s; \\' /*!*/; \\! x')", True),
    ("ANALYZE TABLE t /* \0 */", False),  # the client aborts on a NUL
    ("SELECT 1 /*!*/; DROP TABLE canary.pwned", False),  # the delimiter outside strings
    ("SELECT 1 \\! touch x", False),  # a client command
    ("SELECT 'a\r\nb'", False),  # the client drops the CR
    ("SELECT 'unterminated", False),
    ("SELECT 1 /* open comment", False),
    ("use db", False),
    ("SELECT 1 -- a comment /*!*/; here\n", True),
    ("SELECT 1 # /*!*/; here", True),
    ("SELECT `a\\` FROM t", True),  # a backslash in backquotes is no escape
    ("CREATE PROCEDURE p() BEGIN SELECT 1; SELECT 2; END", True),
    ("SELECT 1 /* a /*! b */ , 2", False),  # the client no longer sees where the comment ends
    ("SELECT 1 /*!50000 /* x */ , 2 */", False),
    ("SELECT 1 /*!50000 , 2 */ /* x */", True),
    # a statement that makes a client run with --local-infile send one of its files
    ("LOAD DATA LOCAL INFILE '/etc/passwd' INTO TABLE t", False),
    ("load data low_priority local/**/infile \"/etc/passwd\" into table t", False),
    ("/*!50000 LOAD DATA LOCAL INFILE '/etc/passwd' INTO TABLE t */", False),
    ("LOAD XML LOCAL\n INFILE 'x.xml' INTO TABLE t", False),
    ("LOAD DATA INFILE 'server-side.tsv' INTO TABLE t", True),  # the server's file, not LOCAL
    ("INSERT INTO t VALUES ('LOAD DATA LOCAL INFILE ''x''')", True),  # only a string
    ("SELECT 1 # LOCAL INFILE 'x'", True),
])
def test_client_reads_verbatim(stmt, verbatim):
    assert quoting.client_reads_verbatim(stmt, "/*!*/;") is verbatim


def test_hex_column_is_one_printable_line():
    text = quoting.hex_column(bytes(range(256)))
    assert len(text) == 256 and text[0x20:0x7F] == bytes(range(0x20, 0x7F)).decode()
    assert set(text[:0x20] + text[0x7F:]) == {"."}


def test_only_the_replays_own_file_may_be_sent():
    ours = quoting.string("/tmp/SQL_LOAD_MB-2-0")
    stmt = f"LOAD DATA LOCAL INFILE {ours} INTO TABLE t"
    assert quoting.client_reads_verbatim(stmt, local_file=ours)
    assert not quoting.client_reads_verbatim(stmt, local_file=quoting.string("/tmp/other"))
    assert not quoting.client_reads_verbatim(stmt + f" /*!50000 , LOCAL INFILE {ours} */",
                                             local_file=ours)  # two clauses: not ours alone
    # run from its hex, the server would still prepare it and the client send the file
    for text in (stmt, "LOAD DATA local /* \0 */ INFILE 'x' INTO TABLE t"):
        assert quoting.prepared(text) == [quoting.REFUSED_FILE_READ + ";"]
        assert quoting.statement_lines(text) == [quoting.REFUSED_FILE_READ + ";"]


def test_statement_lines_of_our_own_statements_check_only_the_names():
    assert quoting.statement_lines("DELETE FROM `t` WHERE `a`='x;y'", ";", ["t", "a"]) == [
        "DELETE FROM `t` WHERE `a`='x;y';"]
    lines = quoting.statement_lines("DELETE FROM `a\r\nb`", ";", ["a\r\nb"])
    assert lines[0].startswith("SET @binlog_grammar_stmt=CONVERT(X'") and len(lines) == 4
    assert all("\r" not in line and "\n" not in line for line in lines)


def test_use_lines_the_client_command_the_server_statement_or_none():
    assert quoting.use_lines("a`b", "/*!*/;") == ["use `a``b`/*!*/;"]
    assert quoting.use_lines("a\\b", ";") == ["use `a\\b`;"]  # the client's use takes no escapes
    assert quoting.use_lines("a\nb", ";") == ["use `a\nb`;"]
    assert quoting.use_lines("a\r\nb", ";") is None  # the client drops the CR
    assert quoting.use_lines("a\udce9", ";") is None


def test_text_literal_writes_bytes_when_text_would_not_store_them():
    assert quoting.text_literal("it's", "utf8mb4") == "'it\\'s'"
    assert quoting.text_literal("\udce9", "latin1") == "_latin1 X'E9'"
    assert quoting.text_literal("\udce9", None) == "X'E9'"
    with pytest.raises(ValueError):
        quoting.charset_literal(b"x", "latin1 X'00'), (1")


# ---------------------------------------------------------------------------------------------
# The judge: the real client and server

CLIENT_CHARSETS = ["utf8mb4", "latin1", "gbk", "big5", "sjis", "cp932"]


@pytest.fixture(scope="module")
def server(tmp_path_factory):
    need_mariadb()
    from binlog_grammar.testing import mariadb

    with mariadb.MariaDB(["--skip-log-bin"]) as db:
        db.sql("CREATE DATABASE canary; CREATE TABLE canary.pwned (i INT); "
               "CREATE DATABASE q; CREATE TABLE q.t (k INT PRIMARY KEY, v LONGBLOB)")
        yield db


def _client(server, charset, script: bytes):
    return subprocess.run(["mariadb", f"--default-character-set={charset}", "-h127.0.0.1",
                           f"-P{server.port}", "-uroot", "--batch", "--skip-column-names"],
                          input=script, capture_output=True, timeout=60)


@pytest.mark.server
@pytest.mark.parametrize("charset", CLIENT_CHARSETS)
@given(values=st.lists(hostile, min_size=1, max_size=4))
@example(values=["price 5\u20ac'\u20ac\\! touch FLAG #",  # the two row values: under gbk,
                 "\u20ac'), (5, 0); DROP TABLE canary.pwned; #"])  # AC 5C 27 ends the string
@settings(max_examples=6, derandomize=True, deadline=None,
          suppress_health_check=[HealthCheck.function_scoped_fixture])
def test_literals_comments_and_prepared_statements_through_the_client(server, charset, values,
                                                                      tmp_path_factory):
    """Each value as a string literal, a comment line, a /* */ comment, a hex-dump line and a
    prepared statement,
    piped into the client under `charset`: the server stores exactly the value's bytes, the
    canary survives, no shell command runs, the client exits 0."""
    flag = tmp_path_factory.mktemp("flag") / "pwned"
    vals = [v.replace("FLAG", str(flag)) for v in values]
    lines = list(quoting.SCRIPT_HEADER) + ["DELETE FROM q.t;"]
    for k, v in enumerate(vals):
        lines.append(quoting.comment_line(v).rstrip("\n"))
        lines.append(f"/* {quoting.comment(v)} */ SELECT 1;")
        # a hex-dump line of dump -H: its text column keeps backslashes, */ and ; as they are
        lines.append("#       17  00  |" + quoting.hex_column(v.encode("utf-8", "surrogateescape"))
                     + "|")
        lit = quoting.text_literal(v, None)  # the column is a BLOB
        lines.append(f"INSERT INTO q.t VALUES ({k}, {lit});")
        lines += quoting.prepared(f"INSERT INTO q.t VALUES ({k + 100}, {lit})")
    r = _client(server, charset, ("\n".join(lines) + "\n").encode("utf-8", "surrogateescape"))
    assert r.returncode == 0, r.stderr.decode("utf-8", "replace")
    assert not os.path.exists(flag)
    got = dict(tuple(line.split("\t")) for line in
               server.sql("SELECT k, HEX(v) FROM q.t ORDER BY k").splitlines() if line)
    for k, v in enumerate(vals):
        want = v.encode("utf-8", "surrogateescape").hex().upper()
        assert got.get(str(k)) == want and got.get(str(k + 100)) == want, (k, v)
    assert server.sql("SELECT COUNT(*) FROM canary.pwned").strip() == "0"


@pytest.mark.server
@pytest.mark.parametrize("name", ["a\nDROP TABLE canary.pwned;#", "a\rb", "a\tb\x01\x1a",
                                  "a\\nb`c", "x\n`use y`", "a\r\nb"])
def test_use_lines_through_the_client(server, name):
    """The client's `use` makes the database current whatever the name holds, but a CR before an
    LF, which the client drops (then use_lines gives no line)."""
    server.sql(f"CREATE DATABASE IF NOT EXISTS {quoting.ident(name)}")
    lines = quoting.use_lines(name, "/*!*/;")
    if "\r\n" in name:
        assert lines is None
        lines = [f"use {quoting.ident(name)}/*!*/;"]  # what the client would do with it
    script = "\n".join(["DELIMITER /*!*/;", *lines, "SELECT HEX(DATABASE())/*!*/;", ""])
    r = _client(server, "utf8mb4", script.encode())
    current = r.stdout.decode().strip()
    assert (current == name.encode().hex().upper()) is ("\r\n" not in name), (r, name)
    assert server.sql("SELECT COUNT(*) FROM canary.pwned").strip() == "0"
