"""`binlog-grammar repair` on a real MariaDB 10.11 primary and replica on loopback.

The property: Hypothesis draws a schema (primary keys of several types, single and composite, a
unique key, a table without a primary key), drift on the replica (rows deleted, changed or
inserted with sql_log_bin=0) and a workload on the primary (multi-row statements, multi-table
transactions, primary keys changed, unique values that drifted rows hold) that runs into the
drift; over GTID and file/position replication, the serial and the parallel applier, FULL and
MINIMAL row images, `repair --apply` must end with the replica running, caught up, every table's
CHECKSUM equal to the primary's, and nothing logged by the replica itself; before that, a dry run
must change nothing and the undo file of `--apply --no-start` must give the replica's rows back
(binlog_grammar.testing.drift.check_repair). The replica rotates its relay log every 4 KiB, so
failing transactions often span relay files. One primary and replica serve every example (fresh
databases each time); BINLOG_GRAMMAR_REPAIR_EXAMPLES sets the examples per settings combination
(default 3, derandomized: the same ones every run; tools/repair_soak.py runs many more, random).

Then the stops the repair does not act on (no error, another error, a statement, a
non-transactional table), each refused in one line with nothing changed; the plan's comments;
the transaction fetched from the primary; MINIMAL images without the primary's account;
a named (multi-source) connection; and the status vocabulary of MySQL.

Skipped when mariadbd is absent, unless BINLOG_GRAMMAR_REQUIRE_SERVICES=1 (then they fail).
"""
from __future__ import annotations

import os
import re
import tempfile

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from binlog_grammar.repair.status import ReplicaStatus, parse_sql_error, refusal

from helpers.services import need_mariadb

pytestmark = pytest.mark.server

EXAMPLES = int(os.environ.get("BINLOG_GRAMMAR_REPAIR_EXAMPLES", "3"))


@pytest.fixture(scope="module")
def pair():
    need_mariadb()
    from binlog_grammar.testing.replicas import ReplicaPair

    p = ReplicaPair(replica_options=["--max-relay-log-size=4096"]).start()
    yield p
    p.cleanup()


def _label(s):
    return s.label


def _settings():
    from binlog_grammar.testing.drift import ALL_SETTINGS

    return ALL_SETTINGS


@pytest.mark.parametrize("combo", _settings(), ids=_label)
@settings(max_examples=EXAMPLES, deadline=None, database=None, derandomize=True,
          suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])
@given(data=st.data())
def test_apply_makes_the_replica_equal_to_the_primary(pair, combo, data):
    from binlog_grammar.testing.drift import check_repair, scenarios

    sc = data.draw(scenarios(settings=combo), label="scenario")
    check_repair(pair, sc, tempfile.mkdtemp(prefix="repair-test-"))


# The example that found MariaDB's parallel applier leaving Relay_Log_Pos inside the failing
# transaction when it spans relay files (relay-bin.000002 at its end, or relay-bin.000003 after
# the format events, while Exec_Master_Log_Pos named the transaction's start): restarting the SQL
# thread alone then skipped the transaction's first rows without an error, and the replica ended
# without a row. The race is the server's: the example runs several times.
SPANNING = dict(
    setup=("CREATE TABLE ta (id CHAR(12) CHARACTER SET latin1 NOT NULL, u VARCHAR(12) CHARACTER SET "
           "utf8mb4 NULL, v INT, note VARCHAR(40) CHARACTER SET utf8mb4, amt DECIMAL(10,2), f DOUBLE, "
           "body BLOB, ts TIMESTAMP(3) NULL, PRIMARY KEY (id), UNIQUE KEY uk (u)) ENGINE=InnoDB",
           "CREATE TABLE tb (id CHAR(12) CHARACTER SET latin1 NOT NULL, u INT NULL, v INT, note TEXT "
           "CHARACTER SET utf8mb4, PRIMARY KEY (id)) ENGINE=InnoDB",
           "INSERT INTO ta (id, u, v, note, amt, f, body, ts) VALUES ('c3', 'u3', 1, "
           "REPEAT('n', 40), -388.25, 0.7619047619047619, X'030100030100', '2023-02-13 10:11:12.001')",
           "INSERT INTO tb (id, u, v, note) VALUES ('c0', NULL, 1, REPEAT('t', 900)), "
           "('c4', NULL, 1, REPEAT('t', 900))"),
    drift=("INSERT INTO ta (id, u, v, note, amt, f, body, ts) VALUES ('c1', 'u0', 99, 'drift', "
           "-364.25, 33.142857142857146, X'0163', '2023-01-11 10:11:12.099')",
           "DELETE FROM tb WHERE id = 'c0'"),
    workload=(("DELETE FROM tb WHERE id IN ('c4', 'c0')",),
              ("INSERT INTO ta (id, u, v, note, amt, f, body, ts) VALUES ('c1', NULL, 2, "
               "REPEAT('x', 40), -461.25, 0.8095238095238095, REPEAT(X'0102', 300), "
               "'2023-03-11 10:11:12.002')",
               "INSERT INTO ta (id, u, v, note, amt, f, body, ts) VALUES ('c9', NULL, 3, "
               "REPEAT('y', 40), -164.25, 2.2857142857142856, REPEAT(X'0903', 900), "
               "'2023-04-19 10:11:12.003')")))


