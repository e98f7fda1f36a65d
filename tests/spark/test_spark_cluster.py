"""A real Spark standalone cluster sharing nothing with the driver but the data: a master and two
workers from pyspark's launcher on loopback (binlog_grammar.testing.spark_cluster), each with its
own work directory and an executor Python that cannot import binlog_grammar; the binlogs in a moto
S3 server whose endpoint and credentials are only in the driver's environment (the workers' has
none: they reach the executors with the job).

`binlog-grammar pipeline --master spark://...` (which ships the package with the job) and the same
command with `--master local[2]`, each a process of its own, over the S3 folder:
- the same change log, snapshots, snapshot rows and state, the change log holding the plain
  reader's rows of the local files (read through format("binlog") on the executors) and the state
  keyed on the S3 URIs;
- the executors ran on both workers: each worker's work directory holds an executor folder of the
  application whose log shows it ran tasks;
- each run's driver wrote its JVM class archive (spark/jvm_archive.py) as it exited.
No Spark session in the test process: the outputs are read with pyarrow (one cluster and two
driver processes for the module, about 40 s).
"""
from __future__ import annotations

import json
import os
import socket
import subprocess
import sys

import pytest

from helpers.paths import ROOT
from helpers.services import REQUIRE_SERVICES, need_marker
from helpers.spark import missing, plain_records

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
    try:
        # each driver writes its JVM class archive as it exits (spark/jvm_archive.py: on for
        # every master)
        archive = folder / "jvm-archive"
        cli = {m: _cli_pipeline(m, cl, endpoint, folder / f"cli-{n}", archive)
               for n, m in (("cluster", cl.master_url), ("local", "local[2]"))}
        yield cl, cli
    finally:
        cl.stop()
        moto.stop()


def _cli_pipeline(master, cl, endpoint, output, archive):
    """`binlog-grammar pipeline --master MASTER` over the S3 folder in a new process whose
    endpoint and credentials are the environment's, started outside the source tree; its
    workers' Python (PYSPARK_PYTHON) cannot import binlog_grammar; the driver JVM's class
    archive in `archive`. Returns (output, process)."""
    env = dict(os.environ, PYSPARK_PYTHON=cl.python, SPARK_LOCAL_IP="127.0.0.1",
               AWS_ENDPOINT_URL=endpoint, AWS_ACCESS_KEY_ID=KEY, AWS_SECRET_ACCESS_KEY=SECRET,
               BINLOG_GRAMMAR_JVM_ARCHIVE=str(archive))
    env.pop("PYTHONPATH", None)
    if master.startswith("local"):
        env["PYSPARK_PYTHON"] = sys.executable  # local mode's workers are this machine's Python
    os.makedirs(output.parent, exist_ok=True)
    p = subprocess.run([sys.executable, "-m", "binlog_grammar", "pipeline", "--master", master,
                        "--input", "s3://data/logs/", "--output", str(output),
                        "--split-bytes", "1024"],
                       cwd=str(output.parent), env=env, capture_output=True, text=True, timeout=400)
    return output, p


def _rows(folder):
    """A Parquet folder's rows (Hive partition folders as columns), comparable as text."""
    import pyarrow.parquet as pq

    if not os.path.isdir(folder):
        return []
    return sorted(json.dumps(r, sort_keys=True, default=str)
                  for r in pq.read_table(str(folder)).to_pylist())


def test_cli_pipeline_on_the_cluster_equals_local_mode(cluster):
    """`binlog-grammar pipeline --master spark://...` with workers that lack the package: the
    same change log, snapshots and state as `--master local[2]` (it failed before pipeline.py
    shipped the package: the workers' Python could not import binlog_grammar)."""
    cl, cli = cluster
    (out, p), (local, lp) = cli[cl.master_url], cli["local[2]"]
    assert p.returncode == 0, p.stderr[-3000:]
    assert lp.returncode == 0, lp.stderr[-3000:]
    # each driver wrote its JVM class archive as it exited (a local master's JVM options differ
    # from a cluster driver's: two archives, each kept)
    for run in (p, lp):
        assert "class archive for later runs written" in run.stdout, run.stdout
    assert len([f for f in os.listdir(out.parent / "jvm-archive") if f.endswith(".jsa")]) == 2
    # the workers' Python cannot import the package: it came with the job
    bare = subprocess.run([cl.python, "-c", "import binlog_grammar"], capture_output=True,
                          cwd=cl.work_dirs[0])
    assert bare.returncode != 0
    changes = _rows(out / "changes")
    assert changes == _rows(local / "changes")
    assert len(changes) == len(plain_records([str(p) for p in SAMPLES]))
    snaps = sorted(t.name for t in (local / "snapshots").iterdir())
    assert snaps and sorted(t.name for t in (out / "snapshots").iterdir()) == snaps
    for t in snaps:
        assert _rows(out / "snapshots" / t) == _rows(local / "snapshots" / t), t
    assert _rows(out / "_snapshot_rows") == _rows(local / "_snapshot_rows")
    state, want = (json.loads((o / "_binlog_state.json").read_text()) for o in (out, local))
    assert [f["path"] for f in state["files"]] == [f"s3://data/logs/{p.name}" for p in SAMPLES]
    for k in ("files", "tx_seq", "tables", "snapshot_rows"):
        assert state[k] == want[k], k


def test_executors_ran_on_both_workers(cluster):
    """Each worker's work directory holds the application's folder with an executor that ran
    tasks (its log, Spark's default executor logging, names the tasks it ran)."""
    cl, cli = cluster
    assert cli[cl.master_url][1].returncode == 0
    apps = [sorted(d for d in os.listdir(wd) if d.startswith("app-")) for wd in cl.work_dirs]
    assert all(len(a) == 1 for a in apps) and apps[0] == apps[1], apps
    for wd, (app,) in zip(cl.work_dirs, apps):
        logs = [os.path.join(wd, app, e, "stderr") for e in os.listdir(os.path.join(wd, app))]
        ran = [f for f in logs if os.path.exists(f) and "Running task" in open(f, errors="replace").read()]
        assert ran, (wd, logs)
