"""The user guide's pages beside the command line and the Python API: the Spark data source
(docs/spark.md's text, its option and schema tables made from the source's own option list and
Spark schemas), the JSON-lines envelopes (each column type's line as the real writers write it
from a real binlog), and the guide's first page. The caller (binlog_grammar/cli/docs.py) gathers
what they are made of into a GuideInputs; nothing here imports the code it documents."""
from __future__ import annotations

import json
from dataclasses import dataclass, field

from .blocks import C, CODE, H, L, P, ROW, T, TABLE, Page, join
from .guide_api import api_page
from .guide_cli import cli_page
from .guide_text import Anchors, inline, markdown_blocks, plain

NOT_DESCRIBED = "not described in docs/spark.md"


@dataclass
class GuideInputs:
    parser: object  # the argparse parser of `binlog-grammar`
    api: list  # [(id, title, import line, docstring, [(name, object)])]
    spark_md: str  # docs/spark.md
    spark_options: dict  # option -> default, in the source's order (spark/options.py)
    spark_schemas: list  # [(title, [(field, Spark type, nullable)])] (spark/schema.py)
    formats: list  # [(name, kind, summary)] of the output format registry
    examples: dict  # envelope -> [(column type, SQL type, value written (SQL), line)]
    sample: str  # the binlog the examples are read from (its name in the repository)
    notes: dict = field(default_factory=dict)  # envelope -> what the section says first
    texts: list = field(default_factory=list)  # [(page id, nav label, Markdown, its folder)]


# ---------------------------------------------------------------------------------------------
# Spark

def _described(table) -> dict:
    """first cell's words -> the last cell (rich) of a Markdown table's rows; `a, b` is two."""
    out = {}
    for r in table["rows"]:
        for name in plain("".join(s[1] for s in r["cells"][0] if len(s) > 1)).split(","):
            if name.strip():
                out[name.strip()] = r["cells"][-1]
    return out


def _option_table(table, options: dict):
    what = _described(table)
    rows = []
    for name, default in options.items():
        rows.append(ROW([[C(name)], [C(default)] if default != "" else [],
                         what.get(name) or [T(NOT_DESCRIBED)]], anchor=f"spark-option-{name}",
                        cls="option"))
    return TABLE(["Option", "Default", "What it does"], rows, cls="options", name="spark options")


def _schema_table(title, fields, what: dict):
    rows = [ROW([[C(name)], [C(typ)], [T("yes" if nullable else "no")],
                 what.get(name) or [T(NOT_DESCRIBED)]], cls="field")
            for name, typ, nullable in fields]
    return TABLE(["Field", "Spark type", "Nullable", "What it holds"], rows, cls="schema",
                 name=title)


def spark_page(inputs: GuideInputs) -> Page:
    search = []
    blocks = markdown_blocks(inputs.spark_md, Anchors(), search)
    schemas = {title: fields for title, fields in inputs.spark_schemas}
    used = set()
    for i, b in enumerate(blocks):
        if b["kind"] != "table" or not b["head"]:
            continue
        first = b["head"][0].lower()
        if first == "option":
            blocks[i] = _option_table(b, inputs.spark_options)
        elif first in ("column", "field"):
            what = _described(b)
            best = max(schemas, key=lambda t: len(set(what) & {f[0] for f in schemas[t]}),
                       default=None)
            if best is not None and set(what) & {f[0] for f in schemas[best]}:
                blocks[i] = _schema_table(best, schemas[best], what)
                used.add(best)
    rest = [t for t in schemas if t not in used]
    if rest:
        blocks.append(H(2, "The other schemas, as Spark has them", "spark-schemas"))
        search.append(("Spark schemas", "spark-schemas", "guide section", ""))
        for t in rest:
            blocks += [P(C(t)), _schema_table(t, schemas[t], {})]
    for name in inputs.spark_options:
        search.append((f"spark option {name}", f"spark-option-{name}", "Spark option", ""))
    return Page("guide/spark", "The binlog Spark data source", blocks, nav="Spark source",
                group="guide", search=search)


# ---------------------------------------------------------------------------------------------
# JSON lines

ENVELOPE_TEXT = {
    "native": "The default envelope: every event is a line, and each row change a line with `op`, "
              "`before`, `after` and `source` (where the change is in the binlog). Values are "
              "JSON numbers, strings and objects as the column type reads naturally.",
    "debezium": "Each row change as the Debezium MySQL/MariaDB connector's change event, under the "
                "connector's default settings (`--debezium-option KEY=VALUE` changes them; "
                "docs/debezium.md lists them and where MariaDB's connector differs).",
}


def _value(line: str):
    rec = json.loads(line)
    img = rec.get("after") if rec.get("after") is not None else rec.get("before")
    if isinstance(img, dict):
        return img.get("v")
    return None


