"""MariaDB's QUERY_COMPRESSED_EVENT in the compiled JSON-lines lane: a statement whose record the
Python path wrote for the same bytes (its statement inflated) is written by the lane from then on,
as a QUERY_EVENT's is, where the lane stopped at each; `dump --format jsonl` prints the same bytes
on both backends (--jobs 1 and 2, --rows-only) on the 10.11 --log-bin-compress sample
(tests/native/data) with a DDL transaction repeated, and on copies whose compressed statements are
damaged (their CRC32s made right)."""
import random
import zlib

import pytest

from binlog_grammar import native
from binlog_grammar.binlog.framing import scan
from helpers.mysql_binlog import event
from helpers.native import same_jsonl
from helpers.paths import ROOT


pytestmark = pytest.mark.skipif(
    native.unavailable() is not None or native._extension("_jsonl_lane")[0] is None,
    reason="the compiled extensions are not built")
COMPRESSED = ROOT / "tests" / "native" / "data" / "mariadb-10.11-compressed.000001"
QUERY_COMPRESSED = 165


def _repeated(times: int) -> bytes:
    """The sample to its last event, its first GTID + QUERY_COMPRESSED_EVENT (a DDL) `times` times
    more, then its last event (ROTATE or STOP)."""
    data = COMPRESSED.read_bytes()
    evs = list(scan(str(COMPRESSED)))
    k = next(i for i, e in enumerate(evs) if e[1] == QUERY_COMPRESSED)
    pair = [data[p:p + n] for p, _c, n in evs[k - 1:k + 1]]
    last = evs[-1]
    out = bytearray(data[:last[0]])
    for _ in range(times):
        for raw in pair:
            out += event(raw, raw[19:-4], len(out))
    raw = data[last[0]:last[0] + last[2]]
    out += event(raw, raw[19:-4], len(out))
    return bytes(out)


@pytest.mark.parametrize("opts", [(), ("--rows-only",), ("--jobs", "2")], ids=["all", "rows", "jobs2"])
def test_repeated_compressed_statements_are_written_in_c(tmp_path, stops, opts):
    path = tmp_path / "compressed-bin.000001"
    path.write_bytes(_repeated(30))
    code, out, _err = same_jsonl(path, *opts)
    assert code == 0
    if not opts:
        assert out.count('"QUERY_COMPRESSED_EVENT"') == 32
        # each distinct statement's first time is the Python path's (2 in the sample): the
        # lane stopped at all 32 before
        assert stops.get(QUERY_COMPRESSED, 0) <= 2


def test_damaged_compressed_statements_print_the_same(tmp_path):
    data = _repeated(4)
    evs = [(p, n) for p, c, n in scan(str(COMPRESSED)) if c == QUERY_COMPRESSED]
    rnd = random.Random(26)
    src = tmp_path / "src.000001"
    src.write_bytes(data)
    evs = [(p, n) for p, c, n in scan(str(src)) if c == QUERY_COMPRESSED]
    for k in range(20):
        pos, length = evs[rnd.randrange(len(evs))]
        ev = bytearray(data[pos:pos + length - 4])
        for _ in range(rnd.randint(1, 3)):
            ev[rnd.randrange(len(ev) // 2, len(ev))] ^= 1 << rnd.randrange(8)
        path = tmp_path / f"damaged{k}.000001"
        path.write_bytes(data[:pos] + bytes(ev) + zlib.crc32(ev).to_bytes(4, "little") + data[pos + length:])
        same_jsonl(path)
