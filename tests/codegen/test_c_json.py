"""codegen/c_json.py, the JSON-lines lane's generator: the hot events' data writers follow their
spec fields in order, a field it cannot write is a SpecError when always there and a run-time
refusal when conditional, and the generated C names every field."""
import copy
import dataclasses

import pytest

from binlog_grammar.codegen import c_json
from binlog_grammar.errors import SpecError
from binlog_grammar.lang.loader import load_specs


@pytest.fixture(scope="module")
def specs():
    return load_specs()


def _event(specs, name):
    return next(ed for ed in specs.events if any(n.name == name for n in ed.names))


def test_writers_follow_the_spec_fields(specs):
    events = {e["name"]: e for e in c_json.data_writers(specs)}
    for name, e in events.items():
        assert [f["id"] for f in e["fields"]] == [f.id for f in _event(specs, name).fields]
    gtid = {f["id"]: f for f in events["GTID_EVENT"]["fields"]}
    assert gtid["seq_no"]["kind"] == "int" and gtid["seq_no"]["cond"] is None
    assert gtid["xid"]["kind"] == "refuse" and gtid["xid"]["cond"]  # an XA GTID: Python's
    # since/until say which servers write a field; the readers read by the condition alone
    assert gtid["sa_seq_no"]["kind"] == "int" and gtid["sa_seq_no"]["cond"]
    assert gtid["padding"]["kind"] == "bytes"
    assert {f["kind"] for f in events["ANNOTATE_ROWS_EVENT"]["fields"]} == {"str"}
    text = c_json.render(specs)["jsonl_lane.c"]
    for e in events.values():
        for f in e["fields"]:
            assert f'"\\"{f["id"]}\\": "' in text


@pytest.mark.parametrize("change", [
    {"enum": "mariadb_gtid_flags2"},  # written by name: not this lane's
    {"size": None, "type_kind": "packed"},
    {"repeat": ("num", 2)},  # repeated: not this lane's
])
def test_an_unconditional_field_it_cannot_write_is_a_spec_error(specs, change):
    s = copy.deepcopy(specs)
    ed = _event(s, "XID_EVENT")
    f = ed.fields[0]
    kind = change.pop("type_kind", None)
    if kind:
        f.type = dataclasses.replace(f.type, kind=kind)
    for k, v in change.items():
        setattr(f, k, v)
    with pytest.raises(SpecError):
        c_json.model(s)
