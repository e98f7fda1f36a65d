"""The compiled backend (issue 26): binlog_grammar.native._framing and _rows, built from the C
that `binlog-grammar generate` writes into generated/native/ and the hand-written algorithms and
forms of binlog_grammar/native/. Everything else about the package is in pyproject.toml.

The extension is optional: without a compiler, or when the build fails, `pip install` still
succeeds (setuptools reports the failure and goes on) and the generated Python readers run
(binlog_grammar.native chooses at run time; BINLOG_GRAMMAR_BACKEND=c makes its absence an error).
"""
from setuptools import Extension, setup

setup(ext_modules=[
    Extension(
        "binlog_grammar.native._framing",
        sources=["generated/native/framing_module.c", "generated/native/framing.c",
                 "binlog_grammar/native/crc32.c"],
        include_dirs=["generated/native", "binlog_grammar/native"],
        depends=["generated/native/framing.h", "binlog_grammar/native/crc32.h"],
        extra_compile_args=["-O3"],
        optional=True,
    ),
    Extension(
        "binlog_grammar.native._rows",
        sources=["generated/native/rows_module.c", "generated/native/rows.c"],
        include_dirs=["generated/native", "binlog_grammar/native"],
        depends=["generated/native/rows.h", "generated/native/bg_expr.h",
                 "binlog_grammar/native/decimal.h", "binlog_grammar/native/forms_vv.h",
                 "binlog_grammar/native/forms_jsonl.h"],
        extra_compile_args=["-O3"],
        optional=True,
    ),
    Extension(
        "binlog_grammar.native._lane",
        sources=["generated/native/lane.c", "generated/native/rows.c",
                 "binlog_grammar/native/crc32.c"],
        include_dirs=["generated/native", "binlog_grammar/native"],
        depends=["generated/native/rows.h", "generated/native/bg_expr.h",
                 "generated/native/framing.h", "binlog_grammar/native/crc32.h",
                 "binlog_grammar/native/decimal.h", "binlog_grammar/native/forms_vv.h",
                 "binlog_grammar/native/forms_jsonl.h", "generated/native/lanes.h"],
        libraries=["z"],  # zlib's crc32 when zlib.h is there (lanes.h)
        extra_compile_args=["-O3"],
        optional=True,
    ),
    Extension(
        "binlog_grammar.native._jsonl_lane",
        sources=["generated/native/jsonl_lane.c", "generated/native/rows.c",
                 "binlog_grammar/native/crc32.c"],
        include_dirs=["generated/native", "binlog_grammar/native"],
        depends=["generated/native/rows.h", "generated/native/bg_expr.h",
                 "generated/native/framing.h", "binlog_grammar/native/crc32.h",
                 "binlog_grammar/native/decimal.h", "binlog_grammar/native/forms_vv.h",
                 "binlog_grammar/native/forms_jsonl.h"],
        libraries=["z"],  # zlib's crc32 when zlib.h is there (jsonl_lane.c)
        extra_compile_args=["-O3"],
        optional=True,
    ),
    Extension(
        "binlog_grammar.native._stats",
        sources=["generated/native/stats.c", "generated/native/framing.c",
                 "generated/native/rows.c", "binlog_grammar/native/crc32.c"],
        include_dirs=["generated/native", "binlog_grammar/native"],
        depends=["generated/native/rows.h", "generated/native/bg_expr.h",
                 "generated/native/framing.h", "binlog_grammar/native/crc32.h",
                 "binlog_grammar/native/decimal.h", "binlog_grammar/native/forms_vv.h",
                 "binlog_grammar/native/forms_jsonl.h"],
        libraries=["z"],  # zlib's crc32 when zlib.h is there (stats.c)
        extra_compile_args=["-O3"],
        optional=True,
    ),
])
