"""MariaDB's compressed rows events (log_bin_compress) in `stats`' compiled loop: inflated in C
(lanes.h's bg_lanes_inflate) and counted with their twin's plans, where output/stats_fast.py
switched the loop off for them; `stats` prints what `BINLOG_GRAMMAR_BACKEND=python binlog-grammar
stats` prints (text, --json, --top, --jobs 2, exit status and stderr) on a MariaDB 10.11 binlog
written with --log-bin-compress (tests/native/data) and on copies whose bytes are damaged (their
CRC32s made right, so the compressed bytes themselves are read), and the loop counts most of
its transactions."""
import random
import zlib

import pytest

from binlog_grammar import native
from binlog_grammar.binlog.framing import scan
from helpers.native import same_stats
from helpers.paths import ROOT


pytestmark = pytest.mark.skipif(
    native.unavailable() is not None or native._extension("_stats")[0] is None,
    reason="the compiled extensions are not built")
COMPRESSED = ROOT / "tests" / "native" / "data" / "mariadb-10.11-compressed.000001"
ZIPPED = range(166, 172)  # the compressed rows events' type codes (v1 and v2)


@pytest.mark.parametrize("opts", [("--json", "--top", "5"), ("--top", "3"), ("--jobs", "2", "--json")],
                         ids=["json", "text", "jobs2"])
def test_compressed_rows_are_counted_in_c(counted, opts):
    rc, _out, _err = same_stats(*opts, COMPRESSED)
    assert rc == 0
    if "--jobs" not in opts and hasattr(native.stats_loop(), "ZROWS"):
        # 47 transactions, 62 of their rows events compressed: the loop counted none of them
        # before (it stopped at each); now all but those whose tables and shapes come first
        assert counted[0] >= 30


def test_damaged_compressed_rows_count_the_same(tmp_path):
    """1 to 3 bytes of a compressed rows event's last two thirds changed, its CRC32 made right:
    the loop inflates what the Python path inflates, or gives the transaction back."""
    data = COMPRESSED.read_bytes()
    events = [(pos, length) for pos, code, length in scan(str(COMPRESSED)) if code in ZIPPED]
    rnd = random.Random(26)
    for k in range(24):
        pos, length = events[rnd.randrange(len(events))]
        ev = bytearray(data[pos:pos + length - 4])
        for _ in range(rnd.randint(1, 3)):
            ev[rnd.randrange(len(ev) // 3, len(ev))] ^= 1 << rnd.randrange(8)
        out = data[:pos] + bytes(ev) + zlib.crc32(ev).to_bytes(4, "little") + data[pos + length:]
        path = tmp_path / f"damaged{k}.000001"
        path.write_bytes(out)
        same_stats("--json", "--top", "2", path)
