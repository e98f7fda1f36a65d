"""MySQL binary JSON (binlog_grammar.runtime.jsonb): byte vectors worked out by hand from the format in
sql-common/json_binary.h (and the one spelled out in json_binary.cc's update_in_shadow comment),
MySQL's serializer choices (small vs large format, inlining, integer widths), damaged documents,
hypothesis round trips, the text MySQL prints for a value, and partial-update diffs."""
import copy
import datetime as dt
import struct
from decimal import Decimal

import pytest
from construct import ConstructError, FixedSized, Int8ub, Int32ul, Prefixed, Struct
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from binlog_grammar.runtime.jsonb import (
    MAX_DEPTH, JsonBinary, JsonBinaryError, JsonOpaque, apply_json_diff, json_text, parse_json_path)

J = JsonBinary()
SETTINGS = settings(max_examples=300, deadline=None,
                    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])


def h(text):
    return bytes.fromhex(text)


def same(a, b):
    """Equal values of the same Python types all the way down (1, 1.0 and True differ)."""
    if type(a) is not type(b):
        return False
    if isinstance(a, dict):
        return list(a) == list(b) and all(same(a[k], b[k]) for k in a)
    if isinstance(a, list):
        return len(a) == len(b) and all(same(x, y) for x, y in zip(a, b))
    if isinstance(a, float):
        return struct.pack("<d", a) == struct.pack("<d", b)
    if isinstance(a, Decimal):
        return (a == b and a.as_tuple().exponent == b.as_tuple().exponent
                and (a == 0 or a.is_signed() == b.is_signed()))
    return a == b


def mysql_sorted(d):
    """A dict with its keys in MySQL's order (length, then bytes), as a parsed object has them."""
    return {k: d[k] for k in sorted(d, key=lambda k: (len(k.encode("utf-8", "surrogateescape")),
                                                      k.encode("utf-8", "surrogateescape")))}


# ---------------------------------------------------------------------------------------------
# hand-checked vectors

# json_binary.cc (Value::update_in_shadow) spells out ["abc", "def"]:
#   02 small array | 02 00 two elements | 12 00 18 bytes | 0C 0A 00 string at offset 10
#   | 0C 0E 00 string at offset 14 | 03 'abc' | 03 'def'
ABC_DEF = h("02 02 00 12 00 0C 0A 00 0C 0E 00 03 61 62 63 03 64 65 66")

# {"a": [1, true, null, "x"]}, derived from json_binary.h:
#   00 small object | 01 00 one member | 1E 00 30 bytes
#   | 0B 00 01 00 key at offset 11 (after 2+2 + 4 key entry + 3 value entry), 1 byte long
#   | 02 0C 00 small array at offset 12 | 61 'a'
#   array (18 bytes): 04 00 four elements | 12 00 18 bytes
#   | 05 01 00 int16 1 inlined | 04 01 00 true inlined | 04 00 00 null inlined
#   | 0C 10 00 string at offset 16 (2+2 + 4*3) | 01 78 "x"
A_ARRAY = h("00 01 00 1E 00 0B 00 01 00 02 0C 00 61"
            "04 00 12 00 05 01 00 04 01 00 04 00 00 0C 10 00 01 78")


def test_the_array_spelled_out_in_json_binary_cc():
    assert J.build(["abc", "def"]) == ABC_DEF
    assert same(J.parse(ABC_DEF), ["abc", "def"])


def test_object_with_nested_array():
    assert J.build({"a": [1, True, None, "x"]}) == A_ARRAY
    assert same(J.parse(A_ARRAY), {"a": [1, True, None, "x"]})


def test_values_are_read_by_offset_so_documents_updated_in_place_parse():
    # The same comment then updates the document in place: "XY" over "abc" (one free byte left),
    # "XYZW" moved back one byte to use it, then 456 inlined as an int16 leaving the string as an
    # unused hole. Each intermediate document is valid and is read through the offsets.
    assert same(J.parse(h("02 02 00 12 00 0C 0A 00 0C 0E 00 02 58 59 63 03 64 65 66")), ["XY", "def"])
    assert same(J.parse(h("02 02 00 12 00 0C 0A 00 0C 0D 00 02 58 59 04 58 59 5A 57")), ["XY", "XYZW"])
    assert same(J.parse(h("02 02 00 12 00 0C 0A 00 05 C8 01 02 58 59 04 58 59 5A 57")), ["XY", 456])


