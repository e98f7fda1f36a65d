"""Header-only framing (framing.scan, with the header layout generated from the specs) finds the
same events as the full reader, and rejects a length that does not fit."""
import pytest

from binlog_grammar.errors import BinlogError
from binlog_grammar.binlog.framing import scan
from binlog_grammar.binlog.reader import BinlogFile
from helpers.paths import ROOT, corpus_files

DAMAGED = {"binlog_truncated_event.000001", "binlog_truncated_prev_gtid_event.000001",
           "bug40482-bin.000001", "corrupt-relay-bin.000624", "ver_5_1-wl2325_r.001"}
FILES = [p for p in [*corpus_files(), *sorted((ROOT / "samples").iterdir())] if p.name not in DAMAGED]


@pytest.mark.parametrize("path", FILES, ids=lambda p: p.name)
def test_scan_finds_the_events_the_reader_finds(path):
    full = [(e.offset, int(e.header.type_code), len(e.raw)) for e in BinlogFile(path)]
    assert list(scan(path)) == full


def test_scan_crosses_buffer_boundaries(monkeypatch):
    import binlog_grammar.binlog.framing as fr

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


# ---------------------------------------------------------------------------------------------
# One framing decision for every command: whether the file carries checksums, decided from its
# FORMAT_DESCRIPTION_EVENT, and what a damaged FDE means

def _cli(*argv):
    import contextlib
    import io

    from binlog_grammar import cli

    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        code = cli.main(list(argv))
    assert "Traceback" not in err.getvalue(), err.getvalue()
    return code


COMMANDS = {
    "verify": ["verify"], "verify --json": ["verify", "--json"], "dump": ["dump", "--format", "text"],
    "dump jsonl": ["dump", "--format", "jsonl"], "dump hexdump": ["dump", "--format", "hexdump"],
    "stats": ["stats"], "sql": ["sql"], "flashback": ["flashback"],
}


def _damaged_by_every_reader(path, headers_only=True) -> dict:
    """{reader: True when it reports the file damaged}: every command (exit 1), the Spark split
    reader over the splits its planner makes, and (headers_only) the header-only framing, which
    reads no event's body but the FDE's."""
    from binlog_grammar.spark.split import SplitReader, plan

    seen = {name: _cli(*argv, str(path)) == 1 for name, argv in COMMANDS.items()}
    if headers_only:
        try:
            list(scan(path))
            seen["framing.scan"] = False
        except BinlogError:
            seen["framing.scan"] = True
    try:
        for sp in plan([str(path)], split_bytes=200)[0]:  # several splits where it can cut
            list(SplitReader(sp))
        seen["spark split"] = False
    except BinlogError:
        seen["spark split"] = True
    return seen


def _mutant(name, at, bit):
    from helpers.paths import CORPUS

    src = (ROOT / "samples" / name) if name.startswith("mariadb") else CORPUS / name
    if not src.exists():
        pytest.skip("../shared/corpus is absent")
    data = bytearray(src.read_bytes())
    if bit is None:  # cut the file short there
        return bytes(data[:at])
    data[at] ^= 1 << bit
    return bytes(data)


MUTANTS = [  # (file, offset, bit or None for a truncation there, damaged?, what)
    ("bug11747887-bin.000003", 33, 0, True, "FDE body of a checksum-aware server, checksum_alg OFF: "
                                            "its own CRC32 (dump refused it, verify said OK)"),
    ("bug11747887-bin.000003", 4 + 110 - 1, 7, True, "the FDE's own CRC32, checksum_alg OFF"),
    ("bug11747887-bin.000003", 4 + 110 - 5, 0, True, "checksum_alg OFF -> CRC32"),
    ("json.binlog.000001", 4 + 19 + 2, 3, True, "server version 8.0.22 -> 0.0.22, before "
                                                "checksums: the next event's CRC32 tells"),
    ("json.binlog.000001", 4 + 121 - 5, 0, True, "checksum_alg CRC32 -> OFF in a dated FDE"),
    ("json.binlog.000001", 4 + 19 + 2 + 50 + 4, 0, True, "common_header_len"),
    ("json.binlog.000001", 300, 2, True, "a QUERY_EVENT's bytes: its CRC32 footer"),
    ("json.binlog.000001", 1001, None, True, "cut short inside an event"),
    ("binlog_transaction.000001", 4 + 19 + 2, 1, True, "server version 5.0.86 -> 7.0.86: a "
                                                       "checksum-aware version, its FDE too short"),
    ("mariadb-10.11-sample.000001", 4 + 100, 4, True, "MariaDB FDE post-header lengths"),
    ("mariadb-10.11-sample.000001", 4 + 17, 0, False, "LOG_EVENT_BINLOG_IN_USE_F, outside the "
                                                      "FDE's CRC32 on purpose"),
    ("mariadb-10.11-sample.000002", 0, None, False, "the file as it is"),
]


