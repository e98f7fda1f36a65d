"""`stats --html`: the figures of one `Stats.as_dict()` (with "figures", output/report_figures.py)
as one self-contained page that works offline: plotly.js (the `plotly` package's bundle) and the
page's styles and script are inlined, nothing is fetched.

One computation, two renderings: the page carries the very dict `stats --json --figures` prints,
in a JSON island (`<script type="application/json" id="bg-stats">`), and the plots' data in
another (`bg-figures`); a fixed script (PAGE_JS, no binlog text in it) hands each figure to
plotly. Binlog text (table names, GTIDs, file names, key values) reaches the page only through
output/quoting.py: `html()` for the page's text and the plots' labels (plotly.js reads entities
and a few tags in labels), `script_json()` for the islands, `shell()` for the copyable commands.

The page's size is plotly.js (about 4.8 MB, fixed) plus series bounded by the intervals
(report_figures.MAX_SHOWN), the tables and the listed transactions, never by the events.
"""
from __future__ import annotations

import datetime as _dt

from .quoting import html, script_json, shell

TOP_TABLES = 8  # tables stacked one by one in the plots over time; the rest as "(other tables)"
TOP_BARS = 40  # tables in the bar plots by table
OP_COLORS = {"insert": "#2ca02c", "update": "#1f77b4", "delete": "#d62728"}

PAGE_CSS = """
body{font:14px/1.4 system-ui,sans-serif;margin:0 auto;max-width:1200px;padding:0 16px;color:#222}
h1{font-size:22px}h2{font-size:17px;margin-top:28px;border-bottom:1px solid #ddd}
table{border-collapse:collapse;font-size:13px}td,th{padding:3px 8px;border-bottom:1px solid #eee;
text-align:left;vertical-align:top}td.n{text-align:right;font-variant-numeric:tabular-nums}
.plot{width:100%;height:380px}.grid{display:grid;grid-template-columns:1fr 1fr;gap:8px}
.wide{overflow-x:auto}code{font-size:12px;word-break:break-all}
button.copy{font-size:11px;margin-left:4px}.note{color:#666}
@media (max-width:800px){.grid{grid-template-columns:1fr}}
"""

# the page's only script: no binlog text, it reads the islands
PAGE_JS = """
(function () {
  var figs = JSON.parse(document.getElementById('bg-figures').textContent);
  var ids = Object.keys(figs), done = 0;
  document.body.setAttribute('data-plots', String(ids.length));
  ids.forEach(function (id) {
    var el = document.getElementById(id);
    Plotly.newPlot(el, figs[id].data, figs[id].layout,
                   {displaylogo: false, responsive: true}).then(function () {
      el.setAttribute('data-rendered', '1');
      done += 1;
      if (done === ids.length) document.body.setAttribute('data-plots-rendered', String(done));
    });
  });
  document.querySelectorAll('button.copy').forEach(function (b) {
    b.addEventListener('click', function () {
      var text = document.getElementById(b.getAttribute('data-for')).textContent;
      if (navigator.clipboard) navigator.clipboard.writeText(text);
    });
  });
})();
"""


def plotly_js() -> str:
    """plotly.js, as the plotly package ships it (no network)."""
    from plotly.offline import get_plotlyjs

    js = get_plotlyjs()
    # the bundle has no `</script`; were a later one to have it, `<\\/` means the same in JS strings
    return js.replace("</script", "<\\/script")


def utc(ts) -> str:
    return _dt.datetime.fromtimestamp(int(ts), _dt.timezone.utc).strftime("%Y-%m-%d %H:%M:%S")


def _layout(title, xtitle=None, ytitle=None, **more):
    lay = {"title": {"text": title}, "margin": {"l": 60, "r": 20, "t": 40, "b": 60},
           "legend": {"orientation": "h"}, "xaxis": {"title": {"text": xtitle or ""}},
           "yaxis": {"title": {"text": ytitle or ""}}}
    lay.update(more)
    return lay


