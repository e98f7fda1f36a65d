"""`BinlogFile(path, skip_damaged=True)`: a damaged event is reported as a `Damage` (file, offset,
event type, message, bytes skipped, where reading resumed) and reading goes on at the next whole
event; every other event comes out byte for byte as in the undamaged file. Without the option the
same damage stops the reader with one BinlogError naming file, offset and event type."""
import random
import tracemalloc

import pytest

from binlog_grammar.errors import BinlogError, ChecksumError, TruncatedError
from binlog_grammar.binlog.reader import BinlogFile, Damage

from helpers.paths import CORPUS, ROOT, corpus_files, needs_corpus

DAMAGED_ON_PURPOSE = {"binlog_truncated_event.000001", "binlog_truncated_prev_gtid_event.000001",
                      "corrupt-relay-bin.000624", "bug40482-bin.000001"}
SOURCES = sorted(ROOT.glob("samples/mariadb-*")) + [
    p for p in corpus_files() if p.name not in DAMAGED_ON_PURPOSE]


def events(path, **kw):
    return list(BinlogFile(path, **kw))


def has_crc(path):
    bf = BinlogFile(path)
    for _ in bf:
        pass
    return bf.state.checksum_alg == 1


def read_with_skip(path, **kw):
    """Events and damage in the order the reader produced them."""
    order = []
    bf = BinlogFile(path, skip_damaged=True, on_damage=lambda d: order.append(d), **kw)
    for ev in bf:
        order.append(ev)
    evs = [x for x in order if not isinstance(x, Damage)]
    assert [x for x in order if isinstance(x, Damage)] == bf.damage
    return evs, bf.damage, order


def write(tmp_path, data, name="damaged.000001"):
    path = tmp_path / name
    path.write_bytes(bytes(data))
    return path


