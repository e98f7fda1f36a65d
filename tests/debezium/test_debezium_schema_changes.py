"""Debezium's schema-change records (include.schema.changes, issue 27 item 1): which records
plain lines and Kafka records hold by default and when asked (no server). Judged by the real
connector in tests/debezium/test_debezium_diff.py, whose one capture also runs the fixed DDL
workload (binlog_grammar.testing.debezium_schema_diff.ddl_workload) and the drawn tables'
DDL, without and with schemas.
"""
from __future__ import annotations


# the fixed DDL workload and the drawn tables' schema-change records against the connector:
# tests/debezium/test_debezium_diff.py, in that module's one capture


def test_include_schema_changes_default_and_off(tmp_path):
    """Debezium's default (true) with Kafka records, where the topic tells them apart; plain
    lines hold change events unless asked; false writes none."""
    from binlog_grammar.output import debezium
    from helpers.paths import ROOT

    sample = ROOT / "samples" / "mariadb-10.11-sample.000001"
    kafka = list(debezium.records(sample, {"kafka.records": "true"}))
    ddl = [r for r in kafka if r["topic"] == "binlog"]
    assert ddl and all(r["key"] == {"databaseName": r["value"]["databaseName"]} for r in ddl)
    assert not [r for r in debezium.records(sample, {"kafka.records": "true",
                                                      "include.schema.changes": "false"})
                if r["topic"] == "binlog"]
    plain = list(debezium.records(sample))
    assert not [r for r in plain if "ddl" in r]
    asked = list(debezium.records(sample, {"include.schema.changes": "true"}))
    assert [r for r in asked if "ddl" in r] == [r["value"] for r in ddl]
