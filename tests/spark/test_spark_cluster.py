"""A real Spark standalone cluster sharing nothing with the driver but the data: a master and two
workers from pyspark's launcher on loopback (binlog_grammar.testing.spark_cluster), each with its
own work directory and an executor Python that cannot import binlog_grammar; the package shipped
with the job (binlog_grammar.spark.ship), the binlogs in a moto S3 server whose endpoint and
credentials reach the executors only through the job (the workers' environment has none).

- format("binlog") over the S3 folder gives the plain reader's rows of the local files;
- the pipeline on the cluster gives the change log of those rows, its state keyed on the URIs;
- the executors ran on both workers (the application's executors, each with tasks, and a folder
  of the application in each worker's work directory).
One cluster for the module (about a minute and a half).
"""
from __future__ import annotations

import json
import os
import socket
import urllib.request

import pytest

from helpers.paths import ROOT
from helpers.services import REQUIRE_SERVICES, need_marker
from helpers.spark import df_records, missing, plain_records

pytestmark = pytest.mark.spark

SAMPLES = sorted((ROOT / "samples").glob("mariadb-*"))
KEY, SECRET = "cluster-key", "cluster-secret"


def _skip(why):
    if REQUIRE_SERVICES:
        pytest.fail(f"{why} and BINLOG_GRAMMAR_REQUIRE_SERVICES=1")
    pytest.skip(why)


@pytest.fixture(scope="module")
def cluster(tmp_path_factory):
    need_marker("spark")
    why = missing()
    if why:
        _skip(why)
    try:
        import boto3
        from moto.server import ThreadedMotoServer
    except ImportError as e:
        _skip(f"{e.name} is not installed (pip install 'moto[server]')")
    from pyspark.sql import SparkSession

    from binlog_grammar.spark import register, ship
    from binlog_grammar.testing.spark_cluster import SparkCluster

    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    moto = ThreadedMotoServer(ip_address="127.0.0.1", port=port, verbose=False)
    moto.start()
    endpoint = f"http://127.0.0.1:{port}"
    c = boto3.client("s3", endpoint_url=endpoint, aws_access_key_id=KEY,
                     aws_secret_access_key=SECRET, region_name="us-east-1")
    c.create_bucket(Bucket="data")
    for p in SAMPLES:
        c.upload_file(str(p), "data", f"logs/{p.name}")
    folder = tmp_path_factory.mktemp("cluster")
    cl = SparkCluster(str(folder))
    # the CLI first, while no session holds the workers' cores: `pipeline --master spark://...`
    # ships the package itself; then the same command in local mode, for the comparison
    cli = {m: _cli_pipeline(m, cl, endpoint, folder / f"cli-{n}")
           for n, m in (("cluster", cl.master_url), ("local", "local[2]"))}
    active = SparkSession.getActiveSession()
    if active is not None:
        active.stop()
    # pyspark takes the workers' Python from PYSPARK_PYTHON when the context starts in-process
    saved_python = os.environ.get("PYSPARK_PYTHON")
    os.environ["PYSPARK_PYTHON"] = cl.python
    # and the driver's own Python workers (the source's planner) start in the driver's folder:
    # not the source tree, whose binlog_grammar/ (without generated/) would shadow the zip
    saved_cwd = os.getcwd()
    os.chdir(folder)
    # the driver's own Python workers (the source's planner) get the package from ship() too:
    # no PYTHONPATH of the driver's (the CLI test above runs a driver without one)
    from pyspark import SparkContext

    saved_pp = os.environ.pop("PYTHONPATH", None)
    if SparkContext._gateway is not None:
        SparkContext._gateway.shutdown()
        SparkContext._gateway = SparkContext._jvm = None
    spark = (SparkSession.builder.master(cl.master_url).appName("binlog-grammar cluster test")
             .config("spark.driver.host", "127.0.0.1").config("spark.driver.bindAddress", "127.0.0.1")
             .config("spark.pyspark.python", cl.python)
             .config("spark.executor.memory", "512m").config("spark.cores.max", "2")
             .config("spark.ui.showConsoleProgress", "false")
             .config("spark.sql.session.timeZone", "UTC").getOrCreate())
    spark.sparkContext.setLogLevel("FATAL")
    # shipped before the source is registered: the source's Python functions carry the
    # session's Python includes of the time they are registered
    ship(spark, str(folder / "binlog-grammar-spark.zip"))
    register(spark)
    try:
        yield spark, cl, endpoint, cli
    finally:
        spark.stop()
        cl.stop()
        moto.stop()
        os.chdir(saved_cwd)
        if saved_pp is None:
            os.environ.pop("PYTHONPATH", None)
        else:
            os.environ["PYTHONPATH"] = saved_pp
        if saved_python is None:
            os.environ.pop("PYSPARK_PYTHON", None)
        else:
            os.environ["PYSPARK_PYTHON"] = saved_python


