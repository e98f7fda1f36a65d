"""`dump --print-table-metadata`: the `# Columns(...)` and `# Primary Key(...)` lines mariadb-binlog
prints after each TABLE_MAP_EVENT, from the event's column types, its column metadata and its
optional metadata (names, signedness, character sets, ENUM/SET members, primary key).

mariadb-binlog's rules, kept as it has them so that the text is the same: a column's type name
comes from its type and metadata, walked in the order of the metadata bytes; a type it has no name
for is printed INVALID_TYPE(code) with its metadata left unread (so the next column reads it, and
no separator follows); UNSIGNED for a numeric column whose signedness bit is set; NOT NULL when the
null bitmap says so; the ENUM or SET members; CHARSET and COLLATE of a text, ENUM or SET column
whose collation it knows (not for binary), lengths of CHAR and VARCHAR in characters. Collations
only MySQL has (the utf8mb4_0900 family, 255 and up) are unknown to it: those columns print as
binary. The metadata bytes come from the spec's span of the field (runtime.spans), never from an
offset written here.
"""
from __future__ import annotations

from ..generated import enums
from ..runtime import construct as rt
from ..runtime import spans

_CODE = {name: code for code, name in enums.COLUMN_TYPE.items()}
_NUMERIC = {_CODE[n] for n in ("TINY", "SHORT", "INT24", "LONG", "LONGLONG", "NEWDECIMAL", "FLOAT",
                               "DOUBLE")}
_CHARACTER = {_CODE[n] for n in ("STRING", "VAR_STRING", "VARCHAR", "BLOB", "GEOMETRY")}
_ENUM_SET = {_CODE["ENUM"], _CODE["SET"]}
_FIXED = {"LONG": "INT", "TINY": "TINYINT", "SHORT": "SMALLINT", "INT24": "MEDIUMINT",
          "LONGLONG": "BIGINT", "NEWDATE": "DATE", "DATE": "DATE", "YEAR": "YEAR"}
_GEOMETRY = ("GEOMETRY", "POINT", "LINESTRING", "POLYGON", "MULTIPOINT", "MULTILINESTRING",
             "MULTIPOLYGON", "GEOMETRYCOLLECTION")
# the most bytes a character takes, by character set (facts of the server's character sets)
_MBMAXLEN = {"big5": 2, "ujis": 3, "sjis": 2, "euckr": 2, "gb2312": 2, "gbk": 2, "utf8mb3": 3,
             "ucs2": 2, "cp932": 2, "eucjpms": 3, "utf8mb4": 4, "utf16": 4, "utf16le": 4,
             "utf32": 4, "gb18030": 4}
_MYSQL_ONLY = {76, 248, 249, 250}  # ids below 255 that MariaDB does not have


def _charset(collation):
    """(charset name, collation name, mbmaxlen) of a collation id as mariadb-binlog's
    get_charset finds it, or None."""
    if collation is None:
        return None
    n = int(collation)
    name = enums.COLLATION.get(n)
    if name is None or n >= 255 and n < 1025 or n in _MYSQL_ONLY:
        return None
    cs = "binary" if name == "binary" else name.split("_", 1)[0]
    if name.endswith("_mariadb"):
        name = name[:-len("_mariadb")]
    return cs, name, _MBMAXLEN.get(cs, 1)


class _Charsets:
    """Charset_iterator: a default with exceptions by character column, else a list by column."""

    def __init__(self, default, columns):
        self.default, self.columns, self.i = default, columns, 0

    def next(self):
        i, self.i = self.i, self.i + 1
        if self.default is not None:
            coll = self.default.get("default_collation")
            for ex in self.default.get("exceptions") or ():
                idx, c = _pair(ex)
                if idx == i:
                    coll = c
            return _charset(coll)
        if i < len(self.columns):
            return _charset(self.columns[i])
        return None


def _pair(ex):
    if isinstance(ex, dict):
        vals = list(ex.values())
        return int(vals[0]), int(vals[1])
    return int(ex[0]), int(ex[1])


def _flat_bits(value) -> list:
    out = []
    for item in value or ():
        if isinstance(item, (list, tuple)):
            out.extend(bool(b) for b in item)
        else:
            out.append(bool(item))
    return out


def _optional(data) -> dict:
    return {str(m["id"]): m["value"] for m in data.get("optional_metadata") or ()}


def _metadata_bytes(ev, ctx) -> bytes:
    """The TABLE_MAP's column metadata block, where the spec's span says it is."""
    hl = int(ctx.get("header_len", 19))
    end = len(ev.raw) - (4 if ev.footer else 0)
    data = bytes(ev.raw[hl:end])
    _value, found = spans.record(rt.Sized(None, ev.type.struct), data, **ctx)
    for name, s in spans.flatten(found):
        if name == "column_info.metadata":
            return data[s.start:s.end]
    return b""


def _quoted(text: str, quote: str) -> str:
    out = []
    for ch in text:
        out.append({"\n": "\\n", "\r": "\\r", "\\": "\\\\", "\b": "\\b", "\t": "\\t",
                    "'": "\\'", "\0": "\\0"}.get(ch, ch))
    return quote + "".join(out) + quote


