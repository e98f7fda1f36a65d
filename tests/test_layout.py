"""The package's layout rules (issue 18), read from the source with `ast`; nothing is imported.

- No import cycle. Module-level and function-level imports count together: an import inside a
  function still ties the two modules together. Only `if TYPE_CHECKING:` blocks do not count.
- No private name (`_x`) taken from another module: `from m import _x`, `m._x`, or
  `getattr(m, n) for n in ("_x", ...)`.
- No hand-written module over MAX_LINES lines. generated/ is compiler output and is not counted.

- No test file imports another test file (`test_*` by its base name, at any depth of the file):
  what several tests share lives in tests/helpers/ or a folder's conftest.py (tests/README.md).

- Each package imports only the packages MAY_IMPORT lists for it: the layers of
  binlog_grammar/README.md ("imports from"), bytes at the bottom and commands at the top. A new
  edge between packages is a design decision: change the README's table and MAP together.

There are no exceptions. `python3 tests/test_layout.py` prints what breaks a rule.

An edge is one import statement: `from .a import b` ties the module to `a`, or to `a.b` when that
is a module. Importing a submodule also runs its package's __init__ first. That is not counted as
an edge of its own; otherwise every package whose __init__ imports a child would form a cycle
with each child (e.g. spark.register() imports spark.datasource when it is called, so that
pyspark stays optional).
"""
from __future__ import annotations

import ast
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
PACKAGE = "binlog_grammar"
MAX_LINES = 600

# package -> the packages its modules may import (binlog_grammar/README.md). "binlog_grammar" is
# the package's __init__ (the version, the public names); "errors" is errors.py.
MAY_IMPORT = {
    "errors": set(),
    "__main__": {"cli"},
    "binlog_grammar": {"errors"},
    "runtime": {"errors"},
    "lang": {"errors", "runtime"},
    "codegen": {"errors", "lang", "runtime", "generated"},
    "generated": {"runtime", "binlog"},
    "native": {"errors"},
    "binlog": {"errors", "runtime", "codegen", "generated", "native"},
    "replication": {"binlog_grammar", "errors", "binlog", "generated"},
    "output": {"errors", "runtime", "binlog", "generated", "native"},
    "repair": {"errors", "runtime", "binlog", "output", "replication", "generated"},
    "spark": {"errors", "runtime", "codegen", "binlog", "output", "replication", "generated",
              "native"},
    "compat": {"binlog_grammar", "errors", "runtime", "binlog", "replication", "generated"},
    "docs": {"errors", "lang", "runtime", "generated"},
    "cli": {"binlog_grammar", "errors", "lang", "codegen", "runtime", "generated", "native",
            "binlog", "output", "replication", "repair", "spark", "docs", "compat"},
    "testing": None,  # test support: anything
}


# ---------------------------------------------------------------------------------------------
# reading the package

def sources() -> dict:
    """Module name -> (path relative to ROOT, generated?) of every module of the package, with
    generated/ as binlog_grammar.generated (pyproject.toml installs it there)."""
    out = {}
    for base, prefix, generated in ((ROOT / PACKAGE, PACKAGE, False),
                                    (ROOT / "generated", f"{PACKAGE}.generated", True)):
        for path in sorted(base.rglob("*.py")):
            parts = list(path.relative_to(base).with_suffix("").parts)
            if "__pycache__" in parts:
                continue
            if parts[-1] == "__init__":
                parts.pop()
            out[".".join([prefix] + parts)] = (path.relative_to(ROOT).as_posix(), generated)
    return out


def _private(name: str) -> bool:
    return name.startswith("_") and not (name.startswith("__") and name.endswith("__"))


def _type_checking(node) -> bool:
    t = node.test
    return (isinstance(t, ast.Name) and t.id == "TYPE_CHECKING") or \
        (isinstance(t, ast.Attribute) and t.attr == "TYPE_CHECKING")


def _imports(tree):
    """Every import statement of a module, at any depth, but those under `if TYPE_CHECKING:`."""
    todo = [tree]
    while todo:
        node = todo.pop()
        for child in ast.iter_child_nodes(node):
            if isinstance(child, ast.If) and _type_checking(child):
                todo.extend(child.orelse)
                continue
            if isinstance(child, (ast.Import, ast.ImportFrom)):
                yield child
            todo.append(child)


def _resolve(module: str, is_package: bool, node: ast.ImportFrom) -> str:
    """The absolute name of the module a `from ... import` reads from."""
    if not node.level:
        return node.module or ""
    parts = module.split(".")
    if not is_package:
        parts.pop()
    if node.level > 1:
        parts = parts[:len(parts) - (node.level - 1)]
    return ".".join(parts + ([node.module] if node.module else []))


