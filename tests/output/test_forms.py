"""How each output writes each column type is stated once, as data (binlog_grammar/output/forms.py,
FORMS; issue 26): every column type has a form in every output, every form named there is a
function of that output, the table is plain data a generator can read, and a row is written by a
plan made once per table, not by testing each value's column type. The forms' text itself is
checked against mariadb-binlog by test_values_oracle.py / test_values_server.py and the JSON forms
by test_jsonl_forms.py; tools/snapshot.py compares every output before and after."""
import json
import random

import pytest

from binlog_grammar.generated import enums
from binlog_grammar.generated.sets import SETS
from binlog_grammar.output import debezium_values, dump, forms, text
from binlog_grammar.output.dump_text import rows_text
from binlog_grammar.binlog.stream import Stream

from helpers.paths import ROOT

REGISTRY = {"vv": text.VV_FORMS, "jsonl": dump.JSONL_FORMS,
            "debezium": debezium_values.DEBEZIUM_FORMS}


def test_every_output_has_its_forms_registered():
    assert set(forms.FORMS) == set(REGISTRY)


@pytest.mark.parametrize("output", sorted(REGISTRY))
def test_every_column_type_has_a_form_of_its_output(output):
    named = {forms.form_name(output, code) for code in enums.COLUMN_TYPE}
    assert named <= set(REGISTRY[output]), named - set(REGISTRY[output])
    # and no form of the output is left unnamed by its table
    assert set(REGISTRY[output]) == set(forms.FORMS[output].values())


def test_the_table_is_plain_data_by_the_specs_names():
    assert json.loads(json.dumps(forms.FORMS)) == forms.FORMS
    types = set(enums.COLUMN_TYPE.values())
    for output, table in forms.FORMS.items():
        assert "*" in table, output
        for key in table:
            assert key == "*" or key in types or (key[:1] == "@" and key[1:] in SETS), (output, key)


def test_a_type_entry_wins_over_its_class():
    code = {n: c for c, n in enums.COLUMN_TYPE.items()}
    assert forms.form_name("jsonl", code["VARCHAR"]) == "text"  # by @string_columns
    assert forms.form_name("jsonl", code["JSON"]) == "json_document"
    assert forms.form_name("vv", code["GEOMETRY"]) == "quoted_bytes"  # by *


def _old_quote_bytes(data: bytes) -> str:
    out = bytearray(b"'")
    for b in data:
        out += bytes([b]) if b > 0x1F else b"\\x%02x" % b
    return (out + b"'").decode("utf-8", "surrogateescape")


def test_quote_bytes_writes_every_byte_as_before():
    rnd = random.Random(26)
    cases = [bytes(range(256)), b"", "é\x00'\\\n".encode(), b"\xc3", b"\xc3\x1f\xa9"]
    cases += [bytes(rnd.randrange(256) for _ in range(rnd.randrange(12))) for _ in range(2000)]
    for data in cases:
        assert text.quote_bytes(data) == _old_quote_bytes(data), data


@pytest.fixture
def row_events():
    """The rows events of the bundled samples, as dump reads them."""
    out = []
    for p in sorted((ROOT / "samples").glob("mariadb-*")):
        if p.suffix in (".md", ".json", ".yaml", ".sql"):
            continue
        for se in Stream([str(p)]).events():
            if se.event.type is not None and se.event.type.row_op and se.changes:
                out.append(se)
    assert out
    return out


def test_a_row_is_written_by_its_plan_not_by_testing_each_value(row_events, monkeypatch):
    """form_name (which tests a column's type) runs once per column of a table, however many
    rows are written, for the text and for the JSON lines; and the plan writes what vv_value
    writes value by value."""
    calls = []

    def counting(output, code, real=forms.form_name):
        calls.append((output, code))
        return real(output, code)

    monkeypatch.setattr(text, "form_name", counting)
    monkeypatch.setattr(dump, "form_name", counting)
    forms._PLANS.clear()
    values = 0
    for _ in range(3):
        for se in row_events:
            lines = list(rows_text(se))
            for ch in se.changes:
                dump.change_record(ch, se, 0)
                values += sum(len(img) for img in (ch.before, ch.after) if img)
    tables = {id(se.changes[0].columns): se.changes[0].columns for se in row_events}
    columns = sum(len(cols) for cols in tables.values())
    assert values > 2 * columns
    assert len([c for c in calls if c[0] == "vv"]) == columns
    assert len([c for c in calls if c[0] == "jsonl"]) == columns
    for se in row_events:  # the plan's lines are vv_value's and vv_type's, value by value
        want = []
        for ch in se.changes:
            for img in (ch.before, ch.after):
                for c in ch.columns if img else ():
                    if c.name in img:
                        v = img[c.name]
                        want.append(f"###   @{c.index + 1}={text.vv_value(v, c)} "
                                    f"/* {text.vv_type(c, v is None)} */")
        assert [x for x in rows_text(se) if x.startswith("###   @")] == want