@pytest.mark.parametrize("gtid", [True, False], ids=["gtid", "file-pos"])
def test_a_failing_transaction_across_relay_files_under_the_parallel_applier(pair, gtid):
    from binlog_grammar.testing.drift import RepSettings, Scenario, check_repair

    sc = Scenario(RepSettings(gtid, 4, "FULL"), **SPANNING)
    for _ in range(3):
        check_repair(pair, sc, tempfile.mkdtemp(prefix="repair-test-"))


# every column type family, with the differential suite's tables (binlog_grammar.testing.schema)

@pytest.mark.parametrize("image", ["FULL", "MINIMAL", "NOBLOB"])
@settings(max_examples=max(1, EXAMPLES), deadline=None, database=None, derandomize=True,
          suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])
@given(data=st.data())
def test_every_column_type_family_round_trips_through_the_repair(pair, image, data):
    from binlog_grammar.testing.drift import check_types_case
    from binlog_grammar.testing.schema import Settings, cases

    case = data.draw(cases(Settings(image, "FULL", False)), label="case")
    metadata = data.draw(st.sampled_from(["NO_LOG", "FULL"]), label="binlog_row_metadata")
    check_types_case(pair, case, tempfile.mkdtemp(prefix="repair-test-"), metadata)


def test_binary_keys_without_row_metadata(pair):
    """BINARY(n) values are logged without their 0x00 pad: without binlog_row_metadata the
    repair's decoder must still know the column is binary to pad it back, or the collision
    with the replica's row goes unseen (the trial run failed with 1062)."""
    from binlog_grammar.testing.drift import check_types_case
    from binlog_grammar.testing.schema import Case, Settings, Statement

    case = Case(Settings("MINIMAL", "FULL", False),
                "CREATE TABLE t (c1 TINYTEXT NOT NULL, k1 BINARY(125) NOT NULL, k0 TINYINT "
                "UNSIGNED NOT NULL, PRIMARY KEY (k0, k1)) ENGINE=InnoDB",
                (Statement("insert", "INSERT INTO t (c1, k1, k0) VALUES ('a', X'510001', 1)"),))
    assert check_types_case(pair, case, tempfile.mkdtemp(prefix="repair-test-"), "NO_LOG") == "ok"


# ---------------------------------------------------------------------------------------------
# a fixed example: the issue's

ITEMS = """CREATE DATABASE rp_items;
CREATE TABLE rp_items.items (id INT PRIMARY KEY, u VARCHAR(20) UNIQUE, v INT) ENGINE=InnoDB;
INSERT INTO rp_items.items VALUES (1,'a',1),(2,'b',2),(3,'c',3);"""