def _getattr_module(node, var: str):
    """The name `m` of a call `getattr(m, var)`, else None."""
    if isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id == "getattr" \
            and len(node.args) >= 2 and isinstance(node.args[0], ast.Name) \
            and isinstance(node.args[1], ast.Name) and node.args[1].id == var:
        return node.args[0].id
    return None


class Module:
    """What one module imports from the package, and which private names it takes."""

    def __init__(self, name: str, path: str, generated: bool, known, text: str = None):
        self.name = name
        self.path = path
        self.generated = generated
        if text is None:
            text = (ROOT / path).read_text(encoding="utf-8")
        self.lines = len(text.splitlines())
        self.imports = set()  # modules of the package this one imports
        self.private = set()  # "module.name" of private names it takes from other modules
        tree = ast.parse(text, path)
        is_package = path.endswith("__init__.py")
        bound = {}  # local name -> the module of the package it stands for
        for node in _imports(tree):
            if isinstance(node, ast.Import):
                for a in node.names:
                    if a.name in known:
                        self.imports.add(a.name)
                        if a.asname:
                            bound[a.asname] = a.name
                continue
            base = _resolve(name, is_package, node)
            for a in node.names:
                sub = f"{base}.{a.name}"
                if sub in known:  # a submodule
                    self.imports.add(sub)
                    bound[a.asname or a.name] = sub
                elif base in known:
                    self.imports.add(base)
                    if _private(a.name) and base != name:
                        self.private.add(f"{base}.{a.name}")
        others = {k: v for k, v in bound.items() if v != name}
        for node in ast.walk(tree):
            if isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name) \
                    and node.value.id in others and _private(node.attr):
                self.private.add(f"{others[node.value.id]}.{node.attr}")
            elif isinstance(node, (ast.ListComp, ast.SetComp, ast.GeneratorExp, ast.DictComp)):
                for gen in node.generators:  # getattr(m, n) for n in ("_x", ...)
                    if not (isinstance(gen.target, ast.Name) and isinstance(gen.iter, (ast.Tuple, ast.List))):
                        continue
                    for call in ast.walk(node):
                        m = _getattr_module(call, gen.target.id)
                        if m in others:
                            self.private.update(f"{others[m]}.{e.value}" for e in gen.iter.elts
                                                if isinstance(e, ast.Constant) and isinstance(e.value, str)
                                                and _private(e.value))
        self.imports.discard(name)


def modules() -> dict:
    src = sources()
    return {name: Module(name, path, gen, set(src)) for name, (path, gen) in src.items()}


def cycles(mods: dict) -> list:
    """The strongly connected components of more than one module (Tarjan's, without recursion)."""
    index, low, on_stack, stack, out = {}, {}, set(), [], []
    for root in sorted(mods):
        if root in index:
            continue
        index[root] = low[root] = len(index)
        stack.append(root)
        on_stack.add(root)
        work = [(root, iter(sorted(mods[root].imports)))]
        while work:
            node, edges = work[-1]
            for nxt in edges:
                if nxt not in index:
                    index[nxt] = low[nxt] = len(index)
                    stack.append(nxt)
                    on_stack.add(nxt)
                    work.append((nxt, iter(sorted(mods[nxt].imports))))
                    break
                if nxt in on_stack:
                    low[node] = min(low[node], index[nxt])
            else:
                work.pop()
                if work:
                    parent = work[-1][0]
                    low[parent] = min(low[parent], low[node])
                if low[node] == index[node]:
                    comp = set()
                    while True:
                        m = stack.pop()
                        on_stack.discard(m)
                        comp.add(m)
                        if m == node:
                            break
                    if len(comp) > 1:
                        out.append(frozenset(comp))
    return out


def private_imports(mods: dict) -> set:
    return {f"{m.name} -> {p}" for m in mods.values() for p in m.private}


def too_long(mods: dict) -> dict:
    return {m.path: m.lines for m in mods.values() if not m.generated and m.lines > MAX_LINES}


def package_of(module: str) -> str:
    """binlog_grammar.binlog.rows -> binlog; binlog_grammar.errors -> errors; binlog_grammar ->
    binlog_grammar."""
    parts = module.split(".")
    return parts[1] if len(parts) > 1 else parts[0]


def layer_breaks(mods: dict) -> list:
    """"importer -> imported" for every import that MAY_IMPORT does not allow."""
    out = []
    for m in mods.values():
        mine = package_of(m.name)
        allowed = MAY_IMPORT.get(mine, set())
        if allowed is None:
            continue
        for target in sorted(m.imports):
            theirs = package_of(target)
            if theirs != mine and theirs not in allowed:
                out.append(f"{m.name} -> {target}")
    return out


def imports_of_test_files(tests: Path = ROOT / "tests") -> list:
    """`path -> module` for each import of a test file (test_*) in a file of the test tree."""
    found = []
    for path in sorted(tests.rglob("*.py")):
        for node in ast.walk(ast.parse(path.read_text(), str(path))):
            names = [a.name for a in node.names] if isinstance(node, ast.Import) else \
                [node.module] if isinstance(node, ast.ImportFrom) and node.level == 0 and node.module \
                else []
            found += [f"{path.relative_to(tests)} -> {n}" for n in names
                      if n.split(".")[0].startswith("test_")]
    return found


