"""The reading commands never fail a valid file, and step over damaged rows events.

- Every reading command (dump as text and as JSON lines, stats, sql, flashback) reads every valid
  corpus file to its end with exit status 0, and nothing it writes names a Python exception.
- Rows a valid file holds but this reader cannot decode (ver_5_1-wl2325_r.001: its TABLE_MAPs
  carry no column metadata, so the CHAR values cannot be sized) are shown raw, with the reason:
  hex in the text dump, a `rows_raw` record in JSONL, a count in stats, a SQL comment in sql and
  flashback; everything else in the file is decoded.
- With --skip-damaged, a rows event whose TABLE_MAP_EVENT was damaged (issue 15, item 2) is damaged
  input too: reported on stderr (offset, type, why), shown raw, and reading goes on to the end of
  the file, exit status 1.
"""
import json
import re

import pytest

from binlog_grammar.cli import main

from helpers.paths import CORPUS, corpus_files, needs_corpus

DAMAGED_ON_PURPOSE = {"binlog_truncated_event.000001", "binlog_truncated_prev_gtid_event.000001",
                      "bug40482-bin.000001", "corrupt-relay-bin.000624"}
VALID = [p for p in corpus_files() if p.name not in DAMAGED_ON_PURPOSE]
TEXT = ("dump", "--format", "text")  # this project's ### text; plain dump: the replay script
COMMANDS = [TEXT, ("dump",), ("dump", "-vv", "--base64-output=decode-rows"),
            ("dump", "--format", "jsonl"),
            ("dump", "--format", "jsonl", "--rows-only"),
            ("stats",), ("stats", "--json"), ("sql",), ("flashback",)]
EXCEPTION_NAMES = re.compile(r"\b(?:[A-Z][A-Za-z]*(?:Error|Exception)|KeyboardInterrupt|"
                             r"StopIteration|GeneratorExit|SystemExit|Traceback)\b")
NO_METADATA = "ver_5_1-wl2325_r.001"
WHY = "its TABLE_MAP_EVENT carries no column metadata"


def run(capsysbinary, *argv):
    code = main(list(map(str, argv)))
    out = capsysbinary.readouterr()
    return code, out.out.decode("utf-8", "surrogateescape"), out.err.decode("utf-8", "replace")


@needs_corpus
@pytest.mark.parametrize("path", VALID, ids=lambda p: p.name)
def test_every_reading_command_reads_every_valid_file_to_the_end(capsysbinary, path):
    _, events, _ = run(capsysbinary, "dump", "--format", "jsonl", path)
    last = json.loads(events.splitlines()[-1])
    for argv in COMMANDS:
        code, out, err = run(capsysbinary, *argv, path)
        assert code == 0, (argv, err)
        assert not EXCEPTION_NAMES.search(err), (argv, err)
        assert not EXCEPTION_NAMES.search(out.replace("error_code", "")), argv
        if argv == TEXT:
            assert f"# at {last['pos']}\n" in out  # the last event, decoded
        assert "Traceback" not in err


@needs_corpus
def test_rows_without_column_metadata_are_shown_raw_and_the_rest_decoded(capsysbinary):
    path = CORPUS / NO_METADATA
    code, out, err = run(capsysbinary, *TEXT, path)
    assert code == 0, err
    assert out.count(f"# rows not decoded: row images of test.t1: {WHY}") == 3
    assert "#   000000  f9 00 00 00 00 03 6f 6e 65 f9 01 00 00 00 03 74 77 6f\n" in out  # 'one', 'two'
    assert out.count("CREATE TABLE") == 3 and "Stop" in out.splitlines()[-3]
    assert err.count("note: rows not decoded") == 3 and "offset 466 (PRE_GA_WRITE_ROWS_EVENT)" in err

    code, out, _ = run(capsysbinary, "dump", "--format", "jsonl", "--rows-only", path)
    recs = [json.loads(line) for line in out.splitlines()]
    assert [(r["event"], r["pos"], r["db"], r["table"]) for r in recs] == [
        ("PRE_GA_WRITE_ROWS_EVENT", 466, "test", "t1"), ("PRE_GA_UPDATE_ROWS_EVENT", 549, "test", "t1"),
        ("PRE_GA_DELETE_ROWS_EVENT", 650, "test", "t1")]
    assert recs[0]["rows_raw"] == "f900000000036f6e65f9010000000374776f"
    assert all(WHY in r["undecoded"] for r in recs)

    code, out, _ = run(capsysbinary, "stats", "--json", path)
    assert json.loads(out)["tables"]["test.t1"]["rows_events_not_decoded"] == 3

    for cmd, verb in (("sql", "replayed"), ("flashback", "inverted")):
        code, out, err = run(capsysbinary, cmd, path)
        assert code == 0, err
        lines = [ln for ln in out.splitlines() if ln.startswith(f"-- not {verb}: ")]
        assert len(lines) == 3 and all("rows not decoded" in ln and WHY in ln for ln in lines)
        assert not [ln for ln in out.splitlines() if ln.startswith(("INSERT", "UPDATE", "DELETE"))]


