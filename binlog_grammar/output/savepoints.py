"""SAVEPOINT, RELEASE SAVEPOINT and ROLLBACK TO inside a logged transaction, applied as the server
applied them, for binlog_grammar.output.sql: `savepoints_applied(items)` turns a transaction's
items (sql._tx_items: ('row', RowChange), ('raw', StreamEvent), ('query', event, text)) into
what the transaction left behind."""
from __future__ import annotations

import re
from typing import Optional

_SAVEPOINT = re.compile(r"\s*(SAVEPOINT|RELEASE\s+SAVEPOINT|ROLLBACK\s+(?:WORK\s+)?TO(?:\s+SAVEPOINT)?)"
                        r"\s+(`(?:[^`]|``)*`|\"(?:[^\"]|\"\")*\"|[^\s`\";]+)\s*;?\s*", re.I | re.S)


def savepoint(text: str) -> Optional[tuple]:
    """('set' | 'release' | 'rollback', name) of a SAVEPOINT, RELEASE SAVEPOINT or ROLLBACK TO
    statement (the name unquoted and case-folded: savepoint names ignore case), else None."""
    m = _SAVEPOINT.fullmatch(text)
    if m is None:
        return None
    verb = m[1].split()[0].upper()
    name = m[2]
    if name[0] in "`\"":
        name = name[1:-1].replace(name[0] * 2, name[0])
    return {"SAVEPOINT": "set", "RELEASE": "release"}.get(verb, "rollback"), name.casefold()


def is_savepoint(text: str) -> bool:
    return savepoint(text) is not None


def savepoints_applied(items: list) -> list:
    """The items as the server applied them: SAVEPOINT and RELEASE SAVEPOINT leave, and a
    ROLLBACK TO takes out the row changes logged after its SAVEPOINT (the statements stay, as
    comments), leaving ('rolled_back', event, text, count) where it was.

    The server logs a ROLLBACK TO only when the transaction also changed a non-transactional
    table (MyISAM, Aria) or a temporary one; otherwise it cuts the rolled-back events out of the
    transaction itself. In row format, every rows event inside the transaction is of a
    transactional table: a row change of a non-transactional table is logged at once, as a
    transaction of its own (checked on MariaDB 10.11, tests/output/test_sql_transactions.py), so
    everything between the SAVEPOINT and the ROLLBACK TO was undone. A ROLLBACK TO whose SAVEPOINT
    is not in the transaction is ('unknown_savepoint', event, text): what it undid is not known."""
    if not any(i[0] == "query" and is_savepoint(i[2]) for i in items):
        return items
    out, marks = [], []  # marks: (name, how many items `out` held when it was set), in order
    for item in items:
        sp = savepoint(item[2]) if item[0] == "query" else None
        if sp is None:
            out.append(item)
            continue
        op, name = sp
        at = next((k for k in range(len(marks) - 1, -1, -1) if marks[k][0] == name), None)
        if op == "set":
            if at is not None:
                del marks[at]
            marks.append((name, len(out)))
        elif op == "release":
            if at is not None:
                del marks[at:]
        elif at is None:
            out.append(("unknown_savepoint", item[1], item[2]))
        else:
            del marks[at + 1:]
            pos = marks[at][1]
            undone = sum(1 for i in out[pos:] if i[0] in ("row", "raw"))
            out[pos:] = [i for i in out[pos:] if i[0] not in ("row", "raw")]
            out.append(("rolled_back", item[1], item[2], undone))
    return out


__all__ = ["savepoint", "is_savepoint", "savepoints_applied"]