@pytest.mark.parametrize("value, data", [
    (None, "04 00"), (True, "04 01"), (False, "04 02"),
    (0, "05 00 00"), (32767, "05 FF 7F"), (-32768, "05 00 80"), (-1, "05 FF FF"),
    (32768, "07 00 80 00 00"), (-(2 ** 31), "07 00 00 00 80"),
    (2 ** 31, "09 00 00 00 80 00 00 00 00"),                   # past int32: int64
    (-(2 ** 63), "09 00 00 00 00 00 00 00 80"),
    (2 ** 63 - 1, "09 FF FF FF FF FF FF FF 7F"),
    (2 ** 63, "0A 00 00 00 00 00 00 00 80"),                   # uint64 only past int64
    (2 ** 64 - 1, "0A FF FF FF FF FF FF FF FF"),
    (1.5, "0B 00 00 00 00 00 00 F8 3F"),                       # float8store: IEEE, little-endian
    (-0.0, "0B 00 00 00 00 00 00 00 80"),
    ("", "0C 00"), ("x", "0C 01 78"), ("é", "0C 02 C3 A9"),
    ("x" * 128, "0C 80 01" + "78" * 128),                      # length 128 = 0x00 | 0x80, then 0x01
    ("\udcff\udcfe", "0C 02 FF FE"),                           # not UTF-8: kept by surrogateescape
    ([], "02 00 00 04 00"), ({}, "00 00 00 04 00"),
    # opaque values: 0F, field type, length, data
    (Decimal("1.50"), "0F F6 04 03 02 81 32"),                 # DECIMAL(3,2): 1 -> 01, 50 -> 32, top bit
    (Decimal("-0.5"), "0F F6 04 02 01 7F FA"),                 # DECIMAL(2,1): 00 05 inverted, top bit
    (dt.date(2020, 1, 2), "0F 0A 08 00 00 00 00 00 44 A5 19"),  # ((2020*13+1)<<5 | 2) << 17 << 24
    (dt.datetime(2020, 1, 2, 3, 4, 5, 6),                      # ... | (3<<12 | 4<<6 | 5) << 24 | 6
     "0F 0C 08 06 00 00 05 31 44 A5 19"),
    (-dt.timedelta(minutes=59, seconds=59),                    # -((59<<6 | 59) << 24)
     "0F 0B 08 00 00 00 05 F1 FF FF FF"),
    (dt.timedelta(hours=838, minutes=59, seconds=59),          # (838<<12 | 59<<6 | 59) << 24
     "0F 0B 08 00 00 00 FB 6E 34 00 00"),
    (JsonOpaque(15, b"abc"), "0F 0F 03 61 62 63"),
])
def test_scalars(value, data):
    assert J.build(value) == h(data)
    assert same(J.parse(h(data)), value)


def test_empty_document_is_null():
    assert J.parse(b"") is None


def test_opaque_values_that_are_not_python_values_stay_opaque():
    zero_date = h("0F 0A 08 00 00 00 00 00 00 00 00")
    assert J.parse(zero_date) == JsonOpaque(10, bytes(8))
    assert J.build(JsonOpaque(10, bytes(8))) == zero_date
    # a DATE with time bits, a TIME with minute 60, a DECIMAL whose size is wrong
    assert J.parse(h("0F 0A 08 00 00 00 05 31 44 A5 19")) == JsonOpaque(10, h("00 00 00 05 31 44 A5 19"))
    assert J.parse(h("0F 0B 08 00 00 00 00 0F 00 00 00")) == JsonOpaque(11, h("00 00 00 00 0F 00 00 00"))
    assert J.parse(h("0F F6 03 03 02 81")) == JsonOpaque(246, h("03 02 81"))
    # DECIMAL(66,0) is wider than any SQL DECIMAL (30 bytes of digits)
    wide = bytes([66, 0]) + h("80") + bytes(29)
    assert J.parse(h("0F F6 20") + wide) == JsonOpaque(246, wide)
    # TIMESTAMP (field type 7) packs like DATETIME
    assert same(J.parse(h("0F 07 08 06 00 00 05 31 44 A5 19")), dt.datetime(2020, 1, 2, 3, 4, 5, 6))


def test_keys_sorted_by_length_then_bytes():
    value = {"bb": 1, "é": 2, "ab": 3, "a": 4, "": 5}
    data = J.build(value)
    parsed = J.parse(data)
    assert list(parsed) == ["", "a", "ab", "bb", "é"]  # é is C3 A9, after "bb"
    assert same(parsed, mysql_sorted(value))


