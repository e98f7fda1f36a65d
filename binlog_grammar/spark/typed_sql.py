"""The typed form of a map-form row (binlog_grammar.spark.typed) as Spark SQL expressions, so the
pipeline's typed snapshots are made in Spark's engine, not a value at a time in Python.

typed.converter is the definition; each expression here gives its value for the texts it accepts
and says so: `column(d, text)` returns (value, exact), `exact` true when the text is NULL or has a
form the expression converts exactly as the converter does (an integer literal, a quoted decimal
that fits the column, a quoted ISO date with a year from 1, base64 in its strict form, ...). A row
with a text that is not exact (a JSON, GEOMETRY or VECTOR column, a surrogate escape, a date-time
with an hour of 24, anything the decoder does not write) is left to the converter in Python:
binlog_grammar.spark.snapshots unions the two. tests/spark/test_spark_typed_sql.py checks both on
every column kind with edge texts.
"""
from __future__ import annotations

from .typed import set_order, spark_type

INT = r"^-?[0-9]+$"
NUMBER = r"^-?(0|[1-9][0-9]*)(\.[0-9]+)?([eE][+-]?[0-9]+)?$"
# Java's regular expressions match a repeated group by recursion, a stack frame or more per
# repetition: a JSON string matched as ("([^"\\]|\\.)*") overflows the executor thread's stack
# after a few thousand characters, and a StackOverflowError ends a local Spark's JVM. So each escape
# pair (a backslash and the character after it, paired from the left as JSON pairs them) is first
# replaced by one plain character (ESCAPE, a search: no recursion), and what is left is matched
# with single-character classes only (repeated without recursion); a backslash outside a string
# becomes that character too, which no pattern accepts there.
ESCAPE = r"(?s)\\."
QUOTED = r'^"[^"\\]*"$'  # after escapes are replaced
SURROGATE = r"\\u[dD][89a-fA-F]"  # an escaped UTF-16 surrogate: Python writes U+FFFD for lone ones
STRINGS = r'^\[("[^"\\]*"(,"[^"\\]*")*)?\]$'  # after escapes are replaced; a group per member
BASE64 = r'^"([A-Za-z0-9+/]{4})*([A-Za-z0-9+/]{2}==|[A-Za-z0-9+/]{3}=)?"$'
DATE = r'^"[0-9]{4}-[0-9]{2}-[0-9]{2}"$'
CLOCK = r"([01][0-9]|2[0-3]):[0-5][0-9]:[0-5][0-9](\.[0-9]{1,6})?"
DATETIME = r'^"[0-9]{4}-[0-9]{2}-[0-9]{2}T' + CLOCK + '"$'
TIMESTAMP = r'^"[0-9]{4}-[0-9]{2}-[0-9]{2}T' + CLOCK + 'Z"$'
TIME = r'^"(-?)([0-9]{1,4}):([0-9]{2}):([0-9]{2})(\.[0-9]{1,6})?"$'


def column(d: dict, text):
    """(the typed value of column `d` from its JSON text column `text`, whether that is exact)."""
    from pyspark.sql import functions as F
    from pyspark.sql import types as S

    from .typed import converter_kind

    kind = converter_kind(d)
    st = spark_type(d)
    null = text.isNull() | (text == "null")

    def unquoted():
        return F.substring(text, F.lit(2), F.length(text) - 2)

    def first(rx):
        return text.rlike(rx)

    def unescaped(rx):  # QUOTED and STRINGS: matched once each escape pair is one character
        return F.regexp_replace(text, ESCAPE, "_").rlike(rx)

    if kind == "int":  # a JSON integer, else NULL (a fraction, a string, a boolean)
        return F.when(first(INT), text.try_cast(st)), F.lit(True)
    if kind == "text":  # a JSON string's text, an integer's digits
        # most strings have no escapes: their text between the quotes, without parsing JSON
        plain = text.startswith('"') & text.endswith('"') & (F.length(text) >= 2) & \
            ~unquoted().contains('"') & ~text.contains("\\")
        value = F.when(plain, unquoted()) \
            .when(unescaped(QUOTED), F.from_json(F.concat(F.lit("["), text, F.lit("]")),
                                             S.ArrayType(S.StringType()))[0]) \
            .when(first(INT), text)
        return value, null | plain | (unescaped(QUOTED) & ~first(SURROGATE)) | first(INT)
    if kind == "set":  # a JSON list of strings: its members in definition order
        listed = F.array_compact(F.from_json(text, S.ArrayType(S.StringType())))
        ordered = F.filter(F.array(*[F.lit(m) for m in set_order(d["set_values"])]).cast(st),
                           lambda m: F.array_contains(listed, m))
        known = F.size(ordered) == F.size(listed)  # no member the definition lacks
        return F.when(unescaped(STRINGS), ordered), \
            null | (unescaped(STRINGS) & ~first(SURROGATE) & known)
    if kind == "decimal":  # a quoted decimal or an integer that fits the column
        p, s = st.precision, st.scale
        whole = f"(0|[0-9]{{1,{p - s}}})" if p > s else "0"
        frac = f"(\\.[0-9]{{1,{s}}})?" if s else ""
        ok = first(f'^"-?{whole}{frac}"$') | first(f"^-?{whole}$")
        return F.when(ok, F.regexp_replace(text, '"', "").try_cast(st)), null | ok
    if kind == "float":
        value = F.when(text == '"NaN"', F.lit(float("nan"))) \
            .when(text == '"Infinity"', F.lit(float("inf"))) \
            .when(text == '"-Infinity"', F.lit(float("-inf"))) \
            .when(first(NUMBER), text.try_cast("double")).cast(st)
        return value, null | first(NUMBER) | unescaped(QUOTED)
    if kind == "date":
        ok = first(DATE)
        return F.when(ok & (F.substring(text, 2, 4) != "0000"), unquoted().try_cast("date")), \
            null | ok
    if kind == "datetime":
        ok = first(DATETIME)
        return F.when(ok & (F.substring(text, 2, 4) != "0000"),
                      unquoted().try_cast("timestamp_ntz")), null | ok
    if kind == "timestamp":
        ok = first(TIMESTAMP)
        return F.when(ok & (F.substring(text, 2, 4) != "0000"),
                      unquoted().try_cast("timestamp")), null | ok
    if kind == "time":
        ok = first(TIME)

        def part(i):
            return F.regexp_extract(text, TIME, i)
        frac = F.when(part(5) == "", F.lit("")).otherwise(part(5))
        secs = F.concat(part(4), frac).cast("decimal(18,6)")
        iv = F.make_dt_interval(F.lit(0), part(2).cast("int"), part(3).cast("int"), secs)
        fits = (part(3).cast("int") <= 59) & (part(4).cast("int") <= 59)
        return F.when(ok & fits, F.when(part(1) == "-", -iv).otherwise(iv)), null | ok
    if kind == "binary":
        ok = first(BASE64)
        return F.when(ok, F.unbase64(unquoted())), null | ok
    # JSON documents, GEOMETRY, VECTOR and the rest: only NULL here, any other text to Python
    return F.lit(None).cast(st), null


def typed_columns(columns: list, row):
    """([the typed value of each column of map column `row`, named and carrying its description],
    the condition that every one is exact)."""
    from pyspark.sql import functions as F

    from .typed import struct_type

    schema = struct_type(columns)
    values, exact = [], F.lit(True)
    for d, f in zip(columns, schema.fields):
        v, ok = column(d, F.element_at(row, F.lit(d["name"])))
        values.append(v.cast(f.dataType).alias(d["name"], metadata=f.metadata))
        exact = exact & F.coalesce(ok, F.lit(False))
    return values, exact
