"""binlog_grammar.output.sql without a server: the literal of every kind of column value, the shape of
INSERT / UPDATE / DELETE, flashback order and inversion, transaction boundaries, and what is
refused. tests/output/test_sql_server.py runs the scripts against a real MariaDB."""
from __future__ import annotations

import datetime as dt
import struct
from decimal import Decimal
from types import SimpleNamespace

import pytest
from construct import Container
from hypothesis import given, settings
from hypothesis import strategies as st

from binlog_grammar.errors import BinlogError
from binlog_grammar.binlog.rows import Column, Geometry, JsonDiff, PartialJson, RowChange
from binlog_grammar.output.sql import (
    SqlGenError, quote_ident, quote_string, render_sql, sql_literal)
from binlog_grammar.output.quoting import SCRIPT_HEADER, SESSION_SETTINGS

UTC = dt.timezone.utc


def col(name, type_name, index=0, **kw):
    fields = dict(index=index, name=name, type=0, type_name=type_name, real_type=0, meta=None,
                  unsigned=False, charset=None, collation=None, nullable=True, json_index=None,
                  enum_values=None, set_values=None, in_primary_key=False, geometry_type=None,
                  fsp=0)
    fields.update(kw)
    return Column(**fields)


INT = col("i", "LONG")
DEC = col("d", "NEWDECIMAL")
FLOAT = col("f", "FLOAT")
DOUBLE = col("x", "DOUBLE")
DATE = col("d", "DATE")
DATETIME = col("dt", "DATETIME2", fsp=6)
TIMESTAMP = col("ts", "TIMESTAMP2", fsp=6)
TIME = col("t", "TIME2", fsp=6)
UTF8 = col("s", "VARCHAR", charset="utf8mb4")
LATIN1 = col("s", "VARCHAR", charset="latin1")
CP1251 = col("s", "VARCHAR", charset="cp1251")
BLOB = col("b", "BLOB", charset="binary")
BINARY = col("b", "STRING", charset="binary", meta=Container(max_length=4))
ENUM = col("e", "ENUM", charset="utf8mb4", enum_values=["a", "ä x", "it's"])
SET = col("s", "SET", charset="utf8mb4", set_values=["c", "b", "a"])
BIT = col("b", "BIT")
JSON = col("j", "JSON", json_index=0)
GEOM = col("g", "GEOMETRY", charset="binary")


# -- literals -------------------------------------------------------------------------------------

