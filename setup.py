"""The compiled backend (issue 26): the extensions of binlog_grammar.native (_framing, _rows and
the loops _lane, _jsonl_lane and _stats), built from the C that `binlog-grammar generate` writes
into generated/native/ and the hand-written algorithms and forms of binlog_grammar/native/.
Everything else about the package is in pyproject.toml.

The extension is optional: without a compiler, or when the build fails, `pip install` still
succeeds (setuptools reports the failure and goes on) and the generated Python readers run
(binlog_grammar.native chooses at run time; BINLOG_GRAMMAR_BACKEND=c makes its absence an error).
"""
import os

from setuptools import Extension, setup

GENERATED, NATIVE = "generated/native/", "binlog_grammar/native/"
# what the row images (rows.c) and the compiled loops over a file's bytes include
ROWS_H = [GENERATED + "rows.h", GENERATED + "bg_expr.h", NATIVE + "decimal.h",
          NATIVE + "forms_vv.h", NATIVE + "forms_jsonl.h"]
LOOP_H = ROWS_H + [GENERATED + "framing.h", GENERATED + "lanes.h", NATIVE + "crc32.h"]
# MySQL 8's compressed transactions (TRANSACTION_PAYLOAD_EVENT, generated/native/payload.h) are
# inflated in C when libzstd's header is there (Debian: libzstd-dev); without it, or with
# BINLOG_GRAMMAR_NO_ZSTD=1, the loops leave them to the Python path
ZSTD = not os.environ.get("BINLOG_GRAMMAR_NO_ZSTD") and any(
    os.path.exists(d + "/zstd.h") for d in ("/usr/include", "/usr/local/include"))
PAYLOAD = dict(define_macros=[("BG_HAVE_ZSTD", "1")], libraries=["z", "zstd"]) if ZSTD else \
    dict(libraries=["z"])


def extension(name: str, sources: list, depends: list, **kw) -> Extension:
    """binlog_grammar.native.<name>, optional, from generated/native/ and binlog_grammar/native/."""
    return Extension("binlog_grammar.native." + name, sources=sources,
                     include_dirs=[GENERATED.rstrip("/"), NATIVE.rstrip("/")], depends=depends,
                     extra_compile_args=["-O3"], optional=True, **kw)


setup(ext_modules=[
    extension("_framing", [GENERATED + "framing_module.c", GENERATED + "framing.c", NATIVE + "crc32.c"],
              [GENERATED + "framing.h", NATIVE + "crc32.h"]),
    # _rows inflates the payloads of the reading API's batches (payload_events) as the loops do
    extension("_rows", [GENERATED + "rows_module.c", GENERATED + "rows.c"],
              LOOP_H + [GENERATED + "payload.h", NATIVE + "arrow_rows.h"], **PAYLOAD),
    # the loops: lanes.h's CRC32 is zlib's when zlib.h is there
    extension("_lane", [GENERATED + "lane.c", GENERATED + "rows.c", NATIVE + "crc32.c"],
              LOOP_H + [GENERATED + "lane_state.h", GENERATED + "replay.h", NATIVE + "base64.h",
                        GENERATED + "payload.h"], **PAYLOAD),
    extension("_jsonl_lane", [GENERATED + "jsonl_lane.c", GENERATED + "rows.c", NATIVE + "crc32.c"],
              LOOP_H + [GENERATED + "payload.h"], **PAYLOAD),
    extension("_stats", [GENERATED + "stats.c", GENERATED + "framing.c", GENERATED + "rows.c",
                         NATIVE + "crc32.c"], LOOP_H + [GENERATED + "payload.h"], **PAYLOAD),
])
