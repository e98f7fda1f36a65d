"""The functions a spec expression may call, written once for every place that runs expressions:
the generated modules (as rt.length, rt.popcount, ... through runtime.construct), the interpreter
of lang.expr (Hypothesis strategies) and the per-table readers of codegen.table.

Each takes plain values (a bitmap is a list of booleans, a TLV list its parsed entries), never a
parse context; the helpers that read the context (remaining, ctx, col, sizeof) are in
runtime.construct.
"""
from __future__ import annotations

import re

from .versions import version

__all__ = ["length", "popcount", "rank", "matches", "tlv_value", "version", "CALLS"]


def length(x) -> int:
    """len(): bytes of a string (UTF-8) or bytes value, elements of a list; 0 for null."""
    if x is None:
        return 0
    if isinstance(x, str):
        return len(x.encode("utf-8", "surrogateescape"))
    return len(x)


def popcount(bits) -> int:
    """popcount(): the set bits of a bitmap."""
    return list(bits).count(True) if not isinstance(bits, list) else bits.count(True)


def rank(bits, i) -> int:
    """Number of set bits before position i (the NULL-bit index of the i-th column)."""
    return bits[:i].count(True)


def matches(text, pattern) -> bool:
    """Does the regular expression match at the start of the text?"""
    return text is not None and re.match(pattern, str(text)) is not None


def tlv_value(items, ident):
    """Value of the first entry of a parsed TLV list with this id (None when absent)."""
    for entry in items or ():
        if entry.get("id") == ident:
            return entry.get("value")
    return None


# the expression language's name of each function that takes values (sizeof() reads a field's
# construct and is the caller's own)
CALLS = {"len": length, "popcount": popcount, "rank": rank, "version": version,
         "tlv": tlv_value, "matches": matches, "min": min, "max": max, "abs": abs}
