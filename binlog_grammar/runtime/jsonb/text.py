"""The text MySQL shows for a JSON value (Json_wrapper::to_string, as SELECT prints a JSON
column): keys in MySQL's order, strings quoted and escaped, doubles as my_gcvt prints them.

doc-ref: sql-common/json_dom.cc (Json_wrapper::to_string, double_quote), strings/dtoa.cc
(my_gcvt), mysys/base64.cc (mysql-server; 5.7 has them under sql/).
"""
from __future__ import annotations

import base64
import datetime as _dt
import decimal as _pydecimal
import math

from .binary import FIELD_VAR_STRING, MAX_DEPTH, JsonBinaryError, JsonOpaque, key_order, to_utf8

__all__ = ["json_text", "quote"]


def quote(text: str) -> str:
    """A JSON string as MySQL writes it (json_dom.cc, double_quote / escape_character)."""
    out = ['"']
    for ch in text:
        code = ord(ch)
        if ch == '"' or ch == "\\":
            out.append("\\" + ch)
        elif code <= 0x1F:
            out.append({8: "\\b", 9: "\\t", 10: "\\n", 12: "\\f", 13: "\\r"}.get(code, f"\\u00{code:02x}"))
        else:
            out.append(ch)
    out.append('"')
    return "".join(out)


def _double_text(x: float) -> str:
    """A double as my_gcvt(x, MY_GCVT_ARG_DOUBLE, MY_GCVT_MAX_FIELD_WIDTH) prints it, with ".0"
    added when it shows neither a point nor an exponent (json_dom.cc, wrapper_to_string).

    The digits are the shortest that read back as x (dtoa mode 4 with 34 digits allowed, like
    repr); my_gcvt picks the fixed format for a decimal exponent from -14 to 15 and the 'e'
    format (no '+', no zero padding) otherwise."""
    sign = "-" if math.copysign(1.0, x) < 0 else ""
    if x == 0:
        body = "0"
    else:
        _s, digit_tuple, exponent = _pydecimal.Decimal(repr(abs(x))).as_tuple()
        digits = "".join(map(str, digit_tuple))
        decpt = len(digits) + exponent
        digits = digits.rstrip("0")
        n = len(digits)
        width = 34 - (1 if x < 0 else 0)  # DBL_DIG + 4 + MAX_DECPT_FOR_F_FORMAT, less the sign
        exp_len = 1 + (decpt >= 101 or decpt <= -99) + (decpt >= 11 or decpt <= -9)
        have_space = (n - decpt + 2 if decpt <= 0 else n + 1 if decpt < n else decpt) <= width
        force_e = decpt <= 0 and width <= 2 - decpt and width >= 3 + exp_len
        # MAX_DECPT_FOR_F_FORMAT is DBL_DIG (15): fixed format only for exponents -14..15
        f_keeps_most_digits = (decpt <= width and not force_e
                               and (decpt >= -1 or (decpt == -2 and (n > 1 or not force_e))))
        use_f = ((have_space or f_keeps_most_digits)
                 and (not have_space or (decpt >= -15 + 1 and (decpt <= 15 or n > decpt))))
        if use_f:
            if decpt <= 0:
                body = "0." + "0" * -decpt + digits
            elif decpt < n:
                body = digits[:decpt] + "." + digits[decpt:]
            else:
                body = digits + "0" * (decpt - n)
        else:
            e = decpt - 1
            mantissa = digits[0] + ("." + digits[1:] if n > 1 else "")
            body = f"{mantissa}e{'-' if e < 0 else ''}{abs(e)}"
    if "." not in body and "e" not in body:
        body += ".0"
    return sign + body


def _temporal_text(value) -> str:
    """my_TIME_to_str(t, 6): dates plain, times and datetimes with six fraction digits."""
    if isinstance(value, _dt.datetime):
        return (f"{value.year:04d}-{value.month:02d}-{value.day:02d} "
                f"{value.hour:02d}:{value.minute:02d}:{value.second:02d}.{value.microsecond:06d}")
    if isinstance(value, _dt.date):
        return f"{value.year:04d}-{value.month:02d}-{value.day:02d}"
    micros = value // _dt.timedelta(microseconds=1)
    seconds, frac = divmod(abs(micros), 1_000_000)
    return (f"{'-' if micros < 0 else ''}{seconds // 3600:02d}:{seconds // 60 % 60:02d}:"
            f"{seconds % 60:02d}.{frac:06d}")


def _base64_text(data: bytes) -> str:
    """mysys base64_encode: standard alphabet with padding, a newline after every 76 characters."""
    flat = base64.b64encode(data).decode("ascii")
    return "\n".join(flat[i:i + 76] for i in range(0, len(flat), 76))


def json_text(value) -> str:
    """The text MySQL shows for a JSON value (Json_wrapper::to_string, as SELECT prints a JSON
    column): ``{"a": 1, "b": [1, 2]}``, keys in MySQL's order, strings quoted and escaped, doubles
    as my_gcvt prints them (1.5, 1e100, 1.0), decimals in plain digits, temporal values quoted
    (datetimes with six fraction digits), other opaque values as "base64:typeN:<data>".
    ValueError for anything that is not a JSON value."""
    try:
        return _text(value, 0)
    except JsonBinaryError as e:  # a key that is not utf8mb4
        raise ValueError(str(e)) from None


def _text(value, depth: int) -> str:
    if isinstance(value, dict):
        if depth + 1 > MAX_DEPTH:
            raise ValueError(f"JSON value nested deeper than {MAX_DEPTH} levels")
        items = sorted(value.items(), key=lambda kv: key_order(to_utf8(kv[0], "key")))
        return "{" + ", ".join(f"{quote(k)}: {_text(v, depth + 1)}" for k, v in items) + "}"
    if isinstance(value, (list, tuple)):
        if depth + 1 > MAX_DEPTH:
            raise ValueError(f"JSON value nested deeper than {MAX_DEPTH} levels")
        return "[" + ", ".join(_text(v, depth + 1) for v in value) + "]"
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int):
        return str(value)
    if isinstance(value, float):
        return _double_text(value)
    if isinstance(value, str):
        return quote(value)
    if isinstance(value, _pydecimal.Decimal):
        return format(value, "f")
    if isinstance(value, (_dt.date, _dt.timedelta)):
        return quote(_temporal_text(value))
    if isinstance(value, JsonOpaque):
        data = bytes(value.data)
        if value.field_type == FIELD_VAR_STRING:  # printed as the string it holds
            return quote(data.decode("utf-8", "surrogateescape"))
        return quote(f"base64:type{value.field_type}:{_base64_text(data)}")
    raise ValueError(f"a {type(value).__name__} is not a JSON value")
