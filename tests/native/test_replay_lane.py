"""The compiled replay lane of `dump` (output/replay_lane.py, native/replay.h through
binlog_grammar.native._lane) writes what Replay writes: byte for byte against the Python backend
and against mariadb-binlog, for the replay form with -v, -vv, -s, --skip-gtids and the printing
switches, on the samples, the compressed test binlog and the corpus files test_replay.py lists as
mariadb-binlog's bytes; on damaged copies (a flipped byte, a cut) the output and the error line
are the Python backend's; the lane writes most events (so these comparisons are not vacuous); its
base64 is quoting.binlog_statement's on drawn bytes; its time texts are Python's in other zones."""
import io
import os
import random
import subprocess
import sys
from contextlib import redirect_stderr

import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st

from binlog_grammar import native
from binlog_grammar.binlog.stream import Written, open_stream
from binlog_grammar.output import quoting
from binlog_grammar.output.replay import DELIMITER, Replay
from binlog_grammar.output.replay_lane import ReplayLane, replay_texts
from helpers.paths import REPLAY_IDENTICAL, ROOT
from helpers.services import need_mariadb_binlog

LANE = native._load_lane()[0]
pytestmark = pytest.mark.skipif(LANE is None or native.unavailable() is not None
                                or not hasattr(LANE.Lane, "replay"),
                                reason="the compiled extensions are not built")
SAMPLES = [ROOT / "samples" / "mariadb-10.11-sample.000001",
           ROOT / "samples" / "mariadb-10.11-sample.000002"]
COMPRESSED = ROOT / "tests" / "native" / "data" / "mariadb-10.11-compressed.000001"
CORPUS = ROOT.parent / "shared" / "corpus" / "mysql"
IDENTICAL = REPLAY_IDENTICAL
DECODE = "--base64-output=decode-rows"
FLAGS = [[], ["-v"], ["-vv"], ["-s"], ["--skip-gtids"], ["-vv", "-s"],
         ["--skip-print-row-count", "--skip-print-row-event-positions", "-v"],
         ["--skip-annotate-row-events", "-vv"], [DECODE], ["-v", DECODE], ["-vv", DECODE],
         ["-vv", "-s", DECODE]]
FLAG_IDS = ["plain", "v", "vv", "s", "skip-gtids", "vv-s", "no-count-no-positions",
            "no-annotate", "decode-rows", "v-decode-rows", "vv-decode-rows", "s-decode-rows"]


def dump(backend, *args):
    """`binlog-grammar --backend BACKEND dump --no-progress ARGS` in this process, its standard
    output a UTF-8 text stream over bytes (as a terminal's or a pipe's, so the lane's runs go to
    its byte buffer as dump writes them): (exit status, stdout bytes, stderr text)."""
    from binlog_grammar.cli import main

    buf = io.BytesIO()
    out = io.TextIOWrapper(buf, encoding="utf-8", errors="surrogateescape", newline="\n")
    err = io.StringIO()
    saved = sys.stdout
    sys.stdout = out
    try:
        with redirect_stderr(err):
            try:
                code = main(["--backend", backend, "dump", "--no-progress", *map(str, args)])
            except SystemExit as e:
                code = e.code
        out.flush()
    finally:
        sys.stdout = saved
        native.select(None)
    return code, buf.getvalue(), err.getvalue()


def lane_counts(path, **kw):
    """(events the replay lane wrote, events Replay wrote) of one file."""
    s = open_stream([path])
    rp = Replay(**kw)
    s.lane = ReplayLane(LANE, rp)
    written = python = 0
    for se in s.events():
        if type(se) is Written:
            written += se.text.count(b"\n# at ") + se.text.startswith(b"# at ")
        else:
            rp.lines(se)
            python += 1
    return written, python


def test_the_lane_writes_most_events(tmp_path):
    """Most events of a file of many transactions (MySQL's too: their BEGIN statements); in a
    sample, whatever Replay has not written once already (its first GTID's session lines, each
    table's first statement)."""
    written, python = lane_counts(COMPRESSED, verbose=2)
    assert written > 10 * python > 0, (written, python)
    mysql = tmp_path / "mysql-repeated.000001"
    mysql.write_bytes(repeated(CORPUS / "mysql-enum-string-set.000001", 40))
    written, python = lane_counts(mysql, verbose=2)
    assert written > 20 * python > 0, (written, python)
    written, python = lane_counts(SAMPLES[0])
    assert written > python / 2 > 0, (written, python)


@pytest.fixture
def lanes(monkeypatch):
    """The replay lanes `dump` attached, as it runs (each counts its runs)."""
    from binlog_grammar.output import replay_lane

    made, attach = [], replay_lane.attach

    def spy(stream, replay):
        lane = attach(stream, replay)
        if lane is not None:
            made.append(lane)
        return lane

    monkeypatch.setattr(replay_lane, "attach", spy)
    return made


