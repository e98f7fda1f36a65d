"""A machine without a C compiler (issue 26, "Done when"): this checkout, copied without any built
extension, is installed into a fresh venv by a regular (not editable) `pip install` whose compiler
does not exist (CC, CXX and LDSHARED point at /nonexistent). pip must succeed with the three
extensions unbuilt, `--version` must say the Python backend runs, BINLOG_GRAMMAR_BACKEND=c must be
one line and exit 2, and a share of the suite (SHARE, without server and Spark tests: about half a
minute on 2 cores) must pass against the installed package, not this tree.

The share runs from the copy (so tests/helpers, samples/ and ../shared resolve as in the checkout)
with PYTHONSAFEPATH=1, so neither pytest nor the tests' subprocesses put the copy on sys.path, and
the copy's binlog_grammar/ is a link to the installed package: whatever a test imports or reads is
the installed code. A guard test written into the copy checks that.

Needs venv and pip able to install the build requirements of pyproject.toml (from the network or
a local index): without them it skips, under BINLOG_GRAMMAR_REQUIRE_SERVICES=1 it fails.
BINLOG_GRAMMAR_NOCC_SOURCE=DIR judges another tree (`git archive COMMIT | tar -x -C DIR`), to see
the test fail before a fix."""
import os
import re
import shutil
import subprocess
import sys
import tomllib
from pathlib import Path

import pytest

from helpers import services
from helpers.paths import ROOT

SOURCE = Path(os.environ.get("BINLOG_GRAMMAR_NOCC_SOURCE") or ROOT)
# every reader of tests/binlog, and the commands' outputs: a CI-sized share (the whole of
# tests/cli and tests/output took over a minute of the budget); BINLOG_GRAMMAR_NOCC_SHARE=full
# runs those folders whole
SHARE = (["tests/cli", "tests/output", "tests/binlog"]
         if os.environ.get("BINLOG_GRAMMAR_NOCC_SHARE") == "full" else
         ["tests/binlog", "tests/output/test_dump.py", "tests/output/test_formats.py",
          "tests/output/test_jsonl_forms.py", "tests/cli/test_cli.py",
          "tests/cli/test_reading_commands.py"])
MARKS = "not server and not spark"
MIN_PASSED = 450  # the share is about 550 tests; fewer passing means it did not really run
SHARE_TIMEOUT = 215  # with the install, under 4 minutes
EXTENSIONS = ("_framing", "_rows", "_lane")
NO_COMPILER = {"CC": "/nonexistent/cc", "CXX": "/nonexistent/c++",
               "LDSHARED": "/nonexistent/cc -shared"}
GUARD = '''"""Written by tests/native/test_without_compiler.py: the share runs on the installed package."""
import os
import subprocess
import sys

from binlog_grammar import native

PURELIB = os.environ["BINLOG_GRAMMAR_NOCC_PURELIB"]


def test_the_installed_package_runs_without_its_extensions():
    import binlog_grammar

    assert binlog_grammar.__file__.startswith(PURELIB)
    assert native.unavailable() is not None and native.backend() == "python"
    stray = [m for m, mod in sys.modules.items() if m.startswith("binlog_grammar")
             and getattr(mod, "__file__", None) and not mod.__file__.startswith(PURELIB)]
    assert stray == []


def test_a_subprocess_from_the_copy_imports_the_installed_package():
    code = "import binlog_grammar; print(binlog_grammar.__file__)"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.startswith(PURELIB)
'''


def _unusable(why):
    if services.REQUIRE_SERVICES:
        pytest.fail(f"{why} and BINLOG_GRAMMAR_REQUIRE_SERVICES=1")
    pytest.skip(why)


def _run(args, **kw):
    return subprocess.run([str(a) for a in args], capture_output=True, text=True, **kw)


def _env(**extra):
    env = {k: v for k, v in os.environ.items() if k not in ("BINLOG_GRAMMAR_BACKEND", "PYTHONPATH")}
    env.update(extra)
    return env


def _copy(src: Path, dst: Path):
    """The tracked files of `src` (every file but .git when it is not a checkout), never a built
    extension: the build must not find one, and must not write into `src`."""
    listed = _run(["git", "-C", src, "ls-files", "-z"])
    if listed.returncode == 0 and listed.stdout:
        files = [f for f in listed.stdout.split("\0") if f]
    else:
        files = [str(p.relative_to(src)) for p in src.rglob("*")
                 if p.is_file() and ".git" not in p.relative_to(src).parts]
    for rel in files:
        if rel.endswith((".so", ".pyd")) or "__pycache__" in rel or not (src / rel).is_file():
            continue
        (dst / rel).parent.mkdir(parents=True, exist_ok=True)
        shutil.copy2(src / rel, dst / rel)


