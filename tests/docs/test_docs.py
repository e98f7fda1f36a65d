"""The format documentation: correct by construction, committed, and usable in a real browser.

- every hex example is built by the generated struct from the example value and parses back equal;
- every table row comes from a spec field (counts and ids checked against the model);
- the span recorder (binlog_grammar/runtime/spans.py) covers every byte of examples and real binlogs;
- the committed generated/docs/ equals a fresh render (`binlog-grammar docs --check`);
- Debian's chromium, headless, loads every HTML page from a local http.server: pages load, every
  internal link and anchor resolves, the search finds QUERY_EVENT, nothing is cut off.
"""
from __future__ import annotations

import functools
import html.parser
import http.server
import re
import threading
import urllib.parse
import urllib.request

import pytest

from binlog_grammar import docs
from binlog_grammar.runtime import spans as layout, construct as rt
from binlog_grammar.docs import examples as X
from binlog_grammar.cli import main as cli_main
from binlog_grammar.generated.catalog import EVENTS
from binlog_grammar.lang.loader import load_specs

from helpers.browser import chromium
from helpers.paths import ROOT, corpus_files

SPECS = load_specs()
EVENT_NAMES = sorted(n.name for ev in SPECS.events for n in ev.names)


@functools.lru_cache(maxsize=None)
def rendered():
    """The whole site as `binlog-grammar docs` renders it: the format docs and the user guide."""
    from binlog_grammar.cli import build_parser
    from binlog_grammar.cli.docs_inputs import guide_inputs

    return docs.render(SPECS, guide_inputs(build_parser()))


# ---------------------------------------------------------------------------------------------
# hex examples

@pytest.mark.parametrize("name", EVENT_NAMES)
def test_example_is_built_by_the_generated_struct(name):
    ev, en = SPECS.event_by_name(name)
    ex = X.event_example(X.ExampleMaker(SPECS), ev, en.code)
    et = EVENTS[en.code]
    # built by the generated struct, from the made value, parsed back equal, rebuilt identical
    assert et.build(X.build_input(ex.made), ex.ctx) == ex.data
    parsed = et.parse(ex.data, ex.ctx)
    assert X.same(ex.made, parsed), (X.plain(ex.made), X.plain(parsed))
    assert et.build(parsed, ex.ctx) == ex.data
    # the spans number every byte once, in field order, and name the spec's fields
    pos = 0
    for span in ex.spans:
        assert span.start == pos
        pos = span.end
    assert pos == len(ex.data)
    assert [s.name for s in ex.spans] == [f.id for f in ev.fields]


def _hex_blocks(md: str):
    """The bytes of every hex dump of a Markdown page."""
    out = []
    for block in re.findall(r"```text\n(.*?)```", md, re.S):
        data = bytearray()
        for line in block.splitlines():
            body = line[8:].rsplit("  |", 1)[0]
            data += bytes(int(tok, 16) for tok in body.split() if not tok.startswith("["))
        out.append(bytes(data))
    return out


@pytest.mark.parametrize("ev", SPECS.events, ids=lambda e: e.layout)
def test_rendered_hex_is_what_the_struct_builds(ev):
    """The bytes on the page are the generated struct's build of the example, and parse back."""
    page = rendered()[f"events/{ev.layout.lower()}.md"]
    shown = _hex_blocks(page)
    maker = X.ExampleMaker(SPECS)
    built = []
    for n in ev.names:
        ex = X.event_example(maker, ev, n.code)
        if ex.data and ex.data not in built:
            built.append(ex.data)
            assert EVENTS[n.code].build(EVENTS[n.code].parse(ex.data, ex.ctx), ex.ctx) == ex.data
    assert list(dict.fromkeys(shown)) == built


# ---------------------------------------------------------------------------------------------
# tables against the model

class _Tables(html.parser.HTMLParser):
    """Tables of an HTML page: class, data-struct, and the (id, class) of each body row."""

    def __init__(self):
        super().__init__()
        self.tables = []
        self.ids = []
        self._in_body = False

    def handle_starttag(self, tag, attrs):
        a = dict(attrs)
        if "id" in a:
            self.ids.append(a["id"])
        if tag == "table":
            self.tables.append({"cls": a.get("class", ""), "name": a.get("data-struct", ""), "rows": []})
        elif tag == "tbody":
            self._in_body = True
        elif tag == "tr" and self._in_body:
            self.tables[-1]["rows"].append((a.get("id"), a.get("class", "")))

    def handle_endtag(self, tag):
        if tag == "tbody":
            self._in_body = False


def _tables(path):
    p = _Tables()
    p.feed(rendered()[f"html/{path}"])
    return p


def _resolve(t):
    while t.kind == "named":
        t = SPECS.types[t.name].field.type
    return t