@pytest.mark.parametrize("value, c, text", [
    (None, INT, "NULL"),
    (None, None, "NULL"),
    (0, INT, "0"),
    (-2147483648, INT, "-2147483648"),
    (18446744073709551615, col("u", "LONGLONG", unsigned=True), "18446744073709551615"),
    (0, col("y", "YEAR"), "0"),
    (2155, col("y", "YEAR"), "2155"),
    (Decimal("-3.10"), DEC, "-3.10"),
    (Decimal("0.000"), DEC, "0.000"),
    (Decimal("-0.00"), DEC, "-0.00"),
    (Decimal("1E+2"), DEC, "100"),
    (Decimal("99999999999999999999999999999999999.999999999999999999999999999999"), DEC,
     "99999999999999999999999999999999999.999999999999999999999999999999"),
    (Decimal("-0.000000000000000000000000000001"), DEC, "-0.000000000000000000000000000001"),
    (0.1, DOUBLE, "0.1"),
    (1e300, DOUBLE, "1e+300"),
    (-1e300, DOUBLE, "-1e+300"),
    (5e-324, DOUBLE, "5e-324"),
    (-0.0, DOUBLE, "-0e0"),
    (0.0, DOUBLE, "0.0"),
    (1.7976931348623157e308, DOUBLE, "1.7976931348623157e+308"),
    (3.1415927410125732, FLOAT, "3.1415927410125732"),
    (dt.date(2024, 2, 29), DATE, "'2024-02-29'"),
    (dt.date(1, 1, 1), DATE, "'0001-01-01'"),
    ("0000-00-00", DATE, "'0000-00-00'"),
    ("2021-00-10", DATE, "'2021-00-10'"),
    (dt.datetime(2024, 2, 29, 12, 34, 56, 789000), DATETIME, "'2024-02-29 12:34:56.789'"),
    (dt.datetime(999, 1, 1), DATETIME, "'0999-01-01 00:00:00'"),
    (dt.datetime(2024, 1, 1, 0, 0, 0, 1), DATETIME, "'2024-01-01 00:00:00.000001'"),
    ("0000-00-00 00:00:00.000", DATETIME, "'0000-00-00 00:00:00.000'"),
    ("2021-02-00 10:11:12.5", DATETIME, "'2021-02-00 10:11:12.5'"),
    (dt.datetime(2038, 1, 19, 3, 14, 7, 999999, tzinfo=UTC), TIMESTAMP,
     "'2038-01-19 03:14:07.999999'"),
    (dt.datetime(2024, 1, 1, 5, 30, tzinfo=dt.timezone(dt.timedelta(hours=5, minutes=30))),
     TIMESTAMP, "'2024-01-01 00:00:00'"),
    ("0000-00-00 00:00:00", TIMESTAMP, "'0000-00-00 00:00:00'"),
    (-dt.timedelta(seconds=1.5), TIME, "'-00:00:01.5'"),
    (-dt.timedelta(microseconds=1), TIME, "'-00:00:00.000001'"),
    (-dt.timedelta(hours=838, minutes=59, seconds=59), TIME, "'-838:59:59'"),
    (dt.timedelta(hours=838, minutes=59, seconds=59, microseconds=999999), TIME,
     "'838:59:59.999999'"),
    (dt.timedelta(days=2), TIME, "'48:00:00'"),
    (dt.timedelta(0), TIME, "'00:00:00'"),
    ("-00:61:00", TIME, "'-00:61:00'"),
    ("", UTF8, "''"),
    ("O'Brien", UTF8, "'O\\'Brien'"),
    ("a\\b", UTF8, "'a\\\\b'"),
    ("nul\0end", UTF8, "'nul\\0end'"),
    ("l1\nl2\rl3\x1az\t", UTF8, "'l1\\nl2\\rl3\\Zz\t'"),
    ("\\'", UTF8, "'\\\\\\''"),
    ("😀 𝄞", UTF8, "'😀 𝄞'"),
    ("%_", UTF8, "'%_'"),
    ("Müller €", LATIN1, "'Müller €'"),
    ("\x81\x8d", LATIN1, "'\x81\x8d'"),  # MySQL latin1's five bytes cp1252 leaves unassigned
    ("ab\udcff", UTF8, "_utf8mb4 X'6162FF'"),  # a byte the column's charset does not decode
    ("Ё\udc98", CP1251, "_cp1251 X'A898'"),
    ("x", None, "'x'"),
    (b"", BLOB, "''"),
    (b"\x00\xff'\\", BLOB, "X'00FF275C'"),
    (b"ab\x00\x00", BINARY, "X'61620000'"),  # BINARY(4) padded as SELECT shows it
    (b"\x00\x00\x00\x00", BINARY, "X'00000000'"),
    ("ä x", ENUM, "'ä x'"),
    ("it's", ENUM, "'it\\'s'"),
    ("", ENUM, "''"),
    (2, col("e", "ENUM"), "2"),
    (frozenset({"a", "c"}), SET, "'c,a'"),  # the column's member order
    (frozenset(), SET, "''"),
    (5, col("s", "SET"), "5"),
    (0, col("s", "SET"), "0"),
    (0, BIT, "0"),
    (18446744073709551615, BIT, "18446744073709551615"),
    ({"b": [1, 2.5, None, True], "a": "it's \"q\" \\"}, JSON,
     "'{\"a\": \"it\\'s \\\\\"q\\\\\" \\\\\\\\\", \"b\": [1, 2.5, null, true]}'"),
    ("x", JSON, "'\"x\"'"),
    (None, JSON, "NULL"),
    (Decimal("1.50"), JSON, "'1.50'"),
    ([], JSON, "'[]'"),
    (Geometry(4326, bytes.fromhex("0101000000000000000000f03f0000000000000040")), GEOM,
     "ST_GeomFromWKB(X'0101000000000000000000F03F0000000000000040', 4326)"),
    ([1.5, -0.25], col("v", "VECTOR"), "STRING_TO_VECTOR('[1.5,-0.25]')"),
])
def test_literal(value, c, text):
    assert sql_literal(value, c) == text