def figures(d: dict) -> dict:
    """The plots' data and layouts (plotly JSON), every label from the binlog through html()."""
    f = d["figures"]
    out = {}
    width = f["interval_seconds"]
    xs = [utc(i["start"]) for i in f["intervals"]]
    top = f["tables_by_changes"][:TOP_TABLES]
    traces = [{"type": "bar", "name": html(t), "x": xs,
               "y": [i["changes_by_table"].get(t, 0) for i in f["intervals"]]} for t in top]
    if len(f["tables_by_changes"]) > TOP_TABLES:
        traces.append({"type": "bar", "name": "(other tables)", "x": xs,
                       "y": [i["changes"] - sum(i["changes_by_table"].get(t, 0) for t in top)
                             for i in f["intervals"]]})
    out["plot-changes-over-time"] = {"data": traces, "layout": _layout(
        f"Row changes per {width} s, by table", "time (UTC)", "row changes", barmode="stack")}
    out["plot-events-over-time"] = {"data": [
        {"type": "bar", "name": "events", "x": xs, "y": [i["events"] for i in f["intervals"]]},
        {"type": "scatter", "mode": "lines+markers", "name": "bytes", "yaxis": "y2", "x": xs,
         "y": [i["bytes"] for i in f["intervals"]]}],
        "layout": _layout(f"Events and bytes per {width} s", "time (UTC)", "events",
                          yaxis2={"title": {"text": "bytes"}, "overlaying": "y", "side": "right"})}
    tables = sorted(d["tables"].items(), key=lambda x: (-x[1]["bytes"], x[0]))[:TOP_BARS]
    names = [html(t) for t, _v in tables][::-1]
    ops = f["bytes_by_table_and_operation"]
    out["plot-bytes-by-table"] = {"data": [
        {"type": "bar", "orientation": "h", "name": op, "marker": {"color": OP_COLORS[op]},
         "y": names, "x": [ops.get(t, {}).get(op, 0) for t, _v in tables][::-1]}
        for op in OP_COLORS], "layout": _layout(
        "Bytes of rows events by table and operation", "bytes", None, barmode="stack",
        height=max(300, 60 + 22 * len(names)), yaxis={"automargin": True, "type": "category"})}
    by_changes = sorted(d["tables"].items(),
                        key=lambda x: (-(x[1]["insert"] + x[1]["update"] + x[1]["delete"]), x[0]))
    by_changes = by_changes[:TOP_BARS]
    cnames = [html(t) for t, _v in by_changes][::-1]
    out["plot-changes-by-table"] = {"data": [
        {"type": "bar", "orientation": "h", "name": op, "marker": {"color": OP_COLORS[op]},
         "y": cnames, "x": [v[op] for _t, v in by_changes][::-1]} for op in OP_COLORS],
        "layout": _layout("Row changes by table and operation", "row changes", None,
                          barmode="stack", height=max(300, 60 + 22 * len(cnames)),
                          yaxis={"automargin": True, "type": "category"})}
    for key, title, unit in (("transaction_bytes_log2", "Transactions by size", "bytes"),
                             ("transaction_seconds_log2", "Transactions by duration", "seconds")):
        bins = f[key]
        out["plot-" + key.replace("_", "-")] = {"data": [{
            "type": "bar", "name": "transactions", "x": [_bin(b, unit) for b in bins],
            "y": [b["count"] for b in bins]}], "layout": _layout(
            title + " (powers of two, log scale)", unit, "transactions",
            yaxis={"type": "log", "title": {"text": "transactions"}},
            xaxis={"type": "category", "title": {"text": unit}})}
    ev = sorted(d["events"].items(), key=lambda x: (-x[1]["count"], x[0]))
    out["plot-events-by-type"] = {"data": [
        {"type": "bar", "orientation": "h", "name": "events", "y": [html(k) for k, _v in ev][::-1],
         "x": [v["count"] for _k, v in ev][::-1]}],
        "layout": _layout("Events by type", "events", None, height=max(300, 60 + 22 * len(ev)),
                          xaxis={"type": "log", "title": {"text": "events (log scale)"}},
                          yaxis={"automargin": True, "type": "category"})}
    for key, title in (("row_image_kinds", "Rows events by row image kind"),
                       ("metadata_levels", "TABLE_MAP events by metadata level"),
                       ("server_ids", "Events by server id"),
                       ("gtid_domains", "Transactions by GTID domain")):
        items = list(f[key].items()) or [("(none)", 0)]
        out["plot-" + key.replace("_", "-")] = {"data": [
            {"type": "bar", "name": key, "x": [html(k) for k, _v in items],
             "y": [v for _k, v in items]}],
            "layout": _layout(title, None, None, xaxis={"type": "category"})}
    if f["hot_rows"]:
        hot = f["hot_rows"][::-1]
        out["plot-hot-rows"] = {"data": [
            {"type": "bar", "orientation": "h", "name": "row changes",
             "y": [html(f"{h['table']} {h['key']}") for h in hot], "x": [h["changes"] for h in hot]}],
            "layout": _layout("Most-changed rows (by primary key)", "row changes", None,
                              height=max(300, 60 + 22 * len(hot)),
                              yaxis={"automargin": True, "type": "category"})}
    return out


def _bin(b, unit):
    lo, hi = b["from"], b["below"]
    if unit == "bytes":
        return f"{_size(lo)}-{_size(hi)}"
    return f"{lo}-{hi - 1} s" if hi - 1 > lo else f"{lo} s"


def _size(n):
    for unit in ("B", "KiB", "MiB", "GiB"):
        if n < 1024:
            return f"{n} {unit}"
        n //= 1024
    return f"{n} TiB"


def _table(head, rows, numeric=()):
    """An HTML table; every cell is passed through html() here, except cells given as Markup."""
    out = ["<div class='wide'><table><tr>"]
    out += [f"<th>{html(h)}</th>" for h in head]
    out.append("</tr>")
    for row in rows:
        out.append("<tr>")
        for i, cell in enumerate(row):
            text = cell.text if isinstance(cell, Markup) else html("" if cell is None else cell)
            out.append(f"<td class='n'>{text}</td>" if i in numeric else f"<td>{text}</td>")
        out.append("</tr>")
    out.append("</table></div>")
    return "".join(out)