@pytest.mark.parametrize("ev", SPECS.events, ids=lambda e: e.layout)
def test_event_tables_have_one_row_per_spec_field(ev):
    tables = _tables(f"events/{ev.layout.lower()}.html").tables
    main = [r for t in tables if t["cls"] == "layout" and t["name"] == ev.layout for r in t["rows"]]
    assert [r[0] for r in main] == [f"f-{f.id}" for f in ev.fields]
    assert all(r[1] == "field" for r in main)
    # every inline struct, switch and TLV of the event has its own table with one row per part
    byname = {t["name"]: t for t in tables}
    for f, path in docs.iter_fields(ev.fields):
        t = f.type
        if t.kind == "struct":
            assert [r[0] for r in byname[f"{ev.layout}.{path}"]["rows"]] == \
                [f"f-{path}.{g.id}" for g in t.fields]
        elif t.kind == "tlv":
            assert [r[0] for r in byname[f"{ev.layout}.{path}"]["rows"]] == \
                [f"f-{path}.{cf.id}" for _k, cf in t.cases]
        elif t.kind == "switch":
            assert len(byname[f"{ev.layout}.{path}"]["rows"]) == len(t.cases) + 1
    # the hex legend numbers every field once
    legend = [t for t in tables if t["cls"] == "legend"]
    for t in legend:
        assert sum(1 for r in t["rows"] if r[1] == "top") == len(ev.fields)


def test_markdown_event_tables_match_the_model():
    for ev in SPECS.events:
        md = rendered()[f"events/{ev.layout.lower()}.md"]
        rows = re.findall(r'^\| <a id="f-([a-z0-9_]+)"></a>\d+ \|', md, re.M)
        assert rows == [f.id for f in ev.fields], ev.layout


def test_type_tables_have_one_row_per_spec_field():
    tables = {t["name"]: t for t in _tables("types.html").tables if t["cls"] == "layout"}
    for name, td in SPECS.types.items():
        f = td.field
        if f.type.kind == "struct" and f.repeat is None and f.cond is None and f.size is None:
            assert [r[0] for r in tables[name]["rows"]] == [f"{name}.{g.id}" for g in f.type.fields]
        else:
            assert len(tables[name]["rows"]) == 1, name


def test_enum_tables_have_one_row_per_member():
    tables = {t["name"]: t for t in _tables("enums.html").tables if t["cls"] == "members"}
    assert set(tables) == set(SPECS.enums)
    for name, e in SPECS.enums.items():
        assert [r[0] for r in tables[name]["rows"]] == \
            [f"{name}.{e.members[v][0]}" for v in sorted(e.members)]


def test_index_pages_cover_the_model():
    codes = _tables("event-types.html").tables
    assert sorted(r[0] for t in codes for r in t["rows"]) == sorted(n.name for ev in SPECS.events
                                                                    for n in ev.names)
    for page, event, field in (("status-vars", "QUERY_EVENT", "status_vars"),
                               ("table-map-metadata", "TABLE_MAP_EVENT", "optional_metadata")):
        ev, _n = SPECS.event_by_name(event)
        tlv = next(_resolve(f.type) for f in ev.fields if f.id == field)
        rows = [r for t in _tables(f"{page}.html").tables if t["cls"] == "tlv" for r in t["rows"]]
        assert [r[0] for r in rows] == [cf.id for _k, cf in tlv.cases]
    coltypes = [r for t in _tables("column-types.html").tables if t["cls"] == "coltypes"
                for r in t["rows"]]
    column_type = SPECS.enums["column_type"]
    assert [r[0] for r in coltypes] == [column_type.members[v][0] for v in sorted(column_type.members)]


def test_column_classes_are_on_the_table_map_pages():
    """Every named set is shown with each of its entries, on the optional-metadata page or (the
    sets of other fields) on the column types page."""
    for name, sd in SPECS.sets.items():
        page = "table-map-metadata" if any(".optional_metadata." in a for a in sd.applies_to) \
            else "column-types"
        tables = [t for t in _tables(f"{page}.html").tables if t["cls"] == "setentries"
                  and t.get("name") == name]
        assert len(tables) == 1, name
        assert len(tables[0]["rows"]) == len(sd.entries), name


def test_version_history_lists_every_annotation():
    changes = docs.Builder(SPECS).version_changes()
    annotated = 0
    for ev in SPECS.events:
        annotated += (ev.since is not None) + (ev.until is not None)
        for f, _p in docs.iter_fields(ev.fields):
            annotated += (f.since is not None) + (f.until is not None)
    for td in SPECS.types.values():
        for f, _p in docs.iter_fields([td.field]):
            annotated += (f.since is not None) + (f.until is not None)
    assert len(changes) == annotated
    page = rendered()["versions.md"]
    for v, *_rest in changes:
        assert f'<a id="{v.flavor}-{".".join(map(str, v.number))}"></a>' in page


