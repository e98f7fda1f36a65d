"""Every row of every rows event in the real corpus decodes, and the values MySQL's own test
suite put there come out as written. Values that mariadb-binlog can also decode are compared
with it in test_values_oracle.py; this file states what it cannot read (JSON, partial updates,
compressed transactions) from the MySQL documentation of those formats."""
import pytest

from binlog_grammar.errors import BinlogError, UndecodableRowsError
from binlog_grammar.binlog.rows import iter_row_changes

from helpers.paths import CORPUS, corpus_files, needs_corpus

# Damaged on purpose (MANIFEST.md): the changes before the damage are compared, then the error.
DAMAGED = {"binlog_truncated_event.000001", "binlog_truncated_prev_gtid_event.000001",
           "bug40482-bin.000001", "corrupt-relay-bin.000624"}
# Written by a 5.1 development tree: the TABLE_MAPs carry no column metadata, so the CHAR values
# of its rows cannot be sized. The file is valid: iter_row_changes says so with an
# UndecodableRowsError (not damage, and naming no Python exception), and the reading commands
# show those rows raw and read the file to its end (test_reading_commands.py).
NO_METADATA = {"ver_5_1-wl2325_r.001"}


def _changes(path):
    out = []
    try:
        for ch in iter_row_changes(path):
            out.append(ch)
    except BinlogError as e:
        return out, e
    return out, None


@needs_corpus
@pytest.mark.parametrize("path", corpus_files(), ids=lambda p: p.name)
def test_every_rows_event_decodes(path):
    changes, err = _changes(path)
    if path.name in DAMAGED:
        assert err is not None and err.offset is not None
    elif path.name in NO_METADATA:
        assert isinstance(err, UndecodableRowsError), err
        assert "carries no column metadata" in str(err) and "Error" not in str(err), err
        assert (err.offset, err.event_type) == (466, "PRE_GA_WRITE_ROWS_EVENT")
    else:
        assert err is None, err
    for ch in changes:
        assert ch.op in ("c", "u", "d")
        assert (ch.before is None) == (ch.op == "c") and (ch.after is None) == (ch.op == "d")


@needs_corpus
def test_full_row_metadata_names_enum_and_set():
    """MySQL 8.0.28, binlog_row_metadata=FULL: names, ENUM/SET members, charsets."""
    changes, err = _changes(CORPUS / "mysql-enum-string-set.000001")
    assert err is None
    ins, upd, dele = changes
    assert [c.name for c in ins.columns] == ["f1", "f2", "f3", "f4", "f5"]
    assert ins.after["f3"] == "var1" and ins.after["f4"] == frozenset({"one", "three"})
    assert upd.after["f3"] == "variant2" and upd.after["f4"] == frozenset({"two", "four"})
    assert upd.before == ins.after
    assert dele.before == upd.after


@needs_corpus
def test_minimal_metadata_signedness_and_charset():
    """MySQL 8.0.40, binlog_row_metadata=MINIMAL: an UNSIGNED INT and a CHAR with its charset."""
    (ch,), err = _changes(CORPUS / "minimal_row_metadata.000001")
    assert err is None
    assert ch.after["@1"] == 1
    assert ch.after["@3"] == "a"                      # CHAR(8) utf8mb4: str, not bytes
    assert ch.after["@5"] == 3230202323                # INT UNSIGNED (-1064764973 signed)
    assert set(ch.after) == {"@1", "@3", "@5"}        # binlog_row_image=MINIMAL-style partial image


@needs_corpus
def test_json_and_partial_json_updates():
    """MySQL 8.0.22: binary JSON in inserts and full updates, then a PARTIAL_UPDATE_ROWS_EVENT
    (binlog_row_value_options=PARTIAL_JSON, binlog_row_image=MINIMAL) whose after images hold only
    a REPLACE of $.age. The statements are in the file's QUERY events; the layout is MySQL's
    Json_diff_vector::write_binary."""
    from binlog_grammar.binlog.rows import JsonDiff, PartialJson

    changes, err = _changes(CORPUS / "json.binlog.000001")
    assert err is None
    inserts = [c for c in changes if c.op == "c"]
    people = [("Joe", 24, "x"), ("Sue", 32, "y"), ("Pete", 40, "z")] * 2
    assert [c.after for c in inserts] == [
        {"@1": i + 1, "@2": {"age": age, "data": ch * 10, "name": name}, "@3": name, "@4": age}
        for i, (name, age, ch) in enumerate(people)]
    full, partial = [c for c in changes if c.event_type == "UPDATE_ROWS_EVENT"], \
        [c for c in changes if c.event_type == "PARTIAL_UPDATE_ROWS_EVENT"]
    assert [c.after["@4"] for c in full] == [25, 33, 41, 25, 33, 41]
    assert [c.before for c in partial] == [{"@1": i} for i in range(1, 7)]
    for c, age in zip(partial, [26, 34, 42, 26, 34, 42]):
        assert c.after["@2"] == PartialJson((JsonDiff("REPLACE", "$.age", age),))
        assert c.json_diffs == {"@2": [JsonDiff("REPLACE", "$.age", age)]}
        assert c.after["@4"] == age and set(c.after) == {"@2", "@3", "@4"}


@needs_corpus
def test_rows_inside_a_compressed_transaction():
    """MySQL 8.0.32, binlog_transaction_compression=ON: the only rows event is inside a zstd
    TRANSACTION_PAYLOAD_EVENT (mariadb-binlog cannot read it)."""
    (ch,), err = _changes(CORPUS / "transaction_compression.000001")
    assert err is None
    assert (ch.op, ch.db, ch.table, ch.after) == ("c", "test", "tb1", {"@1": 1})
