"""The `binlog` data source's options (spark.read.format("binlog").option(...)), checked: a
mistake is a ValueError naming the option. Plain Python: no pyspark, and no grammar either (the
`specs` option has to be applied before the generated modules load; see batch.use_grammar)."""
from __future__ import annotations

import datetime as dt
import difflib
import json
import re
from typing import Optional

DEFAULT_SPLIT_BYTES = 64 << 20  # the data source's split_bytes when none is given
ERROR_MARK = "[binlog-grammar] "  # starts the message of an error about the input (pipeline shows it)
_MARKED = re.compile(re.escape(ERROR_MARK) + r"(.*)")


# ---------------------------------------------------------------------------------------------
# options

_TRUE = {"true", "1", "yes", "on"}
_FALSE = {"false", "0", "no", "off"}

# The options of spark.read.format("binlog") a user gives, with their defaults as docs/spark.md
# shows them (a test holds the two equal). Spark lower-cases option names before the source sees
# them, so `skipDamaged` is `skipdamaged`: both spellings are taken.
OPTIONS = {
    "path": "", "paths": "", "tables": "", "exclude_tables": "", "databases": "",
    "start_position": "", "stop_position": "", "start_datetime": "", "stop_datetime": "",
    "include_gtids": "", "exclude_gtids": "", "verify_checksum": "true", "table": "",
    "schema": "", "split_bytes": str(64 << 20), "min_partitions": "0", "specs": "",
    "content": "changes", "image_format": "map", "skip_damaged": "false", "mode": "FAILFAST",
    "envelope": "native",
}
DEBEZIUM_PREFIX = "debezium."  # debezium.KEY: the Debezium writer's option KEY (envelope debezium)
# given by the pipeline (binlog_grammar.spark.job); with_tables: the change rows with a row for
# each table definition among them (arrow_rows.DefinitionRows), so the pipeline reads the binlogs once
INTERNAL = ("plan", "tx_seq_base", "with_tables")
# object storage's endpoint and credentials (binlog_grammar.spark.fs; docs/spark.md)
STORAGE = ("s3.endpoint", "s3.access_key", "s3.secret_key", "s3.session_token", "s3.region",
           "s3.path_style")
# the streaming source's own options (binlog_grammar.spark.stream_options), with the row options
STREAM_OPTIONS = ("host", "port", "user", "password_env", "password_file", "server_id",
                  "heartbeat", "connect_timeout", "read_timeout", "reconnect_timeout", "ssl_mode",
                  "ssl_ca", "ssl_cert", "ssl_key", "server_public_key", "get_server_public_key",
                  "starting_offsets")
# spark.read's mode option, as Spark's file sources mean it: FAILFAST stops at the first damaged
# event; PERMISSIVE and DROPMALFORMED go on past it (skip_damaged)
MODES = {"failfast": False, "permissive": True, "dropmalformed": True}


