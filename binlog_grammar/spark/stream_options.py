"""The options of the `binlog` streaming source (binlog_grammar.spark.streaming), checked: a
mistake is a ValueError naming the option, and no option ever holds the password (password_env or
password_file name where it is). Plain Python: no pyspark.
"""
from __future__ import annotations

import json
import os

from .options import STREAM_OPTIONS, ReadOptions, option_bool

DEFAULTS = {"host": "127.0.0.1", "port": 3306, "heartbeat": 2.0, "connect_timeout": 10.0,
            "read_timeout": 30.0, "reconnect_timeout": 60.0}
# options of the batch source that have no meaning for a stream
FILE_ONLY = ("path", "paths", "plan", "start_position", "stop_position", "start_datetime",
             "stop_datetime", "include_gtids", "exclude_gtids", "split_bytes", "min_partitions",
             "tx_seq_base")
PASSWORD_OPTIONS = ("password", "passwd", "pwd")


def _number(o, key, kind=float):
    v = o.get(key)
    if v is None or str(v).strip() == "":
        return kind(DEFAULTS[key]) if key in DEFAULTS else None
    try:
        x = kind(str(v).strip())
    except ValueError:
        raise ValueError(f"binlog: option {key}: {v!r} is not a number") from None
    if x <= 0:
        raise ValueError(f"binlog: option {key}: {v!r} must be positive")
    return x


class StreamOptions:
    """The stream's options, checked (a mistake is a ValueError naming the option; none of them
    ever holds the password)."""

    def __init__(self, options):
        o = {str(k).lower(): v for k, v in dict(options).items()}
        for k in PASSWORD_OPTIONS:
            if k in o:
                raise ValueError(f"binlog: option {k} is not accepted (Spark shows option values in "
                                 f"plans and logs): give password_env (an environment variable's "
                                 f"name) or password_file")
        for k in FILE_ONLY:
            if o.get(k) not in (None, ""):
                raise ValueError(f"binlog: option {k} is for files (spark.read); a stream reads a "
                                 f"server's binlog from starting_offsets")
        if (o.get("content") or "changes").lower() != "changes":
            raise ValueError("binlog: option content: a stream gives row changes only")
        self.raw = o
        self.host = str(o.get("host") or DEFAULTS["host"]).strip()
        self.port = int(_number(o, "port", int))
        if not 0 < self.port < 65536:
            raise ValueError(f"binlog: option port: {self.port} is not a TCP port")
        self.server = f"{self.host}:{self.port}"
        self.user = o.get("user")
        if not self.user:
            raise ValueError("binlog: option user is missing (a stream reads a server: give host, "
                             "port, user and password_env or password_file; to read files, give "
                             "load(paths))")
        self.password_env = o.get("password_env") or None
        self.password_file = o.get("password_file") or None
        if self.password_env and self.password_file:
            raise ValueError("binlog: give password_env or password_file, not both")
        self.server_id = _number(o, "server_id", int)
        self.heartbeat = _number(o, "heartbeat")
        self.connect_timeout = _number(o, "connect_timeout")
        self.read_timeout = _number(o, "read_timeout")
        self.reconnect_timeout = _number(o, "reconnect_timeout")
        from ..replication import TLSOptions

        try:
            self.tls = TLSOptions(str(o.get("ssl_mode") or "preferred").lower(), o.get("ssl_ca") or None,
                                  o.get("ssl_cert") or None, o.get("ssl_key") or None)
        except ValueError as e:
            raise ValueError(f"binlog: option ssl_mode: {e}") from None
        self.server_public_key = o.get("server_public_key") or None
        self.get_server_public_key = option_bool(o, "get_server_public_key", False)
        self.starting = parse_start(o.get("starting_offsets") or "latest")
        # the row options, through the batch source's own parser (its file check satisfied)
        self.row_options = {k: v for k, v in o.items() if k not in ("path", "paths", "plan")}
        self.row_options["path"] = f"binlog://{self.server}"
        self.rows = ReadOptions(self.row_options, also=STREAM_OPTIONS)

    def secret(self):
        """The password, read now from password_env or password_file (a replication.Secret)."""
        from ..replication import Secret

        if self.password_env:
            v = os.environ.get(self.password_env)
            if v is None:
                raise ValueError(f"binlog: option password_env: the environment variable "
                                 f"{self.password_env} is not set in this process (the Spark driver "
                                 f"and every executor need it; in local mode set it before the "
                                 f"SparkSession starts) - or use password_file")
            return Secret(v)
        if self.password_file:
            try:
                with open(self.password_file, "rb") as fh:
                    data = fh.read()
            except OSError as e:
                raise ValueError(f"binlog: option password_file: {self.password_file}: "
                                 f"{e.strerror or e}") from None
            if data.endswith(b"\n"):
                data = data[:-2] if data.endswith(b"\r\n") else data[:-1]
            return Secret(data)
        return Secret(b"")

    def connection(self):
        from ..replication import Connection

        return Connection(self.host, self.port, self.user, tls=self.tls,
                          connect_timeout=self.connect_timeout, read_timeout=self.read_timeout,
                          server_public_key=self.server_public_key,
                          get_server_public_key=self.get_server_public_key,
                          secret=self.secret()).connect()

    def source(self, **kw):
        """A replication.ReplicationSource with these options (`kw`: where to start and stop)."""
        from ..replication import ReplicationSource

        return ReplicationSource(
            self.host, self.port, self.user, self.secret(), server_id=self.server_id,
            heartbeat=self.heartbeat, connect_timeout=self.connect_timeout,
            read_timeout=self.read_timeout, reconnect=True, reconnect_timeout=self.reconnect_timeout,
            tls=self.tls, server_public_key=self.server_public_key,
            get_server_public_key=self.get_server_public_key,
            verify_checksum=self.rows.verify_checksum, **kw)


def parse_start(text) -> dict:
    """starting_offsets: {"kind": "latest"|"earliest"} or {"kind": "at", "file", "pos"}."""
    s = str(text).strip()
    if s.lower() in ("latest", "earliest"):
        return {"kind": s.lower()}
    if s.startswith("{"):
        try:
            d = json.loads(s)
            return {"kind": "at", "file": str(d["file"]), "pos": int(d["pos"])}
        except (ValueError, KeyError, TypeError):
            pass
    else:
        file, sep, pos = s.rpartition(":")
        if sep and file and pos.strip().isdigit():
            return {"kind": "at", "file": file.strip(), "pos": int(pos)}
    raise ValueError(f"binlog: option starting_offsets: {s!r} (latest, earliest, FILE:POS or "
                     f'{{"file": ..., "pos": ...}})')


