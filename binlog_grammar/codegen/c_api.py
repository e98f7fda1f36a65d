"""What the reading API reads in C before the generated Python readers (binlog/batch.py): the head
of a version-1 rows event, rendered into the `_rows` module (templates/native_rows_head.c.j2,
included by native_rows_module.c.j2) as `rows_head()`.

The head is the event's table id and the span of its column count and bitmaps (the shape its
compiled plan is looked up by) and where its row images begin. rows_head() gives it only where
the generated reader of the event (generated/fast.py) reads the same bytes without refusing them,
so that the stream can leave the event's data to that reader, on first use: a table id and flags
that fit, a column count in the packed integer's one-byte form, and bitmaps that fit.

What comes from the specs: the type codes of the events of the rows_event_v1 layout, the width of
the table id (rows_table_id's size expression, in C through codegen.c_expr), the width of the
flags, and which events carry a second bitmap (the condition of rows_columns'
columns_present_after, in C). A spec whose fields are not laid out as this reads them is an error
at generation time (change the spec and this module together).
"""
from __future__ import annotations

from ..errors import SpecError
from ..lang.model import SpecSet
from . import c_expr

LAYOUT = "rows_event_v1"
TABLE_ID = "rows_table_id"
COLUMNS = "rows_columns"


def _refuse(what, where, ed=None):
    raise SpecError(f"rows_head() (codegen/c_api.py) reads {what}; change codegen/c_api.py with "
                    "the spec", ed.file if ed else "", ed.line if ed else 0, where)


def model(specs: SpecSet) -> dict:
    eds = [ed for ed in specs.events if ed.layout == LAYOUT]
    if not eds:
        _refuse(f"events of the {LAYOUT} layout", LAYOUT)
    codes = sorted(n.code for ed in eds for n in ed.names if n.row_op)
    ed = eds[0]
    ph = [f for f in ed.fields if f.section == "post_header"]
    body = [f for f in ed.fields if f.section == "body"]
    if [(f.type.kind, f.type.name, f.cond) for f in ph] != [("named", TABLE_ID, None),
                                                           ("int", "u16le", None)]:
        _refuse(f"a post-header of table_id ({TABLE_ID}) then u16le flags", LAYOUT, ed)
    if [(f.type.kind, f.type.name, f.cond) for f in body] != [("named", COLUMNS, None),
                                                             ("bytes", "bytes", None)] \
            or body[1].size != "rest":
        _refuse(f"a body of {COLUMNS} then the rest as the row images", LAYOUT, ed)
    cols = specs.types[COLUMNS].field.type.fields
    bits = ("name", cols[0].id)
    if [(f.type.kind, f.type.bits, f.cond is None) for f in cols] != [
            ("packed", None, True), ("bitmap", bits, True), ("bitmap", bits, False)] \
            or any(f.type.order != "lsb" for f in cols[1:]):
        _refuse(f"{COLUMNS} as a packed column count, then one or two bitmaps of that many bits",
                COLUMNS)
    tr = c_expr.CTranslator(specs.enum_values())
    width = tr.translate(specs.types[TABLE_ID].field.size)
    if tr.variables - {"ctx_post_header_len"}:
        _refuse(f"a {TABLE_ID} size that reads ctx.post_header_len only", TABLE_ID)
    tr = c_expr.CTranslator(specs.enum_values())
    after = tr.translate(cols[2].cond)
    if tr.variables - {"ctx_type_code"}:
        _refuse(f"a condition of {cols[2].id} that reads ctx.type_code only", COLUMNS)
    return dict(head_codes=codes, head_table_id_width=width, head_flags_width=ph[1].type.width,
                head_after=after, head_layout=LAYOUT)
