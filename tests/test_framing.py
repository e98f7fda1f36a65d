"""Header-only framing (framing.scan, with the header layout generated from the specs) finds the
same events as the full reader, and rejects a length that does not fit."""
import pytest

from binlog_grammar.errors import BinlogError
from binlog_grammar.framing import scan
from binlog_grammar.reader import BinlogFile
from conftest import ROOT, corpus_files

DAMAGED = {"binlog_truncated_event.000001", "binlog_truncated_prev_gtid_event.000001",
           "bug40482-bin.000001", "corrupt-relay-bin.000624", "ver_5_1-wl2325_r.001"}
FILES = [p for p in [*corpus_files(), *sorted((ROOT / "samples").iterdir())] if p.name not in DAMAGED]


@pytest.mark.parametrize("path", FILES, ids=lambda p: p.name)
def test_scan_finds_the_events_the_reader_finds(path):
    full = [(e.offset, int(e.header.type_code), len(e.raw)) for e in BinlogFile(path)]
    assert list(scan(path)) == full


def test_scan_crosses_buffer_boundaries(monkeypatch):
    import binlog_grammar.framing as fr

    path = ROOT / "samples" / "mariadb-10.11-sample.000001"
    whole = list(scan(path))
    monkeypatch.setattr(fr, "CHUNK", 37)  # smaller than most events and than some headers' offsets
    assert list(scan(path)) == whole


def test_a_length_past_the_end_is_an_error(tmp_path):
    data = bytearray((ROOT / "samples" / "mariadb-10.11-sample.000001").read_bytes())
    second = list(scan(ROOT / "samples" / "mariadb-10.11-sample.000001"))[1][0]
    data[second + 9:second + 13] = (0xFFFFFFF0).to_bytes(4, "little")
    bad = tmp_path / "bad.000001"
    bad.write_bytes(bytes(data))
    with pytest.raises(BinlogError) as e:
        list(scan(bad))
    assert e.value.offset == second and "event_length" in str(e.value)


@pytest.mark.parametrize("path", FILES, ids=lambda p: p.name)
def test_reading_from_an_offset_gives_the_same_events(path):
    """BinlogFile(start=X) reads the file's format event, then the events from X: the same
    headers, data and checksums the whole-file reader gives from X (every fourth offset tried)."""
    full = [(e.offset, e.raw, e.data) for e in BinlogFile(path)]
    for k in range(1, len(full), 4):
        start = full[k][0]
        assert [(e.offset, e.raw, e.data) for e in BinlogFile(path, start=start)] == full[k:], start
