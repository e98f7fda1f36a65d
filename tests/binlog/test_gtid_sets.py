"""GTID text as each reader of it takes it, pinned: the filters' GtidSet (--include-gtids,
--exclude-gtids), and where a replica resumes (stream --gtid): MariaDBGtidState and
MySQLGtidSet. They differ on purpose in details (a filter compares a MySQL tag as written and
takes MariaDB ranges; a resume position takes a UUID without dashes and folds tags to lower
case, as the server does), and those details are what these tests hold still."""
from __future__ import annotations

import pytest

from binlog_grammar.binlog.gtid import (
    FL_STANDALONE, GTID_EVENTS, MARIADB_GTID, MYSQL_GTID_PART, GtidSet, MariaDBGtidState,
    MySQLGtidSet, gtid_of)
from binlog_grammar.binlog.stream import GtidSet as StreamGtidSet
from binlog_grammar.replication import (
    MARIADB_GTID as R_MARIADB_GTID, MYSQL_GTID_PART as R_MYSQL_GTID_PART,
    MariaDBGtidState as RMariaDBGtidState, MySQLGtidSet as RMySQLGtidSet)

U = "3E11FA47-71CA-11E1-9E33-C80AA9429562"
u = U.lower()
u32 = u.replace("-", "")


def test_one_home_for_every_reader():
    assert StreamGtidSet is GtidSet
    assert RMariaDBGtidState is MariaDBGtidState and RMySQLGtidSet is MySQLGtidSet
    assert R_MARIADB_GTID is MARIADB_GTID and R_MYSQL_GTID_PART is MYSQL_GTID_PART
    assert GTID_EVENTS == {"GTID_LOG_EVENT", "ANONYMOUS_GTID_LOG_EVENT", "GTID_TAGGED_LOG_EVENT",
                           "GTID_EVENT"}
    assert FL_STANDALONE == 0x01


# --- the filters' set ---------------------------------------------------------------------------

@pytest.mark.parametrize("text, mysql, mariadb", [
    ("", {}, []),
    (" , ", {}, []),
    (f"{U}:1-5:7", {(u, ""): [(1, 5), (7, 7)]}, []),
    (f" {U}:Tag_1:3-4 \n 0-1-5", {(u, "Tag_1"): [(3, 4)]}, [(0, 1, 5, 5)]),
    ("0-1-5-9", {}, [(0, 1, 5, 9)]),
    (" 0-1-5 ", {}, [(0, 1, 5, 5)]),
    ("00-01-05", {}, [(0, 1, 5, 5)]),
    ("0-1-5,0-2-6", {}, [(0, 1, 5, 5), (0, 2, 6, 6)]),
    ("-" * 36 + ":1", {("-" * 36, ""): [(1, 1)]}, []),  # any 36 hex digits and dashes
    (f"{U}:5-1", {(u, ""): [(5, 1)]}, []),  # empty intervals are the CLI's to refuse
    (f"{U}:0", {(u, ""): [(0, 0)]}, []),
    (f"{U}:TAG:1,{u}:tag:3", {(u, "TAG"): [(1, 1)], (u, "tag"): [(3, 3)]}, []),  # tags as written
    (f"{U}:_t:1", {(u, "_t"): [(1, 1)]}, []),
])
def test_filter_set_accepts(text, mysql, mariadb):
    gs = GtidSet(text)
    assert gs.mysql == mysql and gs.mariadb == mariadb
    assert repr(gs) == f"GtidSet({text!r})"


@pytest.mark.parametrize("text", [
    "0-1-5-9-1", f"{u32}:1", f"{U}:1-", f"{U}:x-1", f"{U}:1a:2", f"{U}::2", "1-2", "a-b-c", U])
def test_filter_set_refuses(text):
    with pytest.raises(ValueError) as e:
        GtidSet(text)
    assert str(e.value) == (f"not a GTID set element: {text.strip()!r} (MySQL uuid[:tag]:1-5 or "
                            f"MariaDB domain-server-seq)")


def test_filter_set_membership():
    gs = GtidSet(f"{U}:1-5:7,{U}:Tag:9,0-1-5-9")
    assert f"{u}:3" in gs and f"{U}:7" in gs and f"{u}:6" not in gs
    assert f"{u}:Tag:9" in gs and f"{u}:tag:9" not in gs
    assert "0-1-5" in gs and "0-1-9" in gs and "0-1-10" not in gs and "0-2-6" not in gs
    assert None not in gs and "" not in gs


# --- where a replica resumes --------------------------------------------------------------------