def _stop_on_items(pair, **conf):
    pair.configure(**conf)
    pair.primary.sql(ITEMS)
    pair.wait_caught_up()
    pair.replica.sql("SET sql_log_bin=0; DELETE FROM rp_items.items WHERE id=2; "
                     "INSERT INTO rp_items.items VALUES (9,'z',9), (10,'y',10);")
    pair.primary.sql("BEGIN; UPDATE rp_items.items SET v=v+10; "
                     "INSERT INTO rp_items.items VALUES (9,'y',0); COMMIT;")
    return pair.wait_stopped()


def _frozen(pair, db):
    """What must not change: the replica's rows, its error, its own binlog."""
    st = pair.status()
    return (pair.checksums(db)[1], st.get("Last_SQL_Error"), st.get("Exec_Master_Log_Pos"),
            pair.replica.sql("SELECT @@gtid_binlog_pos, @@gtid_slave_pos"))


def test_dry_run_prints_a_commented_plan_and_changes_nothing(pair):
    from binlog_grammar.testing.drift import repair_cli

    st = _stop_on_items(pair)
    assert st["Last_SQL_Errno"] == "1032"
    before = _frozen(pair, "rp_items")
    code, out, err = repair_cli(pair)
    assert code == 0, err
    assert _frozen(pair, "rp_items") == before
    gtid = re.search(r"GTID (0-1-\d+)", out)[1]
    # one comment per row: table, key, event position, GTID, the replica row it replaces
    assert re.search(r"-- rp_items.items \(id=2\): missing on the replica, which the update at "
                     r"mariadb-bin.000001:\d+ \(relay log relay-bin.\d+ at \d+\), row 2, GTID "
                     + gtid, out), out
    assert re.search(r"-- rp_items.items \(id=9\): the replica's row \(id=9, u='z', v=9\) conflicts "
                     r"on the primary key with the insert at mariadb-bin.000001:\d+ .*GTID " + gtid, out)
    # 'y' is held by id=10 on the replica: the second conflict of the same row is in the plan too
    assert re.search(r"-- rp_items.items \(id=10\): the replica's row \(id=10, u='y', v=10\) "
                     r"conflicts on unique key u with the insert", out), out
    statements = [ln for ln in out.splitlines() if ln and not ln.startswith("--")]
    # the script header first (the client's character set fixed before any name), sql_log_bin=0
    assert statements[0] == "/*!\\C utf8mb4 */;", statements[:6]
    assert "SET SESSION sql_log_bin=0;" in statements[:statements.index("BEGIN;")]
    assert "DELETE FROM `rp_items`.`items` WHERE `id`=9;" in statements
    assert "DELETE FROM `rp_items`.`items` WHERE `id`=10;" in statements
    assert "INSERT INTO `rp_items`.`items` (`id`, `u`, `v`) VALUES (2, 'b', 2);" in statements
    assert statements[-1] == "COMMIT;"
    # the plan as printed repairs it in one go
    pair.replica.sql("\n".join(statements))
    pair.replica.sql("START SLAVE")
    pair.wait_caught_up()
    primary, replica = pair.checksums("rp_items")
    assert primary == replica


def test_the_transaction_fetched_from_the_primary_gives_the_same_plan(pair):
    from binlog_grammar.testing.drift import repair_cli

    _stop_on_items(pair, gtid=False, parallel=4)
    code, relay, err = repair_cli(pair)
    assert code == 0, err
    code, fetched, err = repair_cli(pair, "--from-primary")
    assert code == 0, err
    assert "read from primary 127.0.0.1:" in fetched and "read from relay log /" in relay
    assert [ln for ln in relay.splitlines() if not ln.startswith("--")] == \
        [ln for ln in fetched.splitlines() if not ln.startswith("--")]
    code, out, err = repair_cli(pair, "--from-primary", "--apply", "--undo",
                                os.path.join(tempfile.mkdtemp(), "undo.sql"))
    assert code == 0, err
    assert "runs and has caught up" in out
    primary, replica = pair.checksums("rp_items")
    assert primary == replica


def test_minimal_images_need_the_primarys_account(pair):
    from binlog_grammar.cli import main

    _stop_on_items(pair, row_image="MINIMAL")
    before = _frozen(pair, "rp_items")
    os.environ["RP_PW"] = "Rpr-pw_27q"
    code = main(["repair", "--port", str(pair.replica.port), "--user", "repair_admin",
                 "--password-env", "RP_PW"])
    assert code == 2
    assert _frozen(pair, "rp_items") == before


