"""The `binlog` source reading object storage: a real S3-compatible server (moto in server mode,
on loopback, started here) holding five corpus files and the samples with their index.

- The same rows as from the local paths for a single URI, a glob, a folder and an index, with
  the endpoint and credentials given the standard way (AWS_* in the driver's environment) and as
  the source's `s3.*` options (the environment cleared: the executors get them from the job).
- Intra-file splits (a small split_bytes) read by ranged reads give the same rows.
- A wrong key fails with one line naming the URI.
"""
from __future__ import annotations

import os

import pytest

from helpers.paths import CORPUS, ROOT, needs_corpus
from helpers.services import REQUIRE_SERVICES
from helpers.spark import df_records, load

pytestmark = [pytest.mark.spark, needs_corpus]

FIVE = ["json.binlog.000001", "binlog_transaction_with_GTID.000001", "mysql-enum-string-set.000001",
        "write-full-row.binlog", "ver_trunk_row_v2.001"]
SAMPLES = sorted((ROOT / "samples").glob("mariadb-*"))
KEY, SECRET = "testing-key", "testing-secret"


@pytest.fixture(scope="module")
def s3():
    try:
        import boto3
        from moto.server import ThreadedMotoServer
    except ImportError as e:
        if REQUIRE_SERVICES:
            pytest.fail(f"{e.name} is not installed and BINLOG_GRAMMAR_REQUIRE_SERVICES=1")
        pytest.skip(f"{e.name} is not installed (pip install 'moto[server]')")
    import socket

    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    server = ThreadedMotoServer(ip_address="127.0.0.1", port=port, verbose=False)
    server.start()
    endpoint = f"http://127.0.0.1:{port}"
    c = boto3.client("s3", endpoint_url=endpoint, aws_access_key_id=KEY,
                     aws_secret_access_key=SECRET, region_name="us-east-1")
    c.create_bucket(Bucket="bucket")
    for name in FIVE:
        c.upload_file(str(CORPUS / name), "bucket", f"binlogs/{name}")
    for p in SAMPLES:
        c.upload_file(str(p), "bucket", f"server/logs/{p.name}")
    c.put_object(Bucket="bucket", Key="server/logs/mariadb-10.11-sample.index",
                 Body="".join(f"./{p.name}\n" for p in SAMPLES).encode())
    c.put_object(Bucket="bucket", Key="server/logs/notes.txt", Body=b"not a binlog")
    yield endpoint
    server.stop()


def _opts(endpoint):
    return {"s3.endpoint": endpoint, "s3.access_key": KEY, "s3.secret_key": SECRET}


def _rows(df):
    out = []
    for r in df_records(df):
        r["source"]["file"] = os.path.basename(r["source"]["file"])
        out.append(r)
    return out


def _local(spark, paths, **kw):
    return _rows(load(spark, [str(p) for p in paths], **kw))


@pytest.mark.parametrize("uri,local", [
    ("s3://bucket/binlogs/json.binlog.000001", [CORPUS / "json.binlog.000001"]),
    ("s3a://bucket/binlogs/*.0*", [CORPUS / n for n in sorted(FIVE) if ".0" in n]),
    ("s3://bucket/binlogs/", [CORPUS / n for n in sorted(FIVE)]),
    ("s3://bucket/server/logs/mariadb-10.11-sample.index", SAMPLES),
    ("s3://bucket/server", SAMPLES),
])
def test_same_rows_as_local(s3, spark, uri, local):
    want = _local(spark, local)
    assert want
    assert _rows(load(spark, uri, **_opts(s3))) == want


def test_ranged_splits(s3, spark):
    want = _local(spark, SAMPLES)
    df = load(spark, "s3://bucket/server/logs/mariadb-10.11-sample.0*", split_bytes=1024,
              **_opts(s3))
    assert df.rdd.getNumPartitions() > len(SAMPLES)  # the first sample is cut
    assert _rows(df) == want


def test_wrong_key_one_line(s3, spark):
    uri = "s3://bucket/binlogs/no-such.000001"
    with pytest.raises(Exception) as e:
        load(spark, uri, **_opts(s3)).collect()
    text = str(e.value)
    assert f"{uri}: No such file or directory" in text
    assert "Traceback" not in text


