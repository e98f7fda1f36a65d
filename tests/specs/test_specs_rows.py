"""Row-based replication events (specs/events/rows/, specs/types/rows.yaml), checked on bytes built
by hand from the layouts in MySQL's libbinlogevents (rows_event.h/.cpp) and MariaDB's log_event.cc.

The round trip of every struct is covered by test_roundtrip.py; this file pins the byte rules that a
random round trip cannot tell apart from a plausible mistake: how much extra row info a v2 rows event
holds, which events carry a second column bitmap, and what the TABLE_MAP metadata means.
"""
import zlib

import pytest
from construct import ConstructError

from binlog_grammar.binlog.events import decompress
from binlog_grammar.generated import types as T
from binlog_grammar.generated.catalog import EVENTS

from helpers.vectors import ctx_for, parse, u16

WRITE_ROWS_EVENT = 30
UPDATE_ROWS_EVENT = 31
DELETE_ROWS_EVENT = 32
PARTIAL_UPDATE_ROWS_EVENT = 39
TABLE_MAP_EVENT = 19


def table_id6(n):
    return n.to_bytes(6, "little")


# ---------------------------------------------------------------------------------------------
# v2 rows events: extra row info


# A WRITE_ROWS_EVENT (v2) of a 3-column partitioned table: the extra row info is one PARTITION
# entry (type byte + u16 partition id), so extra_data_len = 2 + 3 = 5.
PART_EXTRA = bytes([0x01]) + u16(7)
WRITE_PART = (
    table_id6(0x1234) + u16(0x0001)          # table id, flags STMT_END_F
    + u16(2 + len(PART_EXTRA))               # extra_data_len = 5, counting itself
    + PART_EXTRA
    + bytes([3])                             # column_count
    + bytes([0b101])                         # columns_present: columns 0 and 2
    + bytes([0x00]) + (11).to_bytes(4, "little") + (12).to_bytes(4, "little")  # one row image
)


def test_write_rows_v2_reads_exactly_extra_data_len_minus_2_bytes_of_extra_info():
    v = parse(WRITE_ROWS_EVENT, WRITE_PART)
    assert v.table_id == 0x1234
    assert "STMT_END_F" in v.flags.names
    assert v.extra_data_len == 5
    assert len(v.extra_info) == 1
    entry = v.extra_info[0]
    assert entry.id == "partition_info"
    assert entry.tag == 1 and entry.tag.name == "PART"
    assert entry.value.partition_id == 7
    assert entry.value.source_partition_id is None  # only updates carry a source partition
    # the extra info is exactly the 3 bytes after extra_data_len, and nothing more
    ctx = ctx_for(WRITE_ROWS_EVENT)
    assert T.rows_extra_row_info.build(v.extra_info, **ctx) == WRITE_PART[10:13]
    assert v.columns.column_count == 3
    assert list(v.columns.columns_present) == [True, False, True]
    assert v.columns.columns_present_after is None
    assert v.rows == WRITE_PART[15:]


def test_reading_extra_data_len_div_8_bytes_gives_another_column_count():
    """The historic python-mysql-replication bug read extra_data_len / 8 bytes of extra info (0 for
    a 5-byte block), so it took the PARTITION type byte for the column count."""
    ctx = ctx_for(WRITE_ROWS_EVENT)
    extra_data_len = int.from_bytes(WRITE_PART[8:10], "little")
    good = parse(WRITE_ROWS_EVENT, WRITE_PART).columns
    buggy_start = 10 + extra_data_len // 8
    assert buggy_start == 10  # the bug skips no extra info at all
    buggy = T.rows_columns.parse(WRITE_PART[buggy_start:], **ctx)
    assert buggy.column_count == 1  # the PART type byte
    assert buggy.column_count != good.column_count == 3
    assert list(buggy.columns_present) != list(good.columns_present)
    # the correct reader starts the body exactly extra_data_len - 2 bytes after the length field
    right = T.rows_columns.parse(WRITE_PART[10 + extra_data_len - 2:], **ctx)
    assert right.column_count == good.column_count


def test_update_rows_v2_partition_and_source_partition():
    extra = bytes([0x01]) + u16(5) + u16(2)  # PART: partition_id 5, source_partition_id 2
    rows = bytes([0x00, 0x2A, 0x00, 0x2B])   # before image, after image (opaque here)
    data = (table_id6(77) + u16(0x0001) + u16(2 + len(extra)) + extra
            + bytes([2, 0b11, 0b10]) + rows)
    v = parse(UPDATE_ROWS_EVENT, data)
    assert v.extra_data_len == 7
    (entry,) = v.extra_info
    assert entry.value.partition_id == 5
    assert entry.value.source_partition_id == 2
    assert v.columns.column_count == 2
    assert list(v.columns.columns_present) == [True, True]
    assert list(v.columns.columns_present_after) == [False, True]
    assert v.rows == rows


