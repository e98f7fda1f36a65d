"""Every generated struct round-trips: a value drawn from its spec builds bytes, the bytes parse back
to that value, and building the parsed value gives the same bytes. No test here is written per
event: the list comes from the specs."""
import pytest
from construct import ConstructError
from hypothesis import HealthCheck, given, reject, settings

from binlog_grammar.generated import fast as F
from binlog_grammar.generated import types as T
from binlog_grammar.generated.catalog import EVENTS
from binlog_grammar.lang.loader import load_specs
from binlog_grammar.testing.strategies import event_values, matches, normalize, type_values
from helpers.compare import exact

SPECS = load_specs()
EVENT_NAMES = sorted(n.name for ev in SPECS.events for n in ev.names)
SETTINGS = settings(max_examples=80, deadline=None,
                    suppress_health_check=[HealthCheck.too_slow, HealthCheck.filter_too_much,
                                           HealthCheck.data_too_large])


def _uses_parent(field):
    return "_parent" in repr(field)


def _named_types_in(fields, acc):
    for f in fields:
        stack = [f.type, f.prefix]
        while stack:
            t = stack.pop()
            if t is None:
                continue
            if t.kind == "named" and t.name not in acc:
                acc.add(t.name)
                _named_types_in([SPECS.types[t.name].field], acc)
            _named_types_in(t.fields, acc)
            for case in t.cases:
                if hasattr(case[1], "type"):
                    _named_types_in([case[1]], acc)
                else:
                    stack.append(case[1])
            stack += [t.default, t.tag, t.length]
    return acc


def _row_types():
    """Types of row images read the table's columns (col, ctx.columns):
    tests/codegen/test_row_images.py round-trips them inside whole row images with random tables."""
    acc = {"row_images"}
    _named_types_in([SPECS.types["row_images"].field], acc)
    return acc


STANDALONE_TYPES = sorted(n for n, td in SPECS.types.items()
                          if not _uses_parent(td.field) and n not in _row_types())
FRAMING_CTX = {"header_len": 19, "binlog_version": 4, "type_code": 2, "post_header_len": 13,
               "checksum_alg": 1, "server": None}


def test_every_event_code_is_in_the_catalog():
    codes = {n.code for ev in SPECS.events for n in ev.names}
    assert codes == set(EVENTS)


@pytest.mark.parametrize("name", EVENT_NAMES)
def test_event_roundtrip(name):
    ev, en = SPECS.event_by_name(name)
    et = EVENTS[en.code]

    @SETTINGS
    @given(event_values(SPECS, name))
    def check(case):
        ctx, value = case
        try:
            data = et.build(value, ctx)
        except ConstructError as e:
            if "size says" in str(e):  # a drawn value that cannot fill a fixed-size region
                reject()
            raise
        parsed = et.parse(data, ctx)
        assert matches(value, parsed), (normalize(value), normalize(parsed))
        assert et.build(parsed, ctx) == data
        # the generated plain-Python reader (generated/fast.py) reads the same value
        fast = F.EVENT_READERS[en.code](data, 0, len(data), ctx)
        assert exact(fast) == exact(parsed)

    check()


@pytest.mark.parametrize("name", STANDALONE_TYPES)
def test_named_type_roundtrip(name):
    con = getattr(T, name)

    @SETTINGS
    @given(type_values(SPECS, name, FRAMING_CTX))
    def check(value):
        try:
            data = con.build(value, **FRAMING_CTX)
        except ConstructError as e:
            if "size says" in str(e):
                reject()
            raise
        parsed = con.parse(data, **FRAMING_CTX)
        assert matches(value, parsed), (normalize(value), normalize(parsed))
        assert con.build(parsed, **FRAMING_CTX) == data

    check()


def test_every_named_type_is_round_tripped():
    """Types that read their enclosing struct (_parent) cannot stand alone; they are round-tripped
    inside the events that use them."""
    in_events = set()
    for ev in SPECS.events:
        _named_types_in(ev.fields, in_events)
    for name in SPECS.types:
        assert name in STANDALONE_TYPES or name in in_events or name in _row_types(), name