@needs_corpus
def test_the_api_says_why_without_naming_a_python_exception():
    from binlog_grammar.errors import UndecodableRowsError
    from binlog_grammar.binlog.rows import iter_row_changes
    from binlog_grammar.binlog.stream import open_stream

    with pytest.raises(UndecodableRowsError) as info:
        list(iter_row_changes(CORPUS / NO_METADATA))
    assert WHY in str(info.value) and not EXCEPTION_NAMES.search(str(info.value))
    assert info.value.offset == 466

    s = open_stream([CORPUS / NO_METADATA], raw_rows=True)
    rows = [se for se in s.events() if se.event.type is not None and se.event.type.row_op]
    assert [se.changes for se in rows] == [[], [], []]
    assert all(WHY in se.undecoded for se in rows)
    assert [(u.offset, u.damaged) for u in s.undecoded] == [(466, False), (549, False), (650, False)]


def _damaged_table_map(tmp_path):
    """binlog_56_gtid_reserved_word.000001 with byte 926 flipped: the CRC32 of the TABLE_MAP_EVENT
    at 901 fails, so the WRITE_ROWS_EVENT at 953 has no table."""
    src = CORPUS / "binlog_56_gtid_reserved_word.000001"
    data = bytearray(src.read_bytes())
    data[926] ^= 0xFF
    path = tmp_path / src.name
    path.write_bytes(bytes(data))
    return path


@needs_corpus
@pytest.mark.parametrize("argv", COMMANDS, ids=" ".join)
def test_rows_after_a_damaged_table_map_are_reported_and_reading_goes_on(tmp_path, capsysbinary,
                                                                         argv):
    path = _damaged_table_map(tmp_path)
    code, out, err = run(capsysbinary, *argv, "--skip-damaged", path)
    assert code == 1, err
    assert not EXCEPTION_NAMES.search(err), err
    lines = err.strip().splitlines()
    assert "offset 901 (TABLE_MAP_EVENT)" in lines[0] and "skipped 52 damaged bytes" in lines[0]
    assert ("damaged rows event of" in lines[1] and "offset 953 (WRITE_ROWS_EVENT)" in lines[1]
            and "rows of table id 75, which no TABLE_MAP_EVENT before it maps" in lines[1])
    if argv == TEXT:
        assert "# rows not decoded: rows of table id 75" in out
        assert "#   000000  fe 41 00 00 00\n" in out
        assert "# at 1399\n" in out and "\tStop" in out  # the end of the file
    elif argv[:2] == ("dump",) or "--base64-output=decode-rows" in argv:
        # mysqlbinlog's forms: the replay script (the undecodable event as its BINLOG bytes),
        # its ### text
        assert "# at 953\n" in out and "# at 1399\n" in out and "\tStop" in out
    elif argv[0] == "dump":
        recs = [json.loads(line) for line in out.splitlines()]
        raw = [r for r in recs if r.get("pos") == 953]
        assert raw == [{**raw[0], "event": "WRITE_ROWS_EVENT", "db": None, "table": None,
                        "table_id": 75, "rows_raw": "fe41000000",
                        "undecoded": "rows of table id 75, which no TABLE_MAP_EVENT before it maps"}]
        if "--rows-only" not in argv:
            assert recs[-1]["event"] == "STOP_EVENT"
    elif argv == ("stats", "--json"):
        s = json.loads(out)
        assert s["tables"]["(unmapped table id 75)"]["rows_events_not_decoded"] == 1
        assert s["events"]["STOP_EVENT"]["count"] == 1
    elif argv[0] == "sql":
        assert "-- not replayed: " in out and "offset 953: WRITE_ROWS_EVENT: rows not decoded" in out
        assert "DROP TABLE `GENERATED`" in out  # the statements after it


@needs_corpus
def test_without_skip_damaged_the_damaged_table_map_stops_the_dump(tmp_path, capsysbinary):
    path = _damaged_table_map(tmp_path)
    code, out, err = run(capsysbinary, *TEXT, path)
    assert code == 1
    assert "# at 901" not in out and "# at 953" not in out
    assert len(err.strip().splitlines()) == 1 and "offset 901" in err and "TABLE_MAP_EVENT" in err
