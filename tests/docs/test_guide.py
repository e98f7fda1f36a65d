"""The user guide (issue 27 item 5), rendered by `binlog-grammar docs` into the format docs' site
from the code it describes, never from a hand copy:

- the command-line reference is the argparse parser's: every command and every option (its text
  as --help writes it, its default, its help and choices) has its row, and a parser that changes
  changes the page (so the committed page, checked by `docs --check`, fails when they disagree);
- the Python API reference has every public name (binlog_grammar, compat, the
  pymysqlreplication shim) with a docstring of its own, and its methods' docstrings;
- the Spark page has every option of spark/options.py with its default and docs/spark.md's
  description, and every field of the Spark schemas with its type;
- the JSON-lines page's lines are what `dump --format jsonl --rows-only` writes for the guide's
  binlog, on both backends, in both envelopes, one per column type;
- in headless Chromium at 1280 px no table or code block of a guide page is wider than the page,
  and each page's screenshot is committed under docs/guide/img/, 1280 px wide, linked from
  docs/guide/README.md (BINLOG_GRAMMAR_UPDATE_SCREENSHOTS=1 writes them).
"""
from __future__ import annotations

import base64
import functools
import html
import html.parser
import http.server
import json
import os
import re
import struct
import subprocess
import sys
import threading

import pytest

from binlog_grammar import docs
from binlog_grammar.cli import build_parser
from binlog_grammar.cli import docs_inputs as DI
from binlog_grammar.docs import guide_api, guide_cli
from binlog_grammar.docs.guide_data import NOT_DESCRIBED
from binlog_grammar.lang.loader import load_specs

from helpers.browser import chromium
from helpers.paths import ROOT

GUIDE_PAGES = ("index", "cli", "api", "spark", "jsonl", "debezium", "repair", "report")
IMG = ROOT / "docs" / "guide" / "img"


@functools.lru_cache(maxsize=None)
def inputs():
    return DI.guide_inputs(build_parser())


@functools.lru_cache(maxsize=None)
def rendered():
    return docs.render(load_specs(), inputs())


class _Rows(html.parser.HTMLParser):
    """id -> [text of each cell] of every table row with an id; and every id of the page."""

    def __init__(self):
        super().__init__()
        self.rows, self.ids, self._row, self._cell = {}, set(), None, None

    def handle_starttag(self, tag, attrs):
        a = dict(attrs)
        if "id" in a:
            self.ids.add(a["id"])
        if tag == "tr" and "id" in a:
            self._row = self.rows.setdefault(a["id"], [])
        elif tag == "td" and self._row is not None:
            self._cell = []

    def handle_endtag(self, tag):
        if tag == "td" and self._cell is not None:
            self._row.append(" ".join("".join(self._cell).split()))
            self._cell = None
        elif tag == "tr":
            self._row = None

    def handle_data(self, data):
        if self._cell is not None:
            self._cell.append(data)


def page(name):
    p = _Rows()
    p.feed(rendered()[f"html/guide/{name}.html"])
    return p


def _walk(parser, path=()):
    yield parser, list(path)
    for name, _help, sp in guide_cli.sub_commands(parser):
        yield from _walk(sp, [*path, name])


# ---------------------------------------------------------------------------------------------
# the command line

def test_every_command_and_option_has_its_row():
    parser = build_parser()
    rows = page("cli").rows
    n = 0
    for p, path in _walk(parser):
        for action in p._actions:
            if not guide_cli.shown(action):
                continue
            cells = rows[guide_cli.option_anchor(path, action)]
            assert cells[0] == guide_cli.option_text(p, action), (path, action.dest)
            assert cells[1] == (guide_cli.default_text(action) or ""), (path, action.dest)
            assert cells[2].startswith(guide_cli.help_text(p, action).strip()), (path, action.dest)
            for choice in action.choices or ():
                assert str(choice) in cells[2], (path, action.dest, choice)
            n += 1
    assert n > 150  # dump alone has dozens
    ids = page("cli").ids
    for _p, path in _walk(parser):
        assert guide_cli.command_anchor(path) in ids


def test_the_page_follows_the_parser(tmp_path, capsys):
    """An option added to a command is on the next render's page, and `docs --check` finds the
    committed page out of date until it is rendered again."""
    parser = build_parser()
    dump = next(sp for name, _h, sp in guide_cli.sub_commands(parser) if name == "dump")
    dump.add_argument("--brand-new-option", choices=["x", "y"], default="x",
                      help="an option the committed page does not have")
    changed = docs.render(load_specs(), DI.guide_inputs(parser))
    assert "--brand-new-option {x,y}" in changed["guide/cli.md"]
    assert "--brand-new-option" not in rendered()["guide/cli.md"]
    out = tmp_path / "docs"
    docs.write(rendered(), out)
    assert docs.diff(changed, out) == ["guide/cli.md", "html/guide/cli.html", "html/search.html"]
    from binlog_grammar.cli import main as cli_main

    assert cli_main(["docs", "--output", str(out), "--check"]) == 0
    p = out / "guide" / "cli.md"
    p.write_text(p.read_text().replace("--hexdump", "--hex-dump"))
    assert cli_main(["docs", "--output", str(out), "--check"]) == 1
    said = capsys.readouterr().out
    assert "docs differ from the code the user guide describes" in said and "guide/cli.md" in said