@pytest.mark.parametrize("flags", FLAGS, ids=FLAG_IDS)
def test_the_backends_print_the_same(flags, lanes):
    files = [*SAMPLES, COMPRESSED] + [CORPUS / n for n in IDENTICAL if (CORPUS / n).exists()]
    for path in files:
        c, py = dump("c", *flags, path), dump("python", *flags, path)
        assert c == py, (path.name, flags)
    both = dump("c", *flags, *SAMPLES)
    assert both == dump("python", *flags, *SAMPLES) and both[0] == 0
    assert sum(lane.runs for lane in lanes) > len(files)  # the lane wrote runs of every kind


@pytest.mark.server
@pytest.mark.parametrize("flags", [[], ["-v"], ["-vv"], ["-s"], ["-vv", DECODE]],
                         ids=["plain", "v", "vv", "s", "vv-decode-rows"])
def test_the_lane_prints_mariadb_binlogs_bytes(flags):
    need_mariadb_binlog()
    files = [*SAMPLES, COMPRESSED] + [CORPUS / n for n in IDENTICAL if (CORPUS / n).exists()]
    for path in files:
        want = subprocess.run(["mariadb-binlog", "--no-defaults", *flags, str(path)],
                              capture_output=True, check=True).stdout
        assert dump("c", *flags, path)[1] == want, (path.name, flags)


def test_many_transactions_print_the_same(tmp_path):
    """Transactions of MySQL and MariaDB repeated (the lane writes their BEGIN statements,
    GTIDs, rows and XIDs from what Replay wrote for the first): the Python backend's bytes."""
    for name in ("mysql-enum-string-set.000001", "minimal_row_metadata.000001",
                 "json.binlog.000001"):
        if not (CORPUS / name).exists():
            continue
        path = tmp_path / name
        path.write_bytes(repeated(CORPUS / name, 12))
        for flags in ([], ["-vv"], ["-s"]):
            assert dump("c", *flags, path) == dump("python", *flags, path), (name, flags)


@pytest.mark.parametrize("flags", [["--server-id", "1"], ["-o", "3"], ["--do-domain-ids", "0"],
                                   ["--start-position", "900"], ["-d", "test"], ["-H"]],
                         ids=["server-id", "offset", "domain", "start", "database", "hexdump"])
def test_event_rules_leave_the_lane_out(flags, lanes):
    """Options that drop or print events one by one: the lane stays out, the bytes are the
    Python backend's."""
    for path in (SAMPLES[0], COMPRESSED):
        c = dump("c", *flags, path)
        assert c == dump("python", *flags, path) and c[0] == 0, (path.name, flags)
    assert not any(lane.runs for lane in lanes)


def test_damaged_copies_print_the_same(tmp_path):
    """A flipped byte anywhere, or a copy cut anywhere: the text up to the damage, the error line
    and the exit status are the Python backend's, with and without CRC32 checks."""
    rnd = random.Random(28)
    for source in (SAMPLES[0], COMPRESSED):
        data = source.read_bytes()
        for k in range(16):
            bad = bytearray(data)
            if k % 4 == 3:
                bad = bad[:rnd.randrange(4, len(bad))]
            else:
                at = rnd.randrange(4, len(bad))
                bad[at] ^= 1 << rnd.randrange(8)
            path = tmp_path / f"damaged-{k}.000001"
            path.write_bytes(bytes(bad))
            opts = ("--no-checksum",) if k % 2 else ()
            for flags in ([], ["-vv", DECODE]):
                c, py = dump("c", *opts, *flags, path), dump("python", *opts, *flags, path)
                assert c == py, (source.name, k, flags)


@settings(max_examples=80, deadline=None, derandomize=True)
@given(st.binary(max_size=700))
@example(b"")
@example(bytes(57))
@example(bytes(58))
@example(bytes(range(256)) * 2)
def test_base64_is_quoting_binlog_statements(data):
    """native/base64.h's lines (at the width replay_lane reads from quoting.binlog_statement)
    are what quoting.binlog_statement writes for one event."""
    width = replay_texts()["width"]
    want = quoting.binlog_statement([data], DELIMITER)[1]
    assert LANE.base64_lines(data, width) == want.encode("ascii")


@pytest.mark.parametrize("zone", ["Asia/Kolkata", "America/St_Johns", "Pacific/Chatham"])
def test_time_texts_are_pythons_in_other_zones(zone):
    """The header lines' local times (mariadb-binlog prints local time) come from Python: the
    same bytes on both backends in zones with half hours and quarters."""
    env = {**os.environ, "TZ": zone}
    outs = []
    for backend in ("c", "python"):
        r = subprocess.run([sys.executable, "-m", "binlog_grammar", "--backend", backend, "dump",
                            "--no-progress", "-vv", str(SAMPLES[0])], capture_output=True,
                           env=env, cwd=ROOT)
        outs.append((r.returncode, r.stdout, r.stderr))
    assert outs[0] == outs[1] and outs[0][0] == 0


