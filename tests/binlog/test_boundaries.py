"""binlog/boundaries.py: what each event does to a transaction, from the specs' roles, the
statement's text and MariaDB's FL_STANDALONE flag; and no reader names event types for it."""
import re
from pathlib import Path
from types import SimpleNamespace

import pytest

from binlog_grammar.binlog import boundaries as B
from binlog_grammar.binlog.gtid import FL_STANDALONE, GTID_EVENTS
from binlog_grammar.generated.catalog import EVENTS

ROOT = Path(__file__).resolve().parents[2]
BY_NAME = {e.name: e for e in EVENTS.values()}


def _ev(name, **data):
    return SimpleNamespace(type=BY_NAME[name], data=SimpleNamespace(**data) if "flags2" in data
                           else data, name=name)


@pytest.mark.parametrize("text, kind", [
    ("BEGIN", B.BEGIN), ("  start transaction ;", B.BEGIN), ("XA START 'x'", B.BEGIN),
    ("XA BEGIN 'x'", B.BEGIN), ("COMMIT", B.COMMIT), ("XA COMMIT 'x'", B.COMMIT),
    ("ROLLBACK", B.ROLLBACK), ("XA ROLLBACK 'x'", B.ROLLBACK), ("XA END 'x'", B.INSIDE),
    ("SAVEPOINT s", B.INSIDE), ("ROLLBACK TO s", B.INSIDE), ("RELEASE SAVEPOINT s", B.INSIDE),
    ("CREATE TABLE t (a int)", B.STATEMENT), ("INSERT INTO t VALUES (1)", B.STATEMENT),
    ("COMMIT AND CHAIN", B.STATEMENT),
])
def test_statement_text(text, kind):
    assert B.statement_kind(text) == kind
    assert B.boundary(_ev("QUERY_EVENT", query=text)) == kind


def test_events_by_role():
    assert B.boundary(_ev("GTID_LOG_EVENT")) == B.GTID
    assert B.boundary(_ev("ANONYMOUS_GTID_LOG_EVENT")) == B.GTID
    assert B.boundary(_ev("GTID_EVENT", flags2=0)) == B.GTID_BEGIN
    assert B.boundary(_ev("GTID_EVENT", flags2=FL_STANDALONE | 0x10)) == B.GTID_STANDALONE
    assert B.boundary(_ev("XID_EVENT")) == B.COMMIT
    assert B.boundary(_ev("XA_PREPARE_LOG_EVENT")) == B.XA_PREPARE
    assert B.boundary(_ev("TRANSACTION_PAYLOAD_EVENT")) == B.PAYLOAD
    for name in ("TABLE_MAP_EVENT", "WRITE_ROWS_EVENT", "DELETE_ROWS_COMPRESSED_EVENT_V1",
                 "ANNOTATE_ROWS_EVENT", "ROWS_QUERY_LOG_EVENT", "USER_VAR_EVENT", "INTVAR_EVENT",
                 "RAND_EVENT", "VIEW_CHANGE_EVENT", "TRANSACTION_CONTEXT_EVENT"):
        assert B.boundary(_ev(name)) == B.PART, name
    for name in ("ROTATE_EVENT", "FORMAT_DESCRIPTION_EVENT", "GTID_LIST_EVENT",
                 "BINLOG_CHECKPOINT_EVENT", "EXECUTE_LOAD_QUERY_EVENT", "STOP_EVENT"):
        assert B.boundary(_ev(name)) == B.BETWEEN, name
    assert B.boundary(SimpleNamespace(type=None, data=None)) == B.BETWEEN


def test_the_sets_the_readers_named_come_from_the_roles():
    """The lists the readers wrote by hand before the roles, recomputed from the catalog."""
    def old_in_tx(name):
        return name in ("TABLE_MAP_EVENT", "ANNOTATE_ROWS_EVENT", "ROWS_QUERY_LOG_EVENT",
                        "INTVAR_EVENT", "RAND_EVENT", "USER_VAR_EVENT", "TRANSACTION_PAYLOAD_EVENT",
                        "TRANSACTION_CONTEXT_EVENT", "VIEW_CHANGE_EVENT") \
            or name.endswith("ROWS_EVENT") or name.endswith("ROWS_EVENT_V1") \
            or "ROWS_COMPRESSED_EVENT" in name

    assert B.BELONGING_NAMES == {n for n in BY_NAME if old_in_tx(n)}
    assert B.GTID_NAMES == GTID_EVENTS
    assert B.STATEMENT_NAMES == {"QUERY_EVENT", "QUERY_COMPRESSED_EVENT"}
    assert {n for n, r in B.ROLE_OF.items() if r in B.CUT_AFTER_ROLES} == {"XID_EVENT"}


READERS = ["binlog_grammar/binlog/stream.py", "binlog_grammar/repair/locate.py",
           "binlog_grammar/replication/source.py", "binlog_grammar/spark/split.py"]


@pytest.mark.parametrize("path", READERS)
def test_no_reader_names_the_events_of_a_boundary(path):
    """Where a transaction starts and ends is decided in binlog/boundaries.py from the specs'
    roles; the readers name no event type for it."""
    text = (ROOT / path).read_text()
    named = re.findall(r'"(?:QUERY_EVENT|QUERY_COMPRESSED_EVENT|XID_EVENT|XA_PREPARE_LOG_EVENT|'
                       r'GTID_EVENT|TRANSACTION_PAYLOAD_EVENT)"|in GTID_EVENTS|FL_STANDALONE|'
                       r'in_transaction\(|_IN_TX', text)
    assert not named, f"{path} names {named}"
