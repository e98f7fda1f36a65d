"""The functions a spec expression may call, stated once: `FUNCTIONS`, the registry every place
that runs or writes expressions reads (the checker and the translators of lang.expr, the
per-table readers of codegen.table, the C translator of codegen.c_expr), and their Python
implementations (called by the generated modules as rt.length, rt.popcount, ... through
runtime.construct, and by the interpreter of lang.expr).

Each implementation takes plain values (a bitmap is a list of booleans, a TLV list its parsed
entries), never a parse context; the helpers that read the context (remaining, ctx, col, sizeof)
are in runtime.construct.
"""
from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Callable, Optional

from .versions import version

__all__ = ["length", "popcount", "rank", "matches", "tlv_value", "version", "Function", "FUNCTIONS",
           "CALLS"]


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


# The types of the expression language (lang.expr.nodes gives every node one): "any" is a value
# whose type the expression alone does not say (a field, a context value).
INT, BOOL, STR, BYTES, VERSION, NULL, BITS, LIST, ANY = (
    "int", "bool", "str", "bytes", "version", "null", "bits", "list", "any")


@dataclass(frozen=True)
class Function:
    """One function of the expression language.

    `params` are the argument types; three are not values but what the call is written with:
    "field" (the name of a field of the same struct: sizeof), "regex" (a regular expression as a
    string literal: matches) and "id" (a TLV case id as a string literal: tlv). `impl` is the
    Python implementation (None for sizeof, which reads a field's construct); `python` and `c`
    are the names a call is written with in generated Python and in C (the helpers of
    codegen/templates/bg_expr.h.j2)."""

    name: str
    params: tuple
    returns: str
    impl: Optional[Callable]
    python: str
    c: str
    doc: str

    @property
    def arity(self) -> int:
        return len(self.params)


FUNCTIONS = {f.name: f for f in (
    Function("len", (ANY,), INT, length, "rt.length", "bg_len",
             "bytes of a string or bytes value, elements of a list; 0 for null"),
    Function("sizeof", ("field",), INT, None, "rt.sizeof", "bg_sizeof",
             "bytes a field of the same struct took"),
    Function("popcount", (BITS,), INT, popcount, "rt.popcount", "bg_popcount",
             "the set bits of a bitmap"),
    Function("version", (ANY,), VERSION, version, "rt.version", "bg_version",
             "the version of a server version string"),
    Function("min", (INT, INT), INT, min, "min", "bg_min", "the smaller of two numbers"),
    Function("max", (INT, INT), INT, max, "max", "bg_max", "the larger of two numbers"),
    Function("tlv", (LIST, "id"), ANY, tlv_value, "rt.tlv_value", "bg_tlv",
             "the value of a TLV list's first entry with this id (null when absent)"),
    Function("matches", (ANY, "regex"), BOOL, matches, "rt.matches", "bg_matches",
             "does the regular expression match at the start of the text"),
    Function("abs", (INT,), INT, abs, "abs", "bg_abs", "the absolute value"),
    Function("rank", (BITS, INT), INT, rank, "rt.rank", "bg_rank",
             "the set bits of a bitmap before a position"),
)}

# the Python implementation of each function that takes values (sizeof() reads a field's
# construct and is the caller's own)
CALLS = {name: f.impl for name, f in FUNCTIONS.items() if f.impl is not None}
