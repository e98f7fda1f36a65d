"""The bounded run of tools/fuzz_embed.py: `stats`' compiled loop (native._stats), dump's
JSON-lines lane (native._jsonl_lane) and the API's batches (_framing's walk, _rows.frame_events),
each called straight from the libFuzzer target
tools/fuzz_embed.c (Python embedded, the extensions built by clang with coverage under
AddressSanitizer and UndefinedBehaviorSanitizer) on mutated binlogs, with the state the Python
path taught it on each seed file: 0 findings over BINLOG_GRAMMAR_NATIVE_EMBED_FUZZ_EXECS
executions each (default 3,000: 15-30 s each here with the build and the learning; the six
tests about 2 minutes). Each
campaign must also find its loop reading past the event it is given (a planted bug). The long
runs (10 million executions each) are in docs/benchmarks.md."""
import importlib.util
import os
import shutil
import subprocess

import pytest

from helpers.paths import ROOT

EXECS = int(os.environ.get("BINLOG_GRAMMAR_NATIVE_EMBED_FUZZ_EXECS", "3000"))


def _tool():
    spec = importlib.util.spec_from_file_location("fuzz_embed", ROOT / "tools" / "fuzz_embed.py")
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def _need_libfuzzer(tmp_path):
    if shutil.which("clang") is None:
        pytest.skip("no clang (apt-get install clang libclang-rt-dev)")
    src = tmp_path / "f.c"
    src.write_text("#include <Python.h>\n#include <stdint.h>\n"
                   "int LLVMFuzzerTestOneInput(const uint8_t *d, size_t n){return 0;}\n")
    import sysconfig
    r = subprocess.run(["clang", "-fsanitize=fuzzer,address,undefined",
                        f"-I{sysconfig.get_paths()['include']}", str(src), "-o",
                        str(tmp_path / "f")], capture_output=True)
    if r.returncode != 0:
        pytest.skip("no clang with libFuzzer, AddressSanitizer and UndefinedBehaviorSanitizer and "
                    "Python's headers (apt-get install clang libclang-rt-dev)")


@pytest.mark.parametrize("target", ["stats", "jsonl", "batch"])
def test_embedded_campaign_finds_nothing(tmp_path, target):
    _need_libfuzzer(tmp_path)
    r = _tool().campaign(target, EXECS, seed=26, findings=tmp_path / "findings",
                         log=tmp_path / "log")
    assert r["returncode"] == 0 and not r["findings"], r
    assert r["execs"] >= EXECS, r


# each loop given its event 4 bytes longer than it is (8 more than its data): the last event of the
# buffer is then read past its end
PLANTS = {
    "stats": ("stats.c", "(size_t)(len - BG_CHECKSUM_SIZE)) != bg_u32le(d + dlen))",
              "(size_t)(len - BG_CHECKSUM_SIZE + 8)) != bg_u32le(d + dlen))"),
    "jsonl": ("jsonl_lane.c", "body_end - hl, NULL};", "body_end - hl + 8, NULL};"),
    # the batches copy an event's bytes 4 bytes longer than it is
    "batch": ("rows_module.c", "PyObject *raw = PyBytes_FromStringAndSize((const char *)p, n);",
              "PyObject *raw = PyBytes_FromStringAndSize((const char *)p, n + 4);"),
}


@pytest.mark.parametrize("target", ["stats", "jsonl", "batch"])
def test_embedded_campaign_finds_a_read_past_the_event(tmp_path, target):
    _need_libfuzzer(tmp_path)
    name, old, new = PLANTS[target]

    def plant(src):
        f = src / "generated" / "native" / name
        text = f.read_text()
        assert text.count(old) == 1
        f.write_text(text.replace(old, new))

    r = _tool().campaign(target, 200000, seed=1, findings=tmp_path / "findings",
                         log=tmp_path / "log", patch=plant)
    assert r["findings"] and "heap-buffer-overflow" in r["report"], r