def test_partial_update_rows_has_source_partition_and_second_bitmap():
    extra = bytes([0x01]) + u16(1) + u16(3)
    data = table_id6(9) + u16(0) + u16(2 + len(extra)) + extra + bytes([4, 0x0F, 0x02]) + b"\x01\x02"
    v = parse(PARTIAL_UPDATE_ROWS_EVENT, data)
    assert v.extra_info[0].value.source_partition_id == 3
    assert list(v.columns.columns_present_after) == [False, True, False, False]


def test_ndb_and_partition_entries_are_both_read():
    ndb = bytes([0x00, 5, 0x01, 0xAA, 0xBB, 0xCC])  # NDB: ndb_len 5 (counts itself and format)
    part = bytes([0x01]) + u16(9)
    extra = ndb + part
    data = table_id6(3) + u16(0) + u16(2 + len(extra)) + extra + bytes([1, 0x01]) + b"\x00\x05"
    v = parse(DELETE_ROWS_EVENT, data)
    assert v.extra_data_len == 11
    assert [e.id for e in v.extra_info] == ["ndb_info", "partition_info"]
    assert v.extra_info[0].value.ndb_len == 5
    assert v.extra_info[0].value.format == 1
    assert v.extra_info[0].value.data == b"\xaa\xbb\xcc"
    assert v.extra_info[1].value.partition_id == 9
    assert v.columns.column_count == 1
    assert v.rows == b"\x00\x05"


def test_unknown_extra_info_type_ends_the_list_and_is_kept():
    extra = bytes([0x07, 0xDE, 0xAD])  # the server stops at an unknown type and skips the rest
    data = table_id6(3) + u16(0) + u16(2 + len(extra)) + extra + bytes([1, 0x01]) + b"\x00"
    v = parse(WRITE_ROWS_EVENT, data)
    (entry,) = v.extra_info
    assert entry.id is None and entry.tag == 7 and entry.raw == b"\xde\xad"
    assert v.columns.column_count == 1


def test_v2_without_extra_info():
    data = table_id6(66) + u16(1) + u16(2) + bytes([2, 0xFF]) + b"\xfc\x00\x00\x00\x00\x03one"
    v = parse(WRITE_ROWS_EVENT, data)
    assert v.extra_data_len == 2 and list(v.extra_info) == []
    assert v.columns.column_count == 2


# ---------------------------------------------------------------------------------------------
# v1, pre-GA and MariaDB rows events


def test_v1_update_has_two_bitmaps_write_has_one():
    upd = table_id6(26) + u16(0) + bytes([3, 0x07, 0x07]) + b"\xf8\x04"
    v = parse(24, upd)
    assert list(v.columns.columns_present_after) == [True, True, True]
    wr = table_id6(26) + u16(0) + bytes([3, 0x07]) + b"\xf8\x04"
    w = parse(23, wr)
    assert w.columns.columns_present_after is None and w.rows == b"\xf8\x04"


def test_v1_four_byte_table_id_when_post_header_is_6():
    data = (0x01020304).to_bytes(4, "little") + u16(1) + bytes([1, 0x01]) + b"\x00\x01"
    v = parse(25, data, post_header_len=6)
    assert v.table_id == 0x01020304
    assert v.columns.column_count == 1


def test_pre_ga_update_has_a_single_bitmap():
    # MySQL 5.1.0-5.1.15 (log_event_old.cc): one bitmap even for an update
    data = (0).to_bytes(4, "little") + u16(1) + bytes([2, 0xFF]) + b"\xf9\x01\x00\x00\x00\x03one"
    v = parse(21, data, post_header_len=6)
    assert v.columns.column_count == 2
    assert v.columns.columns_present_after is None
    assert v.rows.endswith(b"one")


def _mariadb_compressed(plain: bytes) -> bytes:
    comp = zlib.compress(plain)
    return bytes([0x80 | 1, len(plain)]) + comp


def test_mariadb_compressed_v1_update():
    plain = b"\x00\x01\x00\x00\x00\x00\x02\x00\x00\x00"  # before/after images of an INT column
    body = _mariadb_compressed(plain)
    data = table_id6(70) + u16(0x0081) + bytes([1, 0x01, 0x01]) + body
    v = parse(167, data)
    assert set(v.flags.names) == {"STMT_END_F", "NO_CHECK_CONSTRAINT_CHECKS_F"}
    assert list(v.columns.columns_present_after) == [True]
    assert v.rows == body  # kept compressed so the event rebuilds byte for byte
    (dec,) = EVENTS[167].decode
    assert dec.field == "rows" and dec.codec == "mariadb_zlib"
    assert decompress("mariadb_zlib", v.rows) == plain


def test_mariadb_compressed_v2_write():
    plain = b"\x00\x2a\x00\x00\x00"
    body = _mariadb_compressed(plain)
    data = table_id6(71) + u16(1) + u16(2) + bytes([1, 0x01]) + body
    v = parse(169, data)
    assert list(v.extra_info) == []
    assert v.columns.columns_present_after is None
    assert decompress("mariadb_zlib", v.rows) == plain


