"""A refused option is named with the nearest one the command has (issue 28: "an unknown option
prints the subcommand's usage and the nearest known option"), never with its value."""
from __future__ import annotations

import subprocess
import sys

import pytest

from helpers.paths import ROOT

SAMPLE = str(ROOT / "samples" / "mariadb-10.11-sample.000001")


@pytest.mark.parametrize("argv, usage, said", [
    (["dump", "--format", "text", "--tabel", "x", SAMPLE], "usage: binlog-grammar dump",
     "unrecognized option --tabel (did you mean --table?)"),
    (["stats", "--jsn", SAMPLE], "usage: binlog-grammar stats",
     "unrecognized option --jsn (did you mean --json?)"),
    (["dump", "--format", "text", "--start-pos", "4", SAMPLE], "usage: binlog-grammar dump",
     "unrecognized option --start-pos (did you mean --start-position?)"),
    (["--bakend", "c", "dump", SAMPLE], "usage: binlog-grammar",
     "unrecognized option --bakend (did you mean --backend?)"),
    (["stream", "--pasword=hunter2"], "usage: binlog-grammar stream",
     "unrecognized option --pasword (its value not shown, it may be a secret) (did you mean "
     "--password-env?)"),
    (["dump", "--format", "text", "--zzzz", SAMPLE], "usage: binlog-grammar dump", "unrecognized option --zzzz\n"),
])
def test_the_nearest_option_is_named(argv, usage, said):
    r = subprocess.run([sys.executable, "-m", "binlog_grammar", *argv], capture_output=True,
                       text=True, cwd=ROOT)
    assert r.returncode == 2 and r.stderr.startswith(usage), r.stderr
    assert said in r.stderr and "hunter2" not in r.stderr, r.stderr
