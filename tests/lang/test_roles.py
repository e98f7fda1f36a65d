"""role: in the event specs (what an event is to a transaction): validated with file, line and
field, carried into the generated catalog, and given to every event the readers group by."""
import shutil
from pathlib import Path

import pytest

from binlog_grammar.codegen.construct import render
from binlog_grammar.errors import SpecError
from binlog_grammar.lang.events import ROLES
from binlog_grammar.lang.loader import load_specs

BASE = Path(__file__).resolve().parents[2] / "specs"

ONE = """\
event: TEST_EVENT
code: 250
role: {role}
doc: A test event.
body:
  - id: n
    type: u8
    doc: A count.
"""

MANY = """\
events:
  - name: TEST_A_EVENT
    code: 250
  - name: TEST_B_EVENT
    code: 251
{entry}
layout: test_event
role: context
doc: Two test events.
body:
  - id: n
    type: u8
    doc: A count.
"""


def _specs_with(tmp_path, text):
    d = tmp_path / "specs"
    shutil.copytree(BASE, d)
    (d / "events" / "test").mkdir()
    (d / "events" / "test" / "test.yaml").write_text(text)
    return d


@pytest.mark.parametrize("text, line, words", [
    (ONE.format(role="commited"), 3, "unknown role 'commited'"),
    (ONE.format(role="rows"), 3, "given by rows:"),
    (MANY.format(entry="    role: opens"), 6, "unknown role 'opens'"),
    (MANY.format(entry="    rows: insert\n    role: statement"), 7, "role is rows"),
    (MANY.format(entry="    rows: insert"), 8, "role is rows"),  # the file's role: given to rows
])
def test_a_wrong_role_names_file_line_and_field(tmp_path, text, line, words):
    with pytest.raises(SpecError) as info:
        load_specs(_specs_with(tmp_path, text))
    err = info.value
    assert (err.file, err.line, err.field) == ("specs/events/test/test.yaml", line, "role")
    assert words in err.message


def test_roles_reach_the_catalog(tmp_path):
    specs = load_specs(_specs_with(tmp_path, MANY.format(entry="    role: commit")))
    _ev, a = specs.event_by_name("TEST_A_EVENT")
    _ev, b = specs.event_by_name("TEST_B_EVENT")
    assert (a.role, b.role) == ("context", "commit")  # the file's role, an entry's own
    catalog = render(specs)["catalog.py"]
    block = catalog[catalog.index("name='TEST_B_EVENT'"):]
    assert "role='commit'" in block[:block.index("spec=")]


def test_every_event_the_readers_group_by_has_its_role():
    from binlog_grammar.generated.catalog import EVENTS

    role = {e.name: e.role for e in EVENTS.values()}
    assert {n for n, r in role.items() if r in ("gtid", "gtid_begin")} == {
        "GTID_LOG_EVENT", "ANONYMOUS_GTID_LOG_EVENT", "GTID_TAGGED_LOG_EVENT", "GTID_EVENT"}
    assert role["GTID_EVENT"] == "gtid_begin"
    assert {n for n, r in role.items() if r == "statement"} == {"QUERY_EVENT", "QUERY_COMPRESSED_EVENT"}
    assert (role["XID_EVENT"], role["XA_PREPARE_LOG_EVENT"], role["TABLE_MAP_EVENT"],
            role["TRANSACTION_PAYLOAD_EVENT"]) == ("commit", "xa_prepare", "table_map", "payload")
    assert all(r == "rows" for e, r in ((e, e.role) for e in EVENTS.values()) if e.row_op)
    assert {e.role for e in EVENTS.values()} - {None} == set(ROLES)
