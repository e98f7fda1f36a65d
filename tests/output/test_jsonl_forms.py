"""The JSON forms of `dump --format jsonl` (binlog_grammar/output/dump.py, "Value forms"), end to end:

- a MySQL JSON column is a JSON string holding the document's text as MySQL prints it (opaque
  DECIMAL/DATE/TIME/DATETIME members as their text, other opaque members "base64:typeNN:..."),
  and a partial update without its before value lists its diffs with JSON text values;
- text of tables without charset metadata is text in the server's character set (the QUERY_EVENTs'
  charset status variables), not base64;
- statements are text in their own character_set_client;
- bytes that do not decode are written `\\xNN` in the text and given exactly in base64 beside it;
- every line is valid UTF-8 JSON: over the whole corpus, the samples, and seeded random damage.

Binlogs with values the corpus lacks are made from corpus files: an event's row images are rebuilt
by the spec structs with other values (the file is cut after that event, so no offset after it
moves), or a byte of a statement or value is replaced in a file without CRC32s.
"""
import base64
import datetime as dt
import decimal
import json
import random
import re
import zlib

import pytest

from binlog_grammar.cli import main
from binlog_grammar.generated import types as T
from binlog_grammar.runtime.jsonb import JsonOpaque
from binlog_grammar.binlog.reader import BinlogFile, rebuild_event
from binlog_grammar.binlog.rows import JsonDiff, PartialJson, RowDecoder, parse_row_images

from helpers.paths import CORPUS, ROOT, corpus_files, needs_corpus

SAMPLES = sorted(p for p in (ROOT / "samples").iterdir() if p.is_file())
DAMAGED_ON_PURPOSE = {"binlog_truncated_event.000001", "binlog_truncated_prev_gtid_event.000001",
                      "bug40482-bin.000001", "corrupt-relay-bin.000624"}
# names of Python's exception classes: no message a command writes may name one
EXCEPTION_NAMES = re.compile(r"\b(?:[A-Z][A-Za-z]*(?:Error|Exception)|KeyboardInterrupt|"
                             r"StopIteration|GeneratorExit|SystemExit|Traceback)\b")


def run(capsysbinary, *argv):
    code = main(list(map(str, argv)))
    out = capsysbinary.readouterr()
    return code, out.out, out.err.decode("utf-8", "replace")


def jsonl(capsysbinary, *argv, code=0):
    """The records of `dump --format jsonl`; every line must be strict UTF-8 JSON."""
    got, out, err = run(capsysbinary, "dump", "--format", "jsonl", *argv)
    assert got == code, err
    assert not EXCEPTION_NAMES.search(err), err
    return [json.loads(line.decode("utf-8")) for line in out.splitlines()]


def rows_of(records):
    return [r for r in records if "op" in r]


# ---------------------------------------------------------------------------------------------
# making binlogs the corpus lacks

def with_row_values(src, out_path, change, event="WRITE_ROWS_EVENT"):
    """`src` up to its first `event`, whose row images are rebuilt after `change(cells)` edits the
    first row's cells; the file ends there."""
    decoder = RowDecoder(fast=False)
    data = bytearray(b"\xfebin")
    for ev in BinlogFile(src, fast=False, share_data=False):
        if ev.name == "TABLE_MAP_EVENT":
            table = decoder.table_map(ev)
        if ev.name != event:
            data += ev.raw
            continue
        d = ev.data
        present = list(d.columns.columns_present)
        ctx = dict(ev.context, columns=table.columns, images=[present], json_columns=table.json_columns)
        images = parse_row_images(bytes(d.rows), ctx, fast=False)
        change(images.rows[0].images[0].cells)
        d.rows = T.row_images.build(images, **ctx)
        size = len(rebuild_event(ev))
        ev.header.event_length = size
        ev.header.next_position = len(data) + size
        if ev.checksum is not None:
            raw = rebuild_event(ev)
            ev.checksum = zlib.crc32(raw[:-4])
        data += rebuild_event(ev)
        out_path.write_bytes(bytes(data))
        return out_path
    raise AssertionError(f"no {event} in {src}")


