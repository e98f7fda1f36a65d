"""`dump --format jsonl --envelope debezium` (binlog_grammar/output/debezium*.py, issue 27 item 1):
each row change as the Debezium MySQL/MariaDB connector writes it. Values per column type under
the connector's defaults and each option (the expected values worked out from Debezium's
documented rules, not read from our output: epoch days, epoch millis/micros, the unscaled
DECIMAL's two's-complement bytes, BIT's little-endian bytes, ...), a primary-key change as a
delete and a create, Kafka records with tombstones, transaction metadata, the schema/payload
wrapper, hostile names and values (every line valid UTF-8 JSON), damaged input, and the same
output from both backends. The binlogs come from a real MariaDB (FULL row metadata)."""
from __future__ import annotations

import base64
import datetime as dt
import decimal
import json
import random
import struct

import pytest

from binlog_grammar.output import debezium
from binlog_grammar.output.debezium_values import unscaled_bytes

from helpers.native import cli_dump, damage
from helpers.oracle import TYPES_WORKLOAD
from helpers.paths import ROOT, corpus_files
from helpers.services import need_mariadb

SAMPLE = ROOT / "samples" / "mariadb-10.11-sample.000001"

WORKLOAD = r"""
CREATE DATABASE kv; USE kv;
CREATE TABLE p (id INT PRIMARY KEY, v VARCHAR(10));
CREATE TABLE q (k VARCHAR(5) PRIMARY KEY, n INT);
CREATE TABLE nokey (a INT, b INT);
BEGIN; INSERT INTO p VALUES (1, 'a'), (2, 'b'); INSERT INTO q VALUES ('x', 1);
INSERT INTO p VALUES (3, 'c'); COMMIT;
UPDATE p SET id = 10 WHERE id = 1;
UPDATE p SET v = 'bb' WHERE id = 2;
DELETE FROM p WHERE id = 3;
INSERT INTO nokey VALUES (1, 2); UPDATE nokey SET a = 5; DELETE FROM nokey;
SET SESSION binlog_row_image = MINIMAL;
UPDATE q SET n = 2 WHERE k = 'x'; DELETE FROM q WHERE k = 'x';
SET SESSION binlog_row_image = FULL;
CREATE TABLE notnull (d DATE NOT NULL, dt DATETIME NOT NULL, ts TIMESTAMP NOT NULL DEFAULT 0);
SET sql_mode = '';
INSERT INTO notnull VALUES ('0000-00-00', '0000-00-00 00:00:00', 0);
CREATE TABLE adj (d DATE, dt DATETIME, y YEAR, yd YEAR DEFAULT 99, b BOOL, bb BOOLEAN, t1 TINYINT(1));
INSERT INTO adj VALUES ('0069-12-31', '0001-01-01 00:00:00', 69, 99, 116, -1, 5),
 ('0070-01-01', '0099-12-31 23:59:59', 99, 99, 0, 1, 0), ('0100-01-01', '0100-01-01 00:00:00', 2000, 99, NULL, NULL, NULL);
CREATE DATABASE `we"ird\db`;
CREATE TABLE `we"ird\db`.`t
ab` (`c"ol` VARCHAR(40) CHARACTER SET utf8mb4, `é` BLOB, `x'y` TEXT CHARACTER SET latin1);
INSERT INTO `we"ird\db`.`t
ab` VALUES (CONCAT('"\\', CHAR(10), CHAR(0), '/* */;', '😀'), 0x00FF0A22, 0x22DC5C);
"""


