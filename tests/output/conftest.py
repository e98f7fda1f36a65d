"""Fixtures the tests of this folder share."""
import pytest

from helpers.oracle import TYPES_WORKLOAD
from helpers.services import need_mariadb, need_mariadb_binlog


@pytest.fixture(scope="module")
def server_binlogs(tmp_path_factory):
    """TYPES_WORKLOAD written by a throwaway MariaDB twice: with FULL row metadata (names, ENUM and
    SET members) and with MINIMAL metadata and MINIMAL row images."""
    need_mariadb_binlog()
    from binlog_grammar.testing import mariadb

    need_mariadb()
    out = tmp_path_factory.mktemp("oracle-binlogs")
    with mariadb.MariaDB(["--default-time-zone=+00:00"]) as db:
        for name, metadata, image in (("full", "FULL", "FULL"), ("minimal", "MINIMAL", "MINIMAL")):
            db.sql(f"SET GLOBAL binlog_row_metadata = {metadata}; "
                   f"SET GLOBAL binlog_row_image = {image};")
            db.sql(f"CREATE DATABASE {name};")
            db.sql(TYPES_WORKLOAD, database=name)
        db.sql("FLUSH BINARY LOGS;")
        paths = []
        for p in db.binlogs():
            paths.append(out / p.name)
            paths[-1].write_bytes(p.read_bytes())
    return paths