def test_partial_json_literal():
    pj = PartialJson((JsonDiff("REPLACE", "$.age", 26), JsonDiff("INSERT", "$.tags[0]", {"k": "it's"}),
                      JsonDiff("REMOVE", "$.old", None), JsonDiff("REPLACE", "$.name", "O'Neil"),
                      JsonDiff("INSERT", "$.ok", True)))
    assert sql_literal(pj, JSON) == (
        "JSON_INSERT(JSON_REPLACE(JSON_REMOVE(JSON_INSERT(JSON_REPLACE(`j`, '$.age', 26), "
        "'$.tags[0]', CAST('{\"k\": \"it\\'s\"}' AS JSON)), '$.old'), '$.name', 'O\\'Neil'), "
        "'$.ok', CAST('true' AS JSON))")


@pytest.mark.parametrize("value, c", [
    (float("nan"), DOUBLE), (float("inf"), FLOAT), (Decimal("NaN"), DEC), (object(), INT),
    ({"a": 1}, UTF8),
])
def test_literal_refuses(value, c):
    with pytest.raises(ValueError):
        sql_literal(value, c)


def _float32s():
    return st.integers(0, 2**32 - 1).map(lambda b: struct.unpack("<f", struct.pack("<I", b))[0]) \
        .filter(lambda x: x == x and abs(x) != float("inf"))


@settings(max_examples=300, deadline=None)
@given(st.floats(allow_nan=False, allow_infinity=False))
def test_double_literal_reads_back_exactly(x):
    """A DOUBLE's literal reads back as the same 8 bytes (-0.0 included)."""
    assert struct.pack("<d", float(sql_literal(x, DOUBLE))) == struct.pack("<d", x)


@settings(max_examples=300, deadline=None)
@given(_float32s())
def test_float_literal_reads_back_exactly(x):
    """A FLOAT's value (a double holding the 4-byte value) reads back as the same 4 bytes, also
    through the double the server makes of the literal first."""
    assert struct.pack("<f", float(sql_literal(x, FLOAT))) == struct.pack("<f", x)


def _unescape(literal: str) -> str:
    """Read a SQL string literal back as MySQL does (the escapes quote_string writes)."""
    assert literal[0] == literal[-1] == "'"
    body, out, i = literal[1:-1], [], 0
    table = {"0": "\0", "n": "\n", "r": "\r", "Z": "\x1a", "\\": "\\", "'": "'"}
    while i < len(body):
        ch = body[i]
        if ch == "\\":
            out.append(table[body[i + 1]])
            i += 2
            continue
        assert ch != "'", "an unescaped quote ends the literal early"
        out.append(ch)
        i += 1
    return "".join(out)


@settings(max_examples=500, deadline=None)
@given(st.text(alphabet=st.characters(blacklist_categories=["Cs"])))
def test_string_literal_reads_back(text):
    lit = quote_string(text)
    assert _unescape(lit) == text
    assert not set(lit) & {"\0", "\n", "\r", "\x1a"}  # one line, safe in any client


def test_identifiers():
    assert quote_ident("a`b") == "`a``b`"
    assert quote_ident("ключ") == "`ключ`"


# -- statements -----------------------------------------------------------------------------------

def table_cols(*specs):
    return [col(n, t, i, **kw) for i, (n, t, kw) in enumerate(specs)]


ORDERS = table_cols(("id", "LONG", {}), ("note", "VARCHAR", {"charset": "utf8mb4"}),
                    ("amount", "NEWDECIMAL", {}))


def change(op, before=None, after=None, columns=ORDERS, pk=("id",), pos=100, table="orders",
           db="shop", event=None):
    event = event or {"c": "WRITE_ROWS_EVENT_V1", "u": "UPDATE_ROWS_EVENT_V1",
                      "d": "DELETE_ROWS_EVENT_V1"}[op]
    return RowChange(op, db, table, before, after, columns, "mariadb-bin.000007", pos, pos + 50,
                     event, 17, 1714557600, 1, {}, list(pk))


