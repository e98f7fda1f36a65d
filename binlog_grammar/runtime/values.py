"""Python values of column layouts: the adapters a spec names with `as:`.

A spec type with `as: NAME` parses into the Python value this module's adapter NAME makes from the
struct's fields (computed fields included), and builds from that Python value by giving the struct
back the fields it needs. The byte layout stays in the spec: an adapter only chooses the Python type,
and it never reads or writes bytes.

The mapping (also in README.md, "Column values"):

| adapter | fields it reads | Python value |
|---|---|---|
| year | year | int (0 for YEAR 0000) |
| date | year, month, day | datetime.date; str 'YYYY-MM-DD' when Python cannot hold it (zero date, zero month or day) |
| datetime | year .. second, microsecond | naive datetime.datetime; str 'YYYY-MM-DD hh:mm:ss[.f]' when invalid |
| timestamp | seconds, microsecond | datetime.datetime in UTC; the zero timestamp is str '0000-00-00 00:00:00[.0]' |
| time | negative, hour, minute, second, microsecond | datetime.timedelta; str '-hh:mm:ss[.f]' when minute or second > 59 |
| text | data | str in the column's character set; bytes for binary columns and unknown charsets (BINARY(n) padded back to n bytes with 0x00, as SELECT shows it) |
| enum | (the integer) | the member str when the members are known, else the 1-based index (0 is '') |
| set | (the integer) | frozenset of member str when the members are known, else the bitmask int |
| geometry | srid, wkb | Geometry(srid, wkb) |
| json | doc | the document: dict, list, str, int, float, bool, None, Decimal, date/time values |
| vector | dims | list of float |

`col` is the column being decoded (binlog_grammar.binlog.rows.Column): its charset, fractional-seconds
precision and ENUM/SET members come from the TABLE_MAP metadata or a user-supplied schema.
"""
from __future__ import annotations

import codecs
import datetime as _dt
import functools
import re
import zlib
from typing import NamedTuple

from .codecs import TooLong, decompress

UTC = _dt.timezone.utc


class Geometry(NamedTuple):
    """A spatial value: its SRID and its WKB bytes (MySQL's internal geometry format)."""

    srid: int
    wkb: bytes


def _latin1_gaps(err):
    """MySQL's latin1 is cp1252 whose five unassigned bytes (0x81 0x8D 0x8F 0x90 0x9D) stand for
    U+0081 ... (strings/ctype-latin1.cc); Python's cp1252 leaves them out."""
    if isinstance(err, UnicodeDecodeError):
        return "".join(chr(b) for b in err.object[err.start:err.end]), err.end
    chars = err.object[err.start:err.end]
    if all(ord(c) in (0x81, 0x8D, 0x8F, 0x90, 0x9D) for c in chars):
        return bytes(ord(c) for c in chars), err.end
    return codecs.lookup_error("surrogateescape")(err)


codecs.register_error("binlog_grammar_latin1", _latin1_gaps)


# Where MySQL's and MariaDB's own charset tables (strings/ctype-*.c) and Python's codec of the same
# name disagree on a character the server stores, the server's reading is the text: these are the
# differences a MariaDB 10.11 server shows when asked to convert every byte sequence of the
# charset to utf8mb4 (tests/binlog/test_differential.py found them).
_SINGLE_BYTE_FIXES = {  # charset: (Python codec, {byte: the server's character})
    "greek": ("iso8859-7", {0xA1: "\u02bd", 0xA2: "\u02bc"}),
    "hebrew": ("iso8859-8", {0xAF: "\u203e"}),
    "koi8u": ("koi8-u", {0x95: "\u2022"}),
    "cp866": ("cp866", {0xFC: "\u207f", 0xFD: "\u00b2"}),
    "tis620": ("tis-620", {0xFF: "\ufffd"}),
}


