"""Every input under tests/native/regressions/ (what tools/fuzz_native.py found, and inputs
kept by hand) walks the same on both backends, with every header length and checksum setting;
every input under regressions/rows/ (what `tools/fuzz_native.py --rows` found: a plan and row
bytes, tools/fuzz_rows.c's format) runs through bg_rows() with each sink under AddressSanitizer
and UndefinedBehaviorSanitizer, and under MemorySanitizer when clang is there; every binlog under
regressions/lane/ (what `tools/fuzz_native.py --lane` found in dump's compiled text lane) dumps
the same on both backends, with and without CRC32 checks, and does so with the extensions built
under ASan+UBSan too."""
import importlib.util
import os
import shutil
import subprocess

import pytest

from binlog_grammar import native
from binlog_grammar.binlog import framing as fr
from helpers.native import cli_dump
from helpers.paths import ROOT

FILES = sorted((ROOT / "tests" / "native" / "regressions").glob("*.bin"))
ROW_FILES = sorted((ROOT / "tests" / "native" / "regressions" / "rows").glob("*.bin"))
LANE_FILES = sorted((ROOT / "tests" / "native" / "regressions" / "lane").glob("*.bin"))
INCLUDE = ["-I", str(ROOT / "generated" / "native"), "-I", str(ROOT / "binlog_grammar" / "native")]


@pytest.mark.skipif(native.unavailable() is not None, reason="compiled backend not built")
@pytest.mark.parametrize("path", FILES, ids=lambda p: p.name)
def test_regression_input_walks_the_same(path):
    for hl in (13, 19, 20):
        for checksums in (False, True):
            walks = [fr.Walk(path, hl, checksums=checksums, backend=b) for b in ("python", "c")]
            assert list(walks[1]) == list(walks[0])
            assert walks[1].stop == walks[0].stop


def _tool():
    spec = importlib.util.spec_from_file_location("fuzz_native", ROOT / "tools" / "fuzz_native.py")
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def _replay(tmp_path, cc, sanitize):
    """tools/fuzz_rows.c built to replay files, or None when this compiler has not these
    sanitizers (a build that fails otherwise fails the test)."""
    if shutil.which(cc) is None:
        return None
    src = tmp_path / "t.c"
    src.write_text("int main(void){return 0;}\n")
    if subprocess.run([cc, f"-fsanitize={sanitize}", str(src), "-o", str(tmp_path / "t")],
                      capture_output=True).returncode != 0:
        return None
    exe = tmp_path / f"replay-{cc}"
    _tool().rows_build(tmp_path, replay=True, cc=cc, sanitize=sanitize, exe=exe)
    return exe


def _run(exe, files):
    # an allocation past 1 GB is a finding (a buffer sized by a plan's number), not a machine's swap
    env = dict(os.environ, ASAN_OPTIONS="detect_leaks=1:max_allocation_size_mb=1024:"
               "allocator_may_return_null=0", UBSAN_OPTIONS="print_stacktrace=1")
    return subprocess.run([str(exe), *map(str, files)], capture_output=True, text=True, env=env)


def test_row_regressions_under_address_and_undefined_sanitizers(tmp_path):
    """A row of no bytes left the update's first line in the buffer it refused (the text of a
    refused event must be taken back, as every other refusal does); JSON lines' BINARY(n) pad
    sized the buffer from any int64 (8 GB here); each file once through the COUNT, VV and JSONL
    sinks, their promises checked."""
    assert ROW_FILES
    exe = _replay(tmp_path, os.environ.get("CC", "gcc"), "address,undefined")
    if exe is None:
        pytest.skip("no C compiler with AddressSanitizer and UndefinedBehaviorSanitizer")
    r = _run(exe, ROW_FILES)
    assert r.returncode == 0, r.stdout + r.stderr[-3000:]
    assert r.stdout.count("ok ") == len(ROW_FILES)


def test_row_regressions_read_no_uninitialised_value(tmp_path):
    """The value a form writes is what a reader of this row read: bg_rows' value was not
    initialised, so a form the reader had not filled (DECIMAL's on another type) read the stack's
    garbage (MemorySanitizer; with AddressSanitizer an overflow only when the garbage was odd)."""
    exe = _replay(tmp_path, "clang", "memory")
    if exe is None:
        pytest.skip("no clang with MemorySanitizer")
    r = _run(exe, ROW_FILES)
    assert r.returncode == 0, r.stdout + r.stderr[-3000:]


