"""`dump --format hexdump` (binlog_grammar/output/hexdump.py): every byte of an event once, in order, labelled by
its spec field.

- every byte of every event of the MariaDB sample and of a MySQL corpus file appears exactly once
  in the dump, in order, at its file offset (the dump's hex is parsed back and compared with the
  event's raw bytes);
- labels name the spec's fields: each label starts with a common-header field, a field of the
  event's generated struct, `checksum`, or `row N before|after:`;
- row values are labelled with their column names, types and the values rows.RowDecoder decodes;
- compressed content (MariaDB compressed rows, MySQL TRANSACTION_PAYLOAD_EVENT) is labelled as
  compressed and its decompressed bytes follow with offsets into them;
- an unknown event type and damaged bytes are dumped raw, labelled `unparsed`, without a traceback.
"""
from __future__ import annotations

import contextlib
import io
import re
import zlib

import pytest

from binlog_grammar.output import hexdump
from binlog_grammar.errors import BinlogError
from binlog_grammar.binlog.events import decompress
from binlog_grammar.generated import types as T
from binlog_grammar.generated.catalog import EVENTS
from binlog_grammar.binlog.reader import BinlogFile, parse_event
from binlog_grammar.binlog.rows import RowDecoder

from helpers.paths import CORPUS, ROOT, needs_corpus

SAMPLE = ROOT / "samples" / "mariadb-10.11-sample.000001"
ENUM_SET = CORPUS / "mysql-enum-string-set.000001"
COMPRESSED = CORPUS / "transaction_compression.000001"

LINE = re.compile(r"^# (\+?)([0-9a-f]{7,})  ((?:[0-9a-f]{2} )*[0-9a-f]{2}) +\|(.*)\|  (.+)$")
HEADER_FIELDS = {sc.name for sc in T.common_header.subcons}


def parse(text):
    """[(relative, offset, bytes, label)] of the byte lines of a dump, in order."""
    out = []
    for line in text.splitlines():
        m = LINE.match(line)
        if m:
            out.append((bool(m[1]), int(m[2], 16), bytes.fromhex(m[3]), m[5]))
    return out


def event_lines(text, relative=False):
    """The byte lines of the event itself (before any section of decompressed bytes)."""
    lines = parse(text)
    out = []
    for rel, off, data, label in lines:
        if rel != relative:
            if out:
                break
            continue
        out.append((off, data, label))
    return out


def runs(lines):
    """[(offset, bytes, label)] with continuation lines joined to their run."""
    out = []
    for off, data, label in lines:
        if label == hexdump.CONT:
            assert out, "a dump starts with a continuation line"
            o, d, lab = out[-1]
            assert o + len(d) == off
            out[-1] = (o, d + data, lab)
        else:
            out.append((off, data, label))
    return out


def events_with_tables(path):
    """(event, table) of every event of a file; rows events with the table their TABLE_MAP made."""
    decoder = RowDecoder()
    f = BinlogFile(path)
    for ev in f:
        table = None
        if ev.type is not None and ev.type.name == "TABLE_MAP_EVENT":
            decoder.table_map(ev)
        elif ev.type is not None and ev.type.row_op:
            table = decoder.tables[int(ev.data.table_id)]
        yield ev, table, decoder, f.state


def files():
    out = [pytest.param(SAMPLE, id="mariadb-sample")]
    out.append(pytest.param(ENUM_SET, id="mysql-enum-string-set",
                            marks=pytest.mark.skipif(not ENUM_SET.is_file(), reason="corpus absent")))
    return out


# ---------------------------------------------------------------------------------------------
# every byte once, in order, labelled from the spec

@pytest.mark.parametrize("path", files())
def test_every_byte_appears_once_in_order(path):
    n = 0
    for ev, table, _, state in events_with_tables(path):
        text = hexdump.render(ev, state, table)
        assert text.splitlines()[0] == f"# at {ev.offset}"
        lines = event_lines(text)
        assert b"".join(d for _, d, _ in lines) == ev.raw, (ev.offset, ev.name)
        pos = ev.offset
        for off, data, _ in lines:
            assert off == pos and 1 <= len(data) <= hexdump.BYTES_PER_LINE
            pos += len(data)
        n += 1
    assert n > 10