def test_fs_listing_without_spark(s3, monkeypatch):
    from binlog_grammar.spark import fs
    from binlog_grammar.spark.split import expand_paths

    fs.configure({"s3.endpoint": s3, "s3.access_key": KEY, "s3.secret_key": SECRET})
    got = expand_paths(["s3://bucket/server/"])
    assert [u.rsplit("/", 1)[1] for u in got] == [p.name for p in SAMPLES]
    assert fs.read_range(got[0], 0, 4) == b"\xfebin"


ENV_SCRIPT = """
import json, os, sys
from pyspark.sql import SparkSession
from binlog_grammar.spark import register
s = (SparkSession.builder.master("local[1]").config("spark.ui.enabled", "false")
     .config("spark.pyspark.python", sys.executable).getOrCreate())
s.sparkContext.setLogLevel("FATAL")
register(s)
rows = s.read.format("binlog").load(sys.argv[1]).collect()
print(json.dumps([[r["op"], r["source"]["pos"], r["source"]["file"]] for r in rows]))
"""


def test_environment_credentials_in_a_new_driver(s3, spark):
    """AWS_ENDPOINT_URL, AWS_ACCESS_KEY_ID, AWS_SECRET_ACCESS_KEY in the driver's environment
    (a new process: Spark's Python workers inherit the environment the session started with)."""
    import json
    import subprocess
    import sys

    want = [[r["op"], r["source"]["pos"]] for r in _local(spark, [CORPUS / FIVE[0]])]
    env = dict(os.environ, AWS_ENDPOINT_URL=s3, AWS_ACCESS_KEY_ID=KEY,
               AWS_SECRET_ACCESS_KEY=SECRET, AWS_REGION="us-east-1")
    uri = f"s3://bucket/binlogs/{FIVE[0]}"
    p = subprocess.run([sys.executable, "-c", ENV_SCRIPT, uri], env=env, capture_output=True,
                       text=True, timeout=300)
    assert p.returncode == 0, p.stderr[-2000:]
    got = json.loads(p.stdout.strip().splitlines()[-1])
    assert [g[:2] for g in got] == want and {g[2] for g in got} == {uri}



def _pipeline(spark, inputs, output):
    import io
    import types

    from binlog_grammar.spark.pipeline import run_pipeline

    args = types.SimpleNamespace(input=inputs, output=str(output), master="local[2]",
                                 split_bytes=2000, no_checksum=False, table=[], exclude_table=[],
                                 schema=None)
    out = io.StringIO()
    return run_pipeline(args, spark, out=out), out.getvalue()


def test_pipeline_state_keys_on_the_uri(s3, spark, tmp_path, monkeypatch):
    """The pipeline over an S3 folder, its driver's environment holding the credentials (the
    executors get them from the job): the change log of the local files, a state naming each
    input by its URI, and a second run that finds nothing new."""
    import json

    from binlog_grammar.spark import fs

    monkeypatch.setattr(fs, "_conf", {})
    monkeypatch.setenv("AWS_ENDPOINT_URL", s3)
    monkeypatch.setenv("AWS_ACCESS_KEY_ID", KEY)
    monkeypatch.setenv("AWS_SECRET_ACCESS_KEY", SECRET)
    rc, text = _pipeline(spark, ["s3://bucket/server/logs/"], tmp_path / "o")
    assert rc == 0, text
    state = json.loads((tmp_path / "o" / "_binlog_state.json").read_text())
    assert [f["path"] for f in state["files"]] == [
        f"s3://bucket/server/logs/{q.name}" for q in SAMPLES]
    assert all(f["consumed"] == f["size"] for f in state["files"])
    got = spark.read.parquet(str(tmp_path / "o" / "changes")).count()
    assert got == len(_local(spark, SAMPLES))
    rc, text = _pipeline(spark, ["s3://bucket/server/logs/"], tmp_path / "o")
    assert rc == 0 and "nothing new" in text, text
