"""The validator names file, line and field for each kind of mistake; the compiler is
deterministic and the committed generated/ matches the specs."""
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from binlog_grammar.codegen.construct import generate, render
from binlog_grammar.errors import SpecError
from binlog_grammar.lang import expr as E
from binlog_grammar.lang.loader import load_specs

ROOT = Path(__file__).resolve().parents[2]
BASE = ROOT / "specs"


def _specs_with(tmp_path, rel, text):
    """The project's specs plus one extra file."""
    d = tmp_path / "specs"
    shutil.copytree(BASE, d)
    p = d / rel
    p.parent.mkdir(parents=True, exist_ok=True)
    p.write_text(text)
    return d


GOOD_EVENT = """\
event: TEST_EVENT
code: 250
doc: A test event.
post_header:
  - id: n
    type: u8
    doc: A count.
body:
  - id: entries
    type: u16le
    repeat: n
    doc: The items.
"""


@pytest.mark.parametrize("bad, line, field, words", [
    (GOOD_EVENT.replace("type: u16le", "type: u17le"), 10, "entries", "unknown type"),
    (GOOD_EVENT.replace("repeat: n", "repeat: n +"), 11, "entries", "bad expression"),
    (GOOD_EVENT.replace("repeat: n", "repeat: m"), 11, "entries", "before it is defined"),
    (GOOD_EVENT.replace("code: 250", "code: 4"), 1, None, "already used"),
    (GOOD_EVENT.replace("    doc: A count.\n", ""), 5, "n", "doc"),
    (GOOD_EVENT.replace("repeat: n", "repeat: ctx.nope"), 11, "entries", "unknown context"),
    (GOOD_EVENT.replace("repeat: n", "repeat: len(n, n)"), 11, "entries", "argument"),
])
def test_spec_mistakes_name_file_line_and_field(tmp_path, bad, line, field, words):
    d = _specs_with(tmp_path, "events/test/test.yaml", bad)
    with pytest.raises(SpecError) as info:
        load_specs(d)
    err = info.value
    assert err.file == "specs/events/test/test.yaml"
    assert err.line == line
    assert err.field == field
    assert words in err.message


def test_a_good_new_event_loads(tmp_path):
    specs = load_specs(_specs_with(tmp_path, "events/test/test.yaml", GOOD_EVENT))
    ev, name = specs.event_by_name("TEST_EVENT")
    assert name.code == 250 and [f.id for f in ev.fields] == ["n", "entries"]


def test_expressions_are_parsed_not_evaluated():
    node = E.parse("ctx.post_header_len == 6 ? 4 : 6")
    assert node[0] == "cond"
    with pytest.raises(SyntaxError):
        E.parse("__import__('os')")
    with pytest.raises(SyntaxError):
        E.parse("a; b")
    assert E.evaluate(E.parse("(x + 7) / 8"), E.Env({"x": 9}), {}) == 2
    v = E.parse("ctx.server >= mysql-5.6.1")
    env = E.Env({}, ctx={"server": E.Version("mariadb", (10, 11, 6))})
    assert E.evaluate(v, env, {}) is False  # versions compare within their own line


def test_generation_is_deterministic_and_committed():
    specs = load_specs()
    first, second = render(specs), render(load_specs())
    assert first == second
    committed = ROOT / "generated"
    for rel, text in first.items():
        path = committed / rel
        assert path.exists(), f"generated/{rel} is missing: run binlog-grammar generate"
        body = text if text.endswith("\n") else text + "\n"
        assert path.read_text() == body, f"generated/{rel} differs from the specs"
    on_disk = {p.relative_to(committed).as_posix() for p in committed.rglob("*.py")}
    assert on_disk == set(first), "generated/ holds files no spec makes"


def test_generate_check_command(tmp_path):
    out = tmp_path / "gen"
    r = subprocess.run([sys.executable, "-m", "binlog_grammar", "generate", "--output", str(out)],
                       capture_output=True, text=True)
    assert r.returncode == 0, r.stderr
    r = subprocess.run([sys.executable, "-m", "binlog_grammar", "generate", "--check",
                        "--output", str(out)], capture_output=True, text=True)
    assert r.returncode == 0, r.stdout + r.stderr
    (out / "enums.py").write_text("# edited by hand\n")
    r = subprocess.run([sys.executable, "-m", "binlog_grammar", "generate", "--check",
                        "--output", str(out)], capture_output=True, text=True)
    assert r.returncode == 1 and "enums.py" in r.stdout


def test_a_bad_spec_is_a_clean_cli_error(tmp_path):
    d = _specs_with(tmp_path, "events/test/test.yaml", GOOD_EVENT.replace("u16le", "u17le"))
    r = subprocess.run([sys.executable, "-m", "binlog_grammar", "generate", "--specs", str(d),
                        "--output", str(tmp_path / "out")], capture_output=True, text=True)
    assert r.returncode == 2
    assert "Traceback" not in r.stderr
    assert "specs/events/test/test.yaml:10: field entries: unknown type" in r.stderr


def test_the_cached_model_follows_the_spec_files(tmp_path, monkeypatch):
    """load_specs keeps the validated model in the cache folder under a hash of the files: a
    second load comes from the cache, and a changed file gives a new model, not the cached one."""
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    monkeypatch.delenv("BINLOG_GRAMMAR_NO_CACHE", raising=False)
    specs = tmp_path / "specs"
    shutil.copytree(ROOT / "specs", specs)
    first = load_specs(specs)
    cached = list((tmp_path / "cache" / "binlog-grammar" / "models").glob("*.pickle"))
    assert len(cached) == 1
    assert load_specs(specs).event_by_name("XID_EVENT")[0].doc == first.event_by_name("XID_EVENT")[0].doc
    xid = specs / "events" / "control" / "xid.yaml"
    xid.write_text(xid.read_text().replace("doc: Commit of a transaction", "doc: Changed - commit of a transaction", 1))
    changed = load_specs(specs)
    assert changed.event_by_name("XID_EVENT")[0].doc.startswith("Changed - commit")
    assert len(list(cached[0].parent.glob("*.pickle"))) == 2