def tx(*changes, end="commit", gtid="0-1-9", start=4, events=None):
    t = SimpleNamespace(gtid=gtid, file="/x/mariadb-bin.000007", start_pos=start, end_pos=start + 90,
                        timestamp=1714557600, server_id=1, changes=list(changes), end=end)
    if events is not None:
        t.events = events
    return t


def body(lines):
    """The script without the session settings."""
    return [line.rstrip("\n") for line in lines][1 + len(SCRIPT_HEADER):]


ROW1 = {"id": 1, "note": "it's", "amount": Decimal("1.50")}
ROW2 = {"id": 2, "note": None, "amount": Decimal("2.00")}


def test_session_settings_first():
    lines = list(render_sql([]))
    assert [line.rstrip("\n") for line in lines] == ["-- replay script written by binlog-grammar",
                                                     *SCRIPT_HEADER]
    assert "SET time_zone='+00:00';" in SESSION_SETTINGS
    assert all(line.endswith("\n") for line in lines)
    assert list(render_sql([], session=False)) == []


def test_statement_shapes():
    out = body(render_sql([tx(change("c", after=ROW1),
                              change("u", ROW1, {"id": 1, "note": "x", "amount": Decimal("1.50")}),
                              change("u", ROW1, dict(ROW1, id=5)),
                              change("d", before=ROW2))]))
    assert out == [
        "-- GTID 0-1-9, mariadb-bin.000007:4-94, 2024-05-01 10:00:00 UTC, server 1",
        "BEGIN;",
        "INSERT INTO `shop`.`orders` (`id`, `note`, `amount`) VALUES (1, 'it\\'s', 1.50);",
        "UPDATE `shop`.`orders` SET `id`=1, `note`='x', `amount`=1.50 WHERE `id`=1;",
        "UPDATE `shop`.`orders` SET `id`=5, `note`='it\\'s', `amount`=1.50 WHERE `id`=1;",
        "DELETE FROM `shop`.`orders` WHERE `id`=2;",
        "COMMIT;"]


def test_update_changed_columns_only():
    ch = [change("u", ROW1, {"id": 1, "note": "x", "amount": Decimal("1.50")}),
          change("u", ROW1, dict(ROW1)),  # nothing changed: every column
          change("u", {"id": 1, "x": -0.0}, {"id": 1, "x": 0.0},
                 columns=table_cols(("id", "LONG", {}), ("x", "DOUBLE", {}))),
          change("u", {"id": 1, "amount": Decimal("1.5")}, {"id": 1, "amount": Decimal("1.50")})]
    out = body(render_sql([tx(*ch)], update_set="changed"))
    assert out[2:6] == [
        "UPDATE `shop`.`orders` SET `note`='x' WHERE `id`=1;",
        "UPDATE `shop`.`orders` SET `id`=1, `note`='it\\'s', `amount`=1.50 WHERE `id`=1;",
        "UPDATE `shop`.`orders` SET `x`=0.0 WHERE `id`=1;",  # -0.0 == 0.0 in Python, not in SQL
        "UPDATE `shop`.`orders` SET `amount`=1.50 WHERE `id`=1;"]
    with pytest.raises(ValueError):
        list(render_sql([], update_set="some"))


def test_minimal_image_update_sets_what_the_image_holds():
    ch = change("u", {"id": 3}, {"note": "n"})
    assert body(render_sql([tx(ch)]))[2] == "UPDATE `shop`.`orders` SET `note`='n' WHERE `id`=3;"
    ins = change("c", after={"id": 4})
    assert body(render_sql([tx(ins)]))[2] == "INSERT INTO `shop`.`orders` (`id`) VALUES (4);"


def test_composite_key_in_key_order():
    cols = table_cols(("a", "LONG", {}), ("b", "VARCHAR", {"charset": "utf8mb4"}), ("v", "LONG", {}))
    ch = change("d", before={"a": 1, "b": "x", "v": None}, columns=cols, pk=("b", "a"))
    assert body(render_sql([tx(ch)]))[2] == "DELETE FROM `shop`.`orders` WHERE `b`='x' AND `a`=1;"


