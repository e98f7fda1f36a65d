"""The pipeline's typed snapshots in Spark's expressions (binlog_grammar.spark.typed_sql) against
their definition, typed.converter in Python, on a real local Spark.

Every column kind the decoder writes, with the texts it writes and edge texts around them (year 0,
February 30, an hour of 24, minutes of 60, NaN and infinities, decimals that do not fit, base64
without padding, surrogate escapes, JSON of the wrong kind): where the expressions call a text
exact, their value is the converter's (the same Spark value once written); the texts the decoder
writes are all exact, except the kinds left to Python (JSON documents, GEOMETRY, VECTOR).
"""
from __future__ import annotations

import base64
import datetime as dt
import json

import pytest

pytestmark = pytest.mark.spark


# a SET's long members with escapes (sorted in the map form, the reverse in the definition)
LONG_MEMBERS = [f'm{i:02}-q"\\' + "s" * 300 for i in range(12)]
LONG_SET = json.dumps(LONG_MEMBERS, separators=(",", ":"))


def col(name, type_, **kw):
    return {"name": name, "type": type_, "unsigned": False, "charset": None, **kw}


COLUMNS = [
    col("i", "LONG"), col("u", "LONG", unsigned=True), col("t", "TINY"), col("y", "YEAR"),
    col("b", "LONGLONG"), col("bu", "LONGLONG", unsigned=True), col("bit", "BIT", bits=12),
    col("bit64", "BIT", bits=64), col("d", "NEWDECIMAL", precision=10, scale=2),
    col("d0", "NEWDECIMAL", precision=5, scale=0), col("dd", "NEWDECIMAL", precision=3, scale=3),
    col("dwide", "NEWDECIMAL", precision=50, scale=4), col("f", "FLOAT"), col("g", "DOUBLE"),
    col("dt", "DATE"), col("dtm", "DATETIME2", fsp=6), col("ts", "TIMESTAMP2", fsp=3),
    col("tm", "TIME2", fsp=6), col("vc", "VARCHAR", charset="utf8mb4"),
    col("bl", "BLOB", charset="binary"), col("tx", "BLOB", charset="latin1"),
    col("en", "ENUM", charset="latin1", enum_values=["a", "b"]), col("en0", "ENUM"),
    col("st", "SET", charset="latin1", set_values=["z", "x", "y"]), col("st0", "SET"),
    col("stl", "SET", set_values=LONG_MEMBERS[::-1]),
    col("js", "JSON"), col("geo", "GEOMETRY"), col("vec", "VECTOR"),
]

# long texts with escapes: Java's regular expressions recurse per repeated group, and a JSON
# string matched a group per character overflowed the stack (a local JVM ended) from about a
# thousand characters (tests/spark/test_spark_long_values.py has them from a real server)
LONG = json.dumps('a\n"b\\c é☃𝄞\t' * 2000, ensure_ascii=False, separators=(",", ":"))

LONG_BASE64 = '"' + base64.b64encode(bytes(range(256)) * 1200).decode() + '"'
STRING = [LONG, '"\\\\"', '"a\\\\\\"b"', '"abc"', '""', '"a\\"b\\\\c\\n\\u0000"', '"ünï ☃ 𝄞"',
          '"\\ud83d\\ude00"', '"\\udc80"', '5', 'true', '1.5', '[1]']