def test_int32_inlined_only_in_the_large_format():
    # small array: the int32 is stored after the entries (offset 7)
    assert J.build([70000]) == h("02 01 00 0B 00 07 07 00 70 11 01 00")
    # large array (a 65526-byte string does not fit 16-bit offsets): 70000 and -2 are inlined in
    # the 4-byte entries (-2 sign-extended), the string is at offset 8 + 3*5 = 23
    value = [70000, -2, "x" * 65526]
    data = J.build(value)
    assert data[:27] == h("03 03 00 00 00 10 00 01 00 07 70 11 01 00 05 FE FF FF FF 0C 17 00 00 00"
                          " F6 FF 03")  # size 23 + 3 + 65526 = 0x10010; length 65526 = F6 FF 03
    assert same(J.parse(data), value)


def test_small_format_exactly_while_everything_fits_16_bits():
    # [s]: 2+2 + 3 (entry) + 3 (length) + len(s) bytes; 65525 characters make exactly 0xFFFF
    data = J.build(["x" * 65525])
    assert data[:11] == h("02 01 00 FF FF 0C 07 00 F5 FF 03")
    data = J.build(["x" * 65526])
    assert data[:14] == h("03 01 00 00 00 06 00 01 00 0C 0D 00 00 00")


def test_a_large_child_makes_its_small_parent_large_but_not_its_siblings():
    data = J.build([["x" * 65526]])
    # outer: 13-byte header + inner; inner: 13-byte header + 3 + 65526 = 0x10006 bytes
    assert data[:14] == h("03 01 00 00 00 13 00 01 00 03 0D 00 00 00")
    assert data[14:23] == h("01 00 00 00 06 00 01 00 0C")
    value = ["x" * 65526, [1]]
    data = J.build(value)
    assert data[9:19] == h("0C 12 00 00 00 02 0B 00 01 00")  # string at 18; [1], small, at 18 + 65529
    assert data[-7:] == h("01 00 07 00 05 01 00")
    assert same(J.parse(data), value)


def test_inside_sized_regions():
    prefixed = Prefixed(Int32ul, J)
    assert prefixed.build({"a": [1, True, None, "x"]}) == len(A_ARRAY).to_bytes(4, "little") + A_ARRAY
    s = Struct("doc" / FixedSized(len(ABC_DEF), J), "after" / Int8ub)
    parsed = s.parse(ABC_DEF + b"\x07")
    assert same(parsed.doc, ["abc", "def"]) and parsed.after == 7
    assert s.build({"doc": ["abc", "def"], "after": 7}) == ABC_DEF + b"\x07"
    assert Prefixed(Int8ub, J).parse(b"\x00") is None


# ---------------------------------------------------------------------------------------------
# damaged documents and values that cannot be stored

def nested_arrays(depth):
    value = 1
    for _ in range(depth):
        value = [value]
    return value


def wrap_in_array(doc: bytes) -> bytes:
    """One more small array level around a document, by hand: 02, count 1, size, entry, value."""
    size = 2 + 2 + 3 + len(doc) - 1
    return bytes([0x02, 1, 0]) + size.to_bytes(2, "little") + bytes([doc[0], 7, 0]) + doc[1:]


@pytest.mark.parametrize("data, message", [
    (h("0D 00"), "unknown JSON value type 0x0D"),
    (h("04 03"), "unknown JSON literal 0x03"),
    (h("02 01 00 07 00 04 07 00"), "unknown JSON literal 0x07"),       # an inlined bad literal
    (h("02 02 00 13 00 0C 0A 00 0C 0E 00 03 61 62 63 03 64 65 66"), "claims 19 bytes, 18 left"),
    (h("02 02 00 12 00 0C 0A 00 0C 12 00 03 61 62 63 03 64 65 66"), "offset 18, outside"),  # past end
    (h("02 02 00 12 00 0C 0A 00 0C 05 00 03 61 62 63 03 64 65 66"), "offset 5, outside"),   # in header
    (h("02 09 00 12 00 0C 0A 00 0C 0E 00 03 61 62 63 03 64 65 66"), "claims 9 members"),    # count
    (h("02 FF FF 04 00"), "claims 65535 members"),
    (h("03 01 00 00 00"), "its header needs 8 bytes"),
    (h("0C 05 61"), "claims 5 bytes, 1 left"),
    (h("0C 80 80 80 80 80 00"), "bad or cut-short length"),             # longer than 5 bytes
    (h("0C FF FF FF FF 7F"), "bad or cut-short length"),                # more than 32 bits
    (h("05 01"), "int16 at byte 1 needs 2 bytes, 1 left"),
    (h("0F"), "opaque value at byte 1 is cut short"),
    (h("04 00 00"), "1 byte(s) after the end"),
    (h("00 02 00 14 00 12 00 01 00 13 00 01 00 05 01 00 05 02 00 61 61"), "key 'a' twice"),
    (h("00 01 00 0C 00 00 00 01 00 05 01 00 61"), "key 0 (1 bytes at offset 0)"),  # key in header
    (h("00 01 00 0C 00 0B 00 05 00 05 01 00 61"), "key 0 (5 bytes at offset 11)"),  # key past end
])
def test_damaged_documents_are_construct_errors(data, message):
    with pytest.raises(JsonBinaryError) as e:
        J.parse(data)
    assert message in str(e.value)
    assert isinstance(e.value, ConstructError)


