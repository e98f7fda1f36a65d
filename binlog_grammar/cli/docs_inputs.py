"""What `binlog-grammar docs` renders the user guide from (binlog_grammar.docs.GuideInputs): the
command's own parser, the public names and their docstrings, the Spark source's options and
schemas, the output format registry, and the JSON-lines writers run on the guide's binlog. The
docs package renders; this module, in the layer that may import everything, gathers."""
from __future__ import annotations

import json
import os
from pathlib import Path

# The guide's binlog: one table per column type, `t_SUFFIX (id INT PRIMARY KEY, v TYPE)`, one
# row each, written by tools/make_guide_sample.py from this list: (table suffix, label, SQL type,
# the value inserted as an SQL literal), in the order the guide shows them.
GUIDE_TYPES = [
    ("tinyint", "TINYINT", "TINYINT", "-128"),
    ("tinyint_unsigned", "TINYINT UNSIGNED", "TINYINT UNSIGNED", "255"),
    ("smallint", "SMALLINT", "SMALLINT", "-32768"),
    ("mediumint", "MEDIUMINT", "MEDIUMINT", "8388607"),
    ("int", "INT", "INT", "-2147483648"),
    ("int_unsigned", "INT UNSIGNED", "INT UNSIGNED", "4294967295"),
    ("bigint", "BIGINT", "BIGINT", "-9223372036854775808"),
    ("bigint_unsigned", "BIGINT UNSIGNED", "BIGINT UNSIGNED", "18446744073709551615"),
    ("decimal", "DECIMAL", "DECIMAL(10,2)", "-12345678.99"),
    ("float", "FLOAT", "FLOAT", "1.5"),
    ("double", "DOUBLE", "DOUBLE", "3.141592653589793"),
    ("bit", "BIT", "BIT(10)", "b'1000000001'"),
    ("bool", "BOOL", "BOOL", "1"),
    ("year", "YEAR", "YEAR", "2024"),
    ("date", "DATE", "DATE", "'2024-02-29'"),
    ("zero_date", "DATE zero", "DATE", "'0000-00-00'"),
    ("time", "TIME", "TIME(3)", "'-12:34:56.789'"),
    ("datetime", "DATETIME", "DATETIME(6)", "'2024-02-29 23:59:59.123456'"),
    ("timestamp", "TIMESTAMP", "TIMESTAMP(3) NULL", "'2038-01-19 03:14:07.500'"),
    ("char", "CHAR", "CHAR(10) CHARACTER SET utf8mb4", "'naïve'"),
    ("varchar", "VARCHAR", "VARCHAR(40) CHARACTER SET utf8mb4", "'Émilie 😀'"),
    ("varchar_latin1", "VARCHAR latin1", "VARCHAR(40) CHARACTER SET latin1", "'café'"),
    ("binary", "BINARY", "BINARY(4)", "x'00ff0a0d'"),
    ("varbinary", "VARBINARY", "VARBINARY(16)", "x'cafebabe'"),
    ("text", "TEXT", "TEXT CHARACTER SET utf8mb4", "'tab\\there'"),
    ("blob", "BLOB", "BLOB", "x'000102'"),
    ("enum", "ENUM", "ENUM('free','pro','team')", "'pro'"),
    ("set", "SET", "SET('a','b','c')", "'a,c'"),
    ("json", "JSON", "JSON", "'{\"items\": [1, 2], \"gift\": false}'"),
    ("geometry", "GEOMETRY", "POINT", "ST_GeomFromText('POINT(1 2)')"),
    ("null", "NULL", "INT", "NULL"),
]
# and two changes that are not inserts: (table suffix, op, label)
GUIDE_CHANGES = [("varchar", "u", "an UPDATE"), ("int", "d", "a DELETE")]
GUIDE_UPDATE = "UPDATE t_varchar SET v = 'Grace' WHERE id = 1"
GUIDE_DELETE = "DELETE FROM t_int WHERE id = 1"
GUIDE_BINLOG = "docs/guide/binlog/mariadb-10.11-types.000001"  # from the repository's root
ENVELOPES = (("native", "jsonl"), ("debezium", "debezium"))  # envelope, registry format
# the guides written by hand that the site shows too: (page id, nav label, file)
TEXTS = (("debezium", "Debezium envelope", "docs/debezium.md"),
         ("repair", "Repairing a replica", "docs/repair.md"),
         ("report", "The stats --html page", "docs/report.md"))


def repo_root() -> Path:
    from .. import docs

    return Path(docs.DOCS_DIR).parent.parent