@pytest.mark.parametrize("path", files())
def test_labels_name_spec_fields(path):
    for ev, table, _, state in events_with_tables(path):
        fields = {sc.name for sc in ev.type.struct.subcons if sc.name}
        for off, data, label in runs(event_lines(hexdump.render(ev, state, table))):
            assert "unparsed" not in label and "unlabelled" not in label, (ev.name, label)
            if label.startswith("row "):
                assert ev.type.row_op, label
                assert re.match(r"row \d+ (before|after): \S", label), label
                continue
            head = re.match(r"[a-z_0-9]+", label)[0]
            if off < ev.offset + ev.context["header_len"]:
                assert head in HEADER_FIELDS, label
            elif ev.footer and off == ev.end - 4:
                assert head == "checksum" and label.endswith("(CRC32 ok)"), label
            else:
                assert head in fields, (ev.name, label, fields)


def test_header_and_body_labels_of_the_sample():
    evs = {}
    for ev, table, _, state in events_with_tables(SAMPLE):
        evs.setdefault(ev.name, hexdump.render(ev, state, table))
    labels = {name: [lab for _, _, lab in runs(event_lines(t))] for name, t in evs.items()}
    fde = labels["FORMAT_DESCRIPTION_EVENT"]
    assert fde[:6] == ["timestamp = 2026-11-22 08:03:57 UTC (1795334637)",
                       "type_code = FORMAT_DESCRIPTION_EVENT (15)", "server_id = 1",
                       "event_length = 252", "log_pos = 256", "flags = 0x0"]
    assert "binlog_version = 4" in fde and "common_header_len = 19" in fde
    assert any(lab.startswith('server_version = "10.11.') for lab in fde)
    assert fde[-1].startswith("checksum = 0x") and fde[-1].endswith("(CRC32 ok)")
    tm = labels["TABLE_MAP_EVENT"]
    for want in ('table = "customers"', "optional_metadata[2] tag = COLUMN_NAME (4)",
                 'optional_metadata[2].column_name[0] = "id"',
                 'optional_metadata[2].column_name[11] = "big"',
                 'optional_metadata[5].enum_str_value[0].members[1] = "pro"'):
        assert want in tm, want
    assert any(lab.startswith("column_types = [LONG, VARCHAR, VARCHAR, NEWDECIMAL") for lab in tm)
    q = labels["QUERY_EVENT"]
    assert "status_vars[0] tag = Q_FLAGS2_CODE (0)" in q and 'catalog' in " ".join(q)
    assert 'query = "CREATE DATABASE shop"' in q
    wr = labels["WRITE_ROWS_EVENT_V1"]
    assert "columns.columns_present = bits 111111111111" in wr
    assert "row 1 after: null_bits = bits 000000000000 (no NULLs)" in wr
    assert "row 1 after: id (LONG) = 1" in wr
    assert 'row 1 after: name (VARCHAR) = "Ada"' in wr
    assert "row 3 after: null_bits = bits 000001100100 (NULL: seen, note, ratio)" in wr


def test_long_runs_wrap_and_long_values_are_shortened():
    for ev, table, _, state in events_with_tables(SAMPLE):
        if ev.name == "WRITE_ROWS_EVENT_V1":
            break
    lines = event_lines(hexdump.render(ev, state, table))
    note = [i for i, (_, _, lab) in enumerate(lines) if lab.startswith("row 4 after: note (BLOB)")]
    assert len(note) == 1
    i = note[0]
    value = lines[i][2].split(" = ", 1)[1]
    assert value.endswith("...") and len(value) <= hexdump.VALUE_LIMIT
    cont = 0
    while lines[i + 1 + cont][2] == hexdump.CONT:
        cont += 1
    # a 300-byte BLOB and its 2-byte length: 302 bytes over 16-byte lines
    assert cont == (302 + 15) // 16 - 1


# ---------------------------------------------------------------------------------------------
# row values against rows.RowDecoder

@pytest.mark.parametrize("path", files())
def test_row_values_are_the_decoded_values(path):
    checked = 0
    for ev, table, decoder, state in events_with_tables(path):
        if not (ev.type and ev.type.row_op):
            continue
        text = hexdump.render(ev, state, table)
        labels = [line[-1] for line in parse(text) if line[-1].startswith("row ")]
        for i, ch in enumerate(decoder.changes(ev), 1):
            for side, image in (("before", ch.before), ("after", ch.after)):
                if image is None:
                    continue
                for c in table.columns:
                    if c.name not in image:
                        continue
                    v = image[c.name]
                    prefix = f"row {i} {side}: {c.name} ({c.type_name}) = "
                    mine = [lab for lab in labels if lab.startswith(prefix)]
                    if v is None:  # NULL: no bytes, named in the image's null_bits label
                        assert not mine
                        nb = next(lab for lab in labels if lab.startswith(f"row {i} {side}: null_bits"))
                        assert c.name in nb.split("NULL: ", 1)[1]
                    else:
                        assert mine == [prefix + hexdump.fmt_cell(v, c)], (prefix, mine)
                    checked += 1
    assert checked > 10


