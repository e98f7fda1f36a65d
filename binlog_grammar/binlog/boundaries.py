"""Where a transaction starts and ends, decided once for every reader.

What an event is to a transaction is a fact of its spec (`role:` in specs/events/, in the
generated catalog as `EventType.role`; rows events have the role rows from `rows:`). A statement
(role statement: QUERY_EVENT, QUERY_COMPRESSED_EVENT) says it by its text, and MariaDB's GTID
event by its FL_STANDALONE flag (binlog.gtid). `boundary(ev)` puts the two together, one of:

| boundary | events | what it does to a transaction |
|---|---|---|
| GTID | MySQL's GTID, ANONYMOUS_GTID, GTID_TAGGED | opens one; a BEGIN, or the one statement of a transaction of its own, follows |
| GTID_BEGIN | MariaDB's GTID_EVENT | opens one and is its BEGIN: what follows belongs to it up to the XID or COMMIT |
| GTID_STANDALONE | MariaDB's GTID_EVENT with FL_STANDALONE | opens a group of one statement (DDL), which no COMMIT ends |
| BEGIN | BEGIN, START TRANSACTION, XA START / XA BEGIN | opens one (after a GTID: the same one) |
| COMMIT | XID_EVENT; COMMIT, XA COMMIT | ends it, committed |
| ROLLBACK | ROLLBACK, XA ROLLBACK | ends it, rolled back |
| XA_PREPARE | XA_PREPARE_LOG_EVENT | ends the first phase of an XA transaction |
| STATEMENT | any other statement (DDL, DML) | inside the open BEGIN; else a transaction of its own |
| INSIDE | SAVEPOINT, ROLLBACK TO, RELEASE SAVEPOINT, XA END | inside the open transaction, never one by itself |
| PART | table maps, rows, annotations, INTVAR/RAND/USER_VAR, group replication's | part of the transaction around it, BEGIN or not |
| PAYLOAD | TRANSACTION_PAYLOAD_EVENT | part of it too, and all of it when no BEGIN came before |
| BETWEEN | everything else (ROTATE, FORMAT_DESCRIPTION, checkpoints ...) | belongs to none |

The readers keep their own bookkeeping (a stream groups whole transactions, repair looks for the
failing one, the replication source keeps a resume point, the split planner cuts files) but ask
this module what each event is. The split planner's header-only scan cannot read a statement's
text: it cuts before the events of CUT_BEFORE_ROLES and after those of CUT_AFTER_ROLES.
"""
from __future__ import annotations

from ..generated.catalog import EVENTS
from .events import query_text
from .gtid import FL_STANDALONE

GTID = "gtid"
GTID_BEGIN = "gtid_begin"
GTID_STANDALONE = "gtid_standalone"
BEGIN = "begin"
COMMIT = "commit"
ROLLBACK = "rollback"
XA_PREPARE = "xa_prepare"
STATEMENT = "statement"
INSIDE = "inside"
PART = "part"
PAYLOAD = "payload"
BETWEEN = "between"

OPENS_WITH_GTID = frozenset({GTID, GTID_BEGIN, GTID_STANDALONE})
# the boundaries that end a transaction, and the Transaction.end each gives
ENDS = {COMMIT: "commit", ROLLBACK: "rollback", XA_PREPARE: "xa_prepare"}
# belongs to the transaction around it even when no BEGIN opened one
BELONGS = frozenset({PART, PAYLOAD})

GTID_ROLES = ("gtid", "gtid_begin")
STATEMENT_ROLE = "statement"
ROWS_ROLES = ("table_map", "rows")  # what a statement's row changes are made of
CUT_BEFORE_ROLES = GTID_ROLES  # a header-only scan may cut before these ...
CUT_AFTER_ROLES = ("commit",)  # ... and after these

# an event's role -> its boundary (statement and gtid_begin are decided by the event's data)
_BY_ROLE = {"gtid": GTID, "commit": COMMIT, "xa_prepare": XA_PREPARE, "table_map": PART,
            "rows": PART, "annotate": PART, "context": PART, "group_replication": PART,
            "payload": PAYLOAD}

ROLE_OF = {e.name: e.role for e in EVENTS.values()}  # event name -> role (None: none)
GTID_NAMES = frozenset(n for n, r in ROLE_OF.items() if r in GTID_ROLES)
STATEMENT_NAMES = frozenset(n for n, r in ROLE_OF.items() if r == STATEMENT_ROLE)
BELONGING_NAMES = frozenset(n for n, r in ROLE_OF.items() if _BY_ROLE.get(r) in BELONGS)