def test_decimal_text_refuses_any_precision_and_scale(tmp_path):
    """bg_decimal_text took precision - scale before it checked them: an int64 overflow (UB) for
    a precision and scale no DECIMAL has."""
    cc = os.environ.get("CC", "gcc")
    if shutil.which(cc) is None:
        pytest.skip("no C compiler")
    src = tmp_path / "d.c"
    src.write_text("""
#include <stdio.h>
#include "decimal.h"
int main(void) {
    static const int64_t v[] = {INT64_MIN, INT64_MIN + 1, -30530, -1, 0, 1, 9, 65, 200, 201,
                                INT64_MAX - 1, INT64_MAX};
    const uint8_t data[128] = {0x80};
    char out[BG_DECIMAL_MAX_DIGITS + 4];
    int n = sizeof v / sizeof v[0];
    for (int i = 0; i < n; i++)
        for (int j = 0; j < n; j++)
            for (int64_t size = 0; size < 128; size += 9)
                bg_decimal_text(out, data, size, v[i], v[j]);
    printf("%d\\n", bg_decimal_text(out, data, 1, 2, 0));
    return 0;
}
""")
    exe = tmp_path / "d"
    r = subprocess.run([cc, "-fsanitize=undefined", "-fno-sanitize-recover=all", "-g", *INCLUDE,
                        str(src), "-o", str(exe)], capture_output=True, text=True)
    if r.returncode != 0:
        pytest.skip(f"cannot build with UndefinedBehaviorSanitizer: {r.stderr[-300:]}")
    r = subprocess.run([str(exe)], capture_output=True, text=True)
    assert r.returncode == 0 and r.stdout == "1\n", r.stdout + r.stderr[-2000:]


@pytest.mark.skipif(native.unavailable() is not None, reason="compiled backend not built")
@pytest.mark.parametrize("opts", [(), ("--no-checksum",)], ids=["crc32", "no-crc32"])
@pytest.mark.parametrize("path", LANE_FILES, ids=lambda p: p.name)
def test_lane_regression_dumps_the_same(path, opts):
    """gtid-*: a MariaDB GTID whose flags2 (group commit id, XA) or flags_extra announce fields
    its bytes do not hold: the Python path reports the event damaged, the lane wrote it (it read
    seq_no and domain_id only). xid-*: an XID_EVENT with bytes after its xid, which the Python path
    reports as left over and the lane wrote. duplicate-column-names: a TABLE_MAP naming two
    columns '' (a DECIMAL and a BLOB); the Python path's -vv text raised decimal.InvalidOperation
    (binlog/rows.py now names such columns by position). enum-type-byte-changed: an ENUM's real
    type byte 0xf7 -> 0xe7 in a TABLE_MAP's metadata: read as ENUM, written as STRING, the Python
    form wrote the member and the C form the empty span (vv_native now leaves a column whose
    reader and text disagree on its type to the Python path). Mutants of the campaign, their
    CRC32s right."""
    assert cli_dump(path, "c", *opts) == cli_dump(path, "python", *opts)


def test_lane_regressions_under_address_and_undefined_sanitizers(tmp_path):
    """The same files through the extensions built under ASan+UBSan (tools/fuzz_lane.py's
    build and driver): no report, the same text."""
    assert LANE_FILES
    spec = importlib.util.spec_from_file_location("fuzz_lane", ROOT / "tools" / "fuzz_lane.py")
    tool = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(tool)
    cc = os.environ.get("CC", "gcc")
    if shutil.which(cc) is None or not tool.asan_libs() or native.unavailable() is not None:
        pytest.skip("no gcc with libasan and libubsan, or no compiled backend")
    r = tool.replay(LANE_FILES, tmp_path)
    assert r["returncode"] == 0 and r["findings"] == 0, r
    assert sum(ln.startswith("ok ") for ln in r["lines"]) == 2 * len(LANE_FILES), r