def test_mysql_enum_set_rows():
    if not ENUM_SET.is_file():
        pytest.skip("corpus absent")
    text = "\n".join(hexdump.render(ev, state, table) for ev, table, _, state in events_with_tables(ENUM_SET))
    labels = {line[-1] for line in parse(text)}
    for want in ('row 1 before: f3 (ENUM) = "var1"', 'row 1 before: f4 (SET) = {"one", "three"}',
                 'row 1 after: f2 (VARCHAR) = "field_2"', 'row 1 after: f4 (SET) = {"two", "four"}'):
        assert want in labels, want


# ---------------------------------------------------------------------------------------------
# compressed content

def test_mariadb_compressed_rows_are_labelled_and_shown_decompressed():
    seen = 0
    for ev, table, decoder, state in events_with_tables(SAMPLE):
        if "COMPRESSED" not in ev.name:
            continue
        text = hexdump.render(ev, state, table)
        own = runs(event_lines(text))
        assert b"".join(d for _, d, _ in own) == ev.raw
        rows = [(d, lab) for _, d, lab in own if lab.startswith("rows = ")]
        assert len(rows) == 1
        assert rows[0][0] == bytes(ev.data.rows)
        assert rows[0][1].startswith("rows = compressed row images (mariadb_zlib), ")
        plain = decoder.rows_bytes(ev)
        assert plain != bytes(ev.data.rows)
        inner = event_lines(text, relative=True)
        assert b"".join(d for _, d, _ in inner) == plain
        assert [off for off, _, _ in inner][0] == 0
        labels = [lab for _, _, lab in runs(inner)]
        assert labels[0].startswith("row 1 ") and "null_bits" in labels[0]
        assert any(lab.startswith("row 1 after: id (LONGLONG) = ") for lab in labels)
        seen += 1
    assert seen == 2


@pytest.mark.skipif(not COMPRESSED.is_file(), reason="corpus absent")
def test_transaction_payload():
    from binlog_grammar.binlog.stream import open_stream

    s = list(open_stream([COMPRESSED]).events())
    outer = next(se for se in s if se.event.name == "TRANSACTION_PAYLOAD_EVENT")
    ev = outer.event
    plain = decompress("zstd", bytes(ev.data.payload))
    # by default the payload's events are not repeated (the stream yields them after it)
    text = hexdump.render(outer)
    own = runs(event_lines(text))
    assert b"".join(d for _, d, _ in own) == ev.raw
    assert not event_lines(text, relative=True)
    pay = [lab for _, d, lab in own if d == bytes(ev.data.payload)]
    assert pay == [f"payload = compressed events (zstd), {len(bytes(ev.data.payload))} -> {len(plain)} "
                   f"bytes, 4 events"]
    assert "payload holds 4 events: QUERY_EVENT, TABLE_MAP_EVENT, WRITE_ROWS_EVENT, XID_EVENT" in text
    # with inner_events=True they follow, with offsets into the decompressed payload
    full = hexdump.render(outer, inner_events=True)
    inner = event_lines(full, relative=True)
    assert b"".join(d for _, d, _ in inner) == plain
    assert "# -- inner WRITE_ROWS_EVENT at payload offset 116 (36 bytes)" in full
    assert "row 1 after: @1 (LONG) = " in full or any(
        lab.startswith("row 1 after: ") and "(LONG) = " in lab for _, _, lab in inner)
    # each inner event of the stream dumps with its payload offsets
    for se in s:
        if not se.event.inner:
            continue
        t = hexdump.render(se)
        po = se.event.extra["payload_offset"]
        assert t.splitlines()[0] == f"# at {ev.offset}, inner event at payload offset {po}"
        lines = event_lines(t, relative=True)
        assert lines[0][0] == po
        assert b"".join(d for _, d, _ in lines) == se.event.raw == plain[po:po + len(se.event.raw)]
        assert "unparsed" not in t and "no TABLE_MAP" not in t


def test_stream_event_and_event_with_table_agree():
    from binlog_grammar.binlog.stream import open_stream

    mine = [hexdump.render(ev, state, table) for ev, table, _, state in events_with_tables(SAMPLE)]
    theirs = [hexdump.render(se) for se in open_stream([SAMPLE]).events()]
    assert sorted(theirs) == sorted(mine)


# ---------------------------------------------------------------------------------------------
# what does not parse

def _sample_events():
    f = BinlogFile(SAMPLE)
    return list(f), f.state


def _recrc(raw: bytes) -> bytes:
    return raw[:-4] + zlib.crc32(raw[:-4]).to_bytes(4, "little")


