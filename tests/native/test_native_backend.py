"""Which backend runs: BINLOG_GRAMMAR_BACKEND and --backend choose, --version and stats say
which ran, and the package works when the extension cannot be imported (a subprocess whose
import hook hides it, as on a machine without a compiler)."""
import json
import os
import subprocess
import sys

import pytest

from binlog_grammar import native
from helpers.paths import ROOT

SAMPLE = ROOT / "samples" / "mariadb-10.11-sample.000001"
# an import hook that makes the compiled extension unimportable, then the command line
HIDE = """
import sys
class Hide:
    def find_spec(self, name, path=None, target=None):
        if name.startswith("binlog_grammar.native._"):
            raise ImportError("hidden by the test")
sys.meta_path.insert(0, Hide())
"""
RUN = "from binlog_grammar.cli import main; sys.exit(main(sys.argv[1:]))"


def cli(*args, hide=False, env=None):
    e = dict(os.environ)
    e.pop(native.ENV, None)
    e.update(env or {})
    code = (HIDE if hide else "import sys\n") + RUN
    return subprocess.run([sys.executable, "-c", code, *map(str, args)], capture_output=True,
                          text=True, cwd=ROOT, env=e, timeout=300)


def test_without_the_extension_everything_runs_on_python():
    v = cli("--version", hide=True)
    assert v.returncode == 0 and "backend: python (compiled backend not built)" in v.stdout
    s = cli("stats", "--json", SAMPLE, hide=True)
    assert s.returncode == 0, s.stderr
    assert json.loads(s.stdout)["backend"] == "python"
    code = HIDE + """
from binlog_grammar import native
from binlog_grammar.binlog.framing import scan
print(native.backend(), len(list(scan(sys.argv[1]))))
"""
    r = subprocess.run([sys.executable, "-c", code, str(SAMPLE)], capture_output=True, text=True,
                       cwd=ROOT, env={k: v for k, v in os.environ.items() if k != native.ENV})
    assert r.returncode == 0 and r.stdout.split()[0] == "python" and int(r.stdout.split()[1]) > 10


@pytest.mark.parametrize("how", ["option", "environment"])
def test_asking_for_c_without_the_extension_is_one_line_and_exit_2(how):
    args, env = (["--backend", "c"], None) if how == "option" else ([], {native.ENV: "c"})
    r = cli(*args, "stats", SAMPLE, hide=True, env=env)
    assert r.returncode == 2 and r.stdout == ""
    assert r.stderr.count("\n") == 1 and "compiled backend was asked for but cannot run" in r.stderr


def test_an_unknown_backend_in_the_environment_is_exit_2():
    r = cli("stats", SAMPLE, env={native.ENV: "fortran"})
    assert r.returncode == 2 and "is not a backend" in r.stderr and r.stderr.count("\n") == 1


def test_python_chosen_runs_framing_and_stats_on_python():
    r = cli("stats", SAMPLE, env={native.ENV: "python"})
    assert r.returncode == 0 and r.stdout.startswith("backend: python\n")
    code = ("from binlog_grammar import native\nfrom binlog_grammar.binlog import framing as fr\n"
            "import sys\nw = fr.Walk(sys.argv[1], 19, short=True)\n"
            "print(native.backend(), w.mod is None, len(list(w)), w.stop.status)")
    out = subprocess.run([sys.executable, "-c", code, str(SAMPLE)], capture_output=True, text=True,
                         cwd=ROOT, env=dict(os.environ, **{native.ENV: "python"})).stdout.split()
    assert out[:2] == ["python", "True"] and int(out[2]) > 10 and out[3] == "end"


@pytest.mark.skipif(native.unavailable() is not None, reason="compiled backend not built")
def test_c_chosen_says_so():
    v = cli("--backend", "c", "--version")
    assert v.returncode == 0 and "backend: c (compiled: framing" in v.stdout
    s = cli("--backend", "c", "stats", "--json", SAMPLE)
    assert s.returncode == 0 and json.loads(s.stdout)["backend"] == "c"
    py = cli("--backend", "python", "stats", "--json", SAMPLE)
    a, b = json.loads(s.stdout), json.loads(py.stdout)
    a.pop("backend"), b.pop("backend")
    assert a == b