def test_without_primary_key_every_column_and_limit():
    cols = table_cols(("a", "LONG", {}), ("s", "VARCHAR", {"charset": "latin1"}),
                      ("b", "BLOB", {"charset": "binary"}), ("f", "FLOAT", {}),
                      ("j", "JSON", {"json_index": 0}), ("e", "ENUM", {"enum_values": ["x"]}),
                      ("g", "GEOMETRY", {"charset": "binary"}))
    row = {"a": None, "s": "É ", "b": b"", "f": 0.10000000149011612, "j": {"k": 1}, "e": "x",
           "g": Geometry(4326, b"\x01")}
    out = body(render_sql([tx(change("d", before=row, columns=cols, pk=()),
                              change("u", row, dict(row, a=1), columns=cols, pk=()))]))
    where = ("WHERE `a` IS NULL AND CAST(`s` AS BINARY)=X'C920' AND CAST(`b` AS BINARY)='' AND "
             "`f`=0.10000000149011612 AND `j`=CAST('{\"k\": 1}' AS JSON) AND `e`='x' AND "
             "CAST(`g` AS BINARY)=X'E610000001' LIMIT 1;")
    assert out[2] == "DELETE FROM `shop`.`orders` " + where
    assert out[3].startswith("UPDATE `shop`.`orders` SET `a`=1, `s`='É ', ") and out[3].endswith(where)


def test_qualify_and_db_map():
    t = tx(change("c", after=ROW1), change("c", after=ROW2, db="other", table="we`ird"))
    out = body(render_sql([t], db_map={"shop": "copy"}))
    assert out[2].startswith("INSERT INTO `copy`.`orders` ")
    assert out[3].startswith("INSERT INTO `other`.`we``ird` ")
    out = body(render_sql([t], qualify=False, db_map={"shop": "copy"}))
    assert out[2].startswith("INSERT INTO `orders` (") and out[3].startswith("INSERT INTO `we``ird` (")


def test_omit_generated_columns():
    cols = table_cols(("id", "LONG", {}), ("a", "LONG", {}), ("g", "LONG", {}))
    t = tx(change("c", after={"id": 1, "a": 2, "g": 4}, columns=cols),
           change("u", {"id": 1, "a": 2, "g": 4}, {"id": 1, "a": 3, "g": 6}, columns=cols),
           change("u", {"id": 1, "a": 3, "g": 6}, {"g": 7}, columns=cols),
           change("d", before={"id": 1, "a": 3, "g": 6}, columns=cols, pk=()))
    out = body(render_sql([t], omit_columns={"shop.orders": ["g"]}))
    assert out[2:6] == [
        "INSERT INTO `shop`.`orders` (`id`, `a`) VALUES (1, 2);",
        "UPDATE `shop`.`orders` SET `id`=1, `a`=3 WHERE `id`=1;",
        "-- mariadb-bin.000007:100: an update of shop.orders that writes no column",
        "DELETE FROM `shop`.`orders` WHERE `id`=1 AND `a`=3 AND `g`=6 LIMIT 1;"]
    assert body(render_sql([t], omit_columns={"other.t": ["g"]}))[2].endswith("VALUES (1, 2, 4);")


# -- refusals -------------------------------------------------------------------------------------

ANON = table_cols(("@1", "LONG", {}), ("@2", "VARCHAR", {"charset": "utf8mb4"}))


@pytest.mark.parametrize("flashback", [False, True])
def test_unnamed_columns_refused(flashback):
    ch = change("c", after={"@1": 1, "@2": "x"}, columns=ANON, pk=(), pos=555)
    with pytest.raises(SqlGenError) as e:
        list(render_sql([tx(ch)], flashback=flashback))
    assert isinstance(e.value, BinlogError)
    msg = str(e.value)
    assert msg.startswith("mariadb-bin.000007: offset 555: WRITE_ROWS_EVENT_V1: shop.orders: ")
    assert "binlog_row_metadata=FULL" in msg and "schema" in msg and "@1, @2" in msg


