"""Passwords on the command line (issue 25): no option is matched by an abbreviation, and a
refused command line is never echoed back, since what it holds may be a password typed for an
option that does not exist (`--password SECRET`, `-pSECRET`, `--password=SECRET`). The refusal
keeps argparse's form: the usage line, the refused option by name, exit status 2."""
from __future__ import annotations

import os
import subprocess
import sys

import pytest

from binlog_grammar.cli import build_parser, main

SECRET = "replpw-S3cr3t"
COMMANDS = sorted(build_parser()._subparsers._group_actions[0].choices)
# what a command needs besides, so that the refused option is the first error
REQUIRED = {**{c: ["f.bin"] for c in ("verify", "dump", "stats", "sql", "flashback")},
            "pipeline": ["--input", "f.bin", "--output", "out"]}


def run(argv, capsys, monkeypatch):
    """main(argv) in this process: (exit status, stdout + stderr)."""
    monkeypatch.delenv(SECRET, raising=False)
    monkeypatch.delenv("replpw", raising=False)
    try:
        rc = main(argv)
    except SystemExit as e:
        rc = e.code
    out, err = capsys.readouterr()
    return rc, out + err


def test_the_issue_case_stream_password_is_refused_without_echo():
    """`stream --password replpw` was read as --password-env and named replpw in its error."""
    env = {k: v for k, v in os.environ.items() if k != "replpw"}
    r = subprocess.run([sys.executable, "-m", "binlog_grammar", "stream", "--port", "1", "--password",
                        "replpw", "--until-now"], capture_output=True, text=True, env=env, timeout=60)
    assert r.returncode == 2, r.stderr
    assert "replpw" not in r.stdout + r.stderr
    assert r.stderr.startswith("usage: binlog-grammar stream"), r.stderr
    assert "unrecognized option --password" in r.stderr, r.stderr


@pytest.mark.parametrize("argv", [
    ["stream", "--pass", SECRET],
    ["stream", "--password", SECRET],
    ["stream", "--passw=" + SECRET],
    ["stream", "--password-e", SECRET],
    ["repair", "--pass", SECRET],
    ["repair", "--password", SECRET],
    ["repair", "--primary-pass", SECRET],
    ["repair", "--primary-password", SECRET],
])
def test_password_options_are_not_abbreviated(argv, capsys, monkeypatch):
    rc, text = run(argv, capsys, monkeypatch)
    assert rc == 2 and SECRET not in text, text
    assert "unrecognized option " + argv[1].split("=")[0] in text, text


@pytest.mark.parametrize("argv", [["stream", "--ssl-m", "disabled"], ["dump", "--start-pos", "4", "x"],
                                  ["repair", "--conn", "x"], ["--spec", "specs", "verify", "x"]])
def test_no_option_is_abbreviated(argv, capsys, monkeypatch):
    rc, text = run(argv, capsys, monkeypatch)
    assert rc == 2 and "unrecognized option " + argv[0 if argv[0].startswith("-") else 1] in text, text


def shapes():
    """A password typed as if an option took it, in the shapes people type."""
    return {"--password SECRET": ["--password", SECRET], "--password=SECRET": ["--password=" + SECRET],
            "-pSECRET": ["-p" + SECRET], "-p SECRET": ["-p", SECRET],
            "--bogus=SECRET": ["--bogus=" + SECRET], "-hSECRET": ["-h" + SECRET],
            "--no-checksum=SECRET": ["--no-checksum=" + SECRET]}


@pytest.mark.parametrize("shape", list(shapes()))
@pytest.mark.parametrize("command", COMMANDS)
def test_no_subcommand_echoes_a_refused_value(command, shape, capsys, monkeypatch, tmp_path):
    words = shapes()[shape]
    rc, text = run([command, *words, *REQUIRED.get(command, [])], capsys, monkeypatch)
    assert rc == 2, text
    assert SECRET not in text, text
    assert "usage:" in text and "Traceback" not in text, text


@pytest.mark.parametrize("argv", [["--password", SECRET, "stream"], ["--password=" + SECRET, "dump", "x"],
                                  [SECRET], ["stream", "--ssl-mode", SECRET], ["stream", SECRET]])
def test_the_top_level_and_choices_echo_no_value(argv, capsys, monkeypatch):
    rc, text = run(argv, capsys, monkeypatch)
    assert rc == 2 and SECRET not in text and "usage:" in text, text


def test_a_password_given_as_the_variable_name_is_not_echoed(capsys, monkeypatch):
    """`--password-env replpw`: replpw does not look like a variable name, so the error does not
    show it (MYSQL_PWD-like names are still named)."""
    for command in ("stream", "repair"):
        rc, text = run([command, "--port", "1", "--password-env", "replpw"], capsys, monkeypatch)
        assert rc == 2 and "replpw" not in text and "--password-env" in text, text
        rc, text = run([command, "--port", "1", "--password-env", "NO_SUCH_PW_X"], capsys, monkeypatch)
        assert rc == 2 and "NO_SUCH_PW_X" in text, text
    rc, text = run(["repair", "--port", "1", "--primary-user", "u", "--primary-password-env", "s3cret"],
                   capsys, monkeypatch)
    assert rc == 2 and "s3cret" not in text and "--primary-password-env" in text, text


def test_errors_that_quote_nothing_secret_are_unchanged(capsys, monkeypatch):
    rc, text = run(["stream", "--port", "x"], capsys, monkeypatch)
    assert rc == 2 and "argument --port: not a whole number: 'x'" in text, text
    rc, text = run(["stream", "--gtid", "0-1-2", "--file", "f"], capsys, monkeypatch)
    assert rc == 2 and "give either --file (and --pos) or --gtid, not both" in text, text
    rc, text = run(["dump", "--format", "text"], capsys, monkeypatch)
    assert rc == 2 and "the following arguments are required: FILE" in text, text


def test_no_argument_parser_takes_abbreviations_where_a_password_may_go():
    """The CLI's parsers are all cli/parser.Parser (no abbreviation), and no other ArgumentParser
    in the package, nor one in tools/ that has a password option, allows abbreviations."""
    import re

    from helpers.paths import ROOT

    parser = build_parser()
    for sp in [parser, *parser._subparsers._group_actions[0].choices.values()]:
        assert sp.allow_abbrev is False, sp.prog
    for path in [*ROOT.joinpath("binlog_grammar").rglob("*.py"), *ROOT.joinpath("tools").glob("*.py")]:
        text = path.read_text(encoding="utf-8")
        for m in re.finditer(r"\bArgumentParser\(", text):
            depth, end = 1, m.end()
            while depth:
                depth += {"(": 1, ")": -1}.get(text[end], 0)
                end += 1
            if path.parent.name == "tools" and "password" not in text.lower():
                continue
            assert "allow_abbrev=False" in text[m.start():end], f"{path}: {text[m.start():end]}"
