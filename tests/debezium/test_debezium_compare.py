"""The judge's comparison (binlog_grammar.testing.debezium_diff.compare) without a server: equal
records pass, a value, a key, a source field, a missing record or a schema that differs is
reported, and only the connector's clock (ts_ms, ts_us, ts_ns of the envelope) and, when the
envelope says it follows the MariaDB connector, its MariaDB fields are let through."""
import copy

from binlog_grammar.testing.debezium_diff import compare, connector_wrong


def _record(op, before, after, pos=4, gtid=None, connector="mysql"):
    source = {"version": "3.6.3.Final", "connector": connector, "name": "bg", "ts_ms": 1000,
              "snapshot": "false", "db": "d_0", "table": "t", "server_id": 1, "gtid": gtid,
              "file": "mariadb-bin.000002", "pos": pos, "row": 0, "thread": None, "query": None}
    return {"destination": "bg.d_0.t", "key": {"id": (after or before)["id"]},
            "value": {"before": before, "after": after, "source": source, "transaction": None,
                      "op": op, "ts_ms": 5, "ts_us": 5000, "ts_ns": 5000000}}


def _stream():
    return [
        {"destination": "bg", "key": {"databaseName": "d_0"}, "value": {"ddl": "CREATE ..."}},
        _record("c", None, {"id": 1, "d": "+x4=", "s": "a,c"}),
        _record("d", {"id": 1, "d": "+x4=", "s": "a,c"}, None, pos=99),
        {"destination": "bg.d_0.t", "key": {"id": 1}, "value": None},
        {"destination": "bg.d_0.dbz_done", "key": {"id": 1}, "value": None},  # the marker
    ]


def test_equal_records_pass_and_the_clock_is_not_compared():
    theirs = _stream()
    ours = copy.deepcopy(theirs)
    ours[1]["value"]["ts_ms"] = 77
    ours[2]["value"]["ts_ns"] = 1
    res = compare(theirs, ours, False, {"d_0"})
    assert res.problems == [] and res.changes == 3 and res.values == 6
    assert res.explained == {"ts_ms": 1, "ts_ns": 1}


def test_a_differing_value_key_source_field_or_record_count_is_reported():
    theirs = _stream()
    for path, change in [
        ("after.s", lambda o: o[1]["value"]["after"].__setitem__("s", ["a", "c"])),
        ("before.d", lambda o: o[2]["value"]["before"].__setitem__("d", "-12.50")),
        ("key.id", lambda o: o[1]["key"].__setitem__("id", 2)),
        ("source.pos", lambda o: o[2]["value"]["source"].__setitem__("pos", 4)),
        ("source.gtid", lambda o: o[2]["value"]["source"].__setitem__("gtid", "0-1-5")),
        ("op", lambda o: o[1]["value"].__setitem__("op", "r")),
        ("value", lambda o: o.__setitem__(3, {"destination": "bg.d_0.t", "key": {"id": 1},
                                              "value": o[2]["value"]})),
    ]:
        ours = copy.deepcopy(theirs)
        change(ours)
        res = compare(theirs, ours, False, {"d_0"})
        assert any(f" {path}" in p for p in res.problems), (path, res.problems)
    ours = copy.deepcopy(theirs)
    del ours[3]  # a tombstone missing
    assert "3 change records from the connector, 2 from dump" in compare(
        theirs, ours, False, {"d_0"}).problems


def test_the_mariadb_connectors_fields_are_explained_only_when_the_envelope_says_mariadb():
    theirs = _stream()
    ours = copy.deepcopy(theirs)
    for rec in ours[1:3]:
        rec["value"]["source"].update(connector="mariadb", gtid="0-1-5")
    res = compare(theirs, ours, False, {"d_0"})
    assert res.problems == []
    assert res.explained == {"source.connector": 2, "source.gtid": 2}


def test_schemas_are_compared_with_the_payloads():
    theirs = [{"destination": r["destination"],
               "key": {"schema": {"type": "struct"}, "payload": r["key"]},
               "value": r["value"] and {"schema": {"type": "struct", "name": "bg.d_0.t.Envelope"},
                                        "payload": r["value"]}}
              for r in _stream()[1:4]]
    ours = copy.deepcopy(theirs)
    assert compare(theirs, ours, True, {"d_0"}).problems == []
    ours[0]["value"]["schema"]["name"] = "other"
    assert any("schema.name" in p for p in compare(theirs, ours, True, {"d_0"}).problems)


def test_the_connectors_known_mistakes_are_named_and_nothing_else():
    named = [
        ("enum('\\\\0','\\\\1') latin1", "\\\\1", "\\1"),
        ("set('a','\\\\b') utf8mb4", "a,\\\\b", "a,\\b"),
        ("tinytext latin1", "\ufffd?", "\x90?"),
        ("text utf16", "x", "\ufeffx"),
        ("binary(4)", "j", "agAAAA=="),
        ("varbinary(3)", "j\x00", "agA="),
        ("varchar(4) sjis", "a\uff3c", "a\\"),
    ]
    for sql_type, theirs, ours in named:
        assert connector_wrong(sql_type, theirs, ours, {}), (sql_type, theirs, ours)
    assert connector_wrong("binary(2)", "j", "6a00", {"binary.handling.mode": "hex"})
    for sql_type, theirs, ours in [
        ("enum('a','b') latin1", "a", "b"),
        ("tinytext latin1", "\ufffd", "\xe9"),  # é is not a hole of windows-1252
        ("text utf8mb4", "x", "\ufeffx"),  # only UTF-16 text loses a U+FEFF
        ("binary(4)", "agAAAA==", "agAAAB=="),
        ("int", 1, 2),
        ("varchar(4) sjis", "a\uff3c", "a\uff3c"),  # the same text is no mistake
        ("varchar(4) utf8mb4", "a\uff3c", "a\\"),  # only sjis maps 0x815F so
    ]:
        assert connector_wrong(sql_type, theirs, ours, {}) is None, (sql_type, theirs, ours)


def test_the_schema_sides_of_the_known_mistakes_and_nothing_else():
    """The field schemas of the same mistakes (found by tools/debezium_diff.py's schemas set):
    CHARACTER SET binary columns as strings, a BINARY DEFAULT as its hex text's bytes, ENUM
    members with the DDL's escapes."""
    import base64

    from binlog_grammar.testing.debezium_diff import schema_wrong

    hex_text = base64.b64encode(b"8fde67").decode()
    assert schema_wrong("varbinary(677)", "type", "string", "bytes")
    assert schema_wrong("binary(3)", "default", hex_text, base64.b64encode(b"\x8f\xde\x67").decode())
    assert schema_wrong("enum('\\\\0') ucs2", "parameters.allowed", "\\\\0", "\\0")
    for sql_type, what, theirs, ours in [
        ("int", "type", "string", "bytes"), ("varbinary(4)", "type", "bytes", "string"),
        ("binary(3)", "default", hex_text, hex_text), ("enum('a')", "parameters.allowed", "a", "b"),
        ("varchar(3) latin1", "default", hex_text, base64.b64encode(b"\x8f\xde\x67").decode()),
    ]:
        assert schema_wrong(sql_type, what, theirs, ours) is None, (sql_type, what)