TEXTS = {
    "int": ["0", "-7", "2147483647", "-2147483648", "1.0", '"5"', "true", "1e3"],
    "long": ["9223372036854775807", "-9223372036854775808", "4294967295"],
    "decimal": ['"12.50"', '"-0.01"', '"12345678.99"', '"1.234"', '"abc"', "42", '"42"', "1.5",
                '"-"', '"0.5"', '".5"', '"99999"', '"0.12"', '"-0"'],
    "decimal0": ['"99999"', '"-99999"', "42", '"42"', '"1.5"', '"0"', '"abc"', "1.0"],
    "decimal20": ["18446744073709551615", "0", '"12"', "-1", '"1.5"'],
    "decimal3": ['"0.123"', '"-0.999"', '"0.5"', '"0"', '"0.1234"', "0", '".5"', '"abc"'],
    "float": ["1.5", "-0.0", "3.4028234663852886e+38", "1e-45", '"NaN"', '"Infinity"',
              '"-Infinity"', '"nan"', "0.1", "680302.0", "123456789012345678901234567890", "true"],
    "date": ['"2024-01-05"', '"0000-00-00"', '"0000-01-01"', '"2024-02-30"', '"2024-00-10"',
             '"0001-01-01"', '"9999-12-31"', '"1164-02-28"', '"2024-1-5"', '"2024-01-05T00:00:00"'],
    "datetime": ['"2024-01-05T10:11:12"', '"2024-01-05T10:11:12.5"', '"2024-01-05T10:11:12.123456"',
                 '"0000-00-00T00:00:00"', '"0000-01-01T00:00:00"', '"2024-02-30T00:00:00"',
                 '"2024-01-05T24:00:00"', '"2024-01-05T10:60:00"', '"2024-01-05T10:11:12Z"',
                 '"2024-01-05 10:11:12"', '"0001-01-01T00:00:00"'],
    "timestamp": ['"2021-12-17T12:00:00.349000Z"', '"1970-01-01T00:00:00Z"', '"0000-00-00T00:00:00Z"',
                  '"2038-01-19T03:14:07.999999Z"', '"2024-01-05T10:11:12"', '"2024-02-30T00:00:00Z"'],
    "time": ['"01:02:03.500000"', '"-01:02:03.500000"', '"838:59:59"', '"-838:59:59.000000"',
             '"00:00:00"', '"-00:00:01"', '"10:60:00"', '"10:00:60"', '"1:2:3"', '"12:00"',
             '"00:00:00.1"'],
    "binary": [LONG_BASE64, '"sBphT5lKjDy1p1KAiUNXV60+Hw=="', '""', '"AAEC"', '"AAE="', '"AA"',
               '"A==="', '"!!!!"', "5"],
    "string": STRING,
    "set": ['["x","y","z"]', '["x","z"]', "[]", '["y"]', '"x"', '["\\udc80"]', '["a\\"b"]',
            '["a\\\\"]', '["x" ,"y"]', '[ ]'],
    "setlong": [LONG_SET, '["x"]', json.dumps(LONG_MEMBERS[3:5])],
    "other": ['{"a":1}', '"s"', '[1.5,2]', '{"srid":0,"wkb":"AAE="}', "5"],
}
KIND = {"i": "int", "u": "long", "t": "int", "y": "int", "b": "long", "bu": "decimal20",
        "bit": "int", "bit64": "decimal20", "d": "decimal", "d0": "decimal0", "dd": "decimal3",
        "dwide": "string", "f": "float", "g": "float", "dt": "date", "dtm": "datetime",
        "ts": "timestamp", "tm": "time", "vc": "string", "bl": "binary", "tx": "string",
        "en": "string", "en0": "int", "st": "set", "st0": "int", "stl": "setlong", "js": "other", "geo": "other",
        "vec": "other"}
# the forms the decoder writes (binlog_grammar.spark.typed.json_text): these must stay in Spark
WRITTEN = {"int": ["0", "-7"], "long": ["4294967295"], "decimal": ['"12.50"', "42"],
           "float": ["1.5", '"NaN"'], "date": ['"2024-01-05"', '"0000-00-00"'],
           "datetime": ['"2024-01-05T10:11:12.5"'], "timestamp": ['"1970-01-01T00:00:00Z"'],
           "time": ['"-01:02:03.500000"'], "binary": ['"AAEC"', LONG_BASE64],
           "string": ['"ünï ☃ 𝄞"', '""', LONG, '"\\\\"'], "set": ['["x","z"]', "[]", '["x","y","z"]'], "setlong": [LONG_SET],
           "other": [], "decimal3": ['"0.123"'], "decimal0": ["42"],
           "decimal20": ["18446744073709551615"]}
# texts a column cannot hold (the Python converter's value fails Spark's decimal): not exact here
OVERFLOW = [("d", '"123456789.00"'), ("d0", '"100000"'), ("dd", '"1.5"'), ("bu", "1" * 21)]


def _rows():
    """One row per (column, text): a map holding that column's text only, plus a NULL row and
    a row with every column's text the JSON null."""
    rows = [{}, {c["name"]: "null" for c in COLUMNS}]
    for c in COLUMNS:
        texts = TEXTS[KIND[c["name"]]] + (TEXTS["int"] if KIND[c["name"]] == "long" else [])
        rows += [{c["name"]: t} for t in texts]
    return rows + [{name: t} for name, t in OVERFLOW]


def _same(a, b) -> bool:
    if isinstance(a, float) and isinstance(b, float):
        return json.dumps(a) == json.dumps(b)  # NaN equals NaN, -0.0 is not 0.0
    if isinstance(a, list) and isinstance(b, list):
        return len(a) == len(b) and all(_same(x, y) for x, y in zip(a, b))
    return a == b