@pytest.mark.parametrize("name, at, bit, damaged, what", MUTANTS,
                         ids=[f"{m[0]}@{m[1]}.{m[2]}" for m in MUTANTS])
def test_every_command_agrees_whether_a_file_is_damaged(tmp_path, name, at, bit, damaged, what):
    """Flipping bit 0 at offset 33 of bug11747887-bin.000003 (inside the FDE) made `dump` report
    a CRC32 mismatch and `verify` say OK with 0 checksums checked: each decided for itself which
    checksums the file has. Now the reader decides (reader.fde_checksum, BinlogFile's first-event
    checks, reader.first_format_event for the header walkers) and every command agrees."""
    data = _mutant(name, at, None if at == 0 else bit) if at else _mutant(name, 1 << 30, None)
    path = tmp_path / name
    path.write_bytes(data)
    in_fde = bit is not None and at < 4 + int.from_bytes(data[4 + 9:4 + 13], "little")
    seen = _damaged_by_every_reader(path, headers_only=in_fde or bit is None)
    assert seen == {k: damaged for k in seen}, (what, seen)


_RSS_CHILD = r"""
import sys
import binlog_grammar.binlog.framing as fr

def rss_file_kb():
    with open("/proc/self/status") as fh:
        return next(int(l.split()[1]) for l in fh if l.startswith("RssFile:"))

fr.GIVE_BACK = int(sys.argv[2])
walk = fr.Walk(sys.argv[1], 19, 4, None, short=True, backend="c")
before, most, n = rss_file_kb(), 0, 0
if sys.argv[3] == "picked":  # the --jobs planner's walk (cli/walks.py), every event picked
    from binlog_grammar.cli.walks import picked
    keep = bytearray(256)
    keep[2] = 1
    for n, _ in enumerate(picked(walk, keep), 1):
        if n % 1024 == 0:
            most = max(most, rss_file_kb())
elif sys.argv[3] == "span":  # stats' time span: the walk's records, read in batches
    from binlog_grammar.output.stats_span import _stamps
    for batch in _stamps(walk):
        n += len(batch)
        most = max(most, rss_file_kb())
else:
    for n, _ in enumerate(walk, 1):
        if n % 1024 == 0:
            most = max(most, rss_file_kb())
print(n, most - before)
"""


@pytest.mark.parametrize("how", ["frames", "span", "picked"])
def test_the_compiled_walk_gives_back_the_pages_it_has_passed(tmp_path, how):
    """A header walk over a file must not hold the whole file in its memory by its end (the
    pages of the map count in the resident size while it stands: a 1 GB binlog made the Spark
    planner's worker 977 MB). 48 MiB of 4 KiB events, one header per page: the walk's file-backed
    resident size stays a small part of that, and is the whole file when nothing is given back.
    `span`: the same walk as `stats`' time span reads it (1.07 GB binlog: 935 MB, 67 MB now)."""
    import subprocess
    import sys

    from binlog_grammar import native

    if native.framing() is None:
        pytest.skip("the compiled backend is not built")
    events, size = 12 * 1024, 4096
    head = bytearray(19)
    head[4] = 2  # QUERY_EVENT: any code, the walk reads lengths only
    head[9:13] = size.to_bytes(4, "little")
    body = bytes(head) + bytes(size - 19)
    path = tmp_path / "big.000001"
    with open(path, "wb") as fh:
        fh.write(b"\xfebin")
        for _ in range(events):
            fh.write(body)

    def grown_kb(give_back):
        out = subprocess.run([sys.executable, "-c", _RSS_CHILD, str(path), str(give_back), how],
                             capture_output=True, text=True, check=True).stdout.split()
        assert int(out[0]) == events
        return int(out[1])

    whole = events * size // 1024
    assert grown_kb(1 << 20) < whole // 8
    assert grown_kb(1 << 62) > whole // 2  # the measure sees the pages when they stay
