"""What the binlog's DDL declared that its rows events do not say (binlog_grammar/output/
debezium_ddl.py), for the Debezium envelope's schemas: MariaDB's JSON columns (logged as
LONGTEXT) and each column's DEFAULT, written as the connector writes the field's `default`
(tests/debezium/ judges both against the real connector on drawn tables)."""
import datetime as dt

from binlog_grammar.output.debezium_ddl import Column, DeclaredColumns
from binlog_grammar.output.debezium_schema import default_value
from binlog_grammar.output.debezium_values import Settings

CREATE = ("CREATE TABLE IF NOT EXISTS `we``ird`.t (`id` INT NOT NULL PRIMARY KEY, "
          "`j` JSON, n BIGINT NOT NULL DEFAULT -9223372036854775808, "
          "d DECIMAL(5,2) DEFAULT '-1.50' INVISIBLE, s varchar(9) DEFAULT 'a''b\\\\c,d', "
          "b binary(2) DEFAULT X'0aFF', bits bit(3) default b'101', "
          "ts timestamp(3) not null default current_timestamp(3) on update current_timestamp(3), "
          "f float default -2.25, e int default (1+2), dd date DEFAULT NULL, "
          "tm TIME DEFAULT '-838:59:59', st SET('x','y') DEFAULT 'y,x', "
          "note TEXT COMMENT 'not a JSON', KEY k (n), CHECK (json_valid(j)))")


def test_create_table_gives_types_and_defaults():
    ddl = DeclaredColumns()
    ddl.see(CREATE, "other")
    t = ddl.get("we`ird", "T")
    assert ddl.json("we`ird", "t") == {"j"}
    assert t["n"] == Column("BIGINT", ("num", "-9223372036854775808"))
    assert t["d"].default == ("str", "'-1.50'") and t["s"].default == ("str", "'a''b\\\\c,d'")
    assert t["b"].default == ("hex", "0aff") and t["bits"].default == ("bits", "101")
    assert t["ts"].default == ("now", "CURRENT_TIMESTAMP")
    assert t["e"].default is None and t["dd"].default is None and t["note"].type == "TEXT"
    assert set(t) == {"id", "j", "n", "d", "s", "b", "bits", "ts", "f", "e", "dd", "tm", "st",
                      "note"}


def test_alter_rename_like_and_drop_follow_the_table():
    ddl = DeclaredColumns()
    ddl.see("CREATE TABLE t (a INT, j JSON, k TEXT)", "db")
    ddl.see("ALTER TABLE t ADD COLUMN m JSON, MODIFY j TEXT, CHANGE k `k 2` JSON, "
            "ALTER a SET DEFAULT 5, ADD INDEX (a), DROP COLUMN IF EXISTS zz", "db")
    assert ddl.json("db", "t") == {"m", "k 2"} and ddl.get("db", "t")["a"].default == ("num", "5")
    ddl.see("ALTER TABLE db.t RENAME TO db.u", None)
    assert ddl.get("db", "t") == {} and ddl.json("db", "u") == {"m", "k 2"}
    ddl.see("CREATE TABLE v LIKE u", "db")
    assert ddl.json("db", "v") == {"m", "k 2"}
    ddl.see("DROP TABLE IF EXISTS db.u, v", "db")
    assert ddl.tables == {}
    for cut in ("CREATE TABLE t (a JSON", "ALTER TABLE", "CREATE TABLE", "DROP", ""):
        ddl.see(cut, "db")  # nothing learned, nothing raised


def _col(name, real_type, **kw):
    from binlog_grammar.binlog.rows import Column as RowColumn

    return RowColumn(index=0, name=name, real_type=real_type, type=real_type, nullable=True, **kw)


def test_defaults_are_written_as_the_columns_values():
    s = Settings()
    assert default_value(_col("n", 8), ("num", "-9223372036854775808"), s) == -2**63
    assert default_value(_col("d", 246, meta={"precision": 5, "scale": 2}), ("str", "'-1.50'"),
                         s) == "/2o="  # -150, two's complement
    assert default_value(_col("d", 246, meta={"precision": 5, "scale": 2}), ("str", "'-1.50'"),
                         Settings(decimal_mode="string")) == "-1.50"
    assert default_value(_col("s", 15, charset="utf8mb4"), ("str", "'a''b\\\\c,d'"), s) == "a'b\\c,d"
    assert default_value(_col("b", 254, charset="binary"), ("hex", "0aff"), s) == "Cv8="
    assert default_value(_col("bits", 16, meta={"bits": 3, "bytes": 0}), ("bits", "101"), s) == "BQ=="
    assert default_value(_col("ts", 17, fsp=3), ("now", "CURRENT_TIMESTAMP"), s) == \
        "1970-01-01T00:00:00.000Z"
    assert default_value(_col("dt", 18, fsp=0), ("str", "'2001-02-03 04:05:06'"), s) == \
        int((dt.datetime(2001, 2, 3, 4, 5, 6) - dt.datetime(1970, 1, 1)).total_seconds() * 1000)
    assert default_value(_col("dd", 10), ("str", "'2001-02-03'"), s) == \
        (dt.date(2001, 2, 3) - dt.date(1970, 1, 1)).days
    assert default_value(_col("tm", 19, fsp=0), ("str", "'-838:59:59'"), s) == -3020399000000
    assert default_value(_col("st", 248, set_values=["x", "y"]), ("str", "'y,x'"), s) == "x,y"
    assert default_value(_col("f", 4), ("num", "-2.25"), s) == -2.25
    assert default_value(_col("n", 3), ("str", "'not a number'"), s) is None