def test_where_needs_key_or_every_column():
    ch = change("d", before={"note": "x"}, pk=("id",), pos=777)
    with pytest.raises(SqlGenError, match=r"offset 777: DELETE_ROWS_EVENT_V1: .*primary key \(id\)"):
        list(render_sql([tx(ch)]))
    ch = change("d", before={"note": "x"}, pk=(), pos=778)
    with pytest.raises(SqlGenError, match="none is known"):
        list(render_sql([tx(ch)]))


def test_bad_value_names_the_column_and_event():
    ch = change("c", after={"id": 1, "note": "x", "amount": Decimal("NaN")}, pos=901)
    with pytest.raises(SqlGenError, match=r"offset 901: WRITE_ROWS_EVENT_V1: shop.orders: column amount"):
        list(render_sql([tx(ch)]))


# -- flashback ------------------------------------------------------------------------------------

def test_flashback_order_and_inversion():
    t1 = tx(change("c", after=ROW1, pos=10), change("c", after=ROW2, pos=20), gtid="0-1-1", start=4)
    t2 = tx(change("u", ROW1, dict(ROW1, id=5, note="y"), pos=110),
            change("d", before=ROW2, pos=120), gtid="0-1-2", start=100)
    out = body(render_sql([t1, t2], flashback=True))
    assert out == [
        "-- flashback of GTID 0-1-2, mariadb-bin.000007:100-190, 2024-05-01 10:00:00 UTC, server 1",
        "BEGIN;",
        "INSERT INTO `shop`.`orders` (`id`, `note`, `amount`) VALUES (2, NULL, 2.00);",
        "UPDATE `shop`.`orders` SET `id`=1, `note`='it\\'s', `amount`=1.50 WHERE `id`=5;",
        "COMMIT;",
        "-- flashback of GTID 0-1-1, mariadb-bin.000007:4-94, 2024-05-01 10:00:00 UTC, server 1",
        "BEGIN;",
        "DELETE FROM `shop`.`orders` WHERE `id`=2;",
        "DELETE FROM `shop`.`orders` WHERE `id`=1;",
        "COMMIT;"]
    assert list(render_sql([t1, t2], flashback=True))[0] == \
        "-- flashback script written by binlog-grammar\n"


def test_flashback_changed_columns():
    t = tx(change("u", ROW1, dict(ROW1, note="y")))
    assert body(render_sql([t], flashback=True, update_set="changed"))[2] == \
        "UPDATE `shop`.`orders` SET `note`='it\\'s' WHERE `id`=1;"


def test_flashback_without_key_uses_the_row_after_the_update():
    cols = table_cols(("a", "LONG", {}), ("b", "LONG", {}))
    t = tx(change("u", {"a": 1, "b": 2}, {"a": 1, "b": 3}, columns=cols, pk=()))
    assert body(render_sql([t], flashback=True))[2] == \
        "UPDATE `shop`.`orders` SET `a`=1, `b`=2 WHERE `a`=1 AND `b`=3 LIMIT 1;"


@pytest.mark.parametrize("op, before, after, event", [
    ("u", {"id": 1}, {"note": "y"}, "UPDATE_ROWS_EVENT_V1"),
    ("d", {"id": 1}, None, "DELETE_ROWS_EVENT_V1"),
])
def test_flashback_refuses_partial_before_image(op, before, after, event):
    ok = tx(change("c", after=ROW1, pos=50))
    bad = tx(change("c", after=ROW2, pos=300), change(op, before, after, pos=321),
             change(op, before, after, pos=400), start=290)
    with pytest.raises(SqlGenError) as e:
        list(render_sql([ok, bad], flashback=True))
    msg = str(e.value)
    assert msg.startswith(f"mariadb-bin.000007: offset 321: {event}: shop.orders: cannot flash back")
    assert "note, amount" in msg and "binlog_row_image" in msg
    # forwards the same changes replay
    assert len(body(render_sql([ok, bad]))) == 4 + 6