class ReadOptions:
    """The data source's options, checked (a mistake is a ValueError naming the option)."""

    def __init__(self, options, also=()):
        o = {str(k).lower(): v for k, v in dict(options).items()}
        check_names(o, also)
        self.raw = o
        paths = []
        if o.get("paths"):
            try:
                paths = json.loads(o["paths"])
            except ValueError:
                paths = [o["paths"]]
        if o.get("path"):
            paths = [o["path"]] + [p for p in paths if p != o["path"]]
        self.paths = [str(p) for p in paths]
        self.plan = json.loads(o["plan"]) if o.get("plan") else None
        if not self.paths and not self.plan:
            raise ValueError("binlog: give the files: load(path), load([paths]) or a glob")
        self.tables = _list(o.get("tables"))
        self.exclude_tables = _list(o.get("exclude_tables"))
        self.databases = _list(o.get("databases"))
        self.start_position = _int(o, "start_position")
        self.stop_position = _int(o, "stop_position")
        self.start_datetime = _datetime(o, "start_datetime")
        self.stop_datetime = _datetime(o, "stop_datetime")
        self.include_gtids = o.get("include_gtids") or None
        self.exclude_gtids = o.get("exclude_gtids") or None
        self.verify_checksum = option_bool(o, "verify_checksum", True)
        self.table = o.get("table") or None
        # (db, table) of the option table, as the rows give the names (\xNN: spark/typed.py)
        self.table_name = qualified_table(self.table) if self.table else None
        self.schema = o.get("schema") or None
        self.split_bytes = _int(o, "split_bytes")
        if self.split_bytes is None:
            self.split_bytes = DEFAULT_SPLIT_BYTES
        self.min_partitions = _int(o, "min_partitions") or 0
        self.specs = _list(o.get("specs"))
        self.with_tables = option_bool(o, "with_tables", False)
        self.content = (o.get("content") or "changes").lower()
        if self.content not in ("changes", "tables"):
            raise ValueError(f"binlog: option content: {self.content!r} (changes or tables)")
        self.tx_seq_base = _int(o, "tx_seq_base") or 0
        self.image_format = (o.get("image_format") or "map").strip().lower()
        if self.image_format not in ("map", "json"):
            raise ValueError(f"binlog: option image_format: {self.image_format!r} (map or json)")
        if self.image_format == "json" and self.table:
            raise ValueError("binlog: option image_format: json is a form of the untyped images; "
                             "with the option table they are typed structs")
        self.skip_damaged = _skip_damaged(o)
        self.envelope = (o.get("envelope") or "native").strip().lower()
        self.debezium = {k[len(DEBEZIUM_PREFIX):]: v for k, v in o.items()
                         if k.startswith(DEBEZIUM_PREFIX)}
        if self.envelope not in ("native", "debezium"):
            raise ValueError(f"binlog: option envelope: {self.envelope!r} (native or debezium)")
        if self.envelope == "debezium":
            if self.table or self.content != "changes" or o.get("image_format"):
                raise ValueError("binlog: option envelope: debezium rows are the connector's JSON "
                                 "events; not with table, content or image_format")
            from ..output.debezium import check_options

            try:
                check_options(self.debezium)
            except ValueError as e:
                raise ValueError(f"binlog: option {DEBEZIUM_PREFIX}{e}") from None
        elif self.debezium:
            raise ValueError(f"binlog: option {DEBEZIUM_PREFIX}{next(iter(self.debezium))} is for "
                             f"envelope debezium")

    def filters(self):
        from ..binlog.stream import Filters, GtidSet

        return Filters(self.start_position, self.stop_position, self.start_datetime,
                       self.stop_datetime,
                       GtidSet(self.include_gtids) if self.include_gtids else None,
                       GtidSet(self.exclude_gtids) if self.exclude_gtids else None,
                       self.databases, self.tables, self.exclude_tables)

    def schemas(self) -> Optional[dict]:
        if not self.schema:
            return None
        text = self.schema.strip()
        if text.startswith("{"):
            data = json.loads(text)
        else:
            from ..binlog.rows import load_schemas

            data = load_schemas(text)
        if not isinstance(data, dict):
            raise ValueError("binlog: option schema: a mapping of 'db.table' to a table schema")
        return data


def _canonical(name: str) -> str:
    """An option's name as OPTIONS spells it (`skipdamaged`, as Spark passes `skipDamaged`, is
    `skip_damaged`)."""
    return _FOLDED.get(name.replace("_", ""), name)


_FOLDED = {k.replace("_", ""): k for k in (*OPTIONS, *INTERNAL)}