def _check_raw_dump(text, raw, offset):
    lines = event_lines(text)
    assert b"".join(d for _, d, _ in lines) == raw
    assert lines[0][0] == offset
    assert "Traceback" not in text


def test_unknown_event_type_is_dumped_unparsed():
    evs, state = _sample_events()
    xid = next(ev for ev in evs if ev.name == "XID_EVENT")
    code = next(c for c in range(200, 256) if c not in EVENTS)
    raw = _recrc(xid.raw[:4] + bytes([code]) + xid.raw[5:])
    ev = parse_event(raw, state, file="x", offset=xid.offset)  # the reader keeps it as raw bytes
    assert ev.type is None
    for text in (hexdump.render(ev, state), hexdump.render_bytes(raw, state, offset=xid.offset)):
        _check_raw_dump(text, raw, xid.offset)
        labels = [lab for _, _, lab in runs(event_lines(text))]
        assert labels[1] == f"type_code = {code}"
        assert labels[6] == f"unparsed: no spec describes event type code {code}"
        assert labels[7].endswith("(CRC32 ok)")
        assert f"UNKNOWN_TYPE_{code}" in text


def test_damaged_event_is_dumped_unparsed():
    evs, state = _sample_events()
    tm = next(ev for ev in evs if ev.name == "TABLE_MAP_EVENT")
    hl = state.header_len
    # db_len says 200 bytes: the struct cannot parse the event; the CRC32 no longer matches
    raw = tm.raw[:hl + 8] + bytes([200]) + tm.raw[hl + 9:]
    with pytest.raises(BinlogError):
        parse_event(raw, state, file="x", offset=tm.offset)
    text = hexdump.render_bytes(raw, state, offset=tm.offset)
    _check_raw_dump(text, raw, tm.offset)
    labels = [lab for _, _, lab in runs(event_lines(text))]
    assert labels[:2] == ["timestamp = 2026-11-22 08:03:57 UTC (1795334637)",
                          "type_code = TABLE_MAP_EVENT (19)"]
    assert labels[6].startswith("unparsed: TABLE_MAP_EVENT: ")
    assert labels[7].endswith("(CRC32 MISMATCH)")
    # fewer bytes than a header, and a header whose type is unknown and whose data is garbage
    short = hexdump.render_bytes(tm.raw[:7], state, offset=9)
    _check_raw_dump(short, tm.raw[:7], 9)
    assert "unparsed: 7 bytes, shorter than the 19-byte header" in short


def test_rows_that_do_not_fit_their_table_are_dumped_unparsed():
    evs, state = _sample_events()
    decoder = RowDecoder()
    for ev in evs:
        if ev.name == "TABLE_MAP_EVENT":
            decoder.table_map(ev)
    rows = [ev for ev in evs if ev.type is not None and ev.type.row_op]
    a, b = rows[0], next(ev for ev in rows if ev.data.table_id != rows[0].data.table_id)
    wrong = decoder.tables[int(b.data.table_id)]
    # no table at all: the row bytes are one run
    text = hexdump.render(a, state)
    _check_raw_dump(text, a.raw, a.offset)
    assert f"rows: row images (no TABLE_MAP of table id {int(a.data.table_id)} known)" in text
    # the table of another event: the row images do not parse with its columns
    text = hexdump.render(a, state, wrong)
    _check_raw_dump(text, a.raw, a.offset)
    bad = [lab for _, _, lab in runs(event_lines(text)) if lab.startswith("unparsed: ")]
    assert len(bad) == 1 and f"row images of {wrong.db}.{wrong.table}" in bad[0]


@needs_corpus
def test_hexdump_of_a_partial_json_update_is_the_same_every_run():
    # the after-image cells of a PARTIAL_UPDATE_ROWS_EVENT once printed construct's `_io` key,
    # a stream object whose address changed from run to run
    from binlog_grammar.cli import main

    path = str(CORPUS / "json.binlog.000001")
    runs = []
    for _ in range(2):
        buf = io.StringIO()
        with contextlib.redirect_stdout(buf):
            assert main(["dump", "--format", "hexdump", path]) == 0
        runs.append(buf.getvalue())
    assert "_io" not in runs[0] and " object at 0x" not in runs[0]
    assert runs[0] == runs[1]


def test_reasons_never_name_a_python_exception_class():
    from binlog_grammar.errors import plain_reason

    assert plain_reason(TypeError("unsupported operand")) == "unsupported operand"
    assert plain_reason(IndexError()) == "the bytes end before the layout does"
    for e in (KeyError(), ValueError(), AttributeError(), TypeError()):
        assert type(e).__name__ not in plain_reason(e)
