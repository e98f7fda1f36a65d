"""`repair`'s plan and undo file stay data whatever the names and values (issue 25).

Hypothesis draws database, table and column names and key and row values from an alphabet of
dangerous pieces (binlog_grammar.testing.repair_hostile: line breaks, CR LF, NUL, quotes,
backquotes, backslashes, `*/`, `--`, `#`, `;`, `\\!` and `\\C` client commands, gbk/sjis
sequences whose trail byte is a backslash or a quote, bytes that are not UTF-8), stops a real
replica on error 1032 with conflicts that need every kind of fix, and pipes the dry run's plan
and the undo file of `--apply` into the replica through the real `mariadb` client under the
client character sets utf8mb4, gbk, sjis, big5, cp932 and latin1 (some with the target's
global sql_mode NO_BACKSLASH_ESCAPES,ANSI_QUOTES): the canary table survives, no file appears,
the client exits 0, the undo file gives the replica's rows back exactly, the plan makes them what
`--apply` made them, and after it replication catches up with equal CHECKSUM TABLE.

The issue's own table name is always run; BINLOG_GRAMMAR_REPAIR_HOSTILE_EXAMPLES drawn cases
(default 8, derandomized) follow. `tools/repair_soak.py --hostile` runs many more, random.
Skipped when mariadbd is absent, unless BINLOG_GRAMMAR_REQUIRE_SERVICES=1 (then they fail).
"""
from __future__ import annotations

import os
import tempfile

import pytest
from hypothesis import HealthCheck, given, settings

from helpers.services import need_mariadb

pytestmark = pytest.mark.server

EXAMPLES = int(os.environ.get("BINLOG_GRAMMAR_REPAIR_HOSTILE_EXAMPLES", "8"))


@pytest.fixture(scope="module")
def pair():
    need_mariadb()
    from binlog_grammar.testing.replicas import ReplicaPair

    p = ReplicaPair().start()
    yield p
    p.cleanup()


def test_the_issues_table_name_stays_a_name(pair):
    from binlog_grammar.testing.repair_hostile import ISSUE_CASE, check_case

    check_case(pair, ISSUE_CASE, tempfile.mkdtemp(prefix="repair-hostile-"))


def test_a_dot_in_the_database_name(pair):
    """Database rp_a.b, table t.c: read as "db.table" the repair looked for database rp_a."""
    from binlog_grammar.testing.repair_hostile import DOTTED_CASE, check_case

    check_case(pair, DOTTED_CASE, tempfile.mkdtemp(prefix="repair-hostile-"))


def _cases():
    from binlog_grammar.testing.repair_hostile import cases

    return cases()


@settings(max_examples=EXAMPLES, deadline=None, database=None, derandomize=True,
          suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large,
                                 HealthCheck.function_scoped_fixture])
@given(case=_cases())
def test_drawn_names_and_values_stay_data(pair, case):
    from binlog_grammar.testing.repair_hostile import check_case

    check_case(pair, case, tempfile.mkdtemp(prefix="repair-hostile-"))