def _text(v) -> str:
    return v.decode("utf-8", "surrogateescape") if isinstance(v, (bytes, bytearray)) else str(v)


def _type_name(code, meta, at, cs, geometry):
    """get_type_name: (the type's name, the metadata position after it); "" for none."""
    name = enums.COLUMN_TYPE.get(code)
    if name in _FIXED:
        return _FIXED[name], at
    binary = cs is None or cs[0] == "binary"

    def byte(k):
        return meta[at + k] if at + k < len(meta) else 0

    if name == "NEWDECIMAL":
        return f"DECIMAL({byte(0)},{byte(1)})", at + 2
    if name in ("FLOAT", "DOUBLE"):
        return name, at + 1
    if name == "BIT":
        return f"BIT({byte(0) + byte(1) * 8})", at + 2
    if name in ("TIMESTAMP2", "DATETIME2", "TIME2"):
        base = name[:-1]
        return (f"{base}({byte(0)})" if byte(0) else base), at + 1
    if name in ("ENUM", "SET"):
        return name, at + 2
    if name == "BLOB":
        kind = "BLOB" if binary else "TEXT"
        size = byte(0)
        prefix = {1: "TINY", 2: "", 3: "MEDIUM", 4: "LONG"}.get(size)
        return (f"INVALID_{kind}({size})" if prefix is None else prefix + kind), at + 1
    if name in ("VARCHAR", "VAR_STRING"):
        n = byte(0) | byte(1) << 8
        return (f"VARBINARY({n})" if binary else f"VARCHAR({n // cs[2]})"), at + 2
    if name == "STRING":
        n = (((byte(0) & 0x30) ^ 0x30) << 4) | byte(1)
        return (f"BINARY({n})" if binary else f"CHAR({n // cs[2]})"), at + 2
    if name == "GEOMETRY":
        kind = _GEOMETRY[geometry] if geometry < len(_GEOMETRY) else \
            f"INVALID_GEOMETRY_TYPE({geometry})"
        return kind, at + 1
    return "", at


def metadata_lines(se, ctx) -> list:
    """The `# Columns(...)` line(s) and the `# Primary Key(...)` line of a TABLE_MAP StreamEvent."""
    ev = se.event if hasattr(se, "event") else se
    d = ev.data
    opt = _optional(d)
    meta = _metadata_bytes(ev, ctx)
    types = [int(t) for t in d["column_types"]]
    nulls = list(d["column_info"].get("null_bitmap") or [])
    signed = iter(_flat_bits(opt.get("signedness")))
    names = [_text(n) for n in opt.get("column_name") or ()]
    charsets = _Charsets(opt.get("default_charset"), list(opt.get("column_charset") or ()))
    es_charsets = _Charsets(opt.get("enum_and_set_default_charset"),
                            list(opt.get("enum_and_set_column_charset") or ()))
    enums_ = iter(opt.get("enum_str_value") or ())
    sets_ = iter(opt.get("set_str_value") or ())
    geometries = iter(opt.get("geometry_type") or ())
    out, at, name_i = "# Columns(", 0, 0
    for i, code in enumerate(types):
        real = code
        if code == _CODE["STRING"] and at < len(meta) and meta[at] in _ENUM_SET:
            real = meta[at]
        cs = charsets.next() if real in _CHARACTER else es_charsets.next() if real in _ENUM_SET \
            else None
        if name_i < len(names):
            out += _quoted(names[name_i], "`") + " "
            name_i += 1
        geometry = 0
        if real == _CODE["GEOMETRY"]:
            geometry = int(next(geometries, 0))
        text, at = _type_name(real, meta, at, cs, geometry)
        if not text:
            out += f"INVALID_TYPE({real})"
            continue
        out += text
        if real in _NUMERIC:
            bit = next(signed, None)
            if bit:
                out += " UNSIGNED"
        if i < len(nulls) and not nulls[i]:
            out += " NOT NULL"
        values = None
        if real == _CODE["ENUM"]:
            values = next(enums_, None)
        elif real == _CODE["SET"]:
            values = next(sets_, None)
        if values is not None:
            members = values.get("members") if isinstance(values, dict) else values
            out += "(" + ",".join(_quoted(_text(m), "'") for m in members) + ")"
        if cs is not None and (real in _ENUM_SET or cs[0] != "binary"):
            out += f" CHARSET {cs[0]} COLLATE {cs[1]}"
        if i != len(types) - 1:
            out += ",\n#         "
    lines = (out + ")").split("\n")
    keys = _primary_key(opt)
    if keys:
        lines.append("# Primary Key(" + ", ".join(
            (names[k] if k < len(names) else str(k)) + (f"({p})" if p else "")
            for k, p in keys) + ")")
    return lines


def _primary_key(opt) -> list:
    simple = opt.get("simple_primary_key")
    if simple:
        return [(int(k), 0) for k in simple]
    prefixed = opt.get("primary_key_with_prefix")
    out = []
    for item in prefixed or ():
        k, p = _pair(item)
        out.append((k, p))
    return out