def test_nesting_limit():
    doc = J.build(nested_arrays(MAX_DEPTH))
    assert same(J.parse(doc), nested_arrays(MAX_DEPTH))
    deeper = wrap_in_array(doc)
    assert deeper[:8] == h("02 01 00") + (len(doc) + 6).to_bytes(2, "little") + h("02 07 00")
    with pytest.raises(JsonBinaryError, match="nested deeper than 100"):
        J.parse(deeper)
    with pytest.raises(JsonBinaryError, match="nested deeper than 100"):
        J.build(nested_arrays(MAX_DEPTH + 1))
    cyclic = []
    cyclic.append(cyclic)
    with pytest.raises(JsonBinaryError):
        J.build(cyclic)


def test_every_truncation_is_an_error():
    for doc in (ABC_DEF, A_ARRAY, J.build({"k": [Decimal("1.5"), 2.5, "s" * 200, {"n": None}]})):
        for cut in range(1, len(doc)):
            with pytest.raises(JsonBinaryError):
                J.parse(doc[:cut])


@pytest.mark.parametrize("value, message", [
    (float("nan"), "finite doubles"), (float("inf"), "finite doubles"),
    (2 ** 64, "does not fit"), (-(2 ** 63) - 1, "does not fit"),
    ({1: 2}, "keys must be str"), ({"a": {3}}, "a set cannot be stored"),
    (b"raw", "a bytes cannot be stored"),
    (Decimal("1e-31"), "DECIMAL(32,31)"), (Decimal("NaN"), "cannot be stored"),
    (dt.timedelta(hours=839), "TIME range"),
    (dt.datetime(2020, 1, 1, tzinfo=dt.timezone.utc), "aware datetime"),
    ("\ud800", "cannot be stored as utf8mb4"),
    ({"é": 1, "\udcc3\udca9": 2}, "two keys are the same"),
    ({"k" * 65536: 1}, "keys are limited to 65535"),
    (JsonOpaque(256, b""), "not a byte"),
])
def test_values_that_cannot_be_stored(value, message):
    with pytest.raises(JsonBinaryError, match=message.replace("(", r"\(").replace(")", r"\)")):
        J.build(value)


# ---------------------------------------------------------------------------------------------
# round trips

@st.composite
def json_decimals(draw):
    scale = draw(st.integers(0, 30))
    digits = draw(st.integers(1, 65 - scale))
    n = draw(st.integers(-(10 ** digits - 1), 10 ** digits - 1))
    return Decimal((int(n < 0), tuple(int(c) for c in str(abs(n))), -scale))


TIME_MAX = dt.timedelta(hours=838, minutes=59, seconds=59)
SCALARS = st.one_of(
    st.none(), st.booleans(),
    st.integers(-(2 ** 15), 2 ** 15 - 1), st.integers(-(2 ** 31), 2 ** 31 - 1),
    st.integers(-(2 ** 63), 2 ** 63 - 1), st.integers(2 ** 63, 2 ** 64 - 1),
    st.floats(allow_nan=False, allow_infinity=False), st.text(max_size=12),
    json_decimals(), st.dates(), st.datetimes(), st.timedeltas(-TIME_MAX, TIME_MAX),
    st.builds(JsonOpaque, st.sampled_from([1, 15, 245, 252, 253, 254, 255]), st.binary(max_size=20)),
)
VALUES = st.recursive(SCALARS, lambda inner: st.one_of(
    st.lists(inner, max_size=5), st.dictionaries(st.text(max_size=6), inner, max_size=5)), max_leaves=25)
# a few strings long enough to push containers into the large format
BIG_LEAVES = st.booleans().flatmap(
    lambda big: st.integers(20000, 70000).map(lambda n: "y" * n) if big else SCALARS)