def _cli_pipeline(master, cl, endpoint, output):
    """`binlog-grammar pipeline --master MASTER` over the S3 folder in a new process whose
    endpoint and credentials are the environment's, started outside the source tree; its
    workers' Python (PYSPARK_PYTHON) cannot import binlog_grammar. Returns (output, process)."""
    import subprocess
    import sys

    env = dict(os.environ, PYSPARK_PYTHON=cl.python, SPARK_LOCAL_IP="127.0.0.1",
               AWS_ENDPOINT_URL=endpoint, AWS_ACCESS_KEY_ID=KEY, AWS_SECRET_ACCESS_KEY=SECRET)
    env.pop("PYTHONPATH", None)
    if master.startswith("local"):
        env["PYSPARK_PYTHON"] = sys.executable  # local mode's workers are this machine's Python
    os.makedirs(output.parent, exist_ok=True)
    p = subprocess.run([sys.executable, "-m", "binlog_grammar", "pipeline", "--master", master,
                        "--input", "s3://data/logs/", "--output", str(output),
                        "--split-bytes", "1024"],
                       cwd=str(output.parent), env=env, capture_output=True, text=True, timeout=400)
    return output, p


def _norm(rows):
    for r in rows:
        r["source"]["file"] = os.path.basename(r["source"]["file"])
    return sorted(rows, key=lambda r: json.dumps(r, sort_keys=True, default=str))


def test_read_on_two_workers(cluster):
    spark, cl, endpoint, _ = cluster
    opts = {"s3.endpoint": endpoint, "s3.access_key": KEY, "s3.secret_key": SECRET,
            "split_bytes": "1024"}
    df = spark.read.format("binlog").options(**opts).load("s3://data/logs/")
    assert df.rdd.getNumPartitions() >= 4
    want = _norm(plain_records([str(p) for p in SAMPLES]))
    assert want and _norm(df_records(df)) == want

    # the executors' Python has no binlog_grammar of its own: the shipped zip's
    def where(_):
        import sys

        import binlog_grammar

        yield sys.executable, binlog_grammar.__file__

    seen = spark.sparkContext.parallelize(range(2), 2).mapPartitions(where).collect()
    # (the zip SparkFiles put in the executor's folder of a worker's work directory)
    assert all(exe == cl.python and f.startswith("./binlog-grammar-spark.zip/") for exe, f in seen), seen

    # both workers ran executors of this application, each with tasks
    app = spark.sparkContext.applicationId
    ui = spark.sparkContext.uiWebUrl
    with urllib.request.urlopen(f"{ui}/api/v1/applications/{app}/allexecutors", timeout=10) as r:
        execs = [e for e in json.load(r) if e["id"] != "driver"]
    assert len([e for e in execs if e["totalTasks"] > 0]) >= 2, execs
    for wd in cl.work_dirs:
        assert os.path.isdir(os.path.join(wd, app)), os.listdir(wd)


def test_pipeline_on_the_cluster(cluster, tmp_path):
    import io

    from binlog_grammar.spark.pipeline import run_pipeline

    spark, cl, endpoint, _ = cluster
    opts = {"s3.endpoint": endpoint, "s3.access_key": KEY, "s3.secret_key": SECRET}
    want = plain_records([str(p) for p in SAMPLES])
    # the pipeline on the same cluster: its driver's environment names the endpoint
    import argparse

    from binlog_grammar.spark import fs

    saved = dict(fs._conf)
    fs._conf.clear()
    fs._conf.update({k: v for k, v in opts.items() if k.startswith("s3.")})
    try:
        args = argparse.Namespace(input=["s3://data/logs/"], output=str(tmp_path / "o"),
                                  master=cl.master_url, table=[], exclude_table=[], schema=None,
                                  no_checksum=False, split_bytes=1024)
        out = io.StringIO()
        assert run_pipeline(args, spark, out=out) == 0, out.getvalue()
    finally:
        fs._conf.clear()
        fs._conf.update(saved)
    state = json.loads((tmp_path / "o" / "_binlog_state.json").read_text())
    assert [f["path"] for f in state["files"]] == [f"s3://data/logs/{p.name}" for p in SAMPLES]
    assert spark.read.parquet(str(tmp_path / "o" / "changes")).count() == len(want)



def test_cli_pipeline_on_the_cluster_ships_the_package(cluster):
    """`binlog-grammar pipeline --master spark://...` with workers that lack the package: the
    same change log, snapshots and state as `--master local[2]` (it failed before pipeline.py
    shipped the package: the workers' Python could not import binlog_grammar)."""
    spark, cl, endpoint, cli = cluster
    (out, p), (local, lp) = cli[cl.master_url], cli["local[2]"]
    assert p.returncode == 0, p.stderr[-3000:]
    assert lp.returncode == 0, lp.stderr[-3000:]

    def rows(folder):
        return sorted(json.dumps(r.asDict(recursive=True), sort_keys=True, default=str)
                      for r in spark.read.parquet(str(folder)).collect())

    assert rows(out / "changes") == rows(local / "changes")
    assert len(rows(out / "changes")) == len(plain_records([str(p) for p in SAMPLES]))
    snaps = sorted(t.name for t in (local / "snapshots").iterdir())
    assert snaps and sorted(t.name for t in (out / "snapshots").iterdir()) == snaps
    for t in snaps:
        assert rows(out / "snapshots" / t) == rows(local / "snapshots" / t), t
    assert rows(out / "_snapshot_rows") == rows(local / "_snapshot_rows")
    state, want = (json.loads((o / "_binlog_state.json").read_text()) for o in (out, local))
    for k in ("files", "tx_seq", "tables", "snapshot_rows"):
        assert state[k] == want[k], k