MODS = modules()


# ---------------------------------------------------------------------------------------------
# the tests

def test_the_checks_see_what_they_look_for():
    known = {"p", "p.a", "p.b", "p.c"}
    a = Module("p.a", "p/a.py", False, known, "from . import b\nfrom .c import _x, y\n")
    b = Module("p.b", "p/b.py", False, known, "def f():\n    from .a import z\n")  # lazy: still an edge
    c = Module("p.c", "p/c.py", False, known,
               "from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n    from .a import t\n"
               "from . import b as bee\nbee._hidden\n{n: getattr(bee, n) for n in ('_k', 'pub')}\n")
    assert a.imports == {"p.b", "p.c"} and b.imports == {"p.a"} and c.imports == {"p.b"}
    assert cycles({"p": Module("p", "p/__init__.py", False, known, ""), "p.a": a, "p.b": b, "p.c": c}) \
        == [frozenset({"p.a", "p.b", "p.c"})]  # a -> b -> a, and a -> c -> b
    assert private_imports({"p.a": a, "p.c": c}) == {"p.a -> p.c._x", "p.c -> p.b._hidden", "p.c -> p.b._k"}


def test_the_layer_check_sees_an_import_from_above():
    known = {"binlog_grammar.runtime.ints", "binlog_grammar.binlog.rows", "binlog_grammar.testing.x"}
    low = Module("binlog_grammar.runtime.ints", "binlog_grammar/runtime/ints.py", False, known,
                 "from ..binlog import rows\n")
    test = Module("binlog_grammar.testing.x", "binlog_grammar/testing/x.py", False, known,
                  "from ..binlog import rows\n")
    assert layer_breaks({"a": low, "b": test}) == ["binlog_grammar.runtime.ints -> binlog_grammar.binlog.rows"]


def test_the_test_import_check_sees_one(tmp_path):
    (tmp_path / "a").mkdir()
    (tmp_path / "a" / "test_x.py").write_text("import os\nfrom helpers.paths import ROOT\n"
                                             "def f():\n    import test_y as y\n")
    (tmp_path / "test_z.py").write_text("from test_x import f\n")
    assert imports_of_test_files(tmp_path) == ["a/test_x.py -> test_y", "test_z.py -> test_x"]


def test_no_test_file_imports_another():
    found = imports_of_test_files()
    assert not found, ("test files importing others (move what they share to tests/helpers/ or "
                       "the folder's conftest.py):\n" + "\n".join(found))


def test_the_layout_is_read():
    assert "binlog_grammar.replication.source" in MODS
    assert "binlog_grammar.spark.datasource" in MODS
    assert "binlog_grammar.generated.catalog" in MODS
    assert "binlog_grammar.replication.connection" in MODS["binlog_grammar.replication.source"].imports
    assert "binlog_grammar.binlog.stream" in MODS["binlog_grammar.replication.stream"].imports  # a lazy import


def test_no_import_cycle():
    found = [sorted(c) for c in cycles(MODS)]
    assert not found, f"import cycles: {found}"


def test_no_private_name_taken_from_another_module():
    found = sorted(private_imports(MODS))
    assert not found, "private names taken from other modules:\n" + "\n".join(found)


def test_no_long_module():
    found = sorted(f"{p} ({n} lines)" for p, n in too_long(MODS).items())
    assert not found, f"modules over {MAX_LINES} lines (split them along their seams): {found}"


def test_every_package_has_its_layer():
    packages = {package_of(n) for n in MODS}
    assert packages <= set(MAY_IMPORT), f"packages MAY_IMPORT does not place: {packages - set(MAY_IMPORT)}"


def test_packages_import_only_the_layers_below_them():
    found = layer_breaks(MODS)
    assert not found, ("imports that binlog_grammar/README.md's layers do not allow (move the code, "
                       "or change the README's table and MAY_IMPORT together):\n" + "\n".join(found))


if __name__ == "__main__":
    print("import cycles:")
    for comp in sorted(sorted(c) for c in cycles(MODS)):
        print("  " + ", ".join(comp))
    print("private names taken from other modules:")
    for entry in sorted(private_imports(MODS)):
        print("  " + entry)
    print(f"modules over {MAX_LINES} lines:")
    for path, n in sorted(too_long(MODS).items()):
        print(f"  {path} {n}")
    print("imports across layers that MAY_IMPORT does not allow:")
    for entry in layer_breaks(MODS):
        print("  " + entry)
    print("test files importing others:")
    for entry in imports_of_test_files():
        print("  " + entry)
    sys.exit(0)