# ---------------------------------------------------------------------------------------------
# the span recorder on real binlogs

def _real_logs():
    files = sorted((ROOT / "samples").glob("*.0*")) + corpus_files()
    return [p for p in files if p.is_file()]


@pytest.mark.parametrize("path", _real_logs(), ids=lambda p: p.name)
def test_span_recorder_on_real_events(path):
    from binlog_grammar.errors import BinlogError
    from binlog_grammar.binlog.reader import BinlogFile

    n = 0
    try:
        for ev in BinlogFile(str(path), verify_checksum=False):
            if ev.type is None or not isinstance(ev.data, dict):
                continue
            hl = ev.context["header_len"]
            data = ev.raw[hl:len(ev.raw) - (4 if ev.footer else 0)]
            value, spans = layout.record(rt.Sized(None, ev.type.struct), data, **ev.context)
            assert X.plain(value) == X.plain(ev.data)
            pos = 0
            for s in spans:
                assert s.start == pos
                for _name, sub in layout.flatten(s.children):
                    assert s.start <= sub.start <= sub.end <= s.end
                pos = s.end
            assert pos == len(data)
            n += 1
    except BinlogError:
        pass  # the damaged corpus files: every event before the damage was checked
    assert n or path.stat().st_size < 200


# ---------------------------------------------------------------------------------------------
# committed and deterministic

def test_render_is_deterministic():
    from binlog_grammar.cli import build_parser
    from binlog_grammar.cli.docs_inputs import guide_inputs

    again = docs.render(load_specs(), guide_inputs(build_parser()))
    assert again == rendered()


def test_committed_docs_are_up_to_date(capsys):
    assert cli_main(["docs", "--check"]) == 0, capsys.readouterr().out


def test_check_finds_a_hand_edit_and_a_stale_file(tmp_path, capsys):
    out = tmp_path / "docs"
    assert cli_main(["docs", "--output", str(out)]) == 0
    assert cli_main(["docs", "--output", str(out), "--check"]) == 0
    page = out / "events" / "query_event.md"
    page.write_text(page.read_text() + "edit\n")
    assert cli_main(["docs", "--output", str(out), "--check"]) == 1
    assert "events/query_event.md" in capsys.readouterr().out
    assert cli_main(["docs", "--output", str(out)]) == 0
    (out / "html" / "stale.html").write_text("old")
    assert cli_main(["docs", "--output", str(out), "--check"]) == 1
    assert cli_main(["docs", "--output", str(out)]) == 0  # a render removes what it no longer makes
    assert not (out / "html" / "stale.html").exists()
    assert cli_main(["docs", "--output", str(out), "--check"]) == 0


def test_markdown_links_resolve():
    files = rendered()
    for rel, text in files.items():
        if not rel.endswith(".md"):
            continue
        for target in re.findall(r"\]\(([^)]+)\)", text):
            path, _, anchor = target.partition("#")
            base = posixpath_join(rel, path) if path else rel
            if path.startswith("../") and base.startswith("../"):
                # a link out of the docs into the repository (a spec file)
                assert (ROOT / "generated" / "docs" / base).resolve().exists(), (rel, target)
                continue
            assert base in files, (rel, target)
            if anchor:
                assert f'<a id="{anchor}"></a>' in files[base], (rel, target)


def posixpath_join(rel, path):
    import posixpath

    return posixpath.normpath(posixpath.join(posixpath.dirname(rel), path))


# ---------------------------------------------------------------------------------------------
# a real browser: Debian's chromium, headless, driven over the DevTools protocol

VIEWPORTS = ((1280, 900), (390, 844))  # the DevTools client is helpers.browser's


class _Handler(http.server.SimpleHTTPRequestHandler):
    log = []

    def log_message(self, fmt, *args):  # keep the test output quiet; remember every request
        pass

    def send_response(self, code, message=None):
        _Handler.log.append((self.path, code))
        super().send_response(code, message)


@pytest.fixture(scope="module")
def site(tmp_path_factory):
    """The HTML docs, freshly rendered, served on 127.0.0.1; yields the base URL."""
    root = tmp_path_factory.mktemp("docs")
    docs.write(rendered(), root)
    handler = functools.partial(_Handler, directory=str(root / docs.HTML_DIR))
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    yield f"http://127.0.0.1:{server.server_address[1]}/", root / docs.HTML_DIR
    server.shutdown()
    server.server_close()


@pytest.fixture(scope="module")
def browser(tmp_path_factory):
    """One headless chromium for the module (helpers.browser starts and stops it)."""
    with chromium(tmp_path_factory.mktemp("chromium-profile")) as cdp:
        yield cdp


