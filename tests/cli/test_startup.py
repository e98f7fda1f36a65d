"""What a reading command loads when it starts (issue 26: `dump` of a small file in under 0.15 s,
start to end). Not a timed test: the structure that keeps the start short is pinned instead.

A command imports only what it runs on: a run that finds the spec model in its cache folder
(binlog_grammar.lang.cache) unpickles it without the YAML reader or the spec checks, and no
command imports the replication client, the Spark source, the docs, the code generators (jinja2),
repair or logging unless it is the one that uses them. The first run with an empty cache folder
builds the model (and may import all of that); the second is what is checked. `tools/bench.py
startup` gives the figures, against mariadb-binlog on the same file.

The regular (not editable) install these figures are meant for is checked here too: every
package of the source tree is in pyproject.toml's list, or `pip install .` leaves it out.
"""
import json
import os
import subprocess
import sys
import tomllib

import pytest

from helpers.paths import ROOT

SAMPLE = ROOT / "samples" / "mariadb-10.11-sample.000001"

# what no reading command may import: top-level distributions, and the package's own modules
# (a name and everything under it)
NOT_LOADED = ("yaml", "jinja2", "pyspark", "pyarrow", "logging",
              "binlog_grammar.lang.build", "binlog_grammar.lang.source",
              "binlog_grammar.lang.definitions", "binlog_grammar.lang.fields",
              "binlog_grammar.codegen.construct", "binlog_grammar.codegen.python",
              "binlog_grammar.codegen.c", "binlog_grammar.replication", "binlog_grammar.docs",
              "binlog_grammar.spark", "binlog_grammar.repair", "binlog_grammar.testing")

COMMANDS = {
    "dump": ["dump", "--format", "text"],
    "dump-jsonl": ["dump", "--format", "jsonl"],
    "sql": ["sql"],
    "flashback": ["flashback"],
    "stats": ["stats"],
    "verify": ["verify"],
}

# the command line, with the modules loaded at exit written to the file named first
RUN = """
import atexit, json, sys
out = sys.argv.pop(1)
atexit.register(lambda: open(out, "w").write(json.dumps(sorted(sys.modules))))
from binlog_grammar.cli import main
sys.exit(main(sys.argv[1:]))
"""


def _modules(tmp_path, args, env) -> set:
    out = tmp_path / "modules.json"
    r = subprocess.run([sys.executable, "-c", RUN, str(out), *args], cwd=ROOT, env=env,
                       capture_output=True, text=True, timeout=300)
    assert r.returncode in (0, 1), r.stderr  # 1: flashback notes what it cannot invert
    return set(json.loads(out.read_text()))


def _offending(modules, baseline) -> list:
    """The modules of NOT_LOADED (or under one) loaded by the command, not by Python's start."""
    return sorted(m for m in modules - baseline
                  if any(m == n or m.startswith(n + ".") for n in NOT_LOADED))


@pytest.mark.parametrize("name", sorted(COMMANDS))
def test_a_reading_command_loads_only_what_it_runs_on(tmp_path, name):
    env = dict(os.environ, XDG_CACHE_HOME=str(tmp_path / "cache"))
    env.pop("BINLOG_GRAMMAR_NO_CACHE", None)
    # what the interpreter's start loads here (site hooks of this machine) is not the command's
    r = subprocess.run([sys.executable, "-c", "import json, sys; print(json.dumps(sorted(sys.modules)))"],
                       cwd=ROOT, env=env, capture_output=True, text=True, timeout=60)
    baseline = set(json.loads(r.stdout))
    args = [*COMMANDS[name], str(SAMPLE)]
    _modules(tmp_path, args, env)  # fills the empty cache folder
    assert _offending(_modules(tmp_path, args, env), baseline) == []


def test_the_cached_model_loads_without_the_yaml_reader(tmp_path):
    code = ("import json, sys\n"
            "from binlog_grammar.lang.loader import load_specs\n"
            "specs = load_specs()\n"
            "print(json.dumps([len(specs.types), len(specs.events), sorted(sys.modules)]))")
    env = dict(os.environ, XDG_CACHE_HOME=str(tmp_path / "cache"))
    env.pop("BINLOG_GRAMMAR_NO_CACHE", None)
    runs = [json.loads(subprocess.run([sys.executable, "-c", code], cwd=ROOT, env=env, check=True,
                                      capture_output=True, text=True, timeout=300).stdout)
            for _ in range(2)]
    assert runs[0][:2] == runs[1][:2]  # the same model, built then read back
    assert "binlog_grammar.lang.build" in runs[0][2]
    assert not {"yaml", "binlog_grammar.lang.build", "binlog_grammar.lang.source"} & set(runs[1][2])


def test_pyproject_lists_every_package():
    project = tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]["setuptools"]
    listed = set(project["packages"])
    where = {name: ROOT / folder for name, folder in project.get("package-dir", {}).items()}
    found = set()
    for init in (ROOT / "binlog_grammar").rglob("__init__.py"):
        found.add(".".join(init.parent.relative_to(ROOT).parts))
    for name, folder in where.items():
        for init in folder.rglob("__init__.py"):
            found.add(".".join([name, *init.parent.relative_to(folder).parts]))
    assert sorted(found - listed) == []


def test_the_parser_reads_no_generated_module():
    """Building the parser (every command's options, --help, --version) imports no reader: the
    generated modules must still be free to load when `--specs DIR` compiles its own
    (codegen.grammar.use_specs), and a command pays only for what it runs on."""
    code = ("import json, sys\n"
            "from binlog_grammar.cli import build_parser\n"
            "build_parser()\n"
            "print(json.dumps(sorted(sys.modules)))")
    r = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True,
                       timeout=60, check=True)
    loaded = set(json.loads(r.stdout))
    assert sorted(m for m in loaded if m.startswith(("binlog_grammar.generated",
                                                     "binlog_grammar.binlog", "construct"))) == []