def repeated(source, times: int) -> bytes:
    """`source`'s events up to its first transaction's end, then that transaction (from the
    GTID or BEGIN before its first TABLE_MAP to its XID) `times` more times, each event's
    end_log_pos and CRC32 made right for where it lands: a file of many transactions of one
    server (the MySQL corpus files hold a few each)."""
    import zlib

    from binlog_grammar.binlog.framing import scan
    from binlog_grammar.generated.catalog import EVENTS

    data = source.read_bytes()
    events = [(pos, EVENTS[code].name if code in EVENTS else "", length)
              for pos, code, length in scan(source)]
    first = next(i for i, e in enumerate(events) if e[1] == "TABLE_MAP_EVENT")
    begin = max(i for i in range(first) if events[i][1] in (
        "GTID_EVENT", "GTID_LOG_EVENT", "ANONYMOUS_GTID_LOG_EVENT", "QUERY_EVENT"))
    while begin > 0 and events[begin - 1][1] in ("GTID_LOG_EVENT", "ANONYMOUS_GTID_LOG_EVENT",
                                                 "GTID_EVENT"):
        begin -= 1
    end = next(i for i in range(first, len(events)) if events[i][1] == "XID_EVENT")
    xid = data[events[end][0]:events[end][0] + events[end][2]]  # its CRC32, if it has one
    crc = zlib.crc32(xid[:-4]).to_bytes(4, "little") == xid[-4:]
    out = bytearray(data[:events[end][0] + events[end][2]])
    for _ in range(times):
        for pos, _name, length in events[begin:end + 1]:
            ev = bytearray(data[pos:pos + length])
            ev[13:17] = (len(out) + length).to_bytes(4, "little")
            if crc:
                ev[-4:] = zlib.crc32(bytes(ev[:-4])).to_bytes(4, "little")
            out += ev
    return bytes(out)


def _times_apart(data: bytes, apart: int) -> bytes:
    """The sample with every rows event's timestamp `apart` seconds after its TABLE_MAP's (the
    CRC32s made again): a statement whose two time texts fall in one slot of the lane's 4096."""
    import zlib

    from binlog_grammar.binlog.framing import scan
    from binlog_grammar.generated.catalog import EVENTS

    out = bytearray(data)
    for pos, code, length in scan(SAMPLES[0]):
        et = EVENTS.get(code)
        if et is not None and et.row_op:
            ts = int.from_bytes(out[pos:pos + 4], "little") + apart
            out[pos:pos + 4] = ts.to_bytes(4, "little")
            end = pos + length
            out[end - 4:end] = zlib.crc32(bytes(out[pos:end - 4])).to_bytes(4, "little")
    return bytes(out)


@pytest.mark.parametrize("apart", [4096, 2 ** 20, 1])
def test_time_texts_that_share_a_slot_end(tmp_path, apart):
    """Time texts the lane keeps in one slot, wanted by one statement (a fuzzed file had them):
    the lane asked for each in turn for ever; each second is asked for once a run, then Python
    reads on. The Python backend's bytes, in a bounded time."""
    path = tmp_path / "apart.000001"
    path.write_bytes(_times_apart(SAMPLES[0].read_bytes(), apart))
    outs = [subprocess.run([sys.executable, "-m", "binlog_grammar", "--backend", backend, "dump",
                            "--no-progress", "-vv", str(path)], capture_output=True, cwd=ROOT,
                           timeout=60).stdout for backend in ("c", "python")]
    assert outs[0] == outs[1]


def test_the_replay_campaign_finds_nothing(tmp_path):
    """The bounded share of `tools/fuzz_lane.py --form replay`: the extensions built under
    ASan+UBSan, mutated binlogs dumped in the replay form by both backends (the long campaigns:
    the tool itself; BINLOG_GRAMMAR_NATIVE_REPLAY_FUZZ_EXECS for more here)."""
    sys.path.insert(0, str(ROOT / "tools"))
    import fuzz_lane

    if not fuzz_lane.asan_libs():
        pytest.skip("no libasan.so/libubsan.so from gcc")
    execs = int(os.environ.get("BINLOG_GRAMMAR_NATIVE_REPLAY_FUZZ_EXECS", "120"))
    r = fuzz_lane.campaign(execs, seed=28, findings=tmp_path / "findings", tmp=tmp_path / "run",
                           env={"BG_FUZZ_FORM": "replay"})
    assert r["findings"] == 0, r
    assert r["execs"] == execs and r["lane_events"] > 5 * execs, r


REGRESSIONS = sorted((ROOT / "tests" / "native" / "regressions" / "replay").glob("*.bin"))


@pytest.mark.parametrize("path", REGRESSIONS, ids=[p.stem for p in REGRESSIONS])
def test_fuzzing_findings_print_the_same(path, tmp_path):
    """What `tools/fuzz_lane.py --form replay` found (a name ending -nocrc: found with
    --no-checksum): the Python backend's bytes with every -v count."""
    opts = ["--no-checksum"] if path.stem.endswith("-nocrc") else []
    for flags in ([], ["-v"], ["-vv"], ["-s"]):
        outs = []
        for backend in ("c", "python"):
            load = tmp_path / f"load-{backend}"
            load.mkdir(exist_ok=True)
            code, out, err = dump(backend, *opts, *flags, "-l", load, path)
            outs.append((code, out.replace(bytes(load), b"LOAD"), err))
        assert outs[0] == outs[1], flags
