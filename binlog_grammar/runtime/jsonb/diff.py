"""Partial updates of a JSON document (PARTIAL_UPDATE_ROWS_EVENT): MySQL's concrete JSON paths
and the document after one diff, as the server applies it.

doc-ref: sql/json_diff.cc (apply_json_diffs), sql-common/json_path.cc.
"""
from __future__ import annotations

import json as _json

from .binary import key_order, to_utf8
from .text import quote

__all__ = ["apply_json_diff", "parse_json_path"]


def _is_identifier(name: str) -> bool:
    """An ECMAScript identifier, as MySQL requires of an unquoted member name (json_path.cc)."""
    return name.replace("$", "_").isidentifier()


def parse_json_path(text: str) -> list:
    """The legs of a concrete MySQL JSON path: ``$`` -> [], ``$.a[2]."b c"`` -> ['a', 2, 'b c'].
    Members are str, array cells int. Wildcards, ranges and ``last`` are not concrete paths (the
    binlog never holds them) and raise ValueError, as does any syntax error."""
    if not isinstance(text, str):
        raise ValueError(f"a JSON path is a str, not {type(text).__name__}")
    pos, end = 0, len(text)

    def skip_space():
        nonlocal pos
        while pos < end and text[pos].isspace():
            pos += 1

    def bad(what):
        return ValueError(f"JSON path {text!r}: {what} at character {pos}")

    skip_space()
    if pos >= end or text[pos] != "$":
        raise bad("it must start with '$'")
    pos += 1
    legs: list = []
    while True:
        skip_space()
        if pos >= end:
            return legs
        ch = text[pos]
        if ch == ".":
            pos += 1
            skip_space()
            if pos < end and text[pos] == '"':
                try:
                    name, pos = _json.decoder.scanstring(text, pos + 1, True)
                except ValueError as e:
                    raise bad(f"bad quoted member name ({e})") from None
            else:
                start = pos
                while pos < end and not (text[pos].isspace() or text[pos] in '.["*'):
                    pos += 1
                name = text[start:pos]
                if not name:
                    raise bad("a member name (wildcards are not concrete paths)" if pos < end and
                              text[pos] == "*" else "a member name is missing")
                if not _is_identifier(name):
                    raise bad(f"{name!r} must be quoted")
            legs.append(name)
        elif ch == "[":
            pos += 1
            skip_space()
            start = pos
            while pos < end and text[pos].isdigit():
                pos += 1
            digits = text[start:pos]
            skip_space()
            if not digits.isascii() or not digits or pos >= end or text[pos] != "]":
                raise bad("an array index must be a non-negative integer ('last', ranges and "
                          "wildcards are not concrete paths)")
            pos += 1
            legs.append(int(digits))
        else:
            raise bad(f"unexpected {ch!r}")


def _path_text(legs) -> str:
    out = "$"
    for leg in legs:
        if isinstance(leg, int):
            out += f"[{leg}]"
        else:
            out += "." + (leg if _is_identifier(leg) else quote(leg))
    return out


_OPERATIONS = {0: "REPLACE", 1: "INSERT", 2: "REMOVE"}


def apply_json_diff(doc, op, path, value=None):
    """The document after one partial-update diff, as MySQL applies it (json_diff.cc,
    apply_json_diffs). `op` is "REPLACE", "INSERT" or "REMOVE" (or 0, 1, 2); `path` a JSON path
    text or a list of legs; `value` the new value (for REMOVE it is ignored).

    REPLACE: the path must exist; its value is replaced. INSERT: the parent must exist; into an
    object the member must be new (it is placed in MySQL's key order), into an array the value goes
    at the index (at the end when the index is past it) and later elements shift. REMOVE: the
    member or element must exist. The root itself cannot be the target. No auto-wrapping: a
    member leg needs an object, a cell leg an array. `doc` is not changed: the containers on the
    path are copied, everything else is shared. A diff that cannot apply raises ValueError naming
    the path.
    """
    operation = _OPERATIONS.get(op) if isinstance(op, int) else str(getattr(op, "name", op)).upper()
    if operation not in ("REPLACE", "INSERT", "REMOVE"):
        raise ValueError(f"unknown JSON diff operation {op!r}")
    legs = parse_json_path(path) if isinstance(path, str) else list(path)
    where = path if isinstance(path, str) else _path_text(legs)
    if not legs:
        raise ValueError(f"{operation} of path {where}: a partial update cannot target the root")

    def child(node, leg, depth):
        if isinstance(node, dict) and isinstance(leg, str) and leg in node:
            return node[leg]
        if isinstance(node, list) and isinstance(leg, int) and 0 <= leg < len(node):
            return node[leg]
        raise ValueError(f"{operation} of path {where}: {_path_text(legs[:depth + 1])} does not exist")

    def with_child(node, leg, new):
        copy = dict(node) if isinstance(node, dict) else list(node)
        copy[leg] = new
        return copy

    def at(node, depth):
        leg = legs[depth]
        if depth < len(legs) - 1:
            return with_child(node, leg, at(child(node, leg, depth), depth + 1))
        if operation == "REPLACE":
            child(node, leg, depth)
            return with_child(node, leg, value)
        if operation == "REMOVE":
            child(node, leg, depth)
            copy = dict(node) if isinstance(node, dict) else list(node)
            del copy[leg]
            return copy
        if isinstance(node, dict) and isinstance(leg, str):
            if leg in node:
                raise ValueError(f"INSERT of path {where}: the member already exists")
            order = key_order(to_utf8(leg, "key"))
            items = list(node.items())
            at_index = next((i for i, (k, _) in enumerate(items)
                             if key_order(to_utf8(k, "key")) > order), len(items))
            items.insert(at_index, (leg, value))
            return dict(items)
        if isinstance(node, list) and isinstance(leg, int):
            copy = list(node)
            copy.insert(min(leg, len(copy)), value)
            return copy
        raise ValueError(f"INSERT of path {where}: {_path_text(legs[:depth])} is not "
                         f"{'an object' if isinstance(leg, str) else 'an array'}")

    return at(doc, 0)
