"""codegen/c_fields.py, the C readers of MySQL's GTID_LOG_EVENT and QUERY_EVENT that the compiled
loops share (lanes.h, through codegen/c_lane.py's model): they follow the spec, and a spec the C
cannot follow (a field of a type it does not read, a condition it cannot translate, a field the
loops ask for that is gone, a TLV of another shape, a sid that is not 16 bytes) is a SpecError at
generation time, not C that reads otherwise than the Python readers."""
import copy
import dataclasses

import pytest

from binlog_grammar.codegen import c_fields, c_lane
from binlog_grammar.errors import SpecError
from binlog_grammar.lang import expr as E
from binlog_grammar.lang.loader import load_specs


@pytest.fixture(scope="module")
def specs():
    return load_specs()


def _event(specs, name):
    return next(ed for ed in specs.events if any(n.name == name for n in ed.names))


def _field(ed, fid):
    return next(f for f in ed.fields if f.id == fid)


def test_the_readers_follow_the_spec(specs):
    m = c_lane.mysql(specs)
    text = m["field_readers"]
    assert m["mysql_gtid_code"] == 33 and m["anonymous_gtid_code"] == 34 and m["query_code"] == 2
    # each status variable of the spec is a case of the QUERY reader's switch
    tlv = specs.types["query_status_vars"].field.type
    for key, _f in tlv.cases:
        assert f"case {int(key)}: {{" in text
    # the GTID's conditions are the spec's, in C (remaining, lt_type == 2, bit 55, bit 31)
    assert "bg_eq(v_lt_type, bg_int(2LL))" in text
    assert f"bg_int({0x80000000000000}LL)" in text and f"bg_int({0x80000000}LL)" in text


def _changed(specs, event, fid, **change):
    s = copy.deepcopy(specs)
    f = _field(_event(s, event), fid)
    kind = change.pop("type_kind", None)
    if kind:
        f.type = dataclasses.replace(f.type, kind=kind)
    for k, v in change.items():
        setattr(f, k, v)
    return s


@pytest.mark.parametrize("event,fid,change", [
    ("QUERY_EVENT", "db_nul", {"type_kind": "float"}),         # a type the C does not read
    ("QUERY_EVENT", "query", {"terminator": 7}),               # a terminator other than NUL
    ("QUERY_EVENT", "db", {"size": E.parse("nowhere")}),       # a size of no field of its own
    ("GTID_LOG_EVENT", "lt_type", {"cond": E.parse("_parent.flags != 0")}),  # another scope's
    ("GTID_LOG_EVENT", "sid", {"size": E.parse("15")}),        # a sid that is not a UUID's bytes
    ("GTID_LOG_EVENT", "gno", {"id": "gno_renamed"}),          # a field the loops ask for, gone
    ("GTID_LOG_EVENT", "last_committed", {"repeat_until": ("num", 1)}),
])
def test_a_spec_the_c_cannot_follow_is_a_spec_error(specs, event, fid, change):
    with pytest.raises(SpecError):
        c_lane.mysql(_changed(specs, event, fid, **change))


def test_a_tlv_of_another_shape_is_a_spec_error(specs):
    s = copy.deepcopy(specs)
    tf = s.types["query_status_vars"].field
    tf.type = dataclasses.replace(tf.type, unknown="error")
    with pytest.raises(SpecError):
        c_fields.reader(s, "QUERY_EVENT", "query", {"query": "span"})
