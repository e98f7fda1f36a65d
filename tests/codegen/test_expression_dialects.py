"""Expressions are emitted for a target by lang.expr.Emitter's dialect, never rewritten afterwards:
the construct modules reach the context, the column and the region through runtime.construct
helpers, the fast readers through their own variables; and the keys an expression reads from
its contexts (what decides which fields a fast reader stores) come from the expression itself."""
from binlog_grammar.codegen import python as fastgen
from binlog_grammar.lang import expr as E

SRC = "ctx.header_len >= 19 and col.meta.length > col.meta and remaining > _index"


def test_construct_dialect():
    assert E.Emitter({}).emit(E.parse(SRC)) == (
        "(((rt.ctx(this, 'header_len') >= 19) and (rt.col(this)['meta']['length'] > rt.col(this)['meta']))"
        " and (rt.remaining(this) > this['_index']))")


def test_fast_dialect():
    assert E.Emitter({}, dialect=fastgen.FAST).emit(E.parse(SRC)) == (
        "(((ctx['header_len'] >= 19) and (meta_field(col, 'length') > meta_number(col)))"
        " and ((end - pos) > this['_index']))")


def test_a_column_field_named_like_metadata_is_no_metadata():
    em = E.Emitter({}, dialect=fastgen.FAST)
    assert em.emit(E.parse("col.type")) == "col['type']"
    assert em.emit(E.parse("x.meta.length")) == "this['x']['meta']['length']"


def test_context_keys():
    node = E.parse("a + _parent.b + _parent._parent.c + rec.d + len(col.name) + ctx.x + _index"
                   " + (remaining > 0 ? e[f] : 0)")
    assert E.context_keys(node) == {"a", "b", "c", "rec", "_index", "e", "f"}