def test_expressions_equal_the_converters(spark):
    from pyspark.sql import functions as F
    from pyspark.sql import types as S

    from binlog_grammar.spark.typed import converter, struct_type, typed_from_texts
    from binlog_grammar.spark.typed_sql import typed_columns

    rows = _rows()
    fits = [r for r in rows if tuple(r.items()) not in {(o,) for o in OVERFLOW}]
    schema = struct_type(COLUMNS)
    df = spark.createDataFrame([(i, r) for i, r in enumerate(rows)],
                               "i int, row map<string,string>")
    values, exact = typed_columns(COLUMNS, F.col("row"))
    got = df.select("i", exact.alias("exact"), F.struct(*values).alias("v")).collect()
    # the converters' values, through the same Spark types (what the snapshot writes)
    convs = [(c["name"], converter(c)) for c in COLUMNS]
    want_df = spark.createDataFrame(
        [(i, tuple(typed_from_texts(r, convs)[c["name"]] for c in COLUMNS))
         for i, r in enumerate(rows) if r in fits],
        S.StructType([S.StructField("i", S.IntegerType()), S.StructField("v", schema)]),
        verifySchema=False)
    want = {r.i: r.v for r in want_df.collect()}
    assert [f.dataType for f in df.select(*values).schema.fields] == \
        [f.dataType for f in schema.fields]
    checked = 0
    for r in got:
        row = rows[r.i]
        (name, text), = row.items() if len(row) == 1 else ((None, None),)
        if text is not None and text in WRITTEN[KIND[name]]:
            assert r.exact, (name, text)
        if (name, text) in OVERFLOW:
            assert not r.exact, (name, text)
        if not r.exact:
            continue
        for c in COLUMNS:
            a, b = r.v[c["name"]], want[r.i][c["name"]]
            assert _same(a, b), (c["name"], row, a, b)
        checked += 1
    assert checked > len(rows) * 2 // 3, (checked, len(rows))
    # spot checks of values the edge texts are about
    by_text = {tuple(rows[r.i].items()): r for r in got}
    assert by_text[(("dt", '"0000-01-01"'),)].v.dt is None
    assert by_text[(("tm", '"-01:02:03.500000"'),)].v.tm == -dt.timedelta(hours=1, minutes=2,
                                                                            seconds=3.5)
    assert not by_text[(("vc", '"\\udc80"'),)].exact
    assert not by_text[(("js", '{"a":1}'),)].exact
    # a SET's members in definition order, as the server shows them; a member the definition
    # lacks is left to Python
    assert by_text[(("st", '["x","y","z"]'),)].v.st == ["z", "x", "y"]
    assert by_text[(("stl", LONG_SET),)].v.stl == LONG_MEMBERS[::-1]
    assert not by_text[(("stl", '["x"]'),)].exact


def test_definition_names_and_members_as_the_rows_give_them():
    """Names and ENUM/SET members whose bytes do not decode (surrogate escapes) written \\xNN
    in a column's description, as in the map form's keys and values, and a SET's typed members
    in definition order."""
    from construct import Container

    from binlog_grammar.spark.typed import column_def, converter, json_text

    raw = "s\udcff"
    c = Container(name="c\udcfe", type_name="SET", charset="latin1", meta=None,
                  set_values=["b", raw, "a"], enum_values=None)
    d = column_def(c)
    assert (d["name"], d["set_values"]) == ("c\\xfe", ["b", "s\\xff", "a"])
    json.dumps(d, ensure_ascii=False).encode("utf-8")  # UTF-8 throughout
    text = json_text(frozenset({raw, "a", "b"}))
    # (a typed string has U+FFFD for what did not decode: the module docstring of typed)
    assert converter(d)(json.loads(text)) == ["b", "s\ufffd", "a"]
    e = column_def(Container(name="e", type_name="ENUM", charset="latin1", meta=None,
                             enum_values=[raw], set_values=None))
    assert e["enum_values"] == ["s\\xff"] and json.loads(json_text(raw)) == "s\\xff"


def test_typed_snapshot_is_the_converters_values(spark, tmp_path):
    """The pipeline's typed snapshot of rows some of which only Python converts (a JSON document,
    a surrogate escape, ...): every row once, each with the converter's values."""
    from binlog_grammar.spark.snapshots import _typed_snapshot
    from binlog_grammar.spark.typed import converter, struct_type, typed_from_texts

    rows = [r for r in _rows() if tuple(r.items()) not in {(o,) for o in OVERFLOW}]
    df = spark.createDataFrame([(i, r) for i, r in enumerate(rows)],
                               "i int, row map<string,string>")
    _typed_snapshot(df, {"columns": COLUMNS}, str(tmp_path / "t"))
    got = spark.read.parquet(str(tmp_path / "t"))
    convs = [(c["name"], converter(c)) for c in COLUMNS]
    spark.createDataFrame([tuple(typed_from_texts(r, convs)[c["name"]] for c in COLUMNS)
                           for r in rows], struct_type(COLUMNS), verifySchema=False) \
        .write.parquet(str(tmp_path / "want"))
    want = spark.read.parquet(str(tmp_path / "want"))
    assert got.schema == want.schema

    def key(r):
        return json.dumps(r.asDict(recursive=True), sort_keys=True, default=repr)
    a, b = sorted(map(key, got.collect())), sorted(map(key, want.collect()))
    assert len(a) == len(rows) and a == b