def check_names(o: dict, also=()) -> None:
    """Refuse an option the source does not know, naming the valid ones and a close match
    (`also`: the streaming source's own options). Names are put in OPTIONS' spelling in `o`."""
    for k in list(o):
        c = _canonical(k)
        if c != k:
            if c in o:
                raise ValueError(f"binlog: option {c} is given twice ({k} and {c})")
            o[c] = o.pop(k)
    known = (*OPTIONS, *INTERNAL, *STORAGE, *also)
    for k in o:
        if k in known or k.startswith(DEBEZIUM_PREFIX):
            continue
        if k in STREAM_OPTIONS:
            raise ValueError(f"binlog: option {k} is for a live server (spark.readStream, with no "
                             f"path); files are read with load(paths)")
        close = difflib.get_close_matches(k, [*OPTIONS, *also], n=1, cutoff=0.6)
        hint = f" (did you mean {close[0]}?)" if close else ""
        raise ValueError(f"binlog: unknown option {k}{hint}; the options are "
                         f"{', '.join(sorted((*OPTIONS, *also)))} (docs/spark.md)")


def _skip_damaged(o) -> bool:
    """skip_damaged, or what mode says of it (both given: they must agree)."""
    skip = option_bool(o, "skip_damaged", None)
    mode = o.get("mode")
    if mode is None or str(mode).strip() == "":
        return bool(skip)
    m = str(mode).strip().lower()
    if m not in MODES:
        raise ValueError(f"binlog: option mode: {mode!r} (FAILFAST, PERMISSIVE or DROPMALFORMED)")
    if skip is not None and skip != MODES[m]:
        raise ValueError(f"binlog: options mode {mode} and skip_damaged {o['skip_damaged']} "
                         f"disagree (FAILFAST is skip_damaged false, PERMISSIVE and "
                         f"DROPMALFORMED are true)")
    return MODES[m]


# the option table with a name in backquotes: `db`.t, db.`t`, `db`.`t` (a backquote in it doubled)
_QUALIFIED = re.compile(r"(?:`((?:[^`]|``)*)`|([^.`]+))\.(?:`((?:[^`]|``)*)`|([^`]+))")


def qualified_table(text: str) -> tuple:
    """(db, table) of the option table's text: `db.table`, split at the first dot, or with
    either name backquoted as MySQL quotes it (a backquote in it doubled), for a name with a dot
    or a backquote in it, or an empty one: `a.b`.c, ``.t."""
    if "`" not in text:
        db, dot, table = text.partition(".")
        if not dot:
            raise ValueError(f"binlog: option table: {text!r} is not db.table")
        return db, table
    m = _QUALIFIED.fullmatch(text)
    if m is None:
        raise ValueError(f"binlog: option table: {text!r} is not db.table (a name with a dot or "
                         f"a backquote in it backquoted: `a.b`.`c`)")
    db = m.group(2) if m.group(1) is None else m.group(1).replace("``", "`")
    table = m.group(4) if m.group(3) is None else m.group(3).replace("``", "`")
    return db, table


def _list(v) -> list:
    if not v:
        return []
    if isinstance(v, (list, tuple)):
        return [str(x) for x in v]
    v = str(v).strip()
    if v.startswith("["):
        return [str(x) for x in json.loads(v)]
    return [x.strip() for x in v.split(",") if x.strip()]


def _int(o, key):
    v = o.get(key)
    if v is None or str(v).strip() == "":
        return None
    try:
        return int(str(v).strip())
    except ValueError:
        raise ValueError(f"binlog: option {key}: {v!r} is not an integer") from None


def option_bool(o, key, default):
    v = o.get(key)
    if v is None:
        return default
    s = str(v).strip().lower()
    if s in _TRUE:
        return True
    if s in _FALSE:
        return False
    raise ValueError(f"binlog: option {key}: {v!r} is not true or false")


def _datetime(o, key):
    v = o.get(key)
    if not v:
        return None
    try:
        d = dt.datetime.fromisoformat(str(v).strip().replace("Z", "+00:00"))
    except ValueError:
        raise ValueError(f"binlog: option {key}: {v!r} is not an ISO date-time") from None
    return d



def bad_input(e) -> RuntimeError:
    return RuntimeError(f"{ERROR_MARK}{e}")


def marked_message(text: str) -> Optional[str]:
    """The message of an error about the input (bad_input) found in `text`, such as what Spark
    says of a failed job or query; None when there is none."""
    m = _MARKED.search(text)
    return m.group(1).strip() if m else None
