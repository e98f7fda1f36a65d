"""`stats --html` in a real browser (issue 30): headless Chromium opens the page from a file, every
plot renders (its screenshot is not blank, no exception, no console error, nothing fetched but
the page), and the numbers in the page equal `stats --json --figures`'s: the JSON island, the
plots' data and the tables' cells. Three pages: a sample, a corpus file (MySQL) and a workload
of a throwaway MariaDB whose table name and GTID-less statements are hostile markup."""
import json
import subprocess
import sys

import pytest

from helpers.browser import chromium
from helpers.paths import ROOT, corpus_files
from helpers.services import need_mariadb

_CLI = [sys.executable, "-m", "binlog_grammar"]

_READ = r"""
(() => {
  const out = {plots: {}, tables: [], stats: JSON.parse(document.getElementById('bg-stats').textContent),
               rendered: document.body.getAttribute('data-plots-rendered'),
               expected: document.body.getAttribute('data-plots'), title: document.title,
               injected: typeof window.bgPwned !== 'undefined'};
  for (const el of document.querySelectorAll('.plot')) {
    const r = el.getBoundingClientRect();
    out.plots[el.id] = {x: r.left + window.scrollX, y: r.top + window.scrollY, w: r.width, h: r.height,
                        data: (el.data || []).map(t => ({name: t.name, x: t.x, y: t.y})),
                        marks: el.querySelectorAll('.trace path, .trace rect, .point path').length};
  }
  for (const t of document.querySelectorAll('table')) {
    out.tables.push([...t.querySelectorAll('tr')].map(tr => [...tr.children].map(c => c.textContent)));
  }
  return out;
})()
"""

# the share of a screenshot's pixels that are not white
_INK = r"""
(async (src) => {
  const img = new Image(); img.src = src; await img.decode();
  const c = document.createElement('canvas'); c.width = img.width; c.height = img.height;
  const g = c.getContext('2d'); g.drawImage(img, 0, 0);
  const d = g.getImageData(0, 0, c.width, c.height).data;
  let ink = 0;
  for (let i = 0; i < d.length; i += 4) if (d[i] < 235 || d[i + 1] < 235 || d[i + 2] < 235) ink++;
  return ink / (d.length / 4);
})
"""


def _page(tmp_path, files, name):
    html = tmp_path / f"{name}.html"
    r = subprocess.run(_CLI + ["stats", "--html", str(html), "--json", *map(str, files)],
                       capture_output=True, text=True, cwd=ROOT)
    assert r.returncode in (0, 1), r.stderr
    again = subprocess.run(_CLI + ["stats", "--figures", "--json", *map(str, files)],
                           capture_output=True, text=True, cwd=ROOT)
    assert json.loads(again.stdout) == json.loads(r.stdout)
    return html, json.loads(r.stdout)


def _check(browser, html, want):
    browser.events.clear()
    browser.load(html.as_uri())
    for _ in range(200):
        got = browser.evaluate(_READ)
        if got["rendered"] is not None and got["rendered"] == got["expected"]:
            break
        import time

        time.sleep(0.1)
    assert got["rendered"] == got["expected"] and int(got["expected"]) >= 10, got["rendered"]
    bad = [m for m in browser.events
           if m.get("method") == "Runtime.exceptionThrown"
           or (m.get("method") == "Runtime.consoleAPICalled" and m["params"]["type"] == "error")
           or (m.get("method") == "Log.entryAdded" and m["params"]["entry"]["level"] == "error")
           or (m.get("method") == "Network.requestWillBeSent"
               and not m["params"]["request"]["url"].startswith(("file:", "data:")))
           or m.get("method") == "Page.javascriptDialogOpening"]
    assert not bad, bad
    assert not got["injected"]
    # one computation: the island is --json's object
    assert got["stats"] == want
    f = want["figures"]
    plots = got["plots"]
    # every plot drew marks, and its screenshot is not blank
    for pid, p in plots.items():
        assert p["w"] > 100 and p["h"] > 100 and p["marks"] > 0, pid
        p = browser.evaluate(f"(() => {{ const e = document.getElementById('{pid}'); "
                             "e.scrollIntoView(); const r = e.getBoundingClientRect(); "
                             "return {x: r.left + scrollX, y: r.top + scrollY, w: r.width, h: r.height}; })()")
        shot = browser.call("Page.captureScreenshot", format="png", captureBeyondViewport=False,
                            clip={"x": p["x"], "y": p["y"], "width": p["w"], "height": p["h"],
                                  "scale": 1})
        ink = browser.evaluate(f"{_INK}('data:image/png;base64,{shot['data']}')")
        assert ink > 0.01, (pid, ink)
    # the plots' numbers
    ev = plots["plot-events-by-type"]["data"][0]
    assert sorted(ev["x"]) == sorted(v["count"] for v in want["events"].values())
    over = plots["plot-changes-over-time"]["data"]
    assert [sum(t["y"][i] for t in over) for i in range(len(f["intervals"]))] == \
        [i["changes"] for i in f["intervals"]]
    assert plots["plot-events-over-time"]["data"][0]["y"] == [i["events"] for i in f["intervals"]]
    assert plots["plot-events-over-time"]["data"][1]["y"] == [i["bytes"] for i in f["intervals"]]
    sizes = plots["plot-transaction-bytes-log2"]["data"][0]["y"]
    assert sizes == [b["count"] for b in f["transaction_bytes_log2"]]
    assert sum(sizes) == want["transactions"]["count"]
    for op in ("insert", "update", "delete"):
        trace = next(t for t in plots["plot-changes-by-table"]["data"] if t["name"] == op)
        assert sorted(trace["x"]) == sorted(v[op] for v in want["tables"].values())
    # the tables' cells: rows changed per table, and the largest transactions' commands
    tables = next(t for t in got["tables"] if t[0] == ["table", "insert", "update", "delete", "bytes"])
    assert tables[1:] == [[k, str(v["insert"]), str(v["update"]), str(v["delete"]), str(v["bytes"])]
                          for k, v in want["tables"].items()]
    largest = next(t for t in got["tables"] if t[0][0] == "bytes")
    assert [int(r[0]) for r in largest[1:]] == [s["bytes"] for s in want["largest_transactions"]]
    assert all("--start-position" in r[-1] for r in largest[1:])
    return got


