"""The Spark session the tests of this folder share: one local[2] session for the whole test run
(a JVM start costs 10-30 s of the CI budget per module), started again only when a module stopped
it (test_spark_cluster.py runs its own session on a standalone cluster)."""
import os
import sys

import pytest

from helpers.spark import need_spark

_shared = {}


def _alive(s) -> bool:
    from pyspark import SparkContext

    return s is not None and SparkContext._active_spark_context is s.sparkContext \
        and s.sparkContext._jsc is not None


def _start():
    os.environ.setdefault("PYSPARK_PYTHON", sys.executable)
    from pyspark.sql import SparkSession

    from binlog_grammar.spark import register

    s = (SparkSession.builder.master("local[2]").appName("binlog-grammar tests")
         .config("spark.ui.enabled", "false").config("spark.ui.showConsoleProgress", "false")
         .config("spark.sql.shuffle.partitions", "2").config("spark.default.parallelism", "2")
         .config("spark.driver.memory", "1g").config("spark.sql.session.timeZone", "UTC")
         .config("spark.pyspark.python", sys.executable)
         .getOrCreate())
    s.sparkContext.setLogLevel("FATAL")
    register(s)
    return s


@pytest.fixture(scope="session")
def _spark_holder():
    yield _shared
    s = _shared.pop("s", None)
    if _alive(s):
        s.stop()


@pytest.fixture(scope="module")
def spark(_spark_holder):
    need_spark()
    if not _alive(_spark_holder.get("s")):
        _spark_holder["s"] = _start()
    return _spark_holder["s"]
