"""Random tables and rows for the row-images struct: column types and metadata drawn from the
specs' domains (binlog_grammar.testing.strategies), rows of Python values for one rows event."""
from hypothesis import strategies as st

from binlog_grammar.lang.loader import load_specs
from binlog_grammar.testing.strategies import column_value, columns_strategy

SPECS = load_specs()
TYPE_CODES = {"insert": 30, "update": 31, "delete": 32}


@st.composite
def tables_and_rows(draw):
    cols = draw(columns_strategy())
    op = draw(st.sampled_from(sorted(TYPE_CODES)))
    n = len(cols)
    # an image holds at least one column (with none a row would take no bytes at all)
    images = [draw(st.lists(st.booleans(), min_size=n, max_size=n).filter(any))
              for _ in range(2 if op == "update" else 1)]
    rows = []
    for _ in range(draw(st.integers(1, 3))):
        imgs = []
        for present in images:
            nulls, cells = [], []
            for c, p in zip(cols, present):
                if not p:
                    cells.append(None)
                    continue
                is_null = draw(st.booleans()) and draw(st.booleans())
                nulls.append(is_null)
                cells.append(None if is_null or c.type_name == "NULL" else draw(column_value(SPECS, c)))
            imgs.append({"value_options": None, "partial_bits": None, "null_bits": nulls,
                         "cells": cells})
        rows.append({"images": imgs})
    ctx = {"columns": cols, "images": images, "json_columns": sum(c.json_index is not None for c in cols),
           "type_code": TYPE_CODES[op]}
    return ctx, {"rows": rows}
