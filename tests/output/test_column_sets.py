"""The text/blob column classes are stated once, as sets of specs/types/column_classes.yaml that
dump's JSON, the text dump and the Spark rows read (design rule 11)."""
from pathlib import Path

from binlog_grammar.generated import enums
from binlog_grammar.generated.sets import SETS
from binlog_grammar.runtime.construct import set_members

ROOT = Path(__file__).resolve().parents[2]
CODE = {name: code for code, name in enums.COLUMN_TYPE.items()}


def test_the_sets_hold_the_columns_the_outputs_listed():
    assert set_members(SETS["string_columns"], None) == {CODE[n] for n in (
        "STRING", "VAR_STRING", "VARCHAR", "BLOB", "TINY_BLOB", "MEDIUM_BLOB", "LONG_BLOB",
        "VARCHAR_COMPRESSED", "BLOB_COMPRESSED")}
    assert set_members(SETS["blob_columns"], None) == {CODE[n] for n in (
        "BLOB", "TINY_BLOB", "MEDIUM_BLOB", "LONG_BLOB")}


def test_the_outputs_read_the_sets():
    from binlog_grammar.output import dump, text
    from binlog_grammar.spark import typed

    assert dump._TEXT_TYPES == set_members(SETS["string_columns"], None)
    assert text._BLOBS == set_members(SETS["blob_columns"], None)
    assert typed.STRING_TYPES == {enums.COLUMN_TYPE[c] for c in set_members(SETS["string_columns"], None)}
    for rel in ("binlog_grammar/output/dump.py", "binlog_grammar/output/text.py",
                "binlog_grammar/spark/typed.py"):
        assert '"TINY_BLOB"' not in (ROOT / rel).read_text(), f"{rel} lists the blob columns again"