def test_flashback_of_minimal_insert_is_a_delete():
    t = tx(change("c", after={"id": 9, "note": "only some columns"}))
    assert body(render_sql([t], flashback=True))[2] == "DELETE FROM `shop`.`orders` WHERE `id`=9;"


def test_flashback_refuses_before_writing_anything():
    bad = tx(change("d", before={"id": 1}, pos=900), start=890)
    gen = render_sql([tx(change("c", after=ROW1))] * 3 + [bad], flashback=True)
    with pytest.raises(SqlGenError):
        next(gen)


# -- transaction ends and statements ----------------------------------------------------------------

def query(text, offset=1000, name="QUERY_EVENT"):
    ev = SimpleNamespace(type=SimpleNamespace(name=name, decode=()), data=Container(query=text),
                         file="mariadb-bin.000007", offset=offset, name=name)
    return SimpleNamespace(event=ev, changes=[])


def rows_event(*changes):
    ev = SimpleNamespace(type=SimpleNamespace(name="WRITE_ROWS_EVENT_V1", decode=()),
                         data=Container(), file="mariadb-bin.000007", offset=changes[0].pos,
                         name="WRITE_ROWS_EVENT_V1")
    return SimpleNamespace(event=ev, changes=list(changes))


def xa_prepare(fmt, gtrid, bqual, offset=2000):
    ev = SimpleNamespace(type=SimpleNamespace(name="XA_PREPARE_LOG_EVENT", decode=()),
                         data=Container(format_id=fmt, gtrid=gtrid, bqual=bqual, one_phase=0),
                         file="mariadb-bin.000007", offset=offset, name="XA_PREPARE_LOG_EVENT")
    return SimpleNamespace(event=ev, changes=[])


def test_rollback_and_incomplete_end_in_rollback():
    out = body(render_sql([tx(change("c", after=ROW1), end="rollback")]))
    assert out[1] == "BEGIN;" and out[-1] == "ROLLBACK;"
    out = body(render_sql([tx(change("c", after=ROW1), end="rollback")], flashback=True))
    assert out[2].startswith("DELETE") and out[-1] == "ROLLBACK;"
    out = body(render_sql([tx(change("c", after=ROW1), end="incomplete")]))
    assert out[1] == "-- the binlog ends inside this transaction: it is rolled back"
    assert out[-1] == "ROLLBACK;"


def test_ddl_and_empty_transactions():
    ddl = tx(end="ddl", events=[query("CREATE TABLE t (\n  id INT PRIMARY KEY\n)")])
    empty = tx()
    out = body(render_sql([ddl, empty]))  # replayed as logged (output/sql_statements.py)
    assert out == ["-- GTID 0-1-9, mariadb-bin.000007:4-94, 2024-05-01 10:00:00 UTC, server 1",
                   "-- statement at mariadb-bin.000007:1000",
                   "CREATE TABLE t (\n  id INT PRIMARY KEY\n)", ";", *SESSION_SETTINGS]
    assert body(render_sql([ddl], flashback=True))[1].startswith("-- not inverted")


def test_statements_inside_a_transaction():
    c1, c2 = change("c", after=ROW1, pos=1100), change("c", after=ROW2, pos=1300)
    events = [query("BEGIN", 990), rows_event(c1), query("SAVEPOINT `s1`", 1200), rows_event(c2),
              query("ROLLBACK TO `s1`", 1400), query("INSERT INTO t VALUES (1)", 1500),
              query("COMMIT", 1600)]
    t = tx(c1, c2, events=events)
    out = body(render_sql([t]))
    assert out[1:] == ["BEGIN;",
                       "INSERT INTO `shop`.`orders` (`id`, `note`, `amount`) VALUES (1, 'it\\'s', 1.50);",
                       "-- ROLLBACK TO `s1`: the server rolled back the 1 row change logged after "
                       "its SAVEPOINT: not replayed",
                       "-- statement at mariadb-bin.000007:1500",
                       "INSERT INTO t VALUES (1)", ";", *SESSION_SETTINGS,
                       "COMMIT;"]
    with pytest.raises(SqlGenError, match=r"offset 1500: QUERY_EVENT: cannot flash back .*INSERT"):
        list(render_sql([t], flashback=True))
    statement_only = tx(events=[query("BEGIN"), query("UPDATE t SET a = 1", 1234), query("COMMIT")])
    with pytest.raises(SqlGenError, match=r"offset 1234: .*statement-based"):
        list(render_sql([statement_only], flashback=True))