def test_without_a_source_checkout_docs_says_to_leave_the_guide_out(monkeypatch, tmp_path, capsys):
    from binlog_grammar.cli import main as cli_main

    monkeypatch.setattr(DI, "repo_root", lambda: tmp_path)
    assert cli_main(["docs", "--output", str(tmp_path / "out")]) == 2
    assert "--no-guide" in capsys.readouterr().err
    assert cli_main(["docs", "--no-guide", "--output", str(tmp_path / "out")]) == 0
    assert not (tmp_path / "out" / "guide").exists() and (tmp_path / "out" / "README.md").exists()


def test_no_default_names_this_machine():
    text = rendered()["guide/cli.md"] + rendered()["guide/jsonl.md"] + rendered()["guide/api.md"]
    for word in (str(ROOT), os.path.expanduser("~"), "/tmp/"):
        assert word not in text


# ---------------------------------------------------------------------------------------------
# the Python API

def test_every_public_name_has_a_docstring_and_is_on_the_page():
    ids = page("api").ids
    missing = []
    n = 0
    for sid, _title, _imp, _doc, names in DI.api_sections():
        for name, obj in names:
            n += 1
            assert guide_api.anchor(sid, name) in ids, name
            if not (guide_api.own_doc(obj) or "").strip():
                missing.append(name)
            if isinstance(obj, type) and not issubclass(obj, BaseException):
                for mname, m in guide_api.members(obj):
                    assert guide_api.anchor(sid, f"{name}.{mname}") in ids
                    if not (guide_api.own_doc(m) or "").strip():
                        missing.append(f"{name}.{mname}")
    assert n >= 19 + 1 + 25
    assert not missing, f"public names without a docstring: {missing}"
    assert guide_api.NO_DOC not in rendered()["guide/api.md"]


def test_signatures_are_inspects():
    text = rendered()["guide/api.md"]
    import binlog_grammar
    import inspect

    # annotations are text (from __future__ import annotations): shown without their quotes
    assert f"open_stream{inspect.signature(binlog_grammar.open_stream)}".replace("'", "") in text
    assert "class Filters(" in text and "class BinLogStreamReader(connection_settings=None" in text


# ---------------------------------------------------------------------------------------------
# Spark

def test_spark_options_and_schemas_come_from_the_source():
    from binlog_grammar.spark import options

    rows = page("spark").rows
    for name, default in options.OPTIONS.items():
        cells = rows[f"spark-option-{name}"]
        assert cells[:2] == [name, default], name
        assert cells[2] and NOT_DESCRIBED not in cells[2], name
    text = rendered()["html/guide/spark.html"]
    for title, fields in DI.spark_schemas():
        assert f'data-struct="{title}"' in text, title
        for field, typ, _nullable in fields:
            assert f"<code>{field}</code></td><td><code>{html.escape(typ)}</code>" in text, \
                (title, field)
    assert "Finding the source" in text  # docs/spark.md's text is on the page
    assert NOT_DESCRIBED not in text  # every option and field has docs/spark.md's words


# ---------------------------------------------------------------------------------------------
# JSON lines

def _dump_lines(envelope, backend):
    argv = ["--format", "jsonl", "--rows-only"]
    if envelope != "native":
        argv += ["--envelope", envelope]
    env = {**os.environ, "BINLOG_GRAMMAR_BACKEND": backend}
    r = subprocess.run([sys.executable, "-m", "binlog_grammar", "dump", *argv, DI.GUIDE_BINLOG],
                       capture_output=True, text=True, cwd=ROOT, env=env, timeout=120)
    assert r.returncode == 0, r.stderr
    return r.stdout.splitlines()


@pytest.mark.parametrize("envelope", ["native", "debezium"])
def test_each_column_types_line_is_the_writers(envelope):
    from binlog_grammar import native

    backends = ["python"] + (["c"] if native.unavailable() is None else [])
    dumped = [_dump_lines(envelope, b) for b in backends]
    assert all(d == dumped[0] for d in dumped), "the backends differ"
    shown = inputs().examples[envelope]
    assert [label for label, _sql, _value, _line in shown] == \
        [t[1] for t in DI.GUIDE_TYPES] + [f"{dict((s, lab) for s, lab, *_ in DI.GUIDE_TYPES)[s]}, {w}"
                                          for s, _op, w in DI.GUIDE_CHANGES]
    md = rendered()["guide/jsonl.md"]
    for label, _sql, _value, line in shown:
        assert line in dumped[0], label
        assert f"```json\n{line}\n```" in md, label
        assert json.loads(line)["source"]["table"].startswith("t_")


