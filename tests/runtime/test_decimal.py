"""Packed binary DECIMAL (binlog_grammar.runtime.decimal) against the layout of MySQL's strings/decimal.cc
(decimal2bin / bin2decimal): byte vectors worked out by hand from that layout, then hypothesis
round trips over random precisions, scales and values."""
from decimal import Decimal

import pytest
from construct import ConstructError, Int8ub, StreamError, Struct, this
from hypothesis import given, settings
from hypothesis import strategies as st

from binlog_grammar.runtime.decimal import DecimalBin, DecimalBinError, decimal_size

SETTINGS = settings(max_examples=400, deadline=None)


@pytest.mark.parametrize("precision, scale, size", [
    (1, 0, 1), (2, 1, 2),       # one digit: one byte on each side of the point
    (5, 2, 3),                  # 3 integer digits -> 2 bytes, 2 fraction digits -> 1 byte
    (9, 0, 4), (9, 9, 4),       # one full group of nine digits: 4 bytes
    (10, 0, 5),                 # 1 leading digit (1 byte) + a full group (4)
    (14, 4, 7),                 # decimal.cc's example: 1 + 4 integer bytes, 2 fraction bytes
    (18, 9, 8),
    (65, 30, 30),               # 35 integer digits: 3*4 + 4 (8 digits); 30 fraction: 3*4 + 2 (3 digits)
])
def test_decimal_size(precision, scale, size):
    assert decimal_size(precision, scale) == size
    assert DecimalBin(precision, scale).sizeof() == size


def test_decimal_size_rejects_impossible_types():
    for p, s in [(0, 0), (5, 6), (5, -1)]:
        with pytest.raises(ValueError):
            decimal_size(p, s)


def test_the_example_in_decimal_cc():
    # decimal2bin's comment: 1234567890.1234 as DECIMAL(14,4) is 81 0D FB 38 D2 04 D2
    # (digit groups 1 | 234567890 | 1234 in 1, 4 and 2 bytes, top bit set), and the negative
    # number is every byte inverted: 7E F2 04 C7 2D FB 2D.
    d = DecimalBin(14, 4)
    assert d.build(Decimal("1234567890.1234")) == bytes.fromhex("81 0D FB 38 D2 04 D2")
    assert d.build(Decimal("-1234567890.1234")) == bytes.fromhex("7E F2 04 C7 2D FB 2D")
    assert str(d.parse(bytes.fromhex("81 0D FB 38 D2 04 D2"))) == "1234567890.1234"
    assert str(d.parse(bytes.fromhex("7E F2 04 C7 2D FB 2D"))) == "-1234567890.1234"


def test_parse_keeps_exactly_scale_fraction_digits():
    # DECIMAL(5,2) 1.5: integer group "001" in 2 bytes (00 01), fraction group "50" in 1 byte
    # (0x32), top bit flipped: 80 01 32.
    d = DecimalBin(5, 2)
    assert d.build(Decimal("1.5")) == bytes.fromhex("80 01 32")
    assert str(d.parse(bytes.fromhex("80 01 32"))) == "1.50"
    # -1.5: 00 01 32 inverted is FF FE CD, then the top bit flipped: 7F FE CD
    assert d.build(Decimal("-1.5")) == bytes.fromhex("7F FE CD")
    assert str(d.parse(bytes.fromhex("7F FE CD"))) == "-1.50"


def test_builds_from_int_and_str():
    d = DecimalBin(5, 2)
    assert d.build(12) == d.build(Decimal("12.00")) == d.build("12") == bytes.fromhex("80 0C 00")
    assert d.build("-999.99") == bytes.fromhex("7C 18 9C")  # 03E7 63 inverted = FC18 9C, flip top bit
    assert d.build(Decimal("1.500")) == bytes.fromhex("80 01 32")  # exact value, zeros past the scale
    assert d.build(Decimal("1E+2")) == bytes.fromhex("80 64 00")


def test_zero_is_always_written_positive():
    # string2decimal drops the sign of a zero, so MySQL writes -0.00 as 0.00: 80 00 00
    d = DecimalBin(5, 2)
    assert d.build(Decimal("0")) == bytes.fromhex("80 00 00")
    assert d.build(Decimal("-0.00")) == bytes.fromhex("80 00 00")
    assert str(d.parse(bytes.fromhex("80 00 00"))) == "0.00"


def test_negative_zero_bytes_read_like_bin2decimal():
    # Inverted zero bytes (never written by MySQL): bin2decimal keeps the sign when there are
    # fraction digits, and makes a plain zero when there are none.
    assert str(DecimalBin(5, 2).parse(bytes.fromhex("7F FF FF"))) == "-0.00"
    assert str(DecimalBin(3, 0).parse(bytes.fromhex("7F FF"))) == "0"


