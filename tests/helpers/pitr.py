"""The point-in-time recovery workload of tests/output/test_sql_pitr.py and test_replay.py: a
setup and a workload of DDL and DML over two databases under session settings a script must
carry, the source server's options, the hostile settings of the applying client, and how a
server's tables are compared (SHOW CREATE TABLE, CHECKSUM TABLE). The fixture that runs it once
per module is `pitr_source` (tests/output/conftest.py)."""
from __future__ import annotations

import re
import subprocess

from binlog_grammar.testing import mariadb


SETUP = """
CREATE DATABASE pitr1; CREATE DATABASE pitr2;
CREATE TABLE pitr1.a (id INT PRIMARY KEY, v VARCHAR(40)) ENGINE=InnoDB;
CREATE TABLE pitr2.b (id INT PRIMARY KEY AUTO_INCREMENT, n INT, t TEXT) ENGINE=InnoDB;
INSERT INTO pitr1.a VALUES (1, 'one'), (2, 'two');
INSERT INTO pitr2.b (n, t) VALUES (10, 'x'), (20, 'y');
"""

WORKLOAD = r"""
USE pitr2;
CREATE TABLE c (id INT PRIMARY KEY, s VARCHAR(20) DEFAULT 'a\\b') ENGINE=InnoDB;
INSERT INTO c VALUES (1, DEFAULT), (2, 'it''s');
SET SESSION sql_mode = 'ANSI_QUOTES,NO_BACKSLASH_ESCAPES';
CREATE TABLE "quoted" ("id" INT PRIMARY KEY, "w" VARCHAR(20) DEFAULT 'back\slash') ENGINE=InnoDB;
INSERT INTO "quoted" VALUES (1, DEFAULT);
SET SESSION sql_mode = DEFAULT;
SET SESSION time_zone = '+05:30';
CREATE TABLE pitr1.tz (id INT PRIMARY KEY,
    ts TIMESTAMP NOT NULL DEFAULT '2024-01-02 03:04:05') ENGINE=InnoDB;
INSERT INTO pitr1.tz (id) VALUES (1);
SET SESSION time_zone = DEFAULT;
SET SESSION foreign_key_checks = 0;
CREATE TABLE pitr1.child (id INT PRIMARY KEY, p INT, KEY (p),
    FOREIGN KEY (p) REFERENCES pitr1.parent (id)) ENGINE=InnoDB;
SET SESSION foreign_key_checks = 1;
CREATE TABLE pitr1.parent (id INT PRIMARY KEY) ENGINE=InnoDB;
INSERT INTO pitr1.parent VALUES (7); INSERT INTO pitr1.child VALUES (1, 7);
SET SESSION auto_increment_increment = 5, auto_increment_offset = 3;
CREATE TABLE pitr2.inc (id INT PRIMARY KEY AUTO_INCREMENT, v INT) ENGINE=InnoDB;
INSERT INTO pitr2.inc (v) VALUES (1), (2), (3);
SET SESSION auto_increment_increment = DEFAULT, auto_increment_offset = DEFAULT;
SET NAMES latin1;
CREATE TABLE pitr1.l1 (id INT PRIMARY KEY, v VARCHAR(10) DEFAULT 'caf\xe9') ENGINE=InnoDB
    DEFAULT CHARSET=utf8mb4;
INSERT INTO pitr1.l1 (id) VALUES (1);
CREATE TABLE pitr1.gen (id INT PRIMARY KEY, a VARCHAR(10),
    c VARCHAR(20) AS (CONCAT(CHARSET('x'), 'é')) PERSISTENT) ENGINE=InnoDB;
INSERT INTO pitr1.gen (id, a) VALUES (1, 'z');
CREATE VIEW pitr1.v AS SELECT id, CONCAT(v, 'é') AS w, COLLATION('x') AS k FROM pitr1.l1;
SET NAMES utf8mb4;
SET SESSION explicit_defaults_for_timestamp = 0;
CREATE TABLE pitr2.ts_implicit (id INT PRIMARY KEY, t TIMESTAMP) ENGINE=InnoDB;
SET SESSION explicit_defaults_for_timestamp = DEFAULT;
INSERT INTO pitr2.ts_implicit VALUES (1, '2020-02-02 02:02:02');
CREATE DATABASE pitr3;
CREATE TABLE pitr3.d (id INT PRIMARY KEY, v INT) ENGINE=InnoDB;
INSERT INTO pitr3.d VALUES (1, 1), (2, 2), (3, 3);
ALTER TABLE pitr1.a ADD COLUMN extra INT NOT NULL DEFAULT 5, ADD INDEX iv (v);
UPDATE pitr1.a SET extra = extra + id, v = CONCAT(v, '!');
INSERT INTO pitr1.a VALUES (3, 'three', 0);
RENAME TABLE pitr2.b TO pitr2.b_renamed;
UPDATE pitr2.b_renamed SET n = n + 1 WHERE n = 10;
DELETE FROM pitr3.d WHERE id = 2;
CREATE INDEX iv ON pitr3.d (v);
ALTER TABLE pitr3.d ADD COLUMN added TIMESTAMP(6) NOT NULL DEFAULT CURRENT_TIMESTAMP(6);
DROP TABLE pitr2.c;
CREATE TABLE pitr2.c (id INT PRIMARY KEY, again INT) ENGINE=InnoDB;
INSERT INTO pitr2.c VALUES (5, 5);
DELIMITER //
CREATE PROCEDURE pitr1.bump() BEGIN UPDATE pitr3.d SET v = v + 100; UPDATE pitr3.d SET v = v + 1; END//
DELIMITER ;
CALL pitr1.bump();
CREATE TABLE pitr1.weird (id INT PRIMARY KEY, `a\!b` INT) ENGINE=InnoDB;
INSERT INTO pitr1.weird VALUES (1, 2);
DROP TABLE pitr1.tz;
"""

