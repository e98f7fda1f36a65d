"""docs/mysqlbinlog.md maps every option of mysqlbinlog and mariadb-binlog to this project's: every
option `mariadb-binlog --help` prints has a row, every option a row names here is accepted by that
command's `--help`, and a row without one says why (so the table cannot drift from either tool)."""
from __future__ import annotations

import re
import subprocess
import sys

import pytest

from helpers.paths import ROOT
from helpers.services import need_mariadb_binlog

DOC = ROOT / "docs" / "mysqlbinlog.md"
COMMANDS = ("dump", "stats", "sql", "flashback", "stream", "binlog-grammar")


def rows() -> list:
    """(option names, binlog-grammar cell, why cell) of the table's rows."""
    out = []
    for line in DOC.read_text().splitlines():
        cells = [c.strip() for c in line.strip().strip("|").split("|")]
        if len(cells) != 5 or not cells[0].startswith("`"):
            continue
        names = re.findall(r"`(-[^`]+)`", cells[0])
        out.append((names, cells[3], cells[4]))
    return out


def help_options(command: str) -> set:
    argv = [sys.executable, "-m", "binlog_grammar"] + ([] if command == "binlog-grammar" else [command])
    text = subprocess.run(argv + ["--help"], capture_output=True, text=True, cwd=ROOT).stdout
    found = set()
    for line in text.splitlines():
        if not re.match(r"^\s{1,4}-", line):
            continue
        column = re.split(r"\s{2,}", line.strip())[0]  # the options, before their help
        found.update(re.findall(r"(?:^|, )(-{1,2}[A-Za-z?#][\w-]*)", column))
    return found


def mariadb_options() -> set:
    text = subprocess.run(["mariadb-binlog", "--help"], capture_output=True, text=True).stdout
    names = set()
    for line in text.splitlines():
        m = re.match(r"^  (?:(-.), )?--([a-z][a-z0-9-]*)", line) or re.match(r"^()--([a-z][a-z0-9-]*)", line)
        if m:
            names.add("--" + m.group(2))
            if m.group(1):
                names.add(m.group(1))
    return names


@pytest.mark.server
def test_every_mariadb_binlog_option_has_a_row():
    need_mariadb_binlog()
    listed = {n for names, _, _ in rows() for n in names}
    theirs = mariadb_options()
    assert len(theirs) > 60
    assert not theirs - listed, sorted(theirs - listed)


def test_every_option_named_is_accepted():
    seen = 0
    helps = {}
    for names, ours, why in rows():
        spans = re.findall(r"`([^`]+)`", ours)
        if not spans:
            assert ours.split()[0] in ("no", "not"), (names, ours)
            assert why, f"{names}: say why not"
            continue
        for span in spans:
            command, option = span.split()[0], span.split()[1]
            assert command in COMMANDS, span
            if command not in helps:
                helps[command] = help_options(command)
            assert option in helps[command], f"{names}: `{span}` is not in {command} --help"
            seen += 1
    assert seen >= 40


def test_linked_from_the_readme_and_the_docs_index():
    assert "docs/mysqlbinlog.md" in (ROOT / "README.md").read_text()
    guide = ROOT / "docs" / "guide" / "README.md"
    if guide.exists():
        assert "mysqlbinlog.md" in guide.read_text()