@pytest.fixture(scope="module")
def binlog(tmp_path_factory):
    """TYPES_WORKLOAD in database `full` and WORKLOAD, FULL row metadata, UTC: the binlog files."""
    need_mariadb()
    from binlog_grammar.testing import mariadb

    out = tmp_path_factory.mktemp("debezium-binlogs")
    with mariadb.MariaDB(["--default-time-zone=+00:00", "--binlog-row-metadata=FULL"]) as db:
        db.sql("CREATE DATABASE full;")
        db.sql(TYPES_WORKLOAD, database="full")
        db.sql(WORKLOAD)
        db.sql("SET GLOBAL binlog_row_metadata = MINIMAL;")  # no names, no primary key
        db.sql("CREATE DATABASE mini; CREATE TABLE mini.m (id INT PRIMARY KEY, "
               "e ENUM('x', 'y'), v VARCHAR(5)); INSERT INTO mini.m VALUES (1, 'y', 'a'); "
               "UPDATE mini.m SET id = 2;")
        db.sql("FLUSH BINARY LOGS;")
        paths = []
        for p in db.binlogs():
            paths.append(out / p.name)
            paths[-1].write_bytes(p.read_bytes())
    return paths


def recs(binlog, **options):
    return list(debezium.records(binlog, {k.replace("_", "."): v for k, v in options.items()}))


def first_after(records, table):
    return next(r["after"] for r in records if r.get("source", {}).get("table") == table
                and r["op"] == "c")


def rows_of(records, table):
    return [r for r in records if r.get("source", {}).get("table") == table]


def b64(data: bytes) -> str:
    return base64.b64encode(data).decode()


