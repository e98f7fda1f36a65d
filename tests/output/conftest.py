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


@pytest.fixture(scope="module")
def pitr_source():
    """helpers.pitr's workload on a source MariaDB after a mariadb-dump snapshot: (server, snapshot,
    binlog name, position, binlog files from it, the source's tables)."""
    import subprocess

    from binlog_grammar.testing import mariadb

    from helpers.pitr import OPTIONS, SETUP, WORKLOAD, tables

    need_mariadb()
    need_mariadb_binlog()
    with mariadb.MariaDB(OPTIONS) as src:
        src.sql(SETUP)
        dump = subprocess.run(["mariadb-dump", "--no-defaults", "-uroot", f"--socket={src.socket}",
                               "--single-transaction", "--master-data=2", "--routines",
                               "--databases", "pitr1", "pitr2"], capture_output=True, check=True)
        snapshot = dump.stdout
        head = snapshot.decode(errors="replace")
        pos = int(head.split("MASTER_LOG_POS=", 1)[1].split(";", 1)[0])
        name = head.split("MASTER_LOG_FILE='", 1)[1].split("'", 1)[0]
        r = subprocess.run(src._client(), input=WORKLOAD.encode("latin1"), capture_output=True)
        assert r.returncode == 0, r.stderr.decode(errors="replace")
        src.sql("FLUSH BINARY LOGS")
        files = [str(p) for p in src.binlogs()]
        files = files[[p.rsplit("/", 1)[1] for p in files].index(name):]
        yield src, snapshot, name, pos, files, tables(src)