def patched(src, out_path, at, new: bytes):
    """`src` (a file without CRC32s) with the bytes at `at` replaced by `new`."""
    data = bytearray(src.read_bytes())
    data[at:at + len(new)] = new
    out_path.write_bytes(bytes(data))
    return out_path


# ---------------------------------------------------------------------------------------------
# A. JSON columns

@needs_corpus
def test_json_column_with_opaque_scalars_is_mysql_text(tmp_path, capsysbinary):
    """A DECIMAL, a DATE, a DATETIME, a TIME and an opaque binary string (field type 15, as
    MySQL stores CAST(x'55' AS JSON)) inside a JSON document: the JSONL value is the text MySQL's
    Json_wrapper::to_string gives, the same the text dump shows between its quotes."""
    doc = {"n": decimal.Decimal("1.50"), "d": dt.date(2024, 1, 2),
           "t": dt.datetime(2024, 1, 2, 3, 4, 5, 6), "h": -dt.timedelta(hours=1, microseconds=5),
           "o": JsonOpaque(15, b"U"), "f": 1.0, "a": [decimal.Decimal("-0.001"), None, True]}
    want = ('{"a": [-0.001, null, true], "d": "2024-01-02", "f": 1.0, "h": "-01:00:00.000005", '
            '"n": 1.50, "o": "base64:type15:VQ==", "t": "2024-01-02 03:04:05.000006"}')

    def change(cells):
        cells[1] = doc
    path = with_row_values(CORPUS / "json.binlog.000001", tmp_path / "json-opaque.000001", change)
    (rec,) = rows_of(jsonl(capsysbinary, path))
    assert rec["after"]["@2"] == want
    assert rec["after"]["@1"] == 1 and rec["after"]["@3"] == "Joe"
    _, text, _ = run(capsysbinary, "dump", "--format", "text", path)
    assert f"@2='{want}'".encode() in text


@needs_corpus
def test_every_json_value_of_the_corpus_is_one_string_form(capsysbinary):
    """Inserts, full updates (before and after) and the partial update of json.binlog: each JSON
    column value is the document text; the partial update without its before value lists its
    diffs, each value as JSON text too."""
    recs = rows_of(jsonl(capsysbinary, CORPUS / "json.binlog.000001"))
    docs = [img["@2"] for r in recs for img in (r["before"], r["after"]) if img and "@2" in img]
    plain = [d for d in docs if isinstance(d, str)]
    assert plain[0] == '{"age": 24, "data": "xxxxxxxxxx", "name": "Joe"}'
    assert all(isinstance(json.loads(d), dict) for d in plain)
    partial = [d for d in docs if not isinstance(d, str)]
    assert partial == [{"json_diffs": [{"op": "REPLACE", "path": "$.age", "value": str(age)}]}
                       for age in (26, 34, 42, 26, 34, 42)]


def test_json_values_and_diffs_by_column():
    """JSON columns known by their column: scalars as their JSON text (a string column's str stays
    a str), diff values as JSON text, REMOVE without one, JSON null as "null"."""
    from binlog_grammar.output.dump import image_json
    from binlog_grammar.binlog.rows import Column

    cols = [Column(index=0, name="j", type=245, real_type=245, charset=None),
            Column(index=1, name="s", type=15, real_type=15, charset="utf8mb4")]
    img = image_json({"j": "text", "s": "text"}, cols)
    assert img == {"j": '"text"', "s": "text"}
    assert image_json({"j": decimal.Decimal("2.0")}, cols) == {"j": "2.0"}
    diffs = PartialJson((JsonDiff("REPLACE", "$.a", {"b": None}), JsonDiff("REMOVE", "$.c", None),
                         JsonDiff("INSERT", "$.d", None)))
    assert image_json({"j": diffs}, cols) == {"j": {"json_diffs": [
        {"op": "REPLACE", "path": "$.a", "value": '{"b": null}'},
        {"op": "REMOVE", "path": "$.c", "value": None},
        {"op": "INSERT", "path": "$.d", "value": "null"}]}}


