"""Every event of every real corpus file parses and rebuilds byte for byte, checksums included;
the files damaged on purpose fail with an error naming file, offset and event type, after every
event before the damage has parsed."""
import pytest

from binlog_grammar.errors import BinlogError
from binlog_grammar.binlog.reader import BinlogFile
from binlog_grammar.binlog.verify import verify_file

from helpers.paths import CORPUS, corpus_files, needs_corpus

DAMAGED = {
    # file: (events before the damage, offset of the damage, event type named)
    "binlog_truncated_event.000001": (0, 4, "FORMAT_DESCRIPTION_EVENT"),
    "binlog_truncated_prev_gtid_event.000001": (1, 120, "PREVIOUS_GTIDS_LOG_EVENT"),
    "corrupt-relay-bin.000624": (872, 91204, "QUERY_EVENT"),
    # MySQL's test for bug #40482 wrote an INCIDENT_EVENT with incident number 66; both servers
    # accept only INCIDENT_LOST_EVENTS (1) and refuse the event (Incident_event constructor).
    "bug40482-bin.000001": (1, 106, "INCIDENT_EVENT"),
}
GOOD = [p.name for p in corpus_files() if p.name not in DAMAGED]


@needs_corpus
@pytest.mark.parametrize("name", GOOD)
def test_corpus_file_rebuilds_byte_identical(name):
    report = verify_file(CORPUS / name)
    assert report["errors"] == []
    assert report["events"] > 0
    assert report["byte_identical"] == report["events"]
    assert report["checksum_failures"] == 0


@needs_corpus
@pytest.mark.parametrize("name", sorted(DAMAGED))
def test_damaged_corpus_file_fails_cleanly(name):
    before, offset, event_type = DAMAGED[name]
    seen = []
    with pytest.raises(BinlogError) as info:
        for ev in BinlogFile(CORPUS / name):
            seen.append(ev)
    err = info.value
    assert len(seen) == before
    assert err.offset == offset
    assert err.event_type == event_type
    assert str(CORPUS / name) in str(err) and f"offset {offset}" in str(err)
    report = verify_file(CORPUS / name)
    assert not report["ok"]
    assert report["byte_identical"] == before
    assert [(e["offset"], e["event_type"]) for e in report["errors"]] == [(offset, event_type)]


@needs_corpus
def test_checksums_are_verified_where_the_fde_announces_them():
    report = verify_file(CORPUS / "json.binlog.000001")
    assert report["checksums_verified"] == report["events"] == 36


@needs_corpus
def test_transaction_payload_inner_events_parse_and_rebuild():
    report = verify_file(CORPUS / "transaction_compression.000001")
    assert report["ok"] and report["inner_events"] == 4
    from binlog_grammar.binlog.reader import inner_events

    bf = BinlogFile(CORPUS / "transaction_compression.000001")
    names = []
    for ev in bf:
        names += [i.name for i in inner_events(ev, bf.state)]
    assert names == ["QUERY_EVENT", "TABLE_MAP_EVENT", "WRITE_ROWS_EVENT", "XID_EVENT"]


@needs_corpus
def test_prerelease_type_codes_are_remapped_as_mysql_does():
    # The 5.2.2-a_drop6p13 server numbered events 16-22 differently; MySQL's FDE constructor
    # (event_type_permutation) maps them, and so do the specs. Read that way, the 38-byte events
    # that carry type code 16 are TABLE_MAP_EVENTs with 4-byte table ids, not broken XID_EVENTs.
    names = [ev.name for ev in BinlogFile(CORPUS / "ver_5_1-wl2325_r.001")]
    assert names.count("TABLE_MAP_EVENT") == 3 and "XID_EVENT" not in names
    assert ["PRE_GA_WRITE_ROWS_EVENT", "PRE_GA_UPDATE_ROWS_EVENT",
            "PRE_GA_DELETE_ROWS_EVENT"] == [n for n in names if n.startswith("PRE_GA")]


@needs_corpus
def test_a_flipped_bit_fails_the_checksum(tmp_path):
    data = bytearray((CORPUS / "json.binlog.000001").read_bytes())
    data[300] ^= 0x04
    bad = tmp_path / "flipped.000001"
    bad.write_bytes(bytes(data))
    report = verify_file(bad)
    assert not report["ok"]
    assert report["checksum_failures"] >= 1 or report["errors"]