class Markup:
    """A cell built from escaped parts (the copyable command)."""

    def __init__(self, text):
        self.text = text


def dump_command(s: dict) -> str:
    """The `dump` command that shows one listed transaction (each word through quoting.shell)."""
    f = s["file"]
    return " ".join(shell(w) for w in ("binlog-grammar", "dump", "--start-position",
                                       f"{f}:{s['pos']}", "--stop-position", f"{f}:{s['end_pos']}", f))


def _tx_rows(listed, prefix):
    rows = []
    for n, s in enumerate(listed):
        cid = f"{prefix}-{n}"
        cmd = Markup(f"<code id='{cid}'>{html(dump_command(s))}</code>"
                     f"<button class='copy' data-for='{cid}'>copy</button>")
        rows.append([s["bytes"], s["seconds"], s["changes"], s["gtid"] or "-",
                     f"{s['file']}:{s['pos']}", utc(s["timestamp"]) if "timestamp" in s else "",
                     s["end"], cmd])
    return rows


def page(d: dict) -> str:
    """The whole page for one as_dict() that holds "figures"."""
    f = d["figures"]
    figs = figures(d)
    span = (f"{utc(f['intervals'][0]['start'])} to {utc(f['intervals'][-1]['start'] + f['interval_seconds'])}"
            if f["intervals"] else "no events")
    filters = d.get("filters") or {}
    parts = ["<!DOCTYPE html><html lang='en'><head><meta charset='utf-8'>",
             "<meta name='viewport' content='width=device-width, initial-scale=1'>",
             "<title>binlog-grammar stats</title><style>", PAGE_CSS, "</style><script>",
             plotly_js(), "</script></head><body>",
             "<h1>binlog-grammar stats</h1>",
             f"<p id='bg-span'>Times are <b>{html(f['time_zone'])}</b>. Events from {html(span)}; "
             f"one interval is {f['interval_seconds']} s.</p>",
             "<h2>Filters of this run</h2>",
             _table(["filter", "value"], [[k, ", ".join(v) if isinstance(v, list) else v]
                                          for k, v in filters.items()] or [["(none)", "every event"]]),
             "<h2>Files</h2>", _table(["file"], [[p] for p in d["files"]]),
             f"<p>Transactions: <span id='bg-tx-count'>{d['transactions']['count']}</span>; "
             f"backend: {html(d['backend'])}.</p>",
             "<h2>Writes over time</h2>",
             _div("plot-changes-over-time"), _div("plot-events-over-time"),
             "<h2>Tables</h2>", _div("plot-bytes-by-table"), _div("plot-changes-by-table"),
             _table(["table", "insert", "update", "delete", "bytes"],
                    [[t, v["insert"], v["update"], v["delete"], v["bytes"]]
                     for t, v in d["tables"].items()], numeric=(1, 2, 3, 4)),
             "<h2>Transactions</h2><div class='grid'>",
             _div("plot-transaction-bytes-log2"), _div("plot-transaction-seconds-log2"), "</div>"]
    head = ["bytes", "seconds", "changes", "GTID", "file:position", "time (UTC)", "end",
            "dump command"]
    parts += ["<h3>Largest transactions</h3>",
              _table(head, _tx_rows(d["largest_transactions"], "cmd-largest"), numeric=(0, 1, 2)),
              "<h3>Longest transactions</h3>",
              _table(head, _tx_rows(d["longest_transactions"], "cmd-longest"), numeric=(0, 1, 2)),
              "<h2>Events</h2>", _div("plot-events-by-type"), "<div class='grid'>",
              _div("plot-row-image-kinds"), _div("plot-metadata-levels"),
              _div("plot-server-ids"), _div("plot-gtid-domains"), "</div>",
              "<h2>Gaps in time</h2>",
              _table(["seconds", "from (UTC)", "to (UTC)", "at"],
                     [[g["seconds"], utc(g["from"]), utc(g["to"]), f"{g['file']}:{g['pos']}"]
                      for g in f["gaps"]], numeric=(0,)),
              "<h2>Hot rows</h2>"]
    if f["hot_rows"]:
        parts.append(_div("plot-hot-rows"))
        if f["hot_rows_undercount"]:
            parts.append(f"<p class='note'>More keys than could be counted exactly: each count "
                         f"may be low by up to {f['hot_rows_undercount']}.</p>")
    else:
        parts.append("<p class='note'>No row change named its primary key (the binlog gives keys "
                     "with binlog_row_metadata=FULL).</p>")
    parts += ["<script type='application/json' id='bg-stats'>", script_json(d), "</script>",
              "<script type='application/json' id='bg-figures'>", script_json(figs), "</script>",
              "<script>", PAGE_JS, "</script></body></html>"]
    return "".join(parts)


def _div(pid):
    return f"<div class='plot' id='{pid}'></div>"
