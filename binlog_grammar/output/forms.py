"""How each output writes each column type, stated once as data.

`FORMS[output]` (binlog_grammar/runtime/forms.py, where the C generator reads it too) maps a column type (its name in specs/types/columns.yaml's enum column_type, the
real type of a STRING column whose metadata says ENUM or SET) or a column class (`@` and a set of
specs/types/column_classes.yaml) to the name of the *form* that writes its values; `*` is the form
of every other type. A type's own entry wins over a class it belongs to. The forms are small
named functions of the output's module (output/text.py `VV_FORMS` for the `mariadb-binlog -vv`
text, output/dump.py `JSONL_FORMS` for `dump --format jsonl`), each made once per column from its
metadata (`FORM(col) -> write(value)`). A generator for the compiled backend reads this same table
and writes one C function per form, so a new output (a Debezium envelope) is one entry here and
its forms beside it, for both backends.

The Python side turns a table's columns into a *plan* once per TABLE_MAP (`plan`): the list of each
column's writer; a row is written by running the plan, with no per-value test of its type.

| form | what it writes |
|---|---|
| vv: int_signed_width | the value read as signed in the type's width; when negative, ` (unsigned)` after |
| vv: decimal_digits | every digit, exactly scale after the point |
| vv: float_left20g / double_g20 | C's `%-20g` / `%.20g` |
| vv: year_1900 | `%04d` of the stored byte + 1900 |
| vv: date_colon | `'YYYY:MM:DD'` |
| vv: datetime / datetime_fsp | `'YYYY-MM-DD hh:mm:ss'`, with the metadata's fraction digits |
| vv: epoch_seconds / epoch_fsp | seconds since the epoch, with the metadata's fraction digits |
| vv: time / time_fsp | `'[-]hh:mm:ss'`, with the metadata's fraction digits |
| vv: bits / set_bits | `b'...'` of BIT's bits / SET's stored bytes |
| vv: enum_index | the 1-based member index |
| vv: json_text_quoted | the document's MySQL text in quotes (a partial update as JSON_* calls) |
| vv: vector_bytes | the stored vector bytes in quotes |
| vv: quoted_bytes | the stored bytes in quotes, bytes below 0x20 as `\\xNN` |
| jsonl: number | an integer as a JSON number |
| jsonl: decimal_string | DECIMAL's digits as a string |
| jsonl: float_number | a number; NaN and the infinities as strings |
| jsonl: iso_date / iso_datetime / iso_time | ISO 8601 text (TIMESTAMP in UTC with `Z`) |
| jsonl: member / members | ENUM's member; SET's sorted members |
| jsonl: geometry | {"srid": N, "wkb": base64} |
| jsonl: json_document | the document's MySQL text; a partial update as {"json_diffs": [...]} |
| jsonl: text | text in the column's (or the server's) charset; binary as base64 |
| jsonl: value | by the value's Python type (dump.json_value) |

Every jsonl form writes a value of an unexpected Python type (an invalid date kept as MySQL's
text, say) as `json_value` does, so the forms only make the usual case fast.
"""
from __future__ import annotations

from ..generated import enums
from ..generated.sets import SETS
from ..runtime.construct import set_members
from ..runtime.forms import FORMS

__all__ = ["FORMS", "form_name", "plan"]

_NAME = enums.COLUMN_TYPE  # code -> name
_CLASSES: dict = {}  # set name -> its members (type codes)


def _class(name: str) -> frozenset:
    members = _CLASSES.get(name)
    if members is None:
        members = _CLASSES[name] = frozenset(set_members(SETS[name], None))
    return members


def form_name(output: str, code: int) -> str:
    """The form that `output` writes a column of type `code` with: the type's own entry, else
    the first column class of the table it belongs to, else the `*` entry."""
    table = FORMS[output]
    name = _NAME.get(code)
    if name in table:
        return table[name]
    for key, form in table.items():
        if key.startswith("@") and code in _class(key[1:]):
            return form
    return table["*"]


_PLANS: dict = {}  # (output, id(columns), key) -> (columns, plan)


def plan(output: str, columns, make, key=(), collect=list):
    """The writer of each column of `columns` for `output`: `make(column)` for each (which
    finds its form with `form_name`), gathered by `collect`, built once per list of columns (a
    table's TABLE_MAP) and `key` (what else the writers depend on, such as the server's
    character set)."""
    ident = (output, id(columns), key)
    seen = _PLANS.get(ident)
    if seen is not None and seen[0] is columns:
        return seen[1]
    built = collect(make(c) for c in columns)
    if len(_PLANS) > 1024:
        _PLANS.clear()
    _PLANS[ident] = (columns, built)
    return built