@pytest.fixture(scope="module")
def installed(tmp_path_factory):
    """(venv python, site-packages, copy, pip's output) after the install without a compiler."""
    base = tmp_path_factory.mktemp("nocc")
    venv, copy = base / "venv", base / "repo"
    r = _run([sys.executable, "-m", "venv", "--system-site-packages", venv], timeout=120)
    if r.returncode != 0:
        _unusable(f"python -m venv does not work here ({r.stderr.strip()[-300:]})")
    py = venv / "bin" / "python"
    requires = tomllib.loads((SOURCE / "pyproject.toml").read_text())["build-system"]["requires"]
    r = _run([py, "-m", "pip", "install", "-q", "--no-cache-dir", "--retries", "0",
              "--timeout", "20", *requires], timeout=240, env=_env())
    if r.returncode != 0:
        _unusable(f"pip cannot install the build requirements {requires} (offline?): "
                  f"{r.stderr.strip()[-300:]}")
    copy.mkdir()
    _copy(SOURCE, copy)
    assert not list(copy.rglob("*.so")), "a built extension was copied"
    pip = _run([py, "-m", "pip", "install", "-v", "--no-cache-dir", "--no-deps",
                "--no-build-isolation", copy], timeout=300, cwd=base, env=_env(**NO_COMPILER))
    purelib = _run([py, "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"],
                   check=True).stdout.strip()
    package = Path(purelib) / "binlog_grammar"
    if package.is_dir():  # the copy's code is the installed code, however a test reaches it
        shutil.rmtree(copy / "binlog_grammar")
        (copy / "binlog_grammar").symlink_to(package, target_is_directory=True)
    shared = ROOT.parent / "shared"
    if shared.is_dir():
        (base / "shared").symlink_to(shared, target_is_directory=True)
    (copy / "tests" / "test_nocc_guard.py").write_text(GUARD)
    return py, purelib, copy, pip


def test_pip_installs_the_package_when_the_extensions_cannot_be_built(installed):
    py, purelib, _, pip = installed
    assert pip.returncode == 0, pip.stdout[-3000:] + pip.stderr[-3000:]
    log = pip.stdout + pip.stderr
    for ext in EXTENSIONS:  # the builds were tried, with the missing compiler, and failed
        assert re.search(rf'building extension "binlog_grammar\.native\.{ext}" failed.*'
                         r"/nonexistent/cc", log), f"no failed build of {ext} in pip -v"
    native = Path(purelib) / "binlog_grammar" / "native"
    assert (native / "__init__.py").is_file()
    built = [p.name for p in native.iterdir() if p.name.startswith(EXTENSIONS)]
    assert built == [] and not list((Path(purelib) / "binlog_grammar").rglob("*.so"))


def test_the_installed_package_says_it_runs_on_python(installed):
    py, purelib, _, _ = installed
    where = _run([py, "-P", "-c", "import binlog_grammar; print(binlog_grammar.__file__)"],
                 cwd="/", env=_env())
    assert where.stdout.startswith(purelib), where
    v = _run([py, "-P", "-m", "binlog_grammar", "--version"], cwd="/", env=_env())
    assert v.returncode == 0 and "backend: python (compiled backend not built)" in v.stdout, v
    c = _run([py, "-P", "-m", "binlog_grammar", "--version"], cwd="/",
             env=_env(BINLOG_GRAMMAR_BACKEND="c"))
    assert c.returncode == 2 and c.stdout == "", c
    assert c.stderr.count("\n") == 1 and "compiled backend was asked for but cannot run" in c.stderr


def test_a_share_of_the_suite_passes_on_the_installed_package(installed):
    py, purelib, copy, pip = installed
    assert pip.returncode == 0, "the install failed (see the test above)"
    try:
        r = _run([py, "-m", "pytest", "-q", "-p", "no:cacheprovider", "-m", MARKS,
                  "tests/test_nocc_guard.py", *SHARE], cwd=copy, timeout=SHARE_TIMEOUT,
                 env=_env(PYTHONSAFEPATH="1", BINLOG_GRAMMAR_NOCC_PURELIB=purelib))
    except subprocess.TimeoutExpired as e:
        pytest.fail(f"the share took over {SHARE_TIMEOUT} s: {(e.stdout or b'')[-2000:]!r}")
    tail = r.stdout[-6000:]
    summary = r.stdout.strip().splitlines()[-1] if r.stdout.strip() else ""
    assert r.returncode == 0 and not re.search(r"\d+ (failed|errors?)\b", summary), tail + r.stderr
    passed = int(re.search(r"(\d+) passed", summary).group(1))
    assert passed >= MIN_PASSED, summary