def boundary(ev) -> str:
    """What the event (binlog.reader.Event, or anything with .type and .data) does to a
    transaction: one of the constants above."""
    t = ev.type
    role = t.role if t is not None else None
    if role is None:
        return BETWEEN
    if role == STATEMENT_ROLE:
        return query_kind(ev)
    if role == "gtid_begin":
        return GTID_STANDALONE if int(ev.data.flags2) & FL_STANDALONE else GTID_BEGIN
    return _BY_ROLE.get(role, BETWEEN)


def is_gtid(ev) -> bool:
    """The event opens a transaction with a GTID (every flavour)."""
    return ev.type is not None and ev.type.role in GTID_ROLES


def is_statement_event(ev) -> bool:
    """The event carries a statement whose text says what it does (role statement)."""
    return ev.type is not None and ev.type.role == STATEMENT_ROLE


def belongs(name) -> bool:
    """Events of this name belong to the transaction around them even without BEGIN."""
    return name in BELONGING_NAMES


_KINDS: dict = {}  # query text -> its boundary (the same few texts come again and again)


def query_kind(ev) -> str:
    """The boundary a statement event's text gives: BEGIN, COMMIT, ROLLBACK, INSIDE or STATEMENT."""
    text = ev.data["query"]  # bytes in a QUERY_COMPRESSED_EVENT: inflated by query_text
    text = text if isinstance(text, str) else (query_text(ev) or "")
    kind = _KINDS.get(text)
    if kind is None:
        kind = statement_kind(text)
        if len(text) <= 64:  # BEGIN, COMMIT, XA ...: short texts that come again and again
            if len(_KINDS) > 4096:
                _KINDS.clear()
            _KINDS[text] = kind
    return kind


def statement_kind(text: str) -> str:
    """The boundary of a statement's text."""
    q = text.strip().rstrip(";").strip().upper()
    if q in ("BEGIN", "START TRANSACTION") or q.startswith("XA START") or q.startswith("XA BEGIN"):
        return BEGIN
    if q == "COMMIT" or q.startswith("XA COMMIT"):
        return COMMIT
    if q == "ROLLBACK" or q.startswith("XA ROLLBACK"):
        return ROLLBACK
    if q.startswith(("XA END", "SAVEPOINT", "ROLLBACK TO", "RELEASE SAVEPOINT")):
        return INSIDE
    return STATEMENT


def xa_ids(events):
    """(prepared, ended): the xid an XA transaction's first phase prepares (its
    XA_PREPARE_LOG_EVENT) and the one a second phase (a statement XA COMMIT xid or XA ROLLBACK
    xid) ends, as the server serializes them (X'gtrid',X'bqual',formatID, lower case), else None."""
    prepared = ended = None
    for se in events:
        ev = se.event
        if ev.name == "XA_PREPARE_LOG_EVENT" and ev.data is not None:
            d = ev.data
            prepared = (f"x'{bytes(d.gtrid).hex()}',x'{bytes(d.bqual).hex()}',"
                        f"{int(d.format_id) & 0xFFFFFFFFFFFFFFFF}")
        elif is_statement_event(ev) and query_kind(ev) in (COMMIT, ROLLBACK):
            text = ev.data["query"]
            words = (text if isinstance(text, str) else "").strip().rstrip(";").split(None, 2)
            if len(words) == 3 and words[0].upper() == "XA" and "ONE PHASE" not in text.upper():
                ended = words[2].strip().lower()
    return prepared, ended


__all__ = ["GTID", "GTID_BEGIN", "GTID_STANDALONE", "BEGIN", "COMMIT", "ROLLBACK", "XA_PREPARE",
           "STATEMENT", "INSIDE", "PART", "PAYLOAD", "BETWEEN", "OPENS_WITH_GTID", "ENDS", "BELONGS",
           "GTID_ROLES", "STATEMENT_ROLE", "ROWS_ROLES", "CUT_BEFORE_ROLES", "CUT_AFTER_ROLES",
           "ROLE_OF", "GTID_NAMES", "STATEMENT_NAMES", "BELONGING_NAMES", "boundary", "is_gtid",
           "is_statement_event", "belongs", "query_kind", "statement_kind", "xa_ids"]
