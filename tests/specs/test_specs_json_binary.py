"""specs/types/json_binary.yaml against the code that reads and writes MySQL's binary JSON.

runtime/ may not import generated/, so binlog_grammar/runtime/jsonb/binary.py repeats the spec's
type codes and record sizes under the spec's names; these tests check that they are the spec's, and
that the containers the encoder writes parse with the spec's records (header, key entries, value
entries at the offsets the records give).
"""
import pytest

from binlog_grammar.generated import enums
from binlog_grammar.generated import types as T
from binlog_grammar.runtime.jsonb import binary as B
from binlog_grammar.runtime.jsonb import encode_json_binary

FORMS = [(B.SMALL, "small"), (B.LARGE, "large")]


def test_value_types_and_literals_are_the_specs():
    assert B.JSON_VALUE_TYPE == enums.JSON_VALUE_TYPE
    assert B.JSON_LITERAL == enums.JSON_LITERAL
    for table in (enums.JSON_VALUE_TYPE, enums.JSON_LITERAL):
        for code, name in table.items():
            assert getattr(B, name) == code, name


@pytest.mark.parametrize("form,which", FORMS)
def test_record_sizes_are_the_specs(form, which):
    header = getattr(T, f"json_{which}_header")
    key_entry = getattr(T, f"json_{which}_key_entry")
    value_entry = getattr(T, f"json_{which}_value_entry")
    assert header.sizeof() == form.header
    assert key_entry.sizeof() == form.key_entry
    assert value_entry.sizeof() == form.value_entry
    # every count, size and offset is `offset` bytes wide: limit fits, limit + 1 does not
    top = dict(element_count=form.limit, size=form.limit)
    assert header.parse(header.build(top)) == top
    with pytest.raises(Exception):
        header.build(dict(element_count=form.limit + 1, size=0))
    assert len(value_entry.build(dict(type=B.STRING, offset_or_inline=form.limit))) == form.value_entry
    with pytest.raises(Exception):
        value_entry.build(dict(type=B.STRING, offset_or_inline=form.limit + 1))
    entry = key_entry.parse(key_entry.build(dict(key_offset=form.limit, key_length=B.KEY_MAX)))
    assert (entry.key_offset, entry.key_length) == (form.limit, B.KEY_MAX)


def test_small_object_parses_with_the_spec_records():
    doc = encode_json_binary({"a": 1, "bb": [True, "x"], "c": 70000})
    assert doc[0] == B.SMALL_OBJECT
    header = T.json_small_header.parse(doc[1:])
    assert (header.element_count, header.size) == (3, len(doc) - 1)
    pos = 1 + T.json_small_header.sizeof()
    keys = T.json_small_key_entry[3].parse(doc[pos:])
    assert [doc[1 + k.key_offset:1 + k.key_offset + k.key_length] for k in keys] == [b"a", b"c", b"bb"]  # by length
    pos += 3 * T.json_small_key_entry.sizeof()
    values = T.json_small_value_entry[3].parse(doc[pos:])
    assert [v.type.name for v in values] == ["INT16", "INT32", "SMALL_ARRAY"]
    assert values[0].offset_or_inline == 1  # inlined
    assert int.from_bytes(doc[1 + values[1].offset_or_inline:][:4], "little") == 70000
    array_at = 1 + values[2].offset_or_inline
    array = T.json_small_header.parse(doc[array_at:])
    assert array.element_count == 2
    elements = T.json_small_value_entry[2].parse(doc[array_at + T.json_small_header.sizeof():])
    assert [e.type.name for e in elements] == ["LITERAL", "STRING"]
    assert enums.JSON_LITERAL[elements[0].offset_or_inline] == "TRUE_LITERAL"


def test_large_array_parses_with_the_spec_records():
    doc = encode_json_binary(["x" * 70000, 100000, None])
    assert doc[0] == B.LARGE_ARRAY
    header = T.json_large_header.parse(doc[1:])
    assert (header.element_count, header.size) == (3, len(doc) - 1)
    values = T.json_large_value_entry[3].parse(doc[1 + T.json_large_header.sizeof():])
    assert [v.type.name for v in values] == ["STRING", "INT32", "LITERAL"]
    assert values[1].offset_or_inline == 100000  # int32 is inlined in the large form
    assert enums.JSON_LITERAL[values[2].offset_or_inline] == "NULL_LITERAL"
    string_at = 1 + values[0].offset_or_inline
    assert doc[string_at:string_at + 3] == bytes([0x70 | 0x80, 0x22 | 0x80, 0x04])  # 70000