def test_xa_prepared_transaction_goes_where_it_commits():
    a = change("c", after=ROW1, pos=1100)
    prep1 = tx(a, end="xa_prepare", gtid="0-1-10", start=1000,
               events=[rows_event(a), query("XA END X'6131',X'',1", 1150), xa_prepare(1, b"a1", b"")])
    b = change("c", after=ROW2, pos=2100)
    prep2 = tx(b, end="xa_prepare", gtid="0-1-11", start=2000,
               events=[rows_event(b), xa_prepare(7, b"b2", b"q", 2200)])
    c = change("d", before=ROW2, pos=3100)
    other = tx(c, gtid="0-1-12", start=3000)
    commit1 = tx(end="ddl", gtid="0-1-13", start=4000, events=[query("XA COMMIT X'6131',X'',1")])
    rollback2 = tx(end="ddl", gtid="0-1-14", start=5000, events=[query("XA ROLLBACK 'b2','q',7")])
    pending = tx(change("c", after={"id": 7}, pos=6100), end="xa_prepare", gtid="0-1-15",
                 start=6000, events=[xa_prepare(1, b"zz", b"", 6200)])
    out = body(render_sql([prep1, prep2, other, commit1, rollback2, pending]))
    text = "\n".join(out)
    assert text.index("DELETE FROM `shop`.`orders` WHERE `id`=2;") < text.index(
        "VALUES (1, 'it\\'s', 1.50);")  # committed after `other`
    assert "-- XA transaction X'6131',X'',1: PREPAREd here, committed at mariadb-bin.000007:4000" \
        in out
    assert "-- XA transaction X'6232',X'71',7: PREPAREd here, rolled back at " \
           "mariadb-bin.000007:5000: nothing to replay" in out
    assert "VALUES (2, NULL, 2.00)" not in text
    assert out[-1] == ("-- XA transaction X'7a7a',X'',1: PREPAREd, neither committed nor rolled "
                       "back in the input: not replayed")
    assert out.count("BEGIN;") == 2
    back = body(render_sql([prep1, prep2, other, commit1, rollback2, pending], flashback=True))
    stmts = [line for line in back if not line.startswith("--")]
    assert stmts == ["BEGIN;", "DELETE FROM `shop`.`orders` WHERE `id`=1;", "COMMIT;",
                     "BEGIN;", "INSERT INTO `shop`.`orders` (`id`, `note`, `amount`) VALUES "
                     "(2, NULL, 2.00);", "COMMIT;"]


def test_one_phase_xa_is_an_ordinary_transaction():
    a = change("c", after=ROW1, pos=1100)
    t = tx(a, events=[query("XA START 'x'"), rows_event(a), query("XA END 'x'"),
                      query("XA COMMIT 'x' ONE PHASE")])
    out = body(render_sql([t]))
    assert out[1:] == ["BEGIN;", "INSERT INTO `shop`.`orders` (`id`, `note`, `amount`) VALUES "
                                 "(1, 'it\\'s', 1.50);", "COMMIT;"]


@pytest.mark.parametrize("text, kind", [("BEGIN", "begin"), ("COMMIT ;", "commit"),
                                        ("SAVEPOINT `s1`", "inside"), ("ROLLBACK TO `s1`", "inside"),
                                        ("RELEASE SAVEPOINT `s1` ; ", "inside"),
                                        ("XA END 'x1'", "inside"), ("UPDATE t SET a = 1", "statement")])
def test_statement_kinds(text, kind):
    # one classifier for the reading commands and repair's transaction search; RELEASE SAVEPOINT
    # stays inside its transaction (it was once taken for a statement of its own)
    from types import SimpleNamespace

    from binlog_grammar.binlog.stream import query_kind

    assert query_kind(SimpleNamespace(data={"query": text}, type=None)) == kind