BIG_VALUES = st.recursive(BIG_LEAVES, lambda inner: st.one_of(
    st.lists(inner, min_size=1, max_size=4),
    st.dictionaries(st.text(max_size=3), inner, min_size=1, max_size=4)),
    max_leaves=8).filter(lambda v: isinstance(v, (list, dict)))


def canonical(value):
    """The value as parsing gives it back: objects in MySQL's key order."""
    if isinstance(value, dict):
        return mysql_sorted({k: canonical(v) for k, v in value.items()})
    if isinstance(value, list):
        return [canonical(v) for v in value]
    return value


@SETTINGS
@given(VALUES)
def test_roundtrip(value):
    data = J.build(value)
    parsed = J.parse(data)
    assert same(parsed, canonical(value))
    assert J.build(parsed) == data


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow,
                                                                 HealthCheck.data_too_large])
@given(BIG_VALUES)
def test_roundtrip_large_format(value):
    data = J.build(value)
    parsed = J.parse(data)
    assert same(parsed, canonical(value))
    assert J.build(parsed) == data


@SETTINGS
@given(VALUES, st.integers(0, 1 << 30), st.integers(1, 255))
def test_corrupted_bytes_parse_or_fail_cleanly(value, where, xor):
    data = bytearray(J.build(value))
    data[where % len(data)] ^= xor
    try:
        J.parse(bytes(data))
    except JsonBinaryError:
        pass


# ---------------------------------------------------------------------------------------------
# the text MySQL prints

@pytest.mark.parametrize("value, text", [
    ({"b": [1, 2], "a": 1}, '{"a": 1, "b": [1, 2]}'),
    ({"age": 24, "data": "xxxxxxxxxx", "name": "Joe"}, '{"age": 24, "data": "xxxxxxxxxx", "name": "Joe"}'),
    ([], "[]"), ({}, "{}"), (None, "null"), (True, "true"), (False, "false"),
    (-5, "-5"), (2 ** 64 - 1, "18446744073709551615"),
    ('a"b\\c/é\n\t\b\f\r\x01\x1f', r'"a\"b\\c/é\n\t\b\f\r\u0001\u001f"'),
    # doubles: my_gcvt with 34 characters; fixed format for decimal exponents -14..15, else 'e'
    (1.5, "1.5"), (1.0, "1.0"), (100.0, "100.0"), (0.0, "0.0"), (-0.0, "-0.0"),
    (1e100, "1e100"), (1e15, "1e15"), (1e14, "100000000000000.0"),
    (123456789012345.6, "123456789012345.6"), (1234567890123456.7, "1234567890123456.8"),
    (1.2345678901234568e17, "1.2345678901234568e17"),
    (0.1, "0.1"), (0.0001, "0.0001"), (1e-15, "0.000000000000001"), (1e-16, "1e-16"),
    (-2.5e-7, "-0.00000025"), (5e-324, "5e-324"), (1.7976931348623157e308, "1.7976931348623157e308"),
    (Decimal("1.50"), "1.50"), (Decimal("-0.5"), "-0.5"), (Decimal("1E+2"), "100"),
    (dt.datetime(2020, 1, 2, 3, 4, 5), '"2020-01-02 03:04:05.000000"'),
    (dt.date(2020, 1, 2), '"2020-01-02"'),
    (dt.timedelta(hours=3, minutes=4, seconds=5, microseconds=60), '"03:04:05.000060"'),
    (-dt.timedelta(minutes=59, seconds=59), '"-00:59:59.000000"'),
    (dt.timedelta(hours=838), '"838:00:00.000000"'),
    (JsonOpaque(15, b"abc"), '"base64:type15:YWJj"'),
    (JsonOpaque(253, b"text"), '"text"'),
])
def test_json_text(value, text):
    assert json_text(value) == text


def test_json_text_of_parsed_documents_and_long_opaque_data():
    assert json_text(J.parse(A_ARRAY)) == '{"a": [1, true, null, "x"]}'
    # base64_encode breaks its output every 76 characters; the newline is escaped in the string
    assert json_text(JsonOpaque(252, bytes(60))) == '"base64:type252:' + "A" * 76 + r"\n" + "A" * 4 + '"'
    for bad in ({1, 2}, {"\ud800": 1}, nested_arrays(MAX_DEPTH + 1)):
        with pytest.raises(ValueError):
            json_text(bad)


# ---------------------------------------------------------------------------------------------
# partial updates