@pytest.mark.parametrize("text, shown", [
    ("", ""), (" , ", ""), ("0-1-5", "0-1-5"), (" 0-1-5 ", "0-1-5"), ("00-01-05", "0-1-5"),
    ("0-1-5,0-2-6", "0-2-6"), ("1-1-5\n0-2-6", "0-2-6,1-1-5"),
])
def test_mariadb_state_accepts(text, shown):
    st = MariaDBGtidState(text)
    assert str(st) == shown and repr(st) == f"MariaDBGtidState({shown!r})"


@pytest.mark.parametrize("text", ["0-1-5-9", f"{U}:1", "1-2", "a-b-c", "0-1-5-9-1"])
def test_mariadb_state_refuses(text):
    with pytest.raises(ValueError) as e:
        MariaDBGtidState(text)
    assert str(e.value) == f"not a MariaDB GTID (domain-server-sequence): {text.strip()!r}"


def test_mariadb_state_grows():
    st = MariaDBGtidState("0-1-5")
    st.add("0-1-6")
    st.add("3-2-1")
    st.add("not a gtid")
    st.add(None)
    assert str(st) == "0-1-6,3-2-1"


@pytest.mark.parametrize("text, shown, sids", [
    ("", "", {}),
    (f"{U}:1-5:7", f"{u}:1-5:7", {(u32, ""): [[1, 5], [7, 7]]}),
    (f"{u32}:1", f"{u}:1", {(u32, ""): [[1, 1]]}),  # dashes are optional
    (f" {U}:5-1 ", f"{u}:5-1", {(u32, ""): [[5, 1]]}),
    (f"{U}:0", f"{u}:0", {(u32, ""): [[0, 0]]}),
    (f"{U}:TAG:1,{u}:tag:3", f"{u}:tag:1:3", {(u32, "tag"): [[1, 1], [3, 3]]}),  # tags folded
    (f"{U}:3-4:1-2,{U}:8", f"{u}:1-4:8", {(u32, ""): [[1, 4], [8, 8]]}),
])
def test_mysql_set_accepts(text, shown, sids):
    gs = MySQLGtidSet(text)
    assert str(gs) == shown and gs.sids == sids


@pytest.mark.parametrize("text", [
    "0-1-5", "-" * 36 + ":1", f"{U}:1-", f"{U}:x-1", f"{U}:1a:2", f"{U}::2", U, f"{U}:Tag_1:3-4 \n 0-1-5"])
def test_mysql_set_refuses(text):
    with pytest.raises(ValueError) as e:
        MySQLGtidSet(text)
    bad = [p for p in text.replace("\n", ",").split(",") if p.strip()]
    bad = next(p for p in bad if not MYSQL_GTID_PART.match(p))
    assert str(e.value) == f"not a MySQL GTID set element (uuid[:tag]:1-5:7): {bad.strip()!r}"


def test_mysql_set_grows_and_encodes():
    gs = MySQLGtidSet(f"{U}:1-3")
    gs.add(f"{u}:4")
    gs.add(f"{u}:T:9")
    gs.add("nonsense")
    gs.add(f"{u}:x")
    assert str(gs) == f"{u}:1-4,{u}:t:9"
    assert gs.encoded() == dict(gtid_format=1, sids=[
        dict(uuid=bytes.fromhex(u32), tag="", intervals=[dict(start=1, end=5)]),
        dict(uuid=bytes.fromhex(u32), tag="t", intervals=[dict(start=9, end=10)])])
    assert MySQLGtidSet(f"{U}:2").encoded() == dict(gtid_format=0, sids=[
        dict(uuid=bytes.fromhex(u32), tag=None, intervals=[dict(start=2, end=3)])])


def test_position_patterns():
    assert MARIADB_GTID.match(" 0-1-5 ") and not MARIADB_GTID.match("0-1-5-9")
    m = MYSQL_GTID_PART.match(f" {U}:Tag:1-5:7 ")
    assert m[1] == U and m[2] == ":Tag" and m[3] == ":1-5:7"


class _Ev:
    def __init__(self, name, data, header=None):
        self.name, self.data, self.header = name, data, header or {}


def test_gtid_of_events():
    sid = bytes.fromhex(u32)
    assert gtid_of(_Ev("GTID_LOG_EVENT", {"sid": sid, "gno": 7})) == f"{u}:7"
    assert gtid_of(_Ev("GTID_EVENT", {"domain_id": 0, "seq_no": 5}, {"server_id": 1})) == "0-1-5"
    assert gtid_of(_Ev("ANONYMOUS_GTID_LOG_EVENT", {"sid": sid, "gno": 7})) is None
    assert gtid_of(_Ev("QUERY_EVENT", {})) is None
