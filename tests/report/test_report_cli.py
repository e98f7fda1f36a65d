"""`stats --html -` (the page on stdout, nothing else), `--html FILE` beside the text tables, the
run's filters at the top of the page and in --json, and a page that cannot be written."""
import json
import re
import subprocess
import sys

from helpers.paths import ROOT

SAMPLE = str(ROOT / "samples" / "mariadb-10.11-sample.000001")
_CLI = [sys.executable, "-m", "binlog_grammar", "stats"]


def _island(page):
    return json.loads(re.search(r"<script type='application/json' id='bg-stats'>(.*?)</script>",
                                page, re.S).group(1))


def test_page_on_stdout_alone():
    r = subprocess.run(_CLI + ["--html", "-", SAMPLE], capture_output=True, text=True, cwd=ROOT)
    assert r.returncode == 0 and r.stdout.startswith("<!DOCTYPE html>") and r.stdout.endswith("</html>")
    assert "events by type:" not in r.stdout
    assert "<script src" not in r.stdout and "https://" not in r.stdout.split("<script>", 2)[2]


def test_filters_at_the_top_and_in_json(tmp_path):
    page = tmp_path / "p.html"
    args = ["--table", "shop.orders", "--start-position", "4", "--stop-datetime", "2099-01-01 00:00:00"]
    r = subprocess.run(_CLI + ["--html", str(page), "--json", *args, SAMPLE], capture_output=True,
                       text=True, cwd=ROOT)
    assert r.returncode == 0, r.stderr
    d = json.loads(r.stdout)
    assert d["filters"]["tables"] == ["shop.orders"] and d["filters"]["start_position"] == "4"
    assert "2099-01-01" in d["filters"]["stop_datetime"]
    assert list(d["tables"]) == ["shop.orders"]
    text = page.read_text()
    assert _island(text) == d
    top = text.split("<h2>Files</h2>")[0]
    assert "shop.orders" in top and "stop_datetime" in top


def test_unwritable_page(tmp_path):
    r = subprocess.run(_CLI + ["--html", str(tmp_path / "no" / "p.html"), SAMPLE],
                       capture_output=True, text=True, cwd=ROOT)
    assert r.returncode == 2 and "--html" in r.stderr