@pytest.mark.parametrize("text, legs", [
    ("$", []), ("$.a", ["a"]), ("$[0]", [0]), ("$.a[2].b", ["a", 2, "b"]),
    ('$."b c"[10]', ["b c", 10]), ('$."a\\"b\\u00e9"', ['a"bé']), ("$.$x_1", ["$x_1"]),
    (" $ . a [ 3 ] ", ["a", 3]), ("$.é", ["é"]),
])
def test_parse_json_path(text, legs):
    assert parse_json_path(text) == legs


@pytest.mark.parametrize("text", ["", "a", "$.", "$[", "$[]", "$[-1]", "$[last]", "$[1 to 2]", "$.*",
                                  "$[*]", "$**.a", "$.a b", '$."open', "$.1a", "$a"])
def test_parse_json_path_rejects(text):
    with pytest.raises(ValueError):
        parse_json_path(text)


DOC = {"a": [1, 2, 3], "b": {"c": "x"}, "ee": None}


@pytest.mark.parametrize("op, path, value, result", [
    ("REPLACE", "$.a[1]", 20, {"a": [1, 20, 3], "b": {"c": "x"}, "ee": None}),
    ("REPLACE", "$.b", [True], {"a": [1, 2, 3], "b": [True], "ee": None}),
    ("REPLACE", "$.ee", 1.5, {"a": [1, 2, 3], "b": {"c": "x"}, "ee": 1.5}),
    ("INSERT", "$.a[0]", 0, {"a": [0, 1, 2, 3], "b": {"c": "x"}, "ee": None}),
    ("INSERT", "$.a[3]", 4, {"a": [1, 2, 3, 4], "b": {"c": "x"}, "ee": None}),
    ("INSERT", "$.a[99]", 4, {"a": [1, 2, 3, 4], "b": {"c": "x"}, "ee": None}),  # past the end: appended
    ("INSERT", "$.d", None, {"a": [1, 2, 3], "b": {"c": "x"}, "d": None, "ee": None}),
    ("INSERT", "$.b.a", 1, {"a": [1, 2, 3], "b": {"a": 1, "c": "x"}, "ee": None}),
    ("REMOVE", "$.a[0]", None, {"a": [2, 3], "b": {"c": "x"}, "ee": None}),
    ("REMOVE", "$.b.c", None, {"a": [1, 2, 3], "b": {}, "ee": None}),
    (1, ["a", 2], "new", {"a": [1, 2, "new", 3], "b": {"c": "x"}, "ee": None}),  # op 1 = INSERT, legs
])
def test_apply_json_diff(op, path, value, result):
    before = copy.deepcopy(DOC)
    after = apply_json_diff(DOC, op, path, value)
    assert same(after, result)
    assert same(DOC, before)  # the input is not changed


def test_inserted_members_take_their_place_in_key_order():
    after = apply_json_diff(DOC, "INSERT", "$.zz", 1)
    assert list(after) == ["a", "b", "ee", "zz"]  # "zz" sorts after "ee" (same length, bytes)
    assert list(apply_json_diff(DOC, "INSERT", "$.c", 1)) == ["a", "b", "c", "ee"]


@pytest.mark.parametrize("op, path", [
    ("REPLACE", "$.zz"), ("REPLACE", "$.a[3]"), ("REPLACE", "$.b[0]"),  # no auto-wrapping
    ("REPLACE", "$[0]"), ("REPLACE", "$.a.b"), ("REPLACE", "$.ee.f"),
    ("INSERT", "$.a"),                                                   # already there
    ("INSERT", "$.b[0]"), ("INSERT", "$.a.x"), ("INSERT", "$.ee[0]"), ("INSERT", "$.zz.y"),
    ("REMOVE", "$.zz"), ("REMOVE", "$.a[3]"), ("REMOVE", "$.ee[0]"), ("REMOVE", "$.a.x"),
    ("REPLACE", "$"), ("INSERT", "$"), ("REMOVE", "$"),                  # never the root
])
def test_apply_json_diff_errors_name_the_path(op, path):
    with pytest.raises(ValueError) as e:
        apply_json_diff(DOC, op, path, 1)
    assert path in str(e.value)


def test_apply_json_diff_to_no_document_or_an_unknown_operation():
    with pytest.raises(ValueError, match=r"\$\.a"):
        apply_json_diff(None, "REPLACE", "$.a", 1)
    with pytest.raises(ValueError, match="operation"):
        apply_json_diff(DOC, "UPSERT", "$.a", 1)
