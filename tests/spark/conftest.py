"""The Spark session the tests of this folder share: one local[2] session per test module."""
import os
import sys

import pytest

from helpers.services import REQUIRE_SERVICES, need_marker
from helpers.spark import missing


@pytest.fixture(scope="module")
def spark():
    need_marker("spark")
    why = missing()
    if why:
        if REQUIRE_SERVICES:
            pytest.fail(f"{why} and BINLOG_GRAMMAR_REQUIRE_SERVICES=1")
        pytest.skip(why)
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
    yield s
    s.stop()