def test_a_named_connection(pair, capsys):
    from binlog_grammar.testing.drift import repair_cli

    pair.configure(connection_name="src1")
    _stop_on_items(pair, connection_name="src1")
    code, out, err = repair_cli(pair)
    assert code == 2 and "'src1'" in err and "--connection-name" in err, (out, err)
    code, out, err = repair_cli(pair, "--connection-name", "src1", "--apply", "--undo",
                                os.path.join(tempfile.mkdtemp(), "undo.sql"))
    assert code == 0, err
    assert "connection 'src1' runs and has caught up" in out
    primary, replica = pair.checksums("rp_items")
    assert primary == replica


def test_a_running_replica_has_nothing_to_repair(pair):
    from binlog_grammar.testing.drift import repair_cli

    pair.configure()
    code, out, err = repair_cli(pair, "--apply")
    assert code == 0 and "nothing to repair" in out, (out, err)


# ---------------------------------------------------------------------------------------------
# stops the repair does not act on

def _stop_without_error(pair):
    pair.configure()
    pair.primary.sql("CREATE DATABASE rp_x; CREATE TABLE rp_x.t (id INT PRIMARY KEY) ENGINE=InnoDB")
    pair.wait_caught_up()
    pair.replica.sql("STOP SLAVE SQL_THREAD")
    return "without an error"


def _stop_on_another_error(pair):
    pair.configure()
    pair.primary.sql("CREATE DATABASE rp_x; CREATE TABLE rp_x.t (id INT PRIMARY KEY) ENGINE=InnoDB")
    pair.wait_caught_up()
    pair.replica.sql("SET sql_log_bin=0; DROP TABLE rp_x.t")
    pair.primary.sql("INSERT INTO rp_x.t VALUES (1)")
    return "not a row conflict"


def _stop_on_a_statement(pair):
    pair.configure()
    pair.primary.sql("CREATE DATABASE rp_x; CREATE TABLE rp_x.t (id INT PRIMARY KEY) ENGINE=InnoDB")
    pair.wait_caught_up()
    pair.replica.sql("SET sql_log_bin=0; INSERT INTO rp_x.t VALUES (1)")
    pair.primary.sql("SET SESSION binlog_format=STATEMENT; INSERT INTO rp_x.t VALUES (1)")
    return "on a statement"


def _stop_on_a_non_transactional_table(pair):
    pair.configure()
    pair.primary.sql("CREATE DATABASE rp_x; CREATE TABLE rp_x.t (id INT PRIMARY KEY, v INT) "
                     "ENGINE=Aria TRANSACTIONAL=0; INSERT INTO rp_x.t VALUES (1, 1), (2, 2)")
    pair.wait_caught_up()
    pair.replica.sql("SET sql_log_bin=0; DELETE FROM rp_x.t WHERE id=2")
    pair.primary.sql("UPDATE rp_x.t SET v=v+1")
    return "not transactional"


@pytest.mark.parametrize("cause", [_stop_without_error, _stop_on_another_error, _stop_on_a_statement,
                                   _stop_on_a_non_transactional_table],
                         ids=lambda f: f.__name__[1:])
def test_stops_it_does_not_act_on_are_refused_with_nothing_changed(pair, cause):
    from binlog_grammar.testing.drift import repair_cli

    why = cause(pair)
    st = pair.wait_stopped()
    assert st["Slave_SQL_Running"] == "No"
    before = _frozen(pair, "rp_x")
    for extra in ((), ("--apply", "--undo", os.path.join(tempfile.mkdtemp(), "undo.sql"))):
        code, out, err = repair_cli(pair, *extra)
        assert code == 2, (out, err)
        assert len(err.strip().splitlines()) == 1 and why in err, err
        assert _frozen(pair, "rp_x") == before


# ---------------------------------------------------------------------------------------------
# the status vocabulary (no server needed)