def jsonl_page(inputs: GuideInputs) -> Page:
    search = []
    blocks = [H(1, "JSON lines"),
              P(T("What "), C("dump --format jsonl"), T(" and "), C("stream --format jsonl"),
                T(" write, one JSON object a line, in each envelope ("), C("--envelope"),
                T("). Every line on this page was written by the real writer, run by "),
                C("binlog-grammar docs"), T(" on a real binlog ("), C(inputs.sample),
                T(", written by MariaDB 10.11 with one table per column type: "),
                C("CREATE TABLE t_TYPE (id INT PRIMARY KEY, v TYPE)"), T(", one row each).")),
              H(2, "The output formats", "formats"),
              P(T("Every reading command finds its writer by name in one registry; these are its "
                  "entries.")),
              TABLE(["Format", "Kind", "What it writes"],
                    [ROW([[C(n)], [T(k)], inline(s)]) for n, k, s in inputs.formats],
                    cls="formats")]
    search.append(("output formats", "formats", "guide section", ""))
    envelopes = list(inputs.examples)
    rows = []
    types = [t for t, _s, _v, _l in inputs.examples[envelopes[0]]]
    by_env = {e: {t: (s, v, ln) for t, s, v, ln in inputs.examples[e]} for e in envelopes}
    for t in types:
        sql, value = by_env[envelopes[0]][t][:2]
        cells = [[C(t)], [C(sql)], [C(value)]]
        for e in envelopes:
            got = by_env[e].get(t)
            cells.append([C(json.dumps(_value(got[2]), ensure_ascii=False))] if got else [])
        rows.append(ROW(cells, cls="example"))
    blocks += [H(2, "Values by column type", "values"),
               P(T("The value of column "), C("v"), T(" in each envelope's line (below), by the "
                                                      "column's type.")),
               TABLE(["Column type", "SQL type", "Written"] + [f"{e}: v" for e in envelopes], rows,
                     cls="values")]
    search.append(("JSON values by column type", "values", "guide section", ""))
    for e in envelopes:
        anchor = f"envelope-{e}"
        note = inputs.notes.get(e, ENVELOPE_TEXT.get(e, ""))
        blocks += [H(2, [T("Envelope "), C(e)], anchor), P(inline(note))]
        search.append((f"{e} envelope", anchor, "guide section", ENVELOPE_TEXT.get(e, "")))
        for t, sql, _v, line in inputs.examples[e]:
            a = f"{e}-{t.lower().replace(' ', '-')}"
            blocks += [H(3, [C(t), T(" ("), C(sql), T(")")], a), CODE(line, "json")]
            search.append((f"{e} {t}", a, "JSON-lines example", sql))
    return Page("guide/jsonl", "JSON lines", blocks, nav="JSON lines", group="guide",
                search=search)


# ---------------------------------------------------------------------------------------------
# the guide

def guide_index(pages) -> Page:
    items = [[L(p.title, p.id, None, code=False)] for p in pages]
    blocks = [H(1, "User guide"),
              P(T("How to run binlog-grammar: every page here is generated from the code it "
                  "describes by "), C("binlog-grammar docs"), T(", with the format documentation, "
                  "so it cannot fall behind the command line, the Python API, the Spark source or "
                  "the JSON-lines writers.")),
              {"kind": "list", "items": items},
              P(T("The binlog format itself (every event, field, type and enum) is in the "),
                L("format documentation", "index", None, code=False), T("."))]
    return Page("guide/index", "User guide", blocks, nav="User guide", group="guide")


def text_page(pid, nav, markdown, folder) -> Page:
    """A guide written by hand (docs/*.md), in the site with its headings searchable."""
    search = []
    blocks = markdown_blocks(markdown, Anchors(), search, base=folder)
    title = plain(markdown.lstrip().splitlines()[0].lstrip("# ")) if markdown.strip() else nav
    return Page(f"guide/{pid}", title, blocks, nav=nav, group="guide", search=search)


def guide_pages(inputs: GuideInputs) -> list:
    pages = [cli_page(inputs.parser), api_page(inputs.api), spark_page(inputs), jsonl_page(inputs)]
    pages += [text_page(*t) for t in inputs.texts]
    return [guide_index(pages)] + pages


def index_note() -> dict:
    """The paragraph the format docs' first page gets when the guide is rendered with them."""
    return P(T("New here? The "), L("user guide", "guide/index", None, code=False),
             T(" has the "), *join([[L("command line", "guide/cli", None, code=False)],
                                    [L("Python API", "guide/api", None, code=False)],
                                    [L("Spark source", "guide/spark", None, code=False)],
                                    [L("JSON lines", "guide/jsonl", None, code=False)]]), T("."))


__all__ = ["GuideInputs", "NOT_DESCRIBED", "guide_pages", "index_note", "jsonl_page", "spark_page",
           "text_page"]
