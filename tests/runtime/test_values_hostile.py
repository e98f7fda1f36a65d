"""Value adapters on hostile metadata (binlog_grammar.runtime.values): a DATETIME2 whose TABLE_MAP
says 38 fraction digits reads 19 bytes of fraction, a microsecond count past a C long, which
datetime() refuses with OverflowError, not ValueError. It must become the value's text like any
other impossible date-time, so the CLI reports the damage it leads to (file, offset, event)
instead of a traceback, alike on both backends. Found by tools/fuzz_jsonl_lane.py (seed 32)."""
import subprocess
import sys

import pytest

from binlog_grammar.runtime.values import DateTime
from helpers.paths import ROOT

SAMPLE = ROOT / "samples" / "mariadb-10.11-sample.000001"
# shop.customers' TABLE_MAP metadata: VARCHAR(160), VARCHAR(30), DECIMAL(12,2), DATETIME2(6) <- , BLOB
AROUND = bytes.fromhex("a0001e000c0206") + bytes([0x02, 0xF8, 0x01])


def test_a_fraction_past_a_c_long_is_text():
    parts = {"year": 2024, "month": 3, "day": 1, "hour": 10, "minute": 0, "second": 0,
             "microsecond": 42009906538808518027415683971690244645847248}
    value = DateTime().decode(parts, {"fsp": 38})
    assert isinstance(value, str) and value.startswith("2024-03-01 10:00:00.")


def _hostile(tmp_path):
    data = bytearray(SAMPLE.read_bytes())
    at = data.find(AROUND)
    assert at >= 0, "the sample's customers TABLE_MAP is not where this test looks"
    hits = 0
    while at >= 0:
        data[at + 6] = 38  # DATETIME2's metadata: fraction digits
        hits += 1
        at = data.find(AROUND, at + 1)
    path = tmp_path / "hostile-fsp.000001"
    path.write_bytes(bytes(data))
    return path, hits


@pytest.mark.parametrize("opts", [["dump", "--format", "jsonl"],
                                  ["dump", "--format", "jsonl", "--envelope", "debezium"],
                                  ["dump", "-vv", "--base64-output=decode-rows"], ["sql"]],
                         ids=lambda o: " ".join(o[1:]) or o[0])
def test_the_cli_reports_the_damage_alike_on_both_backends(tmp_path, opts):
    path, hits = _hostile(tmp_path)
    assert hits >= 1
    seen = []
    for backend in ("python", "c"):
        r = subprocess.run([sys.executable, "-m", "binlog_grammar", "--backend", backend, *opts,
                            "--no-checksum", "--no-progress", str(path)],
                           capture_output=True, text=True, cwd=ROOT)
        assert "Traceback" not in r.stderr, r.stderr[-2000:]
        assert r.returncode == 1 and str(path) in r.stderr and "offset" in r.stderr
        seen.append((r.stdout, r.stderr))
    assert seen[0] == seen[1]