@pytest.fixture(scope="module")
def browser(tmp_path_factory):
    with chromium(tmp_path_factory.mktemp("chromium")) as cdp:
        yield cdp


def test_sample_page(browser, tmp_path):
    html, want = _page(tmp_path, [ROOT / "samples" / "mariadb-10.11-sample.000001"], "sample")
    _check(browser, html, want)
    assert want["figures"]["hot_rows"]  # the sample's tables have primary keys and FULL metadata


@pytest.mark.corpus
def test_corpus_page(browser, tmp_path):
    files = [p for p in corpus_files() if p.name == "write-full-row.binlog"]
    if not files:
        pytest.skip("the corpus is not beside the repository")
    html, want = _page(tmp_path, files, "corpus")
    _check(browser, html, want)


# names are 64 characters at most: the database's and the table's each carry one attack
HOSTILE_DB = "<script>window.bgPwned=1</script>"
HOSTILE = "</script><img src=x onerror=window.bgPwned=2>&amp;'\"\\"


@pytest.mark.server
def test_server_workload_page_with_hostile_names(browser, tmp_path):
    """A real server's binlog: FULL and MINIMAL row images, a pause (a gap), a table whose name is
    markup; the page runs none of it and shows the name as text."""
    need_mariadb()
    from binlog_grammar.testing import mariadb

    name = HOSTILE.replace("`", "``")
    with mariadb.MariaDB(["--default-time-zone=+00:00"]) as db:
        db.sql(f"SET GLOBAL binlog_row_metadata = FULL; CREATE DATABASE `{HOSTILE_DB}`;")
        db.sql(f"CREATE TABLE `{name}` (id INT PRIMARY KEY, v VARCHAR(50), b BLOB); "
               "CREATE TABLE plain (id INT PRIMARY KEY, n INT);", database=HOSTILE_DB)
        db.sql("".join(f"INSERT INTO `{name}` VALUES ({i}, '</script>{i}', 'x');" for i in range(30))
               + "".join(f"INSERT INTO plain VALUES ({i}, 0);" for i in range(50))
               + "".join("UPDATE plain SET n = n + 1 WHERE id = 7;" for _ in range(12)), database=HOSTILE_DB)
        db.sql("SELECT SLEEP(2);")
        db.sql("SET GLOBAL binlog_row_image = MINIMAL;")
        db.sql(f"UPDATE `{name}` SET v = 'y' WHERE id < 10; DELETE FROM plain WHERE id > 40;",
               database=HOSTILE_DB)
        db.sql("FLUSH BINARY LOGS;")
        files = []
        for p in db.binlogs():
            files.append(tmp_path / p.name)
            files[-1].write_bytes(p.read_bytes())
    html, want = _page(tmp_path, files, "server")
    got = _check(browser, html, want)
    f = want["figures"]
    assert f["row_image_kinds"].get("FULL") and f["row_image_kinds"].get("MINIMAL")
    assert f["gaps"] and f["gaps"][0]["seconds"] >= 1
    assert f["hot_rows"][0] == {"table": HOSTILE_DB + ".plain", "key": "id=7", "changes": 13}
    table_rows = next(t for t in got["tables"] if t[0][0] == "table")
    assert sorted(r[0] for r in table_rows[1:]) == sorted(f"{HOSTILE_DB}.{t}" for t in (HOSTILE, "plain"))