_INSPECT = r"""
(() => {
  const vw = document.documentElement.clientWidth;
  const out = {title: document.title, links: [], ids: [], cut: [],
               pageWidth: document.documentElement.scrollWidth, vw: vw,
               h1: (document.querySelector('main h1') || {}).textContent || ''};
  for (const a of document.querySelectorAll('a[href]')) out.links.push(a.href);
  for (const e of document.querySelectorAll('link[href]')) out.links.push(e.href);
  for (const e of document.querySelectorAll('script[src]')) out.links.push(e.src);
  for (const e of document.querySelectorAll('[id]')) out.ids.push(e.id);
  // anything that reaches past the viewport must be inside a scroll container that does not
  for (const el of document.querySelectorAll('body *')) {
    const r = el.getBoundingClientRect();
    if (r.width === 0 || (r.right <= vw + 1 && r.left >= -1)) continue;
    let p = el.parentElement, ok = false;
    while (p && p !== document.body) {
      const cs = getComputedStyle(p);
      if (cs.overflowX === 'auto' || cs.overflowX === 'scroll' || cs.overflowX === 'hidden') {
        const pr = p.getBoundingClientRect();
        ok = pr.right <= vw + 1 && pr.left >= -1 && p.scrollWidth > p.clientWidth - 1;
        if (cs.overflowX === 'hidden') ok = false;
        break;
      }
      p = p.parentElement;
    }
    if (!ok) out.cut.push(el.tagName.toLowerCase() + (el.className ? '.' + el.className : '') +
                          ' right=' + Math.round(r.right));
    if (out.cut.length > 20) break;
  }
  return out;
})()
"""


def _page_url(base, url):
    return url.split("#", 1)[0]


def test_html_site_in_chromium(site, browser):
    base, html_root = site
    _Handler.log.clear()
    exceptions = []
    pages = {}  # url -> inspection at the first viewport
    for vi, (w, h) in enumerate(VIEWPORTS):
        browser.call("Emulation.setDeviceMetricsOverride", width=w, height=h, deviceScaleFactor=1,
                     mobile=w < 600)
        queue = [base + "index.html"]
        seen = set()
        while queue:
            url = queue.pop(0)
            if url in seen:
                continue
            seen.add(url)
            browser.load(url)
            info = browser.evaluate(_INSPECT)
            exceptions += [m for m in browser.events if m.get("method") == "Runtime.exceptionThrown"]
            browser.events.clear()
            assert info["h1"].strip(), f"{url}: no heading"
            assert info["pageWidth"] <= info["vw"] + 1, f"{url} at {w}px: the page scrolls sideways"
            assert not info["cut"], f"{url} at {w}px: cut off: {info['cut'][:5]}"
            if vi == 0:
                pages[url] = info
            for link in info["links"]:
                page = _page_url(base, link)
                if page.startswith(base) and page.endswith(".html") and page not in seen:
                    queue.append(page)
    assert not exceptions, exceptions[:3]
    # every page of the site was reached by following links from the index
    files = {base + p.relative_to(html_root).as_posix() for p in html_root.rglob("*.html")}
    assert files <= set(pages), sorted(files - set(pages))[:5]
    # every internal link resolves: no 404, and its anchor exists on the target page
    for url, info in pages.items():
        for link in info["links"]:
            if link.startswith("data:"):
                continue
            assert link.startswith(base), f"{url} links outside the site: {link}"
            target, _, anchor = link.partition("#")
            if target in pages:
                if anchor:
                    assert urllib.parse.unquote(anchor) in pages[target]["ids"], f"{url}: {link}"
            else:
                with urllib.request.urlopen(target, timeout=30) as r:
                    assert r.status == 200, link
    assert not [entry for entry in _Handler.log if entry[1] >= 400], _Handler.log


def test_search_in_chromium(site, browser):
    base, _root = site
    browser.call("Emulation.setDeviceMetricsOverride", width=1280, height=900, deviceScaleFactor=1,
                 mobile=False)
    browser.load(base + "search.html?q=QUERY_EVENT")
    first = browser.evaluate("(() => { const a = document.querySelector('#results a');"
                             " return a ? [a.textContent, a.getAttribute('href')] : null; })()")
    assert first == ["QUERY_EVENT", "events/query_event.html"]
    # typing in the box searches as you type
    hits = browser.evaluate(
        "(() => { const q = document.getElementById('q'); q.value = 'table_id';"
        " q.dispatchEvent(new Event('input')); return Array.from("
        "document.querySelectorAll('#results a')).map(a => a.getAttribute('href')); })()")
    assert any(h.startswith("events/table_map_event.html#") for h in hits), hits[:5]
    # the search box in every page's header leads here
    browser.load(base + "events/rotate_event.html")
    action = browser.evaluate("document.querySelector('header form').action")
    assert action == base + "search.html"