def _charmap_codec(name, base, fixes):
    table = []
    for b in range(256):
        try:
            table.append(bytes([b]).decode(base))
        except UnicodeDecodeError:
            table.append("\ufffe")  # undefined: the error handler decides
    for b, ch in fixes.items():
        table[b] = ch
    decoding = "".join(table)
    encoding = codecs.charmap_build(decoding)
    return codecs.CodecInfo(name=name,
                            encode=lambda text, errors="strict": codecs.charmap_encode(text, errors, encoding),
                            decode=lambda data, errors="strict": codecs.charmap_decode(data, errors, decoding))




def _sjis_codec():
    """MySQL's sjis reads 0x815F as U+005C (Python: U+FF3C FULLWIDTH REVERSE SOLIDUS), and writes
    U+005C as 0x815F (0x5C reads as U+005C too, but the server never writes it for one)."""
    def decode(data, errors="strict"):
        text, n = codecs.lookup("shift_jis").decode(data, errors)
        return text.replace("\uff3c", "\\"), n

    def encode(text, errors="strict"):
        data, _ = codecs.lookup("shift_jis").encode(text.replace("\\", "\uff3c"), errors)
        return data, len(text)

    return codecs.CodecInfo(name="mysql_sjis", encode=encode, decode=decode)


def _mysql_codec(name):
    """The codecs above, each made when a charset first asks for it (building the five tables took
    a few ms of every start); Python's codec registry keeps what this returns."""
    if name == "mysql_sjis":
        return _sjis_codec()
    if name.startswith("mysql_") and name[6:] in _SINGLE_BYTE_FIXES:
        base, fixes = _SINGLE_BYTE_FIXES[name[6:]]
        return _charmap_codec(name, base, fixes)
    return None


codecs.register(_mysql_codec)

# Big5: MySQL reads seven ETEN extension codes Python's big5 leaves undefined.
_BIG5_EXTRA = {b"\xf9\xd6": "\u7881", b"\xf9\xd7": "\u92b9", b"\xf9\xd8": "\u88cf",
               b"\xf9\xd9": "\u58bb", b"\xf9\xda": "\u6052", b"\xf9\xdb": "\u7ca7",
               b"\xf9\xdc": "\u5afa"}
_BIG5_EXTRA_BYTES = {ch: b for b, ch in _BIG5_EXTRA.items()}


def _big5_extra(err):
    if isinstance(err, UnicodeDecodeError):
        ch = _BIG5_EXTRA.get(bytes(err.object[err.start:err.start + 2]))
        if ch is not None:
            return ch, err.start + 2
    else:
        chars = err.object[err.start:err.end]
        if all(c in _BIG5_EXTRA_BYTES for c in chars):
            return b"".join(_BIG5_EXTRA_BYTES[c] for c in chars), err.end
    return codecs.lookup_error("surrogateescape")(err)


