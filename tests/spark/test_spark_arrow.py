"""The `binlog` data source's batches with their images written by the compiled backend
(spark/arrow_rows.py, native/arrow_rows.h) equal the batches the Python path builds: on every
corpus file, the samples and damaged copies of them, a real server's binlogs of every column
type (helpers.oracle.TYPES_WORKLOAD with FULL and MINIMAL metadata: SET and GEOMETRY, whose JSON
lines text has spaces the data source's does not, charsets, binary), in both image forms (map,
json), with the errors equal where the input stops a read. No Spark session: the data source's
reader runs in this process as a Spark worker runs it (pyspark and pyarrow imported, no JVM)."""
from __future__ import annotations

import json
import random

import pytest

from helpers.native import damage
from helpers.oracle import TYPES_WORKLOAD
from helpers.paths import ROOT, corpus_files, needs_corpus
from helpers.services import REQUIRE_SERVICES, need_mariadb

try:
    import pyarrow as pa
    from binlog_grammar.spark import arrow_rows
    from binlog_grammar.spark.datasource import BinlogDataSource
except ImportError as e:  # pragma: no cover - without the spark extra
    if REQUIRE_SERVICES:
        raise
    pytest.skip(f"{e.name} is not installed (pip install -e '.[spark]')", allow_module_level=True)

from binlog_grammar import native

SAMPLES = sorted(str(p) for p in (ROOT / "samples").glob("mariadb-*"))
FORMS = ("map", "json")


@pytest.fixture(scope="module", autouse=True)
def compiled():
    if arrow_rows.native_rows() is None:
        why = native.unavailable() or "binlog_grammar.native._rows has no Arrow sink"
        if REQUIRE_SERVICES:
            pytest.fail(f"the compiled backend cannot run: {why}")
        pytest.skip(f"the compiled backend cannot run: {why}")


def read(paths, image_format, backend, **options):
    """Every row of the read as Python values (the batches joined), or the error's message;
    the number of rows events the compiled backend wrote."""
    taken = []
    add_event = arrow_rows.NativeBatch.add_event

    def counting(self, se, charset):
        got = add_event(self, se, charset)
        taken.append(got is True)
        return got

    opts = {"paths": json.dumps(paths), "image_format": image_format, "split_bytes": "2048",
            **{k: str(v) for k, v in options.items()}}
    native.select(backend)
    arrow_rows.NativeBatch.add_event = counting
    try:
        ds = BinlogDataSource(opts)
        reader = ds.reader(ds.schema())
        batches = [b for p in reader.partitions() for b in reader.read(p)]
        rows = pa.Table.from_batches(batches, schema=batches[0].schema).to_pylist() \
            if batches else []
        return rows, sum(taken)
    except Exception as e:  # noqa: BLE001 - both backends must fail alike
        return f"{type(e).__name__}: {e}", sum(taken)
    finally:
        arrow_rows.NativeBatch.add_event = add_event
        native.select(None)


def same(paths, image_format, **options):
    """The compiled backend's rows equal the Python path's; how many events it wrote."""
    c_rows, taken = read(paths, image_format, "auto", **options)
    py_rows, py_taken = read(paths, image_format, "python", **options)
    assert py_taken == 0
    assert c_rows == py_rows, (paths, image_format, options)
    return taken, c_rows


@pytest.mark.parametrize("image_format", FORMS)
def test_samples_are_written_in_c_as_python_writes_them(image_format):
    taken, rows = same(SAMPLES, image_format)
    assert taken > 0 and len(rows) > taken  # events of several rows, all their rows in C
    assert {r["op"] for r in rows} == {"c", "u", "d"}


@needs_corpus
@pytest.mark.parametrize("image_format", FORMS)
def test_corpus_files(image_format):
    files = corpus_files()
    assert files
    taken = 0
    for path in files:
        got, _rows = same([str(path)], image_format, skip_damaged="true")
        taken += got
        if "corrupt" not in path.name:
            got, _rows = same([str(path)], image_format)
            taken += got
    assert taken > 20  # but for json.binlog (MySQL's binary JSON) and the 5.1 tree's, all


@pytest.mark.parametrize("image_format", FORMS)
def test_damaged_samples(image_format, tmp_path):
    rnd = random.Random(29)
    data = open(SAMPLES[0], "rb").read()
    for k in range(12):  # bounded; derandomized
        path = tmp_path / f"damaged-{k}.000001"
        head = 256  # the FORMAT_DESCRIPTION_EVENT kept, so that the reads reach the rows
        path.write_bytes(data[:head] + damage(data[head:], rnd))
        same([str(path)], image_format, skip_damaged="true")
        same([str(path)], image_format, verify_checksum="false", skip_damaged="true")
        same([str(path)], image_format)


def test_a_full_batch_is_built_before_the_event_that_does_not_fit(monkeypatch):
    """ARROW_FULL (a buffer past an int32 offset) ends the batch: the event goes in the next."""
    calls = []
    real = arrow_rows.NativeBatch.add_event

    def full_once(self, se, charset):
        calls.append(self.n)
        if len(calls) == 3 and self.n:
            return arrow_rows.FULL
        return real(self, se, charset)

    monkeypatch.setattr(arrow_rows.NativeBatch, "add_event", full_once)
    ds = BinlogDataSource({"path": SAMPLES[0]})
    reader = ds.reader(ds.schema())
    batches = [b for p in reader.partitions() for b in reader.read(p)]
    monkeypatch.setattr(arrow_rows.NativeBatch, "add_event", real)
    expected, _ = read([SAMPLES[0]], "map", "python", split_bytes=1 << 30)
    assert len(batches) >= 2
    assert pa.Table.from_batches(batches).to_pylist() == expected


@pytest.fixture(scope="module")
def types_binlogs(tmp_path_factory):
    """TYPES_WORKLOAD written by a throwaway MariaDB with FULL and with MINIMAL row metadata
    and images (as tests/output/conftest.py's server_binlogs)."""
    need_mariadb()
    from binlog_grammar.testing import mariadb

    out = tmp_path_factory.mktemp("arrow-types")
    with mariadb.MariaDB(["--default-time-zone=+00:00"]) as db:
        for name, metadata in (("full", "FULL"), ("minimal", "MINIMAL")):
            db.sql(f"SET GLOBAL binlog_row_metadata = {metadata}; "
                   f"SET GLOBAL binlog_row_image = {metadata};")
            db.sql(f"CREATE DATABASE {name};")
            db.sql(TYPES_WORKLOAD, database=name)
        db.sql("FLUSH BINARY LOGS;")
        paths = []
        for p in db.binlogs():
            paths.append(str(out / p.name))
            (out / p.name).write_bytes(p.read_bytes())
    return paths


@pytest.mark.server
@pytest.mark.parametrize("image_format", FORMS)
def test_every_column_type(types_binlogs, image_format):
    taken, rows = same(types_binlogs, image_format)
    assert taken > 20
    tables = {(r["db"], r["table"]) for r in rows}
    assert ("full", "enum_set") in tables and ("full", "geo") in tables
    if image_format == "map":  # the compact texts of a SET and a GEOMETRY, as json_text writes them
        values = {v for r in rows if r["table"] in ("enum_set", "geo") and r["after"]
                  for _k, v in r["after"]}
        assert '["a","j"]' in values
        assert any(v.startswith('{"srid":4326,"wkb":"') for v in values)