def api_sections():
    import binlog_grammar
    from .. import compat
    from ..compat import pymysqlreplication as pmr

    top = [(n, getattr(binlog_grammar, n)) for n in binlog_grammar.__all__ if n != "__version__"]
    return [
        ("api-binlog-grammar", "binlog_grammar", "import binlog_grammar", binlog_grammar.__doc__, top),
        ("api-compat", "binlog_grammar.compat", "from binlog_grammar import compat",
         compat.__doc__, [(n, getattr(compat, n)) for n in compat.__all__]),
        ("api-pymysqlreplication", "binlog_grammar.compat.pymysqlreplication",
         "from binlog_grammar.compat.pymysqlreplication import BinLogStreamReader",
         pmr.__doc__, [(n, getattr(pmr, n)) for n in pmr.__all__]),
    ]


def _type_name(t) -> str:
    from pyspark.sql import types as S

    return "struct" if isinstance(t, S.StructType) else t.simpleString()


def spark_schemas():
    """[(title, [(field, type, nullable)])] of the source's schemas (pyspark's types)."""
    try:
        from ..spark import schema
    except ImportError as e:
        from .options import UsageError

        raise UsageError(f"docs: the guide's Spark schemas are pyspark's ({e}): "
                         "pip install 'binlog-grammar[spark]'") from None

    def fields(st):
        return [(f.name, _type_name(f.dataType), bool(f.nullable)) for f in st.fields]

    return [("row changes", fields(schema.change_schema())), ("source", fields(schema.SOURCE)),
            ("content tables", fields(schema.TABLES)), ("envelope debezium", fields(schema.DEBEZIUM))]


def spark_options() -> dict:
    from ..spark import options

    out = dict(options.OPTIONS)
    out[options.DEBEZIUM_PREFIX + "KEY"] = ""
    return out


def examples(root: Path) -> dict:
    """envelope -> [(label, SQL type, the statement's value, line)]: the first line of each table
    of the guide's binlog as the registry's writer writes it (rows only), read with the path as
    the repository names it."""
    from ..binlog.stream import open_stream
    from ..output import formats

    labels = {s: (label, sql, value) for s, label, sql, value in GUIDE_TYPES}
    changed = {"u": GUIDE_UPDATE, "d": GUIDE_DELETE}
    wanted = [(s, "c", label, sql, value) for s, label, sql, value in GUIDE_TYPES] + \
        [(s, op, f"{labels[s][0]}, {what}", labels[s][1], changed[op])
         for s, op, what in GUIDE_CHANGES]
    here = os.getcwd()
    os.chdir(root)  # the lines name the binlog as it was given: its path in the repository
    try:
        out = {}
        for envelope, name in ENVELOPES:
            first = {}
            for line in formats.lines_of(open_stream([GUIDE_BINLOG]).events(), name, rows_only=True):
                rec = json.loads(line)
                table = (rec.get("source") or {}).get("table") or ""
                key = (table[2:], rec.get("op"))
                if table.startswith("t_") and key not in first:
                    first[key] = line
            out[envelope] = [(label, sql, value, first[(s, op)])
                             for s, op, label, sql, value in wanted if (s, op) in first]
        return out
    finally:
        os.chdir(here)


def guide_inputs(parser):
    from .. import docs
    from ..output import formats

    root = repo_root()
    missing = [p for p in ("docs/spark.md", GUIDE_BINLOG) if not (root / p).is_file()]
    if missing:
        from .options import UsageError

        raise UsageError(f"docs: the user guide is rendered from a source checkout "
                         f"({', '.join(missing)} not found under {root}); give --no-guide for "
                         "the format pages alone")
    return docs.GuideInputs(
        parser=parser, api=api_sections(),
        spark_md=(root / "docs" / "spark.md").read_text(encoding="utf-8"),
        spark_options=spark_options(), spark_schemas=spark_schemas(),
        formats=[(f.name, f.kind, f.summary) for f in formats.FORMATS.values()],
        examples=examples(root), sample=GUIDE_BINLOG,
        texts=[(pid, nav, (root / path).read_text(encoding="utf-8"), str(Path(path).parent))
               for pid, nav, path in TEXTS if (root / path).is_file()])


__all__ = ["GUIDE_BINLOG", "GUIDE_CHANGES", "GUIDE_DELETE", "GUIDE_TYPES", "GUIDE_UPDATE",
           "api_sections", "examples", "guide_inputs", "repo_root", "spark_options",
           "spark_schemas"]