def damage(data, ev, how):
    """Damage event `ev` inside `data` (a bytearray of the whole file) in one of several ways."""
    at = ev.offset
    if how == "flip":  # one bit in the middle of the event data: the CRC32 catches it
        data[at + 19 + (len(ev.raw) - 19) // 2] ^= 0x10
    elif how == "length_huge":
        data[at + 9:at + 13] = b"\xff\xff\xff\xff"
    elif how == "length_small":
        data[at + 9:at + 13] = (7).to_bytes(4, "little")
    elif how == "length_off_by_one":
        data[at + 9:at + 13] = (len(ev.raw) - 1).to_bytes(4, "little")
    elif how == "garbage":  # every data byte 0xff: sizes and counts no event can hold
        data[at + 19:at + len(ev.raw)] = b"\xff" * (len(ev.raw) - 19)
    else:
        raise ValueError(how)
    return data


def cases():
    out = []
    for src in SOURCES:
        crc = has_crc(src)
        hows = ["flip", "length_huge", "length_small", "length_off_by_one"] if crc else [
            "length_huge", "length_small", "garbage"]
        out += [pytest.param(src, how, id=f"{src.name}-{how}") for how in hows]
    return out


def middle_event(evs, how):
    """An event near the middle of the file (not the first or last) this damage makes fail."""
    order = sorted(range(1, len(evs) - 1), key=lambda i: abs(i - len(evs) // 2))
    for i in order:
        ev = evs[i]
        if how == "garbage" and ev.name not in ("QUERY_EVENT", "TABLE_MAP_EVENT"):
            continue  # some events hold any bytes at all (an XID is any 8 bytes)
        return i
    return None


@pytest.mark.parametrize("src, how", cases())
def test_one_damaged_event_is_skipped_exactly(tmp_path, src, how):
    good = events(src)
    i = middle_event(good, how)
    if i is None:
        pytest.skip("no event in this file to damage that way")
    bad = good[i]
    path = write(tmp_path, damage(bytearray(src.read_bytes()), bad, how))

    # without skip_damaged: one error, naming the file, the damaged event's offset and type
    seen = []
    with pytest.raises(BinlogError) as info:
        for ev in BinlogFile(path):
            seen.append(ev)
    err = info.value
    assert (err.file, err.offset, err.event_type) == (str(path), bad.offset, bad.name)
    assert f"offset {bad.offset}" in str(err) and str(path) in str(err)
    assert [e.raw for e in seen] == [e.raw for e in good[:i]]

    # with it: that event's bytes skipped, exactly, and every other event as in the good file
    evs, dmg, order = read_with_skip(path)
    assert [(d.file, d.offset, d.skipped_bytes, d.resumed_at) for d in dmg] == [
        (str(path), bad.offset, len(bad.raw), bad.end)]
    assert dmg[0].event_type == err.event_type and dmg[0].message == err.message
    assert [e.raw for e in evs] == [e.raw for e in good[:i] + good[i + 1:]]
    assert [e.offset for e in evs] == [e.offset for e in good[:i] + good[i + 1:]]
    assert order.index(dmg[0]) == i  # reported before the next event is yielded


@needs_corpus
def test_corrupt_relay_log_query_event_is_stepped_over():
    """The QUERY_EVENT at 91204 says 171 bytes, and a ROTATE_EVENT does begin 171 bytes on, but
    what lies between is pieces of other events (an INTVAR_EVENT, the head of a QUERY_EVENT that
    claims more bytes than the file has): the resync must not stop at those pieces."""
    path = CORPUS / "corrupt-relay-bin.000624"
    with pytest.raises(BinlogError):
        events(path)
    evs, dmg, _ = read_with_skip(path)
    assert [(d.offset, d.event_type, d.skipped_bytes, d.resumed_at) for d in dmg] == [
        (91204, "QUERY_EVENT", 171, 91375)]
    assert "status_vars" in dmg[0].message
    assert len(evs) == 873
    assert (evs[-2].offset, evs[-2].name) == (91176, "INTVAR_EVENT")
    size = path.stat().st_size
    assert (evs[-1].offset, evs[-1].name, evs[-1].end) == (91375, "ROTATE_EVENT", size)
    assert evs[-1].data.new_log_ident == "relay-bin.000625"


@needs_corpus
def test_event_the_spec_refuses_is_stepped_over():
    evs, dmg, _ = read_with_skip(CORPUS / "bug40482-bin.000001")
    assert [(d.offset, d.event_type, d.skipped_bytes, d.resumed_at) for d in dmg] == [
        (106, "INCIDENT_EVENT", 22, 128)]
    assert [e.name for e in evs] == ["FORMAT_DESCRIPTION_EVENT", "ROTATE_EVENT"]


@needs_corpus
@pytest.mark.parametrize("name, before, offset", [
    ("binlog_truncated_event.000001", 0, 4), ("binlog_truncated_prev_gtid_event.000001", 1, 120)])
def test_truncated_corpus_file_reports_the_rest(name, before, offset):
    path = CORPUS / name
    evs, dmg, _ = read_with_skip(path)
    assert len(evs) == before
    size = path.stat().st_size
    assert [(d.offset, d.skipped_bytes, d.resumed_at) for d in dmg] == [
        (offset, size - offset, None)]
    assert isinstance(dmg[0].error, TruncatedError)


@pytest.mark.parametrize("src", SOURCES[:6], ids=lambda p: p.name)
def test_truncation_inside_an_event_ends_the_iteration(tmp_path, src):
    good = events(src)
    data = src.read_bytes()
    for ev in (good[len(good) // 2], good[-1]):
        for cut in (ev.offset + 7, ev.offset + 19, ev.end - 1):
            path = write(tmp_path, data[:cut])
            evs, dmg, _ = read_with_skip(path)
            assert [e.raw for e in evs] == [e.raw for e in good if e.end <= ev.offset]
            assert [(d.offset, d.skipped_bytes, d.resumed_at) for d in dmg] == [
                (ev.offset, cut - ev.offset, None)]


def test_length_ffffffff_allocates_nothing_and_is_stepped_over(tmp_path):
    src = ROOT / "samples" / "mariadb-10.11-sample.000001"
    good = events(src)
    data = bytearray(src.read_bytes())
    bad = good[5]
    data[bad.offset + 9:bad.offset + 13] = b"\xff\xff\xff\xff"
    path = write(tmp_path, data)
    tracemalloc.start()
    try:
        evs, dmg, _ = read_with_skip(path)
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert peak < 2 << 20
    assert [(d.offset, d.skipped_bytes, d.resumed_at) for d in dmg] == [(bad.offset, len(bad.raw),
                                                                         bad.end)]
    assert "4294967295" in dmg[0].message
    assert [e.raw for e in evs] == [e.raw for e in good if e is not bad]


def test_garbage_tail_is_scanned_without_reading_it_all_at_once(tmp_path):
    """Damage followed by 3 MiB with no event in it: the scan reads windows, not the whole rest,
    and reports the rest as skipped."""
    src = ROOT / "samples" / "mariadb-10.11-sample.000002"
    good = events(src)
    data = bytearray(src.read_bytes())
    bad = good[-1]
    data[bad.offset + 25] ^= 1
    tail = random.Random(1).randbytes(3 << 20)
    path = write(tmp_path, data + tail)
    tracemalloc.start()
    try:
        evs, dmg, _ = read_with_skip(path)
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert peak < 1 << 20
    assert [e.raw for e in evs] == [e.raw for e in good[:-1]]
    assert [(d.offset, d.skipped_bytes, d.resumed_at) for d in dmg] == [
        (bad.offset, len(bad.raw) + len(tail), None)]


def test_two_damaged_regions_give_two_reports_and_adjacent_damage_one(tmp_path):
    src = ROOT / "samples" / "mariadb-10.11-sample.000001"
    good = events(src)
    data = bytearray(src.read_bytes())
    for i in (10, 20, 21):  # 20 and 21 are neighbours: one damaged region
        data[good[i].offset + 20] ^= 0x80
    path = write(tmp_path, data)
    evs, dmg, _ = read_with_skip(path)
    assert [(d.offset, d.skipped_bytes, d.resumed_at) for d in dmg] == [
        (good[10].offset, len(good[10].raw), good[10].end),
        (good[20].offset, len(good[20].raw) + len(good[21].raw), good[21].end)]
    assert all(isinstance(d.error, ChecksumError) for d in dmg)
    assert [e.raw for e in evs] == [e.raw for i, e in enumerate(good) if i not in (10, 20, 21)]


@pytest.mark.parametrize("src", [ROOT / "samples" / "mariadb-10.11-sample.000001",
                                 CORPUS / "json.binlog.000001"], ids=lambda p: p.name)
def test_lost_format_description_event_checksums_are_inferred(tmp_path, src):
    """With the FDE damaged the reader does not know the file has CRC32 footers; a candidate
    whose last 4 bytes are the CRC32 of the rest tells it, so later events still parse right."""
    if not src.exists():
        pytest.skip("../shared/corpus is absent")
    good = events(src)
    data = bytearray(src.read_bytes())
    data[4 + 19 + 3] ^= 0x01  # a byte of the FDE's server version
    path = write(tmp_path, data)
    evs, dmg, _ = read_with_skip(path)
    assert [(d.offset, d.event_type, d.skipped_bytes) for d in dmg] == [
        (4, "FORMAT_DESCRIPTION_EVENT", len(good[0].raw))]
    assert [e.raw for e in evs] == [e.raw for e in good[1:]]
    assert all(e.checksum_ok for e in evs)


def test_skip_damaged_does_not_change_undamaged_reading():
    for src in SOURCES:
        evs, dmg, _ = read_with_skip(src)
        assert dmg == []
        assert [e.raw for e in evs] == [e.raw for e in events(src)]


def test_not_a_binlog_still_raises(tmp_path):
    path = write(tmp_path, b"\x00binlog? no" * 10)
    with pytest.raises(BinlogError, match="not a binlog file"):
        events(path, skip_damaged=True)


@pytest.mark.parametrize("src", [ROOT / "samples" / "mariadb-10.11-sample.000001",
                                 CORPUS / "json.binlog.000001"], ids=lambda p: p.name)
@pytest.mark.parametrize("stray", [b"\x00", b"\xff\xff", b"\x10\x00\x00", bytes(19), b"\x02" * 23])
def test_stray_bytes_between_events_are_skipped_alone(tmp_path, src, stray):
    """The resync looks at every offset, the one right after the damage included."""
    if not src.exists():
        pytest.skip("../shared/corpus is absent")
    good = events(src)
    at = good[7].offset
    data = bytearray(src.read_bytes())
    data[at:at] = stray
    evs, dmg, _ = read_with_skip(write(tmp_path, data))
    assert [(d.offset, d.skipped_bytes, d.resumed_at) for d in dmg] == [(at, len(stray),
                                                                         at + len(stray))]
    assert [e.raw for e in evs] == [e.raw for e in good]


@needs_corpus
def test_a_header_that_chains_but_does_not_parse_is_passed_over(tmp_path):
    """Without CRC32s the resync needs two plausible headers in a row; a fake one inside the
    damaged event's query text, whose length leads exactly to the real next event, has that,
    but its data (16 bytes for an 8-byte XID) does not parse, so it is not where reading goes on."""
    src = CORPUS / "binlog_transaction.000001"
    good = events(src)
    bad, nxt = good[1], good[2]
    assert bad.name == "QUERY_EVENT" and len(bad.data.query) > 30
    data = bytearray(src.read_bytes())
    hl = 19
    data[bad.offset + hl + 11:bad.offset + hl + 13] = b"\xff\xff"  # status_vars_len: too long
    fake = bad.end - 35  # inside the query text
    assert fake > bad.offset + hl + 13 + bad.data.status_vars_len + 5
    data[fake:fake + hl] = (b"\x01\x00\x00\x00" + bytes([16]) + b"\x01\x00\x00\x00"
                            + (35).to_bytes(4, "little") + (nxt.offset).to_bytes(4, "little")
                            + b"\x00\x00")
    evs, dmg, _ = read_with_skip(write(tmp_path, data))
    assert [(d.offset, d.event_type, d.skipped_bytes, d.resumed_at) for d in dmg] == [
        (bad.offset, "QUERY_EVENT", len(bad.raw), bad.end)]
    assert [e.raw for e in evs] == [e.raw for e in good if e is not bad]


def test_without_checksum_verification_the_resync_chains_headers(tmp_path):
    """verify_checksum=False: CRC32s are not trusted for the resync either; two plausible
    headers in a row (and a parse) find the next event."""
    src = ROOT / "samples" / "mariadb-10.11-sample.000001"
    good = events(src)
    data = bytearray(src.read_bytes())
    bad = good[12]
    data[bad.offset + 9:bad.offset + 13] = b"\xff\xff\xff\x7f"
    evs, dmg, _ = read_with_skip(write(tmp_path, data), verify_checksum=False)
    assert [(d.offset, d.skipped_bytes, d.resumed_at) for d in dmg] == [(bad.offset, len(bad.raw),
                                                                         bad.end)]
    assert [e.raw for e in evs] == [e.raw for e in good if e is not bad]
