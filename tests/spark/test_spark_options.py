"""The `binlog` data source's options, without Spark: a name it does not know is refused (naming
the close match and the valid ones), Spark's camelCase spellings are the same options, `mode`
maps onto skip_damaged as Spark's file sources mean it, and docs/spark.md lists every option
with its default (the table users read is the one the code checks against)."""
from __future__ import annotations

import re

import pytest

from binlog_grammar.spark.options import OPTIONS, ReadOptions
from binlog_grammar.spark.stream_options import StreamOptions

from helpers.paths import ROOT


def test_unknown_options_are_refused_with_the_close_match():
    with pytest.raises(ValueError, match=r"unknown option tabel \(did you mean table\?\); the "
                                         r"options are content, databases, .* verify_checksum"):
        ReadOptions({"path": "x", "tabel": "shop.items"})
    with pytest.raises(ValueError, match=r"unknown option ignorecorruptfiles; the options are"):
        ReadOptions({"path": "x", "ignoreCorruptFiles": "true"})  # a session setting, not one
    with pytest.raises(ValueError, match="option host is for a live server"):
        ReadOptions({"path": "x", "host": "db1"})
    with pytest.raises(ValueError, match=r"unknown option tabel \(did you mean table\?\)"):
        StreamOptions({"user": "repl", "password_env": "PW", "tabel": "shop.items"})
    s = StreamOptions({"user": "repl", "password_env": "PW", "tables": "shop.*", "port": "3307"})
    assert s.rows.tables == ["shop.*"] and s.port == 3307


def test_skip_damaged_and_mode():
    assert ReadOptions({"path": "x"}).skip_damaged is False
    for options, skip in (({"skip_damaged": "true"}, True), ({"skipdamaged": "yes"}, True),
                          ({"mode": "PERMISSIVE"}, True), ({"mode": "DropMalformed"}, True),
                          ({"mode": "FAILFAST"}, False),
                          ({"mode": "permissive", "skip_damaged": "true"}, True)):
        assert ReadOptions({"path": "x", **options}).skip_damaged is skip, options
    with pytest.raises(ValueError, match="mode FAILFAST and skip_damaged true disagree"):
        ReadOptions({"path": "x", "mode": "FAILFAST", "skip_damaged": "true"})
    with pytest.raises(ValueError, match="option mode: 'lenient' "):
        ReadOptions({"path": "x", "mode": "lenient"})
    with pytest.raises(ValueError, match="given twice"):
        ReadOptions({"path": "x", "imageformat": "json", "image_format": "map"})
    assert ReadOptions({"path": "x", "imageFormat": "JSON"}).image_format == "json"


def test_debezium_envelope_options():
    o = ReadOptions({"path": "x", "envelope": "Debezium",
                     "debezium.decimal.handling.mode": "string"})
    assert o.envelope == "debezium" and o.debezium == {"decimal.handling.mode": "string"}
    with pytest.raises(ValueError, match="debezium.decimal.handling.mode is for envelope debezium"):
        ReadOptions({"path": "x", "debezium.decimal.handling.mode": "string"})
    with pytest.raises(ValueError, match="option debezium.decimal.handling.mode='exact'"):
        ReadOptions({"path": "x", "envelope": "debezium", "debezium.decimal.handling.mode": "exact"})
    with pytest.raises(ValueError, match="not with table"):
        ReadOptions({"path": "x", "envelope": "debezium", "table": "shop.items"})


def test_docs_list_every_option_with_its_default():
    text = (ROOT / "docs" / "spark.md").read_text()
    table = text[text.index("| option | default | what |"):text.index("## Damaged input")]
    rows = re.findall(r"^\| (\w+) \|([^|]*)\|", table, re.M)[1:]  # below the header
    assert {name: default.strip() for name, default in rows} == OPTIONS
