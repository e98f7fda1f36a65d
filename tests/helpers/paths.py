"""Where the tests find the repository and the shared corpus of real binlogs."""
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
CORPUS = ROOT.parent / "shared" / "corpus" / "mysql"
# the bundled MariaDB sample binlogs, as paths in text
MARIADB_SAMPLES = sorted(str(p) for p in (ROOT / "samples").glob("mariadb-*"))

# a test that reads ../shared/corpus; tests/conftest.py skips it when the corpus is absent
needs_corpus = pytest.mark.corpus


def corpus_files():
    if not CORPUS.is_dir():
        return []
    return sorted(p for p in CORPUS.iterdir() if p.is_file())


# The corpus files whose replay form (`dump FILE`) is mariadb-binlog's bytes. Left out, and why:
# json.binlog (mariadb-binlog counts 1 row in MySQL's v2 rows events, which hold 3 and 6, and
# stops at a PARTIAL_UPDATE_ROWS_EVENT), minimal_row_metadata, mysql-enum-string-set,
# rpl_unfiltered_hidden_gcol (MySQL 8's collation 255, which mariadb-binlog does not know and
# prints as an ignored line; dump names utf8mb4 for the client), ver_trunk_row_v2 (LOAD DATA:
# tests/output/test_replay_load.py compares it with its own -l folders), files mariadb-binlog
# cannot read.
REPLAY_IDENTICAL = """binlog_56_gtid_reserved_word.000001 binlog_savepoint.000001
    binlog_transaction.000001 binlog_transaction_previous_GTID_no_tag.000001
    binlog_transaction_with_GTID.000001 binlog_transaction_with_anonymous_GTID.000001
    bug11747887-bin.000003 bug16266.000001 bug32407.001 bug33029-slave-relay-bin.000001
    master-bin.000001 rpl_atomic_ddl_rollback_full.000001 rpl_atomic_ddl_rollback_table.000001
    rpl_cross_version_default_utf8mb4_collation.000001 slave-relay-bin.000001
    update-full-row.binlog write-full-row.binlog write-partial-row.binlog""".split()