MYSQL_ROW = {
    "Source_Host": "10.0.0.5", "Source_Port": "3306", "Source_Log_File": "binlog.000007",
    "Read_Source_Log_Pos": "9000", "Relay_Log_File": "./relay.000003", "Relay_Log_Pos": "512",
    "Relay_Source_Log_File": "binlog.000007", "Exec_Source_Log_Pos": "4100",
    "Replica_IO_Running": "Yes", "Replica_SQL_Running": "No", "Last_SQL_Errno": "1062",
    "Last_SQL_Error": "Coordinator stopped because there were error(s) in the worker(s). The most "
                      "recent failure being: Worker 2 failed executing transaction "
                      "'3e11fa47-71ca-11e1-9e33-c80aa9429562:77' at source log binlog.000007, "
                      "end_log_pos 5230. See error log and/or performance_schema."
                      "replication_applier_status_by_worker table for more details about this "
                      "failure or others, if any.",
    "Auto_Position": "1", "Channel_Name": "", "Executed_Gtid_Set": "3e11fa47-71ca-11e1-9e33-c80aa9429562:1-76",
}


def test_mysql_status_names_and_worker_errors():
    st = ReplicaStatus.from_row(MYSQL_ROW, mariadb=False)
    assert (st.source_host, st.source_port, st.relay_log_file, st.relay_log_pos) == \
        ("10.0.0.5", 3306, "./relay.000003", 512)
    assert (st.relay_source_log_file, st.exec_source_log_pos, st.read_source_log_pos) == \
        ("binlog.000007", 4100, 9000)
    assert not st.running and st.gtid_mode and not st.caught_up
    err = parse_sql_error(st.sql_errno, st.sql_error)
    assert (err.gtid, err.source_file, err.end_log_pos) == \
        ("3e11fa47-71ca-11e1-9e33-c80aa9429562:77", "binlog.000007", 5230)
    assert refusal(st, err) is None
    worker = parse_sql_error(1062, "Worker 2 failed executing transaction 'ANONYMOUS' at source log "
                                   "binlog.000007, end_log_pos 5230; Could not execute Write_rows "
                                   "event on table shop.t; Duplicate entry '5' for key 't.PRIMARY', "
                                   "Error_code: 1062; handler error HA_ERR_FOUND_DUPP_KEY; the "
                                   "event's source log binlog.000007, end_log_pos 5190")
    assert (worker.gtid, worker.event_kind, worker.table, worker.end_log_pos) == \
        (None, "Write_rows", "shop.t", 5190)


def test_mariadb_errors_and_refusals():
    st = ReplicaStatus.from_row({"Slave_SQL_Running": "No", "Using_Gtid": "Slave_Pos",
                                 "Last_SQL_Errno": "1032"}, mariadb=True)
    err = parse_sql_error(1032, "Could not execute Delete_rows_v1 event on table d.t; Can't find "
                                "record in 't', Error_code: 1032; handler error "
                                "HA_ERR_KEY_NOT_FOUND; the event's master log mariadb-bin.000004, "
                                "end_log_pos 1199")
    assert (err.event_kind, err.table, err.source_file, err.end_log_pos) == \
        ("Delete_rows", "d.t", "mariadb-bin.000004", 1199)
    assert refusal(st, err) is None
    statement = parse_sql_error(1062, "Error 'Duplicate entry '1' for key 'PRIMARY'' on query. "
                                      "Default database: 'd'. Query: 'INSERT INTO t VALUES (1)'")
    assert statement.statement and "statement" in refusal(st, statement)
    other = parse_sql_error(1146, "Error executing row event: 'Table 'd.t' doesn't exist'")
    assert "not a row conflict" in refusal(st, other)
    # with replication filters the SQL thread skips some rows events: which, the repair cannot say
    filtered = ReplicaStatus.from_row({"Slave_SQL_Running": "No", "Last_SQL_Errno": "1032",
                                       "Replicate_Wild_Ignore_Table": "tmp.%"}, mariadb=True)
    assert "filters (Replicate_Wild_Ignore_Table=tmp.%)" in refusal(filtered, err)