def _eucjp_user_defined(err):
    """EUC-JP's user-defined area (rows 0xF5-0xFE, also after 0x8F) is the Private Use Area in
    MySQL's ujis (U+E000 ..., U+E3AC ... after 0x8F); Python's euc-jp leaves it undefined."""
    if isinstance(err, UnicodeDecodeError):
        data, i = err.object, err.start
        if 0xF5 <= data[i] <= 0xFE and i + 1 < len(data) and 0xA1 <= data[i + 1] <= 0xFE:
            return chr(0xE000 + (data[i] - 0xF5) * 94 + data[i + 1] - 0xA1), i + 2
        if (data[i] == 0x8F and i + 2 < len(data) and 0xF5 <= data[i + 1] <= 0xFE
                and 0xA1 <= data[i + 2] <= 0xFE):
            return chr(0xE3AC + (data[i + 1] - 0xF5) * 94 + data[i + 2] - 0xA1), i + 3
    else:
        out = bytearray()
        for c in err.object[err.start:err.end]:
            n = ord(c) - 0xE000
            if 0 <= n < 940:
                out += bytes([0xF5 + n // 94, 0xA1 + n % 94])
            elif 940 <= n < 1880:
                out += bytes([0x8F, 0xF5 + (n - 940) // 94, 0xA1 + (n - 940) % 94])
            else:
                return codecs.lookup_error("surrogateescape")(err)
        return bytes(out), err.end
    return codecs.lookup_error("surrogateescape")(err)


codecs.register_error("binlog_grammar_big5", _big5_extra)
codecs.register_error("binlog_grammar_eucjp", _eucjp_user_defined)

# MySQL character set name -> Python codec. Names not here decode to bytes. Known differences left:
# eucjpms follows cp932's NEC and IBM rows (174 codes differ from euc-jp), big5's 0xA2CE is U+FFFD.
CHARSET_CODECS = {
    "utf8mb4": "utf-8", "utf8mb3": "utf-8", "utf8": "utf-8", "latin1": "cp1252",
    "ascii": "ascii", "latin2": "iso8859-2", "latin5": "iso8859-9", "latin7": "iso8859-13",
    "greek": "mysql_greek", "hebrew": "mysql_hebrew", "cp1250": "cp1250", "cp1251": "cp1251",
    "cp1256": "cp1256", "cp1257": "cp1257", "cp850": "cp850", "cp852": "cp852",
    "cp866": "mysql_cp866", "koi8r": "koi8-r", "koi8u": "mysql_koi8u", "sjis": "mysql_sjis",
    "cp932": "cp932", "ujis": "euc-jp", "eucjpms": "euc-jp", "gbk": "gbk", "gb2312": "gb2312",
    "gb18030": "gb18030", "big5": "big5",
    "euckr": "cp949",  # MySQL's euckr includes the UHC (cp949) extension of EUC-KR
    "tis620": "mysql_tis620", "macroman": "mac-roman", "macce": "mac-latin2",
    "ucs2": "utf-16-be", "utf16": "utf-16-be", "utf16le": "utf-16-le", "utf32": "utf-32-be",
}
_ERRORS = {"cp1252": "binlog_grammar_latin1", "big5": "binlog_grammar_big5",
           "euc-jp": "binlog_grammar_eucjp",
           # ucs2 holds lone surrogates (0xD800-0xDFFF): kept as those code points
           "utf-16-be": "surrogatepass", "utf-16-le": "surrogatepass"}

# Codecs that read two byte sequences as one character, as the server does (sjis 0x5C and 0x815F
# are both U+005C; cp932's NEC and IBM duplicates; euc-jp's 0x8FA2B7 is U+007E; big5's 0xA1FE and
# 0xA241): the text alone does not say which bytes were logged (the charset sweep,
# tools/charset_sweep.py, found them). Their values are LoggedText when encoding would not give
# the logged bytes back.
_NOT_INJECTIVE = frozenset({"mysql_sjis", "cp932", "euc-jp", "big5"})


class LoggedText(str):
    """A column's text that keeps the bytes it was decoded from, because its codec would encode
    it into other bytes: `encode` in that codec gives the logged bytes (so a rebuilt event and a
    replay's `_charset X'..'` store exactly what was logged); any other use is the str's."""

    def __new__(cls, text: str, logged: bytes, codec: str):
        self = super().__new__(cls, text)
        self.logged, self.codec = logged, codec
        return self

    def encode(self, encoding="utf-8", errors="strict"):
        if codecs.lookup(encoding).name == codecs.lookup(self.codec).name:
            return self.logged
        return str.encode(self, encoding, errors)

    def __reduce__(self):
        return (LoggedText, (str(self), self.logged, self.codec))


@functools.lru_cache(maxsize=None)
def _ascii_not_kept(codec: str) -> tuple:
    """The ASCII bytes that `codec` does not encode back from their character."""
    return tuple(b for b in (bytes([i]) for i in range(128)) if b.decode(codec).encode(codec) != b)


def _decode_keeping(data, codec: str, errors: str) -> str:
    data = bytes(data)
    text = data.decode(codec, errors)
    try:
        same = text.encode(codec, errors) == data
    except UnicodeError:
        same = False
    return text if same else LoggedText(text, data, codec)


def errors_of(codec) -> str:
    """The error handler that keeps every byte: MySQL's latin1 gaps, Big5's ETEN extension codes
    and EUC-JP's user-defined area as MySQL reads them, else surrogateescape."""
    return _ERRORS.get(codec, "surrogateescape")


@functools.lru_cache(maxsize=None)
def _ascii_compatible(codec: str) -> bool:
    """Do ASCII bytes decode to the same characters in this codec, whatever surrounds them?
    (Not for UTF-16/32, nor for escape-sequence codecs such as ISO-2022.)"""
    name = codecs.lookup(codec).name
    if "2022" in name or name in ("utf-7", "utf_7"):
        return False
    try:
        return bytes(range(128)).decode(codec) == "".join(map(chr, range(128)))
    except UnicodeDecodeError:
        return False


def codec_of(col):
    """Python codec of a column, or None when its values are bytes (binary or unknown charset)."""
    cs = col.get("charset") if col is not None else None
    return CHARSET_CODECS.get(cs) if cs else None


def _fsp(col) -> int:
    return int(col.get("fsp") or 0) if col is not None else 0


def _frac_text(us: int, fsp: int) -> str:
    return "" if fsp <= 0 else "." + f"{us:06d}"[:fsp]


_DATE_RE = re.compile(r"^(\d{4})-(\d{2})-(\d{2})$")
_DT_RE = re.compile(r"^(\d{4})-(\d{2})-(\d{2}) (\d{2}):(\d{2}):(\d{2})(?:\.(\d{1,6}))?$")
_TIME_RE = re.compile(r"^(-?)(\d{2,4}):(\d{2}):(\d{2})(?:\.(\d{1,6}))?$")


def _us(text) -> int:
    return int((text or "").ljust(6, "0")) if text else 0


class _Adapter:
    name = ""

    def decode(self, obj, col):
        raise NotImplementedError

    def encode(self, value, col):
        raise NotImplementedError

    def bind(self, col):
        """decode() for one column: a function of the fields alone (readers specialised for a
        table call it for every row)."""
        return lambda obj: self.decode(obj, col)

    def _bad(self, value):
        raise ValueError(f"{self.name}: cannot store {value!r} ({type(value).__name__})")


class Year(_Adapter):
    name = "year"

    def decode(self, obj, col):
        return obj["year"]

    def encode(self, value, col):
        if not isinstance(value, int):
            self._bad(value)
        return {"year": value}


class Date(_Adapter):
    name = "date"

    def decode(self, obj, col):
        y, m, d = obj["year"], obj["month"], obj["day"]
        try:
            return _dt.date(y, m, d)
        except ValueError:
            return f"{y:04d}-{m:02d}-{d:02d}"

    def encode(self, value, col):
        if isinstance(value, _dt.datetime):
            self._bad(value)
        if isinstance(value, _dt.date):
            return {"year": value.year, "month": value.month, "day": value.day}
        m = _DATE_RE.match(value) if isinstance(value, str) else None
        if not m:
            self._bad(value)
        return {"year": int(m[1]), "month": int(m[2]), "day": int(m[3])}


class DateTime(_Adapter):
    name = "datetime"

    def decode(self, obj, col):
        parts = [obj[k] for k in ("year", "month", "day", "hour", "minute", "second", "microsecond")]
        try:
            return _dt.datetime(*parts)
        except (ValueError, OverflowError):  # OverflowError: a part past a C long (hostile metadata)
            y, mo, d, h, mi, s, us = parts
            return f"{y:04d}-{mo:02d}-{d:02d} {h:02d}:{mi:02d}:{s:02d}{_frac_text(us, _fsp(col))}"

    def encode(self, value, col):
        if isinstance(value, _dt.datetime):
            if value.tzinfo is not None:
                self._bad(value)
            return {k: getattr(value, k) for k in
                    ("year", "month", "day", "hour", "minute", "second", "microsecond")}
        m = _DT_RE.match(value) if isinstance(value, str) else None
        if not m:
            self._bad(value)
        return {"year": int(m[1]), "month": int(m[2]), "day": int(m[3]), "hour": int(m[4]),
                "minute": int(m[5]), "second": int(m[6]), "microsecond": _us(m[7])}


class Timestamp(_Adapter):
    name = "timestamp"

    def decode(self, obj, col):
        s, us = obj["seconds"], obj["microsecond"]
        if s == 0 and us == 0:
            return "0000-00-00 00:00:00" + _frac_text(0, _fsp(col))
        return _dt.datetime.fromtimestamp(s, UTC).replace(microsecond=us)

    def encode(self, value, col):
        if isinstance(value, str) and value.startswith("0000-00-00 00:00:00"):
            return {"seconds": 0, "microsecond": 0}
        if not isinstance(value, _dt.datetime) or value.tzinfo is None:
            self._bad(value)
        whole = value.replace(microsecond=0)
        seconds = int((whole - _dt.datetime(1970, 1, 1, tzinfo=UTC)).total_seconds())
        return {"seconds": seconds, "microsecond": value.microsecond}


class Time(_Adapter):
    name = "time"

    def decode(self, obj, col):
        neg, h, m, s, us = (obj[k] for k in ("negative", "hour", "minute", "second", "microsecond"))
        if m > 59 or s > 59:
            return f"{'-' if neg else ''}{h:02d}:{m:02d}:{s:02d}{_frac_text(us, max(_fsp(col), 0))}"
        td = _dt.timedelta(hours=h, minutes=m, seconds=s, microseconds=us)
        return -td if neg else td

    def encode(self, value, col):
        if isinstance(value, _dt.timedelta):
            neg = value < _dt.timedelta(0)
            mag = -value if neg else value
            total_us = (mag.days * 86400 + mag.seconds) * 1_000_000 + mag.microseconds
            secs, us = divmod(total_us, 1_000_000)
            return {"negative": neg, "hour": secs // 3600, "minute": secs // 60 % 60,
                    "second": secs % 60, "microsecond": us}
        m = _TIME_RE.match(value) if isinstance(value, str) else None
        if not m:
            self._bad(value)
        return {"negative": m[1] == "-", "hour": int(m[2]), "minute": int(m[3]),
                "second": int(m[4]), "microsecond": _us(m[5])}


def binary_char_length(col):
    """BINARY(n): the server logs the value without its trailing 0x00 pad; n is its full length."""
    if col is None or col.get("type_name") != "STRING" or col.get("charset") != "binary":
        return None
    meta = col.get("meta")
    return int(meta["max_length"]) if meta is not None else None


class Text(_Adapter):
    name = "text"

    def bind(self, col):
        codec = codec_of(col)
        if codec is None and binary_char_length(col) is None:
            return lambda obj: bytes(obj["data"])
        if codec is not None:
            errors = errors_of(codec)
            if codec in _NOT_INJECTIVE:
                unkept = _ascii_not_kept(codec)  # sjis: 0x5C, which encodes as 0x815F
                return lambda obj: (d.decode("ascii") if (d := obj["data"]).isascii()
                                    and not any(b in d for b in unkept)
                                    else _decode_keeping(d, codec, errors))
            if _ascii_compatible(codec):
                # most text is ASCII: that decodes in C whatever the column's charset
                return lambda obj: (d.decode("ascii") if (d := obj["data"]).isascii()
                                    else d.decode(codec, errors))
            return lambda obj: obj["data"].decode(codec, errors)
        return super().bind(col)

    def decode(self, obj, col):
        data = obj["data"]
        codec = codec_of(col)
        if codec is None:
            pad_to = binary_char_length(col)
            if pad_to is not None and len(data) < pad_to:
                return bytes(data) + b"\0" * (pad_to - len(data))
            return bytes(data)
        if codec in _NOT_INJECTIVE:
            return _decode_keeping(data, codec, errors_of(codec))
        return bytes(data).decode(codec, errors_of(codec))

    def encode(self, value, col):
        if isinstance(value, str):
            codec = codec_of(col) or "utf-8"
            return {"data": value.encode(codec, errors_of(codec))}
        if isinstance(value, (bytes, bytearray)):
            if binary_char_length(col) is not None:
                value = bytes(value).rstrip(b"\0")
            return {"data": bytes(value)}
        self._bad(value)


class CompressedText(_Adapter):
    """MariaDB's compressed columns: the stored value, inflated, then as `text`.

    Builds store the value uncompressed (header 0), which MariaDB reads back the same; a value the
    server compressed therefore round-trips as a value, not byte for byte.
    """

    name = "compressed_text"
    MAX = 1 << 32

    def decode(self, obj, col):
        stored = obj["stored"]
        header, data = stored["header"], bytes(stored["data"])
        if header:
            data = _inflate(data, raw=bool(header & 8), expected=stored["original_length"])
        return Text().decode({"data": data}, col)

    def encode(self, value, col):
        data = Text().encode(value, col)["data"]
        if not data:
            return {"stored": {"header": None, "original_length": None, "data": b""}}
        return {"stored": {"header": 0, "original_length": None, "data": data}}


def _inflate(data: bytes, raw: bool, expected: int) -> bytes:
    """The column value `data` inflates to (raw deflate or zlib), which must be `expected` bytes."""
    try:
        out = decompress("deflate" if raw else "zlib", data, limit=expected)
        got = len(out)
    except TooLong:
        got = expected + 1  # inflating stops one byte past what the header says
    except zlib.error as e:
        raise ValueError(f"compressed column value: {e}") from None
    if got != expected:
        raise ValueError(f"compressed column value inflates to {got} bytes, header says {expected}")
    return out


class Enum(_Adapter):
    name = "enum"

    def decode(self, obj, col):
        members = col.get("enum_values") if col is not None else None
        if members is None:
            return obj
        if obj == 0:
            return ""
        if obj <= len(members):
            return members[obj - 1]
        return obj

    def encode(self, value, col):
        if isinstance(value, int):
            return value
        members = col.get("enum_values") if col is not None else None
        if value == "":
            return 0
        if members is None or value not in members:
            raise ValueError(f"enum: {value!r} is not a member of {members!r}")
        return members.index(value) + 1


class Set(_Adapter):
    name = "set"

    def decode(self, obj, col):
        members = col.get("set_values") if col is not None else None
        if members is None or obj >> len(members):
            return obj
        return frozenset(m for i, m in enumerate(members) if obj >> i & 1)

    def encode(self, value, col):
        if isinstance(value, int):
            return value
        members = col.get("set_values") if col is not None else None
        if members is None or not set(value) <= set(members):
            raise ValueError(f"set: {sorted(value)!r} are not all members of {members!r}")
        return sum(1 << members.index(m) for m in value)


class GeometryValue(_Adapter):
    name = "geometry"

    def decode(self, obj, col):
        return Geometry(obj["srid"], bytes(obj["wkb"]))

    def encode(self, value, col):
        if not isinstance(value, Geometry):
            self._bad(value)
        return {"srid": value.srid, "wkb": value.wkb}


class Json(_Adapter):
    name = "json"

    def decode(self, obj, col):
        return obj["doc"]

    def encode(self, value, col):
        return {"doc": value}


class Vector(_Adapter):
    name = "vector"

    def decode(self, obj, col):
        return list(obj["dims"])

    def encode(self, value, col):
        return {"dims": list(value)}


ADAPTERS = {a.name: a for a in (Year(), Date(), DateTime(), Timestamp(), Time(), Text(),
                                 CompressedText(), Enum(), Set(), GeometryValue(), Json(), Vector())}
