"""The Debezium envelope's row changes written by the compiled backend (a DEBEZIUM plan of
binlog_grammar.native._rows, the forms of native/forms_debezium.h, made by
output/debezium_native.py) are byte for byte what DebeziumWriter writes from the Python values:
on random tables and rows drawn from the specs, under random connector options (every value of
decimal.handling.mode, time.precision.mode, binary.handling.mode, bigint.unsigned.handling.mode,
enable.time.adjuster), with a random primary key (an update that changes it is the connector's
delete and create, which C must leave to Python), with hostile values, and on those rows' bytes
damaged at random (whatever the Python path fails on, C refuses)."""
from types import SimpleNamespace

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from binlog_grammar import native
from binlog_grammar.binlog.rows import OPS, parse_row_images
from binlog_grammar.output.debezium import DebeziumWriter
from binlog_grammar.output.debezium_native import NativeChanges
from helpers.drawn_rows import (CODES, NOT_WRITTEN, SETTINGS, TEXT_TYPES, WRITTEN_CHARSETS,
                                build_images, event_of, hostile_cell, table_of)
from helpers.native import damage
from helpers.rows import tables_and_rows

ROWS = native._load_rows()[0]
pytestmark = pytest.mark.skipif(ROWS is None or not hasattr(ROWS, "DEBEZIUM"),
                                reason="the compiled extension _rows is not built")
OPTIONS = st.fixed_dictionaries({
    "decimal.handling.mode": st.sampled_from(["precise", "string", "double"]),
    "time.precision.mode": st.sampled_from(["adaptive_time_microseconds", "adaptive", "connect"]),
    "binary.handling.mode": st.sampled_from(["bytes", "base64", "base64-url-safe", "hex"]),
    "bigint.unsigned.handling.mode": st.sampled_from(["long", "precise"]),
    "enable.time.adjuster": st.sampled_from(["true", "false"]),
    "connector": st.sampled_from(["auto", "mysql", "mariadb"])})


def _full(ctx, value):
    """Every image with every column (a column an image left out: NULL), as the compiled path
    writes only full images."""
    old = ctx["images"]
    for r in value["rows"]:
        for img, present in zip(r["images"], old):
            bits = iter(img["null_bits"])
            img["null_bits"] = [next(bits) if p else True for p in present]
    ctx["images"] = [[True] * len(ctx["columns"]) for _ in old]


def _se(table, op):
    se = event_of(table, op)
    se.event.header = {"timestamp": 1700000000, "server_id": 7}
    return se


def _python_lines(w, data, ctx, table, op, se):
    rows = parse_row_images(data, ctx, table=table)["rows"]
    ch0 = SimpleNamespace(timestamp=1700000000, file=se.event.file, db=table.db, table=table.table,
                          server_id=7, pos=se.event.offset)
    base = w._source(ch0, se, 0)
    out = []
    for i, r in enumerate(rows):
        images = [{table.names[k]: img["cells"][k] for k in range(len(table.columns))}
                  for img in r["images"]]
        before, after = (images[0], None) if op == "delete" else \
            (None, images[0]) if op == "insert" else images
        ch = SimpleNamespace(op=OPS[op], before=before, after=after, columns=table.columns,
                             primary_key=table.primary_key, db=table.db, table=table.table,
                             file=se.event.file)
        source = dict(base)
        source["row"] = i
        out += [w._encode(rec) for rec in w._change(ch, source, None)]
    return "".join(line + "\n" for line in out)  # no rows, no lines (as the C sink)


def _compare(ctx, value, options, pk, rnd=None):
    _full(ctx, value)
    table = table_of(ctx)
    table.primary_key = [table.names[i] for i in sorted(pk) if i < len(table.names)]
    op = CODES[ctx["type_code"]]
    se = _se(table, op)
    data = build_images(value, ctx)
    if rnd is not None:
        data = damage(data, rnd)
    w = DebeziumWriter(options)
    nc = NativeChanges(w, ROWS)
    plan = nc._plan(table, op, None)
    frame = nc._frame(se, OPS[op])
    assert plan is not False and frame is not None  # plain names, at most 3 key columns
    text, _status = ROWS.rows(plan, data, ROWS.JSONL, frame)
    try:
        expected = _python_lines(w, data, ctx, table, op, se)
    except Exception:  # noqa: BLE001 - bytes or values the Python path refuses: so must C
        assert text is None
        return None
    if text is not None:
        assert text == expected
        return text
    # refused: only what the compiled path leaves to Python
    kinds = {c.type_name for c in table.columns}
    charsets = {c.get("charset") for c in table.columns if c.type_name in TEXT_TYPES}
    key_changed = expected.count("\n") != len(parse_row_images(data, ctx, table=table)["rows"])
    assert rnd is not None or kinds & (NOT_WRITTEN | {"GEOMETRY"}) or "\ufffd" in expected or \
        key_changed or charsets - WRITTEN_CHARSETS, expected
    return None


KEYS = st.sets(st.integers(0, 5), max_size=3)


@settings(max_examples=200, **SETTINGS)
@given(tables_and_rows(), OPTIONS, KEYS)
def test_compiled_debezium_equals_python_on_random_rows(case, options, pk):
    _compare(*case, options, pk)


@settings(max_examples=200, **SETTINGS)
@given(tables_and_rows(), OPTIONS, KEYS, st.data())
def test_hostile_values(case, options, pk, data):
    """Any float's bits, invalid dates and times, ENUM/SET values past their members, text bytes
    JSON escapes or that do not decode, BIGINT UNSIGNED near 2^64."""
    ctx, value = case
    for r in value["rows"]:
        for img in r["images"]:
            for k, c in enumerate(ctx["columns"]):
                if img["cells"][k] is not None:
                    cell = hostile_cell(data, c, True)
                    img["cells"][k] = img["cells"][k] if cell is None else cell
    _compare(ctx, value, options, pk)


@settings(max_examples=150, **SETTINGS)
@given(tables_and_rows(), OPTIONS, KEYS, st.randoms(use_true_random=False))
def test_damaged_rows_are_refused_or_written_alike(case, options, pk, rnd):
    _compare(*case, options, pk, rnd)


def test_a_changed_key_is_left_to_python_and_an_unchanged_one_written():
    """An update of a table keyed on its INT column: C writes it when the key stays, refuses it
    when the key changes (the connector's delete then create, written by the Python path)."""
    from binlog_grammar.binlog.rows import Column

    def ctx():
        col = Column(index=0, name="id", type=3, type_name="LONG", real_type=3, meta=None,
                     unsigned=False, charset=None, json_index=None, enum_values=None,
                     set_values=None, nullable=False, fsp=0)
        return {"columns": [col], "images": [[True], [True]], "json_columns": 0, "type_code": 31}

    def update(a, b):
        cells = [{"value_options": None, "partial_bits": None, "null_bits": [False],
                  "cells": [x]} for x in (a, b)]
        return {"rows": [{"images": cells}]}

    same = _compare(ctx(), update(1, 1), {}, {0})
    assert same is not None and '"op": "u"' in same
    assert _compare(ctx(), update(1, 2), {}, {0}) is None