# the applying client's own session: what a script that leans on the client's defaults breaks under
HOSTILE_CLIENT = ["--default-character-set=latin1", "--init-command=SET SESSION "
                  "sql_mode='NO_BACKSLASH_ESCAPES,ANSI_QUOTES,STRICT_ALL_TABLES'"]
OPTIONS = ["--binlog-row-metadata=FULL", "--binlog-format=ROW", "--default-time-zone=+00:00"]


def tables(db: mariadb.MariaDB) -> dict:
    """{db.table: (SHOW CREATE TABLE, CHECKSUM)} of the pitr databases' tables, and {db.view:
    (its definition, its collation_connection, its rows)} of their views (a view keeps the
    connection's collation it was made in; its character_set_client is the script's utf8mb4,
    the one thing the UTF-8 script does not carry over)."""
    out = {}
    views = db.sql("SELECT CONCAT(table_schema, '.', table_name) FROM information_schema.views "
                   "WHERE table_schema LIKE 'pitr%' ORDER BY 1").split()
    for name in views:
        schema, view = name.split(".")
        out[name] = (db.sql("SELECT view_definition, collation_connection FROM "
                            f"information_schema.views WHERE table_schema = '{schema}' AND "
                            f"table_name = '{view}'"),
                     db.sql(f"SELECT * FROM `{schema}`.`{view}` ORDER BY 1"))
    names = db.sql("SELECT CONCAT(table_schema, '.', table_name) FROM information_schema.tables "
                   "WHERE table_schema LIKE 'pitr%' AND table_type = 'BASE TABLE' "
                   "ORDER BY 1").split()
    for name in names:
        schema, table = name.split(".")
        create = db.sql(f"SHOW CREATE TABLE `{schema}`.`{table}`").split("\t", 1)[1]
        checksum = db.sql(f"CHECKSUM TABLE `{schema}`.`{table}`").split("\t")[1].strip()
        # the AUTO_INCREMENT counter is not replayed by row events (a row with its logged id
        # moves it to that id + 1, not + auto_increment_increment): mariadb-binlog's replay
        # leaves it so too
        create = re.sub(r" AUTO_INCREMENT=\d+", "", create.replace("\\n", "\n"))
        out[name] = (create, checksum)
    return out


def apply(db: mariadb.MariaDB, script: bytes):
    r = subprocess.run(db._client() + HOSTILE_CLIENT, input=script, capture_output=True)
    assert r.returncode == 0, r.stderr.decode(errors="replace")[-3000:]


def restored(snapshot: bytes) -> mariadb.MariaDB:
    db = mariadb.MariaDB(OPTIONS).start()
    r = subprocess.run(db._client(), input=snapshot, capture_output=True)
    assert r.returncode == 0, r.stderr.decode(errors="replace")[-2000:]
    return db