# ---------------------------------------------------------------------------------------------
# B. text without charset metadata

@needs_corpus
def test_char_values_without_charset_metadata_are_text(capsysbinary):
    """MySQL 5.6.4 (no optional metadata): the CHAR values 'one' and 'two' are text, as
    mysqlbinlog prints them, not base64."""
    recs = rows_of(jsonl(capsysbinary, CORPUS / "ver_trunk_row_v2.001"))
    assert [r["after"] for r in recs if r["op"] == "c"] == [{"@1": 0, "@2": "one"},
                                                            {"@1": 1, "@2": "two"}]
    assert all("text_base64" not in r for r in recs)


def _trunk_with(tmp_path, name, value_byte=None, server_collation=None):
    """ver_trunk_row_v2.001 with the 'e' of the first 'one' replaced, and/or the collation_server
    of the BEGIN before that rows event changed (the file has no CRC32s)."""
    src = CORPUS / "ver_trunk_row_v2.001"
    data = bytearray(src.read_bytes())
    events = {ev.offset: ev for ev in BinlogFile(src)}
    rows = events[569]
    assert rows.name == "WRITE_ROWS_EVENT"
    if value_byte is not None:
        at = data.index(b"\x03one", rows.offset) + 3
        data[at] = value_byte
    if server_collation is not None:
        begin = events[457]
        assert begin.data.query == "BEGIN"
        charset = data.index(b"\x04\x21\x00\x21\x00\x08\x00", begin.offset)  # Q_CHARSET_CODE
        data[charset + 5:charset + 7] = server_collation.to_bytes(2, "little")
    path = tmp_path / name
    path.write_bytes(bytes(data))
    return path


@needs_corpus
def test_text_without_charset_metadata_follows_the_server_charset(tmp_path, capsysbinary):
    """collation_server latin1 (8): the byte 0xE9 is 'é'. collation_server utf8 (33): 0xE9 alone is
    not UTF-8, so it is written \\xe9 and its bytes are in text_base64."""
    latin1 = _trunk_with(tmp_path, "latin1.001", value_byte=0xE9)
    rec = rows_of(jsonl(capsysbinary, latin1))[0]
    assert rec["after"]["@2"] == "oné" and "text_base64" not in rec

    utf8 = _trunk_with(tmp_path, "utf8.001", value_byte=0xE9, server_collation=33)
    rec = rows_of(jsonl(capsysbinary, utf8))[0]
    assert rec["after"]["@2"] == "on\\xe9"
    assert rec["text_base64"] == {"after": {"@2": base64.b64encode(b"on\xe9").decode()}}


def test_binary_values_stay_base64_and_known_charsets_are_kept():
    from binlog_grammar.output.dump import image_json
    from binlog_grammar.binlog.rows import Column

    cols = [Column(index=0, name="b", type=254, real_type=254, charset="binary"),
            Column(index=1, name="u", type=254, real_type=254, charset=None),
            Column(index=2, name="s", type=15, real_type=15, charset="sjis")]
    raw = {}
    out = image_json({"b": b"\xe9", "u": b"caf\xc3\xa9", "s": "a\udc81"}, cols, "utf8mb4", raw)
    assert out == {"b": "6Q==", "u": "café", "s": "a\\x81"}
    assert raw == {"s": base64.b64encode(b"a\x81").decode()}


# ---------------------------------------------------------------------------------------------
# D. statements in their character set

