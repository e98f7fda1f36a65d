"""The bounded run of tools/fuzz_embed.py: `stats`' compiled loop (native._stats), dump's
JSON-lines lane (native._jsonl_lane; also with the Debezium envelope's plans, target debezium),
the API's batches (_framing's walk, _rows.frame_events) and the Spark source's Arrow sink
(_rows.arrow_rows: its arrays checked as Arrow would),
each called straight from the libFuzzer target
tools/fuzz_embed.c (Python embedded, the extensions built by clang with coverage under
AddressSanitizer and UndefinedBehaviorSanitizer) on mutated binlogs, with the state the Python
path taught it on each seed file: 0 findings over BINLOG_GRAMMAR_NATIVE_EMBED_FUZZ_EXECS
executions each (default 3,000). Each campaign must also find its loop reading past the event it
is given (a planted bug). One sanitized build serves the ten campaigns (the bugs planted dormant,
woken one at a time): 28 s of CPU in all, where a build per campaign took about 2 minutes in CI.
The long runs (10 million executions each) are in docs/benchmarks.md."""
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


def _need_spark():
    """The arrow target learns its plans with the `binlog` source's reader (pyspark, pyarrow)."""
    for mod in ("pyspark", "pyarrow"):
        pytest.importorskip(mod, reason=f"the arrow target needs {mod} (pip install -e '.[spark]')")


# each loop given its event 4 bytes longer than it is (8 more than its data): the last event of the
# buffer is then read past its end. The bug is planted dormant, switched on for one target's run
# by FUZZ_EMBED_PLANT (another target's learning runs the other loops: the batches under
# `dump --format jsonl`, whose events a live batch bug would damage before any execution)
PLANTS = {
    "stats": ("stats.c", "(size_t)(len - BG_CHECKSUM_SIZE)) != bg_u32le(d + dlen))",
              "(size_t)(len - BG_CHECKSUM_SIZE + {on})) != bg_u32le(d + dlen))"),
    "jsonl": ("jsonl_lane.c", "body_end - hl, NULL};", "body_end - hl + {on}, NULL};"),
    # the batches copy an event's bytes 4 bytes longer than it is
    "batch": ("rows_module.c", "PyObject *raw = PyBytes_FromStringAndSize((const char *)p, n);",
              "PyObject *raw = PyBytes_FromStringAndSize((const char *)p, n + {on});"),
}
# the Arrow sink's map values given an end offset one byte further than their text: no read
# outside a buffer, a wrong array, which the arrow target's check of the arrays must find
ARROW_PLANT = ("arrow_rows.h", "bg_arrow_i32(&im->voff, (int64_t)im->vdata.n) < 0)",
               "bg_arrow_i32(&im->voff, (int64_t)im->vdata.n + {on}) < 0)")
SWITCH = """
#include <stdlib.h>
#include <string.h>
#ifndef BG_FUZZ_PLANT
#define BG_FUZZ_PLANT
/* tests/native/test_fuzz_embed.py: a planted bug, live when FUZZ_EMBED_PLANT names it */
static int bg_fuzz_plant(const char *target)
{{
    const char *on = getenv("FUZZ_EMBED_PLANT");
    return on != NULL && strcmp(on, target) == 0;
}}
#endif
"""


def _plant_all(src):
    """The planted bugs, dormant, in one copy of the tree."""
    for target, (name, old, new) in [*PLANTS.items(), ("arrow", ARROW_PLANT)]:
        f = src / "generated" / "native" / name
        f = f if f.is_file() else src / "binlog_grammar" / "native" / name
        text = f.read_text()
        assert text.count(old) == 1
        bug = text.index(old)
        more = {"batch": "4", "arrow": "1"}.get(target, "8")
        text = text.replace(old, new.replace("{on}", f"(bg_fuzz_plant(\"{target}\") ? {more} : 0)"))
        # after the includes before the bug (a template may include more further down); a
        # header without includes: after its guard's #define
        at = text.rfind("\n#include ", 0, bug)
        at = text.index("\n", (at if at >= 0 else text.index("\n#define ")) + 1)
        f.write_text(text[:at] + SWITCH.format() + text[at:])


# one sanitized build serves every campaign: the program reads its target from the environment,
# and the planted bugs sleep unless FUZZ_EMBED_PLANT wakes one (one build a session, not six)
@pytest.fixture(scope="module")
def built(tmp_path_factory):
    tmp = tmp_path_factory.mktemp("embed-build")
    _need_libfuzzer(tmp)
    return _tool().build(tmp, _plant_all)


@pytest.mark.parametrize("target", ["stats", "jsonl", "debezium", "batch", "arrow"])
def test_embedded_campaign_finds_nothing(tmp_path, built, target):
    if target == "arrow":
        _need_spark()
    r = _tool().run(built, target, EXECS, seed=26, findings=tmp_path / "findings",
                    log=tmp_path / "log")
    assert r["returncode"] == 0 and not r["findings"], r
    assert r["execs"] >= EXECS, r


@pytest.mark.parametrize("target", ["stats", "jsonl", "batch"])
def test_embedded_campaign_finds_a_read_past_the_event(tmp_path, built, target):
    r = _tool().run(built, target, 200000, seed=1, findings=tmp_path / "findings",
                    log=tmp_path / "log", env={"FUZZ_EMBED_PLANT": target})
    assert r["findings"] and "heap-buffer-overflow" in r["report"], r
    assert PLANTS[target][0] in r["report"], r["report"]


def test_debezium_campaign_runs_the_lane(tmp_path, built):
    """The debezium target's inputs go through the JSON-lines lane's C (with the envelope's
    plans): the lane's planted read past the event is found by it too."""
    r = _tool().run(built, "debezium", 200000, seed=1, findings=tmp_path / "findings",
                    log=tmp_path / "log", env={"FUZZ_EMBED_PLANT": "jsonl"})
    assert r["findings"] and "heap-buffer-overflow" in r["report"], r
    assert PLANTS["jsonl"][0] in r["report"], r["report"]


def test_arrow_campaign_checks_the_arrays(tmp_path, built):
    """The arrow target's inputs go through the Spark data source's Arrow sink, whose arrays
    it checks as Arrow would: a map value's end offset one byte too far is found."""
    _need_spark()
    r = _tool().run(built, "arrow", 200000, seed=1, findings=tmp_path / "findings",
                    log=tmp_path / "log", env={"FUZZ_EMBED_PLANT": "arrow"})
    assert r["findings"] and "map: bad entry offsets" in r["report"], r
