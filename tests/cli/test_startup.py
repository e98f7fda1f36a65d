"""What a reading command loads when it starts (issue 26: `dump` of a small file in under 0.15 s,
start to end). Not a timed test: the structure that keeps the start short is pinned instead.

A command imports only what it runs on: a run that finds the spec model in its cache folder
(binlog_grammar.lang.cache) unpickles it without the YAML reader or the spec checks, and no
command imports the replication client, the Spark source, the docs, the code generators (jinja2),
repair or logging unless it is the one that uses them. The first run with an empty cache folder
builds the model (and may import all of that); the second is what is checked. `tools/bench.py
--startup` gives the figures, against mariadb-binlog on the same file.

On the small sample, where the compiled backend makes every row, no command loads the spec model
or the specialised row readers (codegen.table: compiled only when the Python readers need them),
the module of another command (the command line builds only its own command's parser), the
datetime options' module without such an option, or the JSON lines' module unless it writes
them; and the parser built for one command is the whole parser's for that command.

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
              "binlog_grammar.spark", "binlog_grammar.repair", "binlog_grammar.testing",
              "binlog_grammar.cli.datetimes")
# ... nor, when the compiled backend makes the sample's rows, the spec model and the code
# generators (the Python backend compiles a row reader per table: codegen.table, lang's model)
COMPILED_NOT_LOADED = ("binlog_grammar.lang", "binlog_grammar.codegen")

COMMANDS = {
    "dump": ["dump", "--format", "text"],
    "dump-replay": ["dump"],
    "dump-vv": ["dump", "-vv", "--base64-output=decode-rows"],
    "dump-jsonl": ["dump", "--format", "jsonl"],
    "sql": ["sql"],
    "flashback": ["flashback"],
    "stats": ["stats"],
    "verify": ["verify"],
}
# what a command needs beyond NOT_LOADED's (the JSON lines' module is dump --format jsonl's)
ALSO_NOT_LOADED = {name: ("binlog_grammar.output.dump",) for name in COMMANDS if name != "dump-jsonl"}

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


def _offending(modules, baseline, name, compiled) -> list:
    """The modules of NOT_LOADED (or under one) loaded by the command, not by Python's start;
    and the modules of the other commands (cli.COMMANDS); with `compiled` (the compiled backend
    ran), COMPILED_NOT_LOADED's too."""
    from binlog_grammar.cli import COMMANDS as MODULES

    own = MODULES[COMMANDS[name][0]]
    others = {f"binlog_grammar.cli.{m}" for m in MODULES.values() if m != own}
    names = (*NOT_LOADED, *ALSO_NOT_LOADED.get(name, ()), *others)
    if compiled:
        names += COMPILED_NOT_LOADED
    return sorted(m for m in modules - baseline if any(m == n or m.startswith(n + ".") for n in names))


@pytest.mark.parametrize("name", sorted(COMMANDS))
def test_a_reading_command_loads_only_what_it_runs_on(tmp_path, name):
    env = dict(os.environ, XDG_CACHE_HOME=str(tmp_path / "cache"))
    env.pop("BINLOG_GRAMMAR_NO_CACHE", None)
    # what the interpreter's start loads here (site hooks of this machine) is not the command's
    r = subprocess.run([sys.executable, "-c", "import json, sys; print(json.dumps(sorted(sys.modules)))"],
                       cwd=ROOT, env=env, capture_output=True, text=True, timeout=60)
    baseline = set(json.loads(r.stdout))
    backend = subprocess.run([sys.executable, "-c", "from binlog_grammar import native\n"
                              "print(native.backend())"], cwd=ROOT, env=env, capture_output=True,
                             text=True, timeout=60, check=True).stdout.strip()
    args = [*COMMANDS[name], str(SAMPLE)]
    _modules(tmp_path, args, env)  # fills the empty cache folder
    assert _offending(_modules(tmp_path, args, env), baseline, name, backend == "c") == []


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


def test_a_command_parser_is_the_whole_parsers():
    """build_parser(command), which main() uses, makes the parser the whole one has for that
    command: the same options, defaults and help (and --help of each command prints the same)."""
    from binlog_grammar.cli import COMMANDS as MODULES, build_parser

    def sub(parser, name):
        return next(a for a in parser._actions if hasattr(a, "choices") and
                    isinstance(a.choices, dict)).choices[name]

    whole = build_parser()
    for name in MODULES:
        one, every = sub(build_parser(name), name), sub(whole, name)
        assert one.format_help() == every.format_help(), name
        assert [(a.option_strings, a.dest, a.default, getattr(a.type, "__qualname__", a.type), a.nargs) for a in one._actions] == \
            [(a.option_strings, a.dest, a.default, getattr(a.type, "__qualname__", a.type), a.nargs) for a in every._actions], name
        def named(value):  # a function made per parser (a closure) by its name
            return getattr(value, "__qualname__", value)

        assert {k: named(v) for k, v in one._defaults.items() if k != "subparser"} == \
            {k: named(v) for k, v in every._defaults.items() if k != "subparser"}, name


@pytest.mark.parametrize("words, command", [
    (["dump", "x"], "dump"), (["--backend", "python", "sql", "x"], "sql"),
    (["--backend=c", "flashback"], "flashback"), (["--specs", "dump", "verify", "x"], "verify"),
    (["-h", "dump"], None), (["--help"], None), ([], None), (["x", "dump"], None),
    (["--bogus", "dump"], None), (["--", "dump"], None)])
def test_the_command_of_a_command_line(words, command):
    """What main() builds one command's parser for: only root options before the command."""
    from binlog_grammar.cli import command_of

    assert command_of(words) == command


@pytest.mark.parametrize("words", [["--backend", "bogus", "dump", str(SAMPLE)],
                                   ["--bogus", "dump", str(SAMPLE)], ["dump", "--bogus", str(SAMPLE)],
                                   ["--specs", "/nonexistent", "sql", str(SAMPLE)]])
def test_errors_before_the_command_are_the_whole_parsers(words):
    """An error of a root option, reported by the whole parser: its usage line lists every
    command, as before the command line built one command's parser."""
    r = subprocess.run([sys.executable, "-m", "binlog_grammar", *words], cwd=ROOT,
                       capture_output=True, text=True, timeout=120)
    assert r.returncode == 2
    usage = r.stderr.split(": error:")[0]
    root = words[0].startswith("-") and words[0] != "dump"
    assert ("{generate,docs,verify,dump,stats,sql,flashback,pipeline,stream,repair}" in usage) == root