@needs_corpus
def test_latin1_statement_is_text_and_every_line_is_utf8(tmp_path, capsysbinary):
    """ver_5_1-wl2325_r.001's statements are latin1 (character_set_client 8): a byte 0xE9 in one
    is 'é' in the JSON text, never a raw byte."""
    src = CORPUS / "ver_5_1-wl2325_r.001"
    at = src.read_bytes().index(b"CREATE TABLE t1") + 14
    path = patched(src, tmp_path / "latin1-query.001", at, b"\xe9")
    recs = jsonl(capsysbinary, path)
    q = [r for r in recs if r.get("event") == "QUERY_EVENT"][0]["data"]
    assert q["query"].startswith("CREATE TABLE t\u00e9 (a int") and "query_base64" not in q


@needs_corpus
def test_statement_bytes_that_do_not_decode_are_escaped_with_base64(tmp_path, capsysbinary):
    """ver_trunk_row_v2.001's statements are utf8 (character_set_client 33): a lone 0xFF does not
    decode, so it is written \\xff and query_base64 holds the statement's exact bytes."""
    src = CORPUS / "ver_trunk_row_v2.001"
    stmt = src.read_bytes().index(b"CREATE TABLE t1")
    path = patched(src, tmp_path / "utf8-query.001", stmt + 14, b"\xff")
    recs = jsonl(capsysbinary, path)
    q = [r for r in recs if r.get("event") == "QUERY_EVENT"][0]["data"]
    assert q["query"].startswith("CREATE TABLE t\\xff (a int")
    raw = base64.b64decode(q["query_base64"])
    assert raw.startswith(b"CREATE TABLE t\xff (a int") and len(raw) == len(q["query"]) - 3


# ---------------------------------------------------------------------------------------------
# every line valid, whatever the input

@pytest.mark.parametrize("path", SAMPLES + corpus_files(), ids=lambda p: p.name)
def test_every_jsonl_line_of_every_file_is_utf8_json(capsysbinary, path):
    code = 1 if path.name in DAMAGED_ON_PURPOSE else 0
    for opts in ((), ("--rows-only",), ("--skip-damaged",)):
        recs = jsonl(capsysbinary, *opts, path, code=code)
        assert recs or path.name in DAMAGED_ON_PURPOSE or opts == ("--rows-only",)


def _mutants(count, seed=20240514):
    """`count` seeded random mutations of corpus and sample files: bytes flipped, set to 0x80-0xFF
    (not UTF-8 alone), runs overwritten, or the file cut."""
    rnd = random.Random(seed)
    sources = [p for p in SAMPLES + corpus_files() if p.name not in DAMAGED_ON_PURPOSE
               and p.stat().st_size < 200_000]
    for k in range(count):
        src = sources[k % len(sources)]
        data = bytearray(src.read_bytes())
        for _ in range(rnd.randint(1, 6)):
            at = rnd.randrange(4, len(data))
            how = rnd.random()
            if how < 0.4:
                data[at] ^= 1 << rnd.randrange(8)
            elif how < 0.8:
                data[at] = rnd.randrange(0x80, 0x100)
            elif how < 0.95:
                n = rnd.randint(2, 16)
                data[at:at + n] = bytes(rnd.randrange(256) for _ in range(n))
            else:
                del data[at + 1:]
        yield pytest.param(src.name, bytes(data), id=f"{k:02d}-{src.name}")


@pytest.mark.parametrize("name, data", list(_mutants(48)))
def test_jsonl_of_damaged_files_is_utf8_json(tmp_path, capsysbinary, name, data):
    """Random damage never makes a line that is not UTF-8 JSON, nor a message naming a Python
    exception; without CRC32 checks the damaged bytes reach the statement and value decoders."""
    path = tmp_path / name
    path.write_bytes(data)
    for opts in (("--skip-damaged",), ("--skip-damaged", "--no-checksum"), ("--no-checksum",)):
        got, out, err = run(capsysbinary, "dump", "--format", "jsonl", *opts, path)
        assert got in (0, 1), err
        assert not EXCEPTION_NAMES.search(err), err
        for line in out.splitlines():
            json.loads(line.decode("utf-8"))