def unscaled(text: str, scale: int) -> str:
    """Debezium's precise DECIMAL: base64 of BigInteger(unscaled).toByteArray()."""
    n = int(decimal.Context(prec=100).scaleb(decimal.Decimal(text), scale))
    raw = n.to_bytes(max(1, (n.bit_length() + 8) // 8), "big", signed=True)
    while len(raw) > 1 and ((raw[0] == 0 and raw[1] < 0x80) or (raw[0] == 0xFF and raw[1] >= 0x80)):
        raw = raw[1:]  # the shortest form
    return b64(raw)


EPOCH = dt.datetime(1970, 1, 1)


def micros(text: str) -> int:
    d = dt.datetime.fromisoformat(text) - EPOCH
    return (d.days * 86400 + d.seconds) * 10**6 + d.microseconds


@pytest.mark.server
def test_integers_and_the_wrapping_unsigned_bigint(binlog):
    after = first_after(recs(binlog), "ints")
    assert after == {"a": -128, "b": 255, "c": -32768, "d": 65535, "e": -8388608, "f": 16777215,
                     "g": -2147483648, "h": 4294967295, "i": -2**63, "j": 2**64 - 1 - 2**64}
    precise = first_after(recs(binlog, bigint_unsigned_handling_mode="precise"), "ints")
    assert precise["j"] == b64(b"\x00" + b"\xff" * 8)  # Decimal(18446744073709551615, scale 0)
    assert precise["i"] == -2**63  # signed BIGINT stays a long


@pytest.mark.server
@pytest.mark.parametrize("mode", ["precise", "string", "double"])
def test_decimal_in_each_mode_and_floats(binlog, mode):
    rows = [r["after"] for r in rows_of(recs(binlog, decimal_handling_mode=mode), "nums")]
    literals = [("-12345678.99", "-12345678901234567890123456789012345.123456789012345678901234567890",
                 "-99999", "-0.9999", "999999999.999999999"),
                ("0", "0", "0", "0", "0"),
                ("0.01", "0.000000000000000000000000000001", "1", "0.0001", "0.000000001"),
                ("-0.01", "-1", "-1", "-0.0001", "1")]
    scales = (2, 30, 0, 4, 9)
    for after, row in zip(rows, literals):
        for col, text, scale in zip("abceu", row, scales):
            want = decimal.Context(prec=100).quantize(decimal.Decimal(text),
                                                      decimal.Decimal(1).scaleb(-scale))
            if mode == "precise":
                assert after[col] == unscaled(text, scale), (col, text)
            elif mode == "string":
                assert after[col] == format(want, "f"), (col, text)
            else:
                assert after[col] == float(want), (col, text)
    assert unscaled_bytes(-1) == b"\xff" and unscaled_bytes(128) == b"\x00\x80"
    # FLOAT as the shortest decimal of its 32-bit value (Java's Float.toString), DOUBLE as is
    assert rows[0]["f"] == 1.5 and rows[0]["f2"] == -3.4e38 and rows[0]["d2"] == 1e-300
    assert rows[2]["f2"] == 1e-40 and struct.pack("<f", rows[3]["f"]) == struct.pack("<f", -1.17549e-38)
    assert rows[3]["d"] == 3.141592653589793


@pytest.mark.server
def test_temporal_types_by_default(binlog):
    rows = [r["after"] for r in rows_of(recs(binlog), "temporal")]
    assert rows[0] == {
        "y": 2024, "d": (dt.date(2024, 2, 29) - EPOCH.date()).days,
        "dt": micros("2024-02-29 23:59:59") // 1000,  # fsp 0: io.debezium.time.Timestamp
        "dt3": micros("1000-01-01 00:00:00.999") // 1000,
        "dt6": micros("9999-12-31 23:59:59.999999"),  # fsp 6: MicroTimestamp
        "ts": "1970-01-01T00:00:01Z", "ts1": "2038-01-19T03:14:07.9Z",
        "ts6": "2001-09-09T01:46:40.000001Z",  # ZonedTimestamp, fsp digits
        "t": -(838 * 3600 + 59 * 60 + 59) * 10**6, "t2": -10_000,  # MicroTime
        "t6": (838 * 3600 + 59 * 60 + 59) * 10**6 + 999_999, "t5": -(12 * 3600 + 34 * 60 + 56) * 10**6 - 789_010}
    # zero and invalid dates in nullable columns: null
    # YEAR 0000 is 1900: the connector's binlog reader adds 1900 to the stored byte
    assert rows[1] == {"y": 1900, "d": None, "dt": None, "dt3": None, "dt6": None, "ts": None,
                       "ts1": None, "ts6": None, "t": 0, "t2": 500_000, "t6": -1_000_001,
                       "t5": 100 * 3600 * 10**6 + 10}
    # enable.time.adjuster (default true): year 0001 read as the two-digit year 01
    assert rows[2]["dt6"] == micros("2001-01-01 00:00:00.1") and rows[2]["d"] is None
    off = rows_of(recs(binlog, enable_time_adjuster="false"), "temporal")
    assert off[2]["after"]["dt6"] == micros("0001-01-01 00:00:00.1")
    old = first_after(recs(binlog), "old_temporal")
    assert old == {"dt": micros("2024-02-29 23:59:59") // 1000, "t": -(838 * 3600 + 3599) * 10**6,
                   "ts": "2038-01-19T03:14:07Z"}


@pytest.mark.server
def test_zero_dates_in_not_null_columns_are_the_epoch(binlog):
    # the connector reads a zero date as null; in a NOT NULL column, whose field is required,
    # that null is the epoch (or the column's DEFAULT): seen with Debezium 3.6.3, binlog and
    # snapshot alike (tests/debezium/test_debezium_snapshot.py's case, docs/debezium.md)
    assert first_after(recs(binlog), "notnull") == {"d": 0, "dt": 0,
                                                    "ts": "1970-01-01T00:00:00Z"}
    schema = next(r for r in recs(binlog, schemas_enable="true")
                  if r["payload"]["source"]["table"] == "notnull")["schema"]
    after = next(f for f in schema["fields"] if f["field"] == "after")
    assert not any(f["optional"] for f in after["fields"])


def days(text: str) -> int:
    return (dt.date.fromisoformat(text) - EPOCH.date()).days


@pytest.mark.server
def test_time_adjuster_reads_years_below_100_as_two_digit_years(binlog):
    rows = [r["after"] for r in rows_of(recs(binlog), "adj")]
    assert [r["d"] for r in rows] == [days("2069-12-31"), days("1970-01-01"), days("0100-01-01")]
    assert [r["dt"] for r in rows] == [micros("2001-01-01 00:00:00") // 1000,
                                       micros("1999-12-31 23:59:59") // 1000,
                                       micros("0100-01-01 00:00:00") // 1000]
    assert [r["y"] for r in rows] == [2069, 1999, 2000]  # YEAR untouched (the server's own years)
    off = [r["after"] for r in rows_of(recs(binlog, enable_time_adjuster="false"), "adj")]
    assert [r["d"] for r in off] == [days("0069-12-31"), days("0070-01-01"), days("0100-01-01")]


@pytest.mark.server
def test_year_default_in_the_schema_is_what_mariadb_stores(binlog):
    schema = next(r for r in recs(binlog, schemas_enable="true")
                  if r["payload"]["source"]["table"] == "adj")["schema"]
    after = next(f for f in schema["fields"] if f["field"] == "after")
    yd = next(f for f in after["fields"] if f["field"] == "yd")
    assert yd["default"] == 1999
    b = next(f for f in after["fields"] if f["field"] == "b")
    assert b["type"] == "boolean"


@pytest.mark.server
def test_bool_columns_are_booleans_and_tinyint1_stays_an_int(binlog):
    rows = [r["after"] for r in rows_of(recs(binlog), "adj")]
    assert [(r["b"], r["bb"], r["t1"]) for r in rows] == [
        (True, True, 5), (False, True, 0), (None, None, None)]


@pytest.mark.server
def test_time_precision_modes(binlog):
    connect = [r["after"] for r in rows_of(recs(binlog, time_precision_mode="connect"), "temporal")]
    assert connect[0]["dt6"] == micros("9999-12-31 23:59:59.999999") // 1000  # millis always
    # a TIME outside one day is null: Kafka Connect's Time holds a time of day (as the connector)
    assert connect[0]["t6"] is None and connect[0]["t"] is None and connect[0]["t2"] is None
    assert connect[1]["t2"] == 500 and connect[1]["t"] == 0 and connect[1]["t5"] is None
    assert connect[0]["d"] == (dt.date(2024, 2, 29) - EPOCH.date()).days
    adaptive = first_after(recs(binlog, time_precision_mode="adaptive"), "temporal")
    assert adaptive["t2"] == -10 and adaptive["t6"] == (838 * 3600 + 59 * 60 + 59) * 10**6 + 999_999


@pytest.mark.server
def test_bit_enum_set_geometry(binlog):
    rows = [r["after"] for r in rows_of(recs(binlog), "bits")]
    # BIT(1) a boolean; BIT(n) ceil(n/8) bytes, least significant first
    assert rows[0] == {"a": True, "b": b64(bytes([0b1010101])), "c": b64(b"\xff"),
                       "d": b64((0b1000000001).to_bytes(2, "little")), "e": b64(b"\xff" * 8),
                       "f": b64((0b10000000000000001).to_bytes(3, "little"))}
    assert rows[1]["a"] is False and rows[1]["d"] == b64(b"\x00\x00")
    es = [r["after"] for r in rows_of(recs(binlog), "enum_set")]
    assert es[0] == {"e": "c", "s": "a,j", "s3": "x,j"}  # SET members in definition order
    assert es[1] == {"e": "", "s": "", "s3": ""}
    assert es[2] == {"e": None, "s": "b,c,d,e,f,g,h,i", "s3": "q,p,o"}
    assert first_after(recs(binlog), "wide") == {"e": "v0", "s": "m0,m63"}
    geo = first_after(recs(binlog), "geo")
    line = b"\x01" + struct.pack("<II4d", 2, 2, 0.0, 0.0, 1.0, 1.0)  # LINESTRING(0 0, 1 1)
    assert geo["g"] == {"wkb": b64(line), "srid": None}
    # a POINT column (its GEOMETRY_TYPE) is io.debezium.data.geometry.Point: x and y too
    assert geo["p"] == {"x": 1.0, "y": 2.0, "wkb": b64(b"\x01" + struct.pack("<I2d", 1, 1.0, 2.0)),
                        "srid": 4326}


@pytest.mark.server
@pytest.mark.parametrize("mode,encode", [
    ("bytes", lambda b: base64.b64encode(b).decode()), ("base64", lambda b: base64.b64encode(b).decode()),
    ("base64-url-safe", lambda b: base64.urlsafe_b64encode(b).decode()), ("hex", bytes.hex)])
def test_strings_and_binary_in_each_mode(binlog, mode, encode):
    rows = [r["after"] for r in rows_of(recs(binlog, binary_handling_mode=mode), "strs")
            if r["op"] == "c"]
    assert rows[0]["c"] == "it's" and rows[0]["tx"] == "café" and rows[0]["c2"] == "ünï 😀"
    assert rows[0]["b"] == encode(b"ab\x00\x00\x00")  # BINARY(5) padded
    assert rows[0]["vb"] == encode(b"\x00\xff\n\r") and rows[0]["bl"] == encode(bytes.fromhex(
        "000102031f207f80ff"))
    assert rows[0]["lb"] == encode(b"z" * 70000)
    # MariaDB's latin1 is cp1252 with 0x81 as U+0081 (what the server's SELECT gives; the
    # connector's Java windows-1252 writes U+FFFD there: docs/debezium.md)
    assert rows[3]["tx"] == "€\x81Ÿÿ"


@pytest.mark.server
def test_envelope_and_source_fields(binlog):
    r = next(x for x in recs(binlog) if x["source"]["table"] == "p")
    assert list(r) == ["before", "after", "source", "transaction", "op", "ts_ms", "ts_us", "ts_ns"]
    s = r["source"]
    assert list(s) == ["version", "connector", "name", "ts_ms", "snapshot", "db", "sequence",
                       "ts_us", "ts_ns", "table", "server_id", "gtid", "file", "pos", "row",
                       "thread", "query"]
    assert s["connector"] == "mariadb" and s["name"] == "binlog" and s["snapshot"] == "false"
    assert s["file"] == binlog[0].name and s["db"] == "kv" and s["server_id"] == 1
    assert s["gtid"].startswith("0-1-") and s["row"] == 0 and s["query"] is None
    assert r["ts_ms"] == s["ts_ms"] and s["ts_us"] == s["ts_ms"] * 1000
    # read from a position inside the file, after its FORMAT_DESCRIPTION: still MariaDB's fields
    from binlog_grammar.binlog.stream import Filters

    mid = list(debezium.records(binlog, filters=Filters(start_position=r["source"]["pos"])))
    assert mid and all(x["source"]["connector"] == "mariadb" and x["source"]["gtid"] for x in mid)
    named = recs(binlog, topic_prefix="shop", include_query="true")
    s = next(x for x in named if x["source"]["table"] == "p")["source"]
    assert s["name"] == "shop" and s["query"].startswith("INSERT INTO p VALUES (1, 'a')")
    # the MySQL connector against MariaDB: no GTID, no statement (it reads ROWS_QUERY only)
    mysql = recs(binlog, include_query="true", connector="mysql")
    s = next(x for x in mysql if x["source"]["table"] == "p")["source"]
    assert s["connector"] == "mysql" and s["gtid"] is None and s["query"] is None


@pytest.mark.server
def test_a_primary_key_change_is_a_delete_then_a_create(binlog):
    p = [(r["op"], r["before"], r["after"]) for r in rows_of(recs(binlog), "p")]
    assert p[3:] == [("d", {"id": 1, "v": "a"}, None), ("c", None, {"id": 10, "v": "a"}),
                     ("u", {"id": 2, "v": "b"}, {"id": 2, "v": "bb"}),
                     ("d", {"id": 3, "v": "c"}, None)]
    # no primary key: an update stays an update
    assert [r["op"] for r in rows_of(recs(binlog), "nokey")] == ["c", "u", "d"]


@pytest.mark.server
def test_kafka_records_with_keys_and_tombstones(binlog):
    kv = [r for r in recs(binlog, kafka_records="true") if r["topic"].startswith("binlog.kv.")]
    p = [(r["key"], r["value"] and r["value"]["op"]) for r in kv if r["topic"] == "binlog.kv.p"]
    assert p[3:] == [({"id": 1}, "d"), ({"id": 1}, None), ({"id": 10}, "c"), ({"id": 2}, "u"),
                     ({"id": 3}, "d"), ({"id": 3}, None)]
    assert all(set(r) == {"topic", "key", "value"} for r in kv)
    nokey = [(r["key"], r["value"] and r["value"]["op"]) for r in kv if r["topic"] == "binlog.kv.nokey"]
    assert nokey == [(None, "c"), (None, "u"), (None, "d"), (None, None)]
    quiet = recs(binlog, kafka_records="true", tombstones_on_delete="false")
    assert all(r["value"] is not None for r in quiet)


@pytest.mark.server
def test_transaction_metadata(binlog):
    every = recs(binlog, provide_transaction_metadata="true")
    kv = {r["transaction"]["id"] for r in every if "source" in r and r["source"]["db"] == "kv"}
    out = [r for r in every if (r["id"] if "status" in r else r["transaction"]["id"]) in kv]
    first = out[:6]
    assert first[0]["status"] == "BEGIN" and first[0]["event_count"] is None
    tx = first[0]["id"]
    assert tx.startswith("0-1-")
    assert [(r["source"]["table"], r["transaction"]) for r in first[1:5]] == [
        ("p", {"id": tx, "total_order": 1, "data_collection_order": 1}),
        ("p", {"id": tx, "total_order": 2, "data_collection_order": 2}),
        ("q", {"id": tx, "total_order": 3, "data_collection_order": 1}),
        ("p", {"id": tx, "total_order": 4, "data_collection_order": 3})]
    assert first[5] == {"status": "END", "id": tx, "event_count": 4, "data_collections": [
        {"data_collection": "kv.p", "event_count": 3}, {"data_collection": "kv.q", "event_count": 1}],
        "ts_ms": first[5]["ts_ms"]}
    # every change sits between its BEGIN and END
    open_tx = None
    for r in out:
        if r.get("status") == "BEGIN":
            assert open_tx is None
            open_tx = r["id"]
        elif r.get("status") == "END":
            assert open_tx == r["id"]
            open_tx = None
        else:
            assert r["transaction"]["id"] == open_tx
    # the MySQL connector sees no BEGIN in a MariaDB binlog: no transaction metadata (3.6.3)
    mysql = recs(binlog, provide_transaction_metadata="true", connector="mysql")
    assert all("status" not in r and r["transaction"] is None for r in mysql)
    kafka = [r for r in recs(binlog, provide_transaction_metadata="true", kafka_records="true")
             if r["topic"] != "binlog"]  # the schema-change topic's records left out
    assert kafka[0]["topic"] == "binlog.transaction" and kafka[0]["key"] == {"id": kafka[0]["value"]["id"]}


@pytest.mark.server
def test_schema_and_payload(binlog):
    plain = recs(binlog)
    wrapped = recs(binlog, schemas_enable="true")
    assert [w["payload"] for w in wrapped] == plain
    w = next(x for x in wrapped if x["payload"]["source"]["table"] == "nums")["schema"]
    assert w["name"] == "binlog.full.nums.Envelope"
    after = next(f for f in w["fields"] if f["field"] == "after")
    a = next(f for f in after["fields"] if f["field"] == "a")
    assert a == {"type": "bytes", "optional": True, "name": "org.apache.kafka.connect.data.Decimal",
                 "version": 1, "parameters": {"scale": "2", "connect.decimal.precision": "10"},
                 "field": "a"}
    t = next(x for x in wrapped if x["payload"]["source"]["table"] == "temporal")["schema"]
    names = {f["field"]: f.get("name") for f in t["fields"][1]["fields"]}
    assert names["d"] == "io.debezium.time.Date" and names["dt6"] == "io.debezium.time.MicroTimestamp"
    assert names["dt3"] == "io.debezium.time.Timestamp" and names["t"] == "io.debezium.time.MicroTime"
    assert names["ts"] == "io.debezium.time.ZonedTimestamp" and names["y"] == "io.debezium.time.Year"
    kafka = [r for r in recs(binlog, schemas_enable="true", kafka_records="true")
             if r["topic"] == "binlog.kv.p"]
    assert kafka[0]["key"]["payload"] == {"id": 1}
    assert [f["field"] for f in kafka[0]["key"]["schema"]["fields"]] == ["id"]


@pytest.mark.server
def test_hostile_names_and_values_stay_valid_json(binlog, tmp_path):
    import subprocess
    import sys

    r = subprocess.run([sys.executable, "-m", "binlog_grammar", "dump", "--format", "jsonl",
                        "--envelope", "debezium", "--debezium-option", "kafka.records=true",
                        *map(str, binlog)], capture_output=True, timeout=300)
    assert r.returncode == 0, r.stderr
    lines = r.stdout.decode("utf-8").splitlines()  # valid UTF-8 throughout
    recs_ = [json.loads(line) for line in lines]
    weird = [x for x in recs_ if x["topic"] == 'binlog.we"ird\\db.t\nab']
    assert len(weird) == 1
    after = weird[0]["value"]["after"]
    assert after['c"ol'] == '"\\\n\x00/* */;😀' and after["é"] == b64(b"\x00\xff\n\"")
    assert after["x'y"] == '"Ü\\'


def _damaged_copies(path, n, seed):
    rnd = random.Random(seed)
    data = path.read_bytes()
    return [damage(data, rnd) for _ in range(n)]


def need_compiled():
    """Skip when the compiled backend is not built (tests/native/test_without_compiler.py runs
    this file against an install without it): there is no second backend to compare."""
    from binlog_grammar import native
    if native.unavailable() is not None:
        pytest.skip(f"the compiled backend is not built: {native.unavailable()}")


def test_damaged_input_gives_valid_json_or_a_clean_error(tmp_path):
    """Every line of a damaged binlog's Debezium output is valid UTF-8 JSON, the same from both
    backends, and nothing ends in a traceback."""
    need_compiled()
    records = 0
    for i, data in enumerate(_damaged_copies(SAMPLE, 30, 27)):
        path = tmp_path / f"d{i}.000001"
        path.write_bytes(data)
        got = {}
        for backend in ("python", "c"):
            code, out, err = cli_dump(path, backend, "--format", "jsonl", "--envelope", "debezium",
                                      "--skip-damaged", "--no-checksum")
            assert "Traceback" not in err and code in (0, 1), (i, err)
            for line in out.splitlines():
                line.encode("utf-8")
                json.loads(line)
            got[backend] = (code, out)
        assert got["python"] == got["c"], i
        records += len(got["c"][1].splitlines())
    assert records > 100  # the damage leaves most rows readable: the check is not vacuous


def test_both_backends_write_the_same_records():
    need_compiled()
    paths = [SAMPLE] + [p for p in corpus_files() if p.name.startswith(("binlog_", "ver_"))][:8]
    lines = 0
    for path in paths:
        py = cli_dump(path, "python", "--format", "jsonl", "--envelope", "debezium", "--skip-damaged")
        c = cli_dump(path, "c", "--format", "jsonl", "--envelope", "debezium", "--skip-damaged")
        assert py == c, path
        lines += len(py[1].splitlines())
    assert lines > 10


def test_option_errors_name_what_is_valid(capsys):
    from binlog_grammar.cli import main

    for argv, message in [
        (["--debezium-option", "decimal.handling.mode=exact"], "expected one of precise, string, double"),
        (["--debezium-option", "nope=1"], "unknown Debezium option 'nope'"),
        (["--debezium-option", "novalue"], "expected KEY=VALUE"),
    ]:
        try:
            code = main(["dump", "--format", "jsonl", "--envelope", "debezium", *argv, str(SAMPLE)])
        except SystemExit as e:
            code = e.code
        assert code == 2
        assert message in capsys.readouterr().err
    assert main(["dump", "--format", "text", "--envelope", "debezium", str(SAMPLE)]) == 2
    assert "--envelope is for --format jsonl" in capsys.readouterr().err
    # the old name of topic.prefix is accepted
    assert debezium.check_options({"database.server.name": "x"})["topic.prefix"] == "x"


def test_sample_records_have_every_field():
    out = list(debezium.records(SAMPLE))
    assert out and all(r["op"] in "cud" for r in out)
    assert {r["source"]["table"] for r in out} >= {"customers"}
    dec = next(r for r in out if r["source"]["table"] == "customers")["after"]
    assert dec["balance"] == unscaled("1200.50", 2) and dec["flags"] == "a,c"


def test_undecoded_bytes_anywhere_become_replacement_characters():
    """A name or value holding bytes its charset does not decode (kept by the reader as
    surrogate escapes) is written as Java holds it, U+FFFD, keys included: the line stays UTF-8."""
    rec = {"after": {"c\udce9": "x\udcff\udc80y"}, "source": {"table": "t\udcc3"}}
    out = debezium._java_text(rec)
    assert out == {"after": {"c\ufffd": "x\ufffd\ufffdy"}, "source": {"table": "t\ufffd"}}
    json.dumps(out, ensure_ascii=False).encode("utf-8")


@pytest.mark.server
def test_without_full_metadata_a_schema_names_the_columns_and_the_key(binlog):
    """MINIMAL row metadata: columns are @1.. and no key is known (an update that changes the
    key stays an update); a schema (--schema) gives the names, the members and the key."""
    bare = [(r["op"], r["before"], r["after"]) for r in rows_of(recs(binlog), "m")]
    assert bare == [("c", None, {"@1": 1, "@2": 2, "@3": "a"}),
                    ("u", {"@1": 1, "@2": 2, "@3": "a"}, {"@1": 2, "@2": 2, "@3": "a"})]
    schema = {"mini.m": {"columns": [{"name": "id"}, {"name": "e", "enum_values": ["x", "y"]},
                                     {"name": "v"}], "primary_key": ["id"]}}
    named = [r for r in debezium.records(binlog, {"kafka.records": "true"}, schemas=schema)
             if r["topic"] == "binlog.mini.m"]
    assert [(r["key"], r["value"] and r["value"]["op"]) for r in named] == [
        ({"id": 1}, "c"), ({"id": 1}, "d"), ({"id": 1}, None), ({"id": 2}, "c")]
    assert named[0]["value"]["after"] == {"id": 1, "e": "y", "v": "a"}


@pytest.mark.server
def test_minimal_row_images_keep_every_column_and_the_key(binlog):
    """binlog_row_image=MINIMAL: an image holds only some columns (the before image the key, the
    after image the changed ones). Every column is in the record (null when left out, as in the
    connector's struct), the key comes from the image holding it, and no key change is made up."""
    q = [(r["key"], r["value"] and r["value"]["op"], r["value"] and r["value"]["before"],
          r["value"] and r["value"]["after"])
         for r in recs(binlog, kafka_records="true") if r["topic"] == "binlog.kv.q"]
    assert q == [({"k": "x"}, "c", None, {"k": "x", "n": 1}),
                 ({"k": "x"}, "u", {"k": "x", "n": None}, {"k": None, "n": 2}),
                 ({"k": "x"}, "d", {"k": "x", "n": None}, None), ({"k": "x"}, None, None, None)]