# ---------------------------------------------------------------------------------------------
# readable at 1280 px, in a real browser

WIDTH, HEIGHT = 1280, 900
# where each page's screenshot is taken: a section whose tables are generated
SHOT_AT = {"cli": "cmd-dump", "api": "api-binlog-grammar-open_stream", "spark": "options",
           "jsonl": "values"}
UPDATE = os.environ.get("BINLOG_GRAMMAR_UPDATE_SCREENSHOTS") == "1"

_WIDE = r"""
(() => {
  const main = document.querySelector('main');
  const out = {page: document.documentElement.scrollWidth, vw: document.documentElement.clientWidth,
               main: [main.scrollWidth, main.clientWidth], wide: [], tables: 0, codes: 0};
  // every table and code block fits: nothing in it needs a sideways scroll, in itself or in
  // the scroll box around it
  for (const el of main.querySelectorAll('table, pre, .scroll')) {
    if (el.tagName === 'TABLE') out.tables++;
    if (el.tagName === 'PRE') out.codes++;
    const r = el.getBoundingClientRect();
    if (el.scrollWidth > el.clientWidth + 1 || r.right > main.getBoundingClientRect().right + 1)
      out.wide.push(el.tagName.toLowerCase() + '.' + el.className + ' ' + el.scrollWidth + '>' +
                    el.clientWidth + ' ' + (el.textContent || '').slice(0, 60));
  }
  return out;
})()
"""


def png_size(data: bytes):
    assert data[:8] == b"\x89PNG\r\n\x1a\n"
    return struct.unpack(">II", data[16:24])


@pytest.fixture(scope="module")
def guide_site(tmp_path_factory):
    root = tmp_path_factory.mktemp("guide-site")
    docs.write(rendered(), root)
    handler = functools.partial(_Quiet, directory=str(root / docs.HTML_DIR))
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    yield f"http://127.0.0.1:{server.server_address[1]}/"
    server.shutdown()
    server.server_close()


class _Quiet(http.server.SimpleHTTPRequestHandler):
    def log_message(self, fmt, *args):
        pass


def test_guide_pages_fit_1280px_and_their_screenshots_are_committed(guide_site, tmp_path):
    shots = {}
    with chromium(tmp_path / "profile") as cdp:
        cdp.call("Emulation.setDeviceMetricsOverride", width=WIDTH, height=HEIGHT,
                 deviceScaleFactor=1, mobile=False)
        for name in GUIDE_PAGES:
            cdp.load(f"{guide_site}guide/{name}.html")
            info = cdp.evaluate(_WIDE)
            assert info["page"] <= info["vw"], f"{name}: the page scrolls sideways"
            assert info["main"][0] <= info["main"][1] + 1, f"{name}: wider than its column"
            assert not info["wide"], f"{name} at {WIDTH}px: too wide: {info['wide'][:5]}"
            assert name == "index" or info["tables"] + info["codes"] > 0
            if SHOT_AT.get(name):  # the generated tables, rather than the page's first lines
                assert cdp.evaluate(f"(() => {{ const e = document.getElementById("
                                    f"{json.dumps(SHOT_AT[name])}); if (!e) return false;"
                                    " e.scrollIntoView(); return true; })()"), name
            shot = cdp.call("Page.captureScreenshot", format="png")
            shots[name] = base64.b64decode(shot["data"])
            assert png_size(shots[name]) == (WIDTH, HEIGHT)
            (tmp_path / f"{name}.png").write_bytes(shots[name])
        # the site's one search finds the guide's commands, options and names
        for query, hit in (("dump --start-position", "guide/cli.html#cmd-dump-start-position"),
                           ("open_stream", "guide/api.html#api-binlog-grammar-open_stream"),
                           ("spark option skip_damaged", "guide/spark.html#spark-option-skip_damaged")):
            cdp.load(f"{guide_site}search.html?q={query.replace(' ', '+')}")
            hrefs = cdp.evaluate("Array.from(document.querySelectorAll('#results a'))"
                                 ".map(a => a.getAttribute('href'))")
            assert hit in hrefs[:3], (query, hrefs[:5])
    if UPDATE:
        IMG.mkdir(parents=True, exist_ok=True)
        for name, data in shots.items():
            (IMG / f"{name}.png").write_bytes(data)
    readme = (ROOT / "docs" / "guide" / "README.md").read_text(encoding="utf-8")
    for name in GUIDE_PAGES:
        path = IMG / f"{name}.png"
        assert path.exists(), f"{path.name}: run with BINLOG_GRAMMAR_UPDATE_SCREENSHOTS=1"
        assert png_size(path.read_bytes())[0] == WIDTH, path.name
        assert f"(img/{name}.png)" in readme, f"docs/guide/README.md does not show {name}.png"
