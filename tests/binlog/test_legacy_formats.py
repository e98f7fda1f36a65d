"""Binlog v1 (MySQL 3.23, 13-byte headers) and v3 (4.0/4.1) files have no FORMAT_DESCRIPTION_EVENT:
the reader takes the header length from the START_EVENT_V3 and the post-header lengths from the
specs' legacy_post_header_len. The files here are built with the generated structs."""
import pytest

from binlog_grammar.generated import types as T
from binlog_grammar.generated.catalog import EVENTS
from binlog_grammar.binlog.reader import BinlogFile, MAGIC
from binlog_grammar.binlog.verify import verify_file

CODE = {e.name: c for c, e in EVENTS.items()}


def event(name, data_value, version, header_len, pos):
    code = CODE[name]
    et = EVENTS[code]
    ctx = {"binlog_version": version, "header_len": header_len, "type_code": code,
           "post_header_len": et.legacy_post_header_len.get(version, 0), "checksum_alg": 0,
           "server": None}
    data = et.build(data_value, ctx)
    header = {"timestamp": 1000000000, "type_code": code, "server_id": 1,
              "event_length": header_len + len(data), "log_pos": pos + header_len + len(data),
              "flags": 0}
    return T.common_header.build(header, **ctx) + data


def query(text):
    return {"thread_id": 7, "exec_time": 0, "error_code": 0, "db": "test", "db_nul": 0,
            "query": text}


@pytest.mark.parametrize("version, header_len", [(1, 13), (3, 19)])
def test_old_binlog_versions(tmp_path, version, header_len):
    start = {"binlog_version": version, "server_version": "4.0.30-log" if version == 3 else "3.23.58",
             "create_timestamp": 1000000000}
    blob = MAGIC
    blob += event("START_EVENT_V3", start, version, header_len, len(blob))
    blob += event("QUERY_EVENT", query("CREATE TABLE t (a INT)"), version, header_len, len(blob))
    blob += event("QUERY_EVENT", query("INSERT INTO t VALUES (1)"), version, header_len, len(blob))
    rotate = {"new_log_ident": "old-bin.002"}
    if version == 3:
        rotate["position"] = 4
    blob += event("ROTATE_EVENT", rotate, version, header_len, len(blob))
    path = tmp_path / f"old-v{version}-bin.001"
    path.write_bytes(blob)
    events = list(BinlogFile(path))
    assert [e.name for e in events] == ["START_EVENT_V3", "QUERY_EVENT", "QUERY_EVENT", "ROTATE_EVENT"]
    assert events[1].data.query == "CREATE TABLE t (a INT)"
    assert events[1].data.status_vars is None  # v1/v3 QUERY has no status variables
    assert events[3].data.new_log_ident == "old-bin.002"
    assert events[0].context["header_len"] == header_len
    report = verify_file(path)
    assert report["ok"] and report["byte_identical"] == 4