# ---------------------------------------------------------------------------------------------
# TABLE_MAP_EVENT


def _name(s: bytes) -> bytes:
    return bytes([len(s)]) + s + b"\x00"


def _tlv(t, value: bytes) -> bytes:
    return bytes([t, len(value)]) + value


TYPES = bytes([
    3,    # LONG
    15,   # VARCHAR
    246,  # NEWDECIMAL
    254,  # STRING (CHAR)
    252,  # BLOB
    19,   # TIME2
    16,   # BIT
    20,   # TYPED_ARRAY
    245,  # JSON
    254,  # STRING (ENUM)
])
META = (b""                      # LONG: none
        + u16(200)               # VARCHAR(200) bytes
        + bytes([10, 2])         # DECIMAL(10,2)
        + bytes([0xFE, 20])      # CHAR of 20 bytes
        + bytes([2])             # BLOB with a 2-byte length
        + bytes([3])             # TIME(3)
        + bytes([5, 1])          # BIT(13)
        + bytes([15, 64, 0, 0])  # array of VARCHAR(64): 3 length bytes
        + bytes([4])             # JSON
        + bytes([0xF7, 1]))      # ENUM stored in 1 byte
OPTIONAL = (
    _tlv(1, bytes([0b10000000]))                        # SIGNEDNESS: first numeric column unsigned
    + _tlv(4, b"".join(bytes([len(n)]) + n for n in (b"id", b"v")))  # COLUMN_NAME (two names)
    + _tlv(200, b"zz")                                  # unknown type: kept raw, parsing goes on
    + _tlv(6, bytes([2, 1]) + b"a" + bytes([1]) + b"b")  # ENUM_STR_VALUE: one column, 2 members
    + _tlv(12, bytes([0xFF, 0xC0]))                     # COLUMN_VISIBILITY: 10 columns visible
)
TABLE_MAP = (table_id6(42) + u16(1) + _name(b"db") + _name(b"t")
             + bytes([len(TYPES)]) + TYPES + bytes([len(META)]) + META
             + bytes([0b11111110, 0b11]) + OPTIONAL)


def test_table_map_column_metadata():
    v = parse(TABLE_MAP_EVENT, TABLE_MAP)
    assert v.table_id == 42 and v.db == "db" and v.table == "t"
    assert v.column_count == 10
    assert [t.name for t in v.column_types][:3] == ["LONG", "VARCHAR", "NEWDECIMAL"]
    info = v.column_info
    assert info.metadata_len == len(META)
    m = info.metadata
    assert m[0] is None
    assert m[1] == 200
    assert (m[2].precision, m[2].scale) == (10, 2)
    assert (m[3].real_type, m[3].length) == (0xFE, 20)
    assert m[4] == 2
    assert m[5] == 3
    assert (m[6].bits, m[6].bytes) == (5, 1)
    assert m[7].element_type.name == "VARCHAR" and m[7].element_meta == 64
    assert m[8] == 4
    assert (m[9].real_type, m[9].length) == (0xF7, 1)
    assert list(info.null_bitmap) == [False] + [True] * 9


def test_table_map_optional_metadata():
    v = parse(TABLE_MAP_EVENT, TABLE_MAP)
    opt = v.optional_metadata
    assert [e.id for e in opt] == ["signedness", "column_name", None, "enum_str_value",
                                   "column_visibility"]
    assert opt[0].value[0][0] is True and not any(opt[0].value[0][1:])
    assert list(opt[1].value) == ["id", "v"]
    assert opt[2].tag == 200 and opt[2].raw == b"zz"
    assert list(opt[3].value[0].members) == ["a", "b"]
    bits = [b for byte in opt[4].value for b in byte]
    assert bits[:10] == [True] * 10 and not any(bits[10:])


def test_table_map_without_column_metadata():
    # 5.1 development trees: 4-byte table id, and the event ends after the column types
    data = (0).to_bytes(4, "little") + u16(0) + _name(b"test") + _name(b"t1") + bytes([2, 3, 254])
    v = parse(TABLE_MAP_EVENT, data, post_header_len=6)
    assert v.column_info is None and v.optional_metadata is None
    assert [t.name for t in v.column_types] == ["LONG", "STRING"]


def test_table_map_metadata_must_fill_its_block():
    bad = (table_id6(1) + u16(0) + _name(b"d") + _name(b"t") + bytes([1, 15])
           + bytes([3]) + u16(10) + b"\x00" + b"\x00")  # 3-byte block for a 2-byte VARCHAR meta
    with pytest.raises(ConstructError, match="left over"):
        EVENTS[TABLE_MAP_EVENT].parse(bad, ctx_for(TABLE_MAP_EVENT))