def test_precision_and_scale_from_the_context():
    s = Struct("precision" / Int8ub, "scale" / Int8ub,
               "value" / DecimalBin(this.precision, this.scale))
    data = bytes([14, 4]) + bytes.fromhex("81 0D FB 38 D2 04 D2")
    assert s.parse(data).value == Decimal("1234567890.1234")
    assert s.build({"precision": 14, "scale": 4, "value": Decimal("1234567890.1234")}) == data
    assert DecimalBin(this.p, this.s).sizeof(p=14, s=4) == 7


@pytest.mark.parametrize("value, what", [
    (Decimal("1000"), "more than 3 integer digit"),
    (Decimal("-1000.5"), "more than 3 integer digit"),
    (Decimal("1.234"), "more than 2 fraction digit"),
    ("abc", "not a number"),
    (Decimal("NaN"), "not a finite number"),
    (Decimal("-Infinity"), "not a finite number"),
    (1.5, "needs a Decimal, int or str"),
    (True, "needs a Decimal, int or str"),
])
def test_values_that_do_not_fit_are_errors_naming_the_type(value, what):
    with pytest.raises(DecimalBinError) as e:
        DecimalBin(5, 2).build(value)
    assert "DECIMAL(5,2)" in str(e.value) and what in str(e.value)


def test_bad_parameters_and_bad_bytes_are_construct_errors():
    with pytest.raises(DecimalBinError, match=r"DECIMAL\(3,4\)"):
        DecimalBin(3, 4).parse(b"\x80\x00\x00")
    with pytest.raises(DecimalBinError, match="precision"):
        DecimalBin(lambda ctx: 0, 0).parse(b"")
    # DECIMAL(9,0) holds one 4-byte group; 0x3B9ACA00 = 1000000000 has ten digits
    with pytest.raises(DecimalBinError, match="9-digit group holds 1000000000"):
        DecimalBin(9, 0).parse(bytes.fromhex("BB 9A CA 00"))
    # DECIMAL(3,0): a 2-byte leading group of 3 digits cannot hold 1000 (0x03E8)
    with pytest.raises(DecimalBinError, match="3-digit group holds 1000"):
        DecimalBin(3, 0).parse(bytes.fromhex("83 E8"))
    with pytest.raises(StreamError):
        DecimalBin(14, 4).parse(bytes.fromhex("81 0D FB"))
    assert issubclass(DecimalBinError, ConstructError)


@st.composite
def typed_decimals(draw, max_precision=80):
    precision = draw(st.integers(1, max_precision))
    scale = draw(st.integers(0, precision))
    n = draw(st.integers(-(10 ** precision - 1), 10 ** precision - 1))
    # exact: the tuple constructor never rounds (Decimal arithmetic would, past 28 digits)
    value = Decimal((int(n < 0), tuple(int(c) for c in str(abs(n))), -scale))
    return precision, scale, value


@SETTINGS
@given(typed_decimals())
def test_roundtrip(case):
    precision, scale, value = case
    d = DecimalBin(precision, scale)
    data = d.build(value)
    assert len(data) == decimal_size(precision, scale)
    parsed = d.parse(data)
    assert parsed == value
    assert parsed.as_tuple().exponent == -scale  # exactly `scale` fraction digits
    assert parsed.is_signed() == (value < 0)
    assert d.build(parsed) == data


@SETTINGS
@given(st.data())
def test_bytes_compare_like_the_numbers(data):
    # decimal2bin's promise: two values of one (precision, scale) compare with memcmp as numbers do
    precision, scale, a = data.draw(typed_decimals(max_precision=30))
    n = data.draw(st.integers(-(10 ** precision - 1), 10 ** precision - 1))
    b = Decimal((int(n < 0), tuple(int(c) for c in str(abs(n))), -scale))
    d = DecimalBin(precision, scale)
    assert (d.build(a) < d.build(b)) == (a < b)
    assert (d.build(a) == d.build(b)) == (a == b)


@SETTINGS
@given(st.integers(1, 40).flatmap(lambda p: st.tuples(st.just(p), st.integers(0, p))).flatmap(
    lambda ps: st.tuples(st.just(ps), st.binary(min_size=decimal_size(*ps), max_size=decimal_size(*ps)))))
def test_any_bytes_parse_or_fail_cleanly(case):
    (precision, scale), data = case
    d = DecimalBin(precision, scale)
    try:
        value = d.parse(data)
    except DecimalBinError:
        return
    if value != 0:
        assert d.build(value) == data  # every non-zero value MySQL can read rebuilds exactly
