"""The package shipped with a Spark job, for clusters whose workers do not have it installed.

    from binlog_grammar.spark import ship
    ship(spark)        # builds binlog-grammar-spark.zip and spark.sparkContext.addPyFile(...)

or `spark-submit --py-files binlog-grammar-spark.zip job.py` with the zip written by
`python3 -m binlog_grammar.spark.shipping [PATH]`.

The zip holds the package as it is installed (its modules, `generated/` as
binlog_grammar.generated, `specs/` as binlog_grammar.specs_data, the compiled extensions built
for this machine's platform: a worker of another platform falls back to the Python backend),
`pyspark_binlog.py` and the pure-Python libraries the executors import (construct).
"""
from __future__ import annotations

import os
import sys
import tempfile
import zipfile

SKIP_DIRS = {"__pycache__", ".pytest_cache"}
# what the executors import beside the standard library and pyspark's own dependencies
PURE_DEPS = ("construct",)


def _walk(src: str, arc: str, zf: zipfile.ZipFile) -> None:
    for d, subdirs, names in os.walk(src):
        subdirs[:] = sorted(s for s in subdirs if s not in SKIP_DIRS)
        for n in sorted(names):
            if n.endswith((".pyc", ".o")):
                continue
            full = os.path.join(d, n)
            zf.write(full, os.path.join(arc, os.path.relpath(full, src)))


def build_zip(path: str | None = None) -> str:
    """Write the zip (default: in the temporary folder) and return its path."""
    import importlib

    root = __package__.rsplit(".", 1)[0]  # binlog_grammar
    gen = importlib.import_module(root + ".generated")
    pkg = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))  # binlog_grammar/
    path = path or os.path.join(tempfile.gettempdir(), f"binlog-grammar-spark-{os.getpid()}.zip")
    tmp = path + ".part"
    with zipfile.ZipFile(tmp, "w", zipfile.ZIP_DEFLATED) as zf:
        _walk(pkg, "binlog_grammar", zf)
        gdir = os.path.dirname(os.path.abspath(gen.__file__))
        if os.path.dirname(gdir) != pkg:  # the source tree: generated/ beside the package
            _walk(gdir, "binlog_grammar/generated", zf)
        try:
            sd = importlib.import_module(root + ".specs_data")

            sdir = os.path.dirname(os.path.abspath(sd.__file__))
            if os.path.dirname(sdir) != pkg:
                _walk(sdir, "binlog_grammar/specs_data", zf)
        except ImportError:
            pass
        import pyspark_binlog

        zf.write(pyspark_binlog.__file__, "pyspark_binlog.py")
        for dep in PURE_DEPS:
            mod = __import__(dep)
            _walk(os.path.dirname(os.path.abspath(mod.__file__)), dep, zf)
    os.replace(tmp, path)
    return path


def ship(spark, path: str | None = None) -> str:
    """Build the zip and add it to the session's job (SparkContext.addPyFile): the executors
    import binlog_grammar from it. Returns the zip's path."""
    z = build_zip(path)
    spark.sparkContext.addPyFile(z)
    return z


if __name__ == "__main__":
    print(build_zip(sys.argv[1] if len(sys.argv) > 1 else "binlog-grammar-spark.zip"))
