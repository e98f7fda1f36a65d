"""The `binlog` source's inputs on any filesystem a cluster uses, through pyarrow's filesystems.

Local paths and `file:` URIs are read where they are. `s3://`, `s3a://`, `s3n://`, `gs://`,
`gcs://`, `abfs://`, `abfss://`, `hdfs://` and `viewfs://` URIs are listed on the driver (a single
object, a folder: every object under the prefix that begins with the binlog magic bytes, a glob,
an `.index` object) and read on the executors by ranged reads: a split copies into a sparse local
file only the bytes its reader touches (the file's first event, the FORMAT_DESCRIPTION_EVENT in
force and the split's own range), so the plain-file readers of binlog_grammar.binlog read it
unchanged. The driver's header scan copies the whole object once per process.

Endpoint and credentials: the data-source options `s3.endpoint`, `s3.access_key`,
`s3.secret_key`, `s3.session_token`, `s3.region`, `s3.path_style`, then the environment
(`AWS_ENDPOINT_URL`, `AWS_ENDPOINT_URL_S3`, `AWS_ACCESS_KEY_ID`, `AWS_SECRET_ACCESS_KEY`,
`AWS_SESSION_TOKEN`, `AWS_REGION`, `AWS_DEFAULT_REGION`), then Spark's `spark.hadoop.fs.s3a.*`
settings when a session is active. They are resolved on the driver and travel in the reader
(pickled into the job's plan): the workers' environment is never needed.
"""
from __future__ import annotations

import fnmatch
import functools
import glob as _glob
import hashlib
import os
import tempfile
import threading
from typing import Optional
from urllib.parse import urlsplit

from ..errors import BinlogError

REMOTE = ("s3", "s3a", "s3n", "gs", "gcs", "abfs", "abfss", "hdfs", "viewfs")
MAGIC = b"\xfebin"
HEAD = 64 << 10  # bytes fetched from a file's start (its magic and FORMAT_DESCRIPTION_EVENT)
STORAGE_KEYS = ("s3.endpoint", "s3.access_key", "s3.secret_key", "s3.session_token", "s3.region",
                "s3.path_style")
_ENV = {"s3.endpoint": ("AWS_ENDPOINT_URL_S3", "AWS_ENDPOINT_URL"),
        "s3.access_key": ("AWS_ACCESS_KEY_ID",), "s3.secret_key": ("AWS_SECRET_ACCESS_KEY",),
        "s3.session_token": ("AWS_SESSION_TOKEN",), "s3.region": ("AWS_REGION", "AWS_DEFAULT_REGION")}
_HADOOP = {"s3.endpoint": "spark.hadoop.fs.s3a.endpoint",
           "s3.access_key": "spark.hadoop.fs.s3a.access.key",
           "s3.secret_key": "spark.hadoop.fs.s3a.secret.key",
           "s3.session_token": "spark.hadoop.fs.s3a.session.token",
           "s3.region": "spark.hadoop.fs.s3a.endpoint.region",
           "s3.path_style": "spark.hadoop.fs.s3a.path.style.access"}

_conf: dict = {}
_lock = threading.Lock()
_copies: dict = {}


def scheme(path: str) -> str:
    s = urlsplit(str(path)).scheme.lower()
    return s if len(s) > 1 else ""  # C:\ is not a scheme


def is_remote(path: str) -> bool:
    return scheme(path) in REMOTE


def resolve(options: dict) -> dict:
    """The storage settings of a read: the options, else the environment, else Spark's
    spark.hadoop.fs.s3a.* settings of the active session (driver side; the result is what the
    executors use)."""
    o = {str(k).lower(): v for k, v in dict(options).items()}
    out = {k: str(o[k]) for k in STORAGE_KEYS if o.get(k) not in (None, "")}
    for k, names in _ENV.items():
        if k not in out:
            v = next((os.environ[n] for n in names if os.environ.get(n)), None)
            if v:
                out[k] = v
    if any(k not in out for k in _HADOOP):
        try:
            from pyspark.sql import SparkSession

            s = SparkSession.getActiveSession()
            conf = s.sparkContext.getConf() if s is not None else None
        except Exception:  # noqa: BLE001 - no session in this process (a Python worker)
            conf = None
        for k, name in _HADOOP.items():
            if k not in out and conf is not None and conf.get(name):
                out[k] = conf.get(name)
    return out


def configure(settings: Optional[dict]) -> None:
    """Use these storage settings in this process (the reader calls it on each task)."""
    if settings and settings != _conf:
        _conf.clear()
        _conf.update(settings)
        _filesystem.cache_clear()


def _filesystem_for(sch: str, netloc: str):
    conf = _conf or resolve({})  # nothing configured (the pipeline's driver): the environment
    return _filesystem(sch, netloc, tuple(sorted(conf.items())))


def _make_s3(conf: dict):
    from pyarrow import fs as pafs

    kw = {}
    ep = conf.get("s3.endpoint")
    if ep:
        u = urlsplit(ep if "://" in ep else "https://" + ep)
        kw["endpoint_override"] = u.netloc + u.path.rstrip("/")
        kw["scheme"] = u.scheme or "https"
    if conf.get("s3.access_key"):
        kw["access_key"] = conf["s3.access_key"]
        kw["secret_key"] = conf.get("s3.secret_key", "")
        if conf.get("s3.session_token"):
            kw["session_token"] = conf["s3.session_token"]
    kw["region"] = conf.get("s3.region") or "us-east-1"
    if str(conf.get("s3.path_style", "")).lower() in ("true", "1", "yes"):
        kw["force_virtual_addressing"] = False
    return pafs.S3FileSystem(**kw)


@functools.lru_cache(maxsize=16)
def _filesystem(sch: str, netloc: str, conf: tuple):
    from pyarrow import fs as pafs

    c = dict(conf)
    if sch in ("s3", "s3a", "s3n"):
        return _make_s3(c)
    if sch in ("gs", "gcs"):
        return pafs.GcsFileSystem()
    return pafs.FileSystem.from_uri(f"{sch}://{netloc}/")[0]


def _split(uri: str):
    """(filesystem, path inside it) of a remote URI."""
    u = urlsplit(uri)
    sch = u.scheme.lower()
    if sch in ("s3", "s3a", "s3n", "gs", "gcs"):
        return _filesystem_for(sch, u.netloc), (u.netloc + u.path).rstrip("/")
    return _filesystem_for(sch, u.netloc), u.path


def _uri(like: str, path: str) -> str:
    u = urlsplit(like)
    if u.scheme.lower() in ("s3", "s3a", "s3n", "gs", "gcs"):
        return f"{u.scheme}://{path}"
    return f"{u.scheme}://{u.netloc}{path}"


def _fail(uri, e) -> BinlogError:
    text = str(e).strip().splitlines()[0] if str(e).strip() else type(e).__name__
    return BinlogError(text, uri)


def info(uri: str):
    from pyarrow import fs as pafs

    fs, p = _split(uri)
    try:
        i = fs.get_file_info(p)
    except OSError as e:
        raise _fail(uri, e) from None
    if i.type == pafs.FileType.NotFound:
        raise BinlogError("No such file or directory", uri)
    return i


def size(uri: str) -> int:
    return info(uri).size


def read_range(uri: str, start: int, length: int) -> bytes:
    fs, p = _split(uri)
    try:
        with fs.open_input_file(p) as fh:
            return fh.read_at(length, start) if length > 0 else b""
    except OSError as e:
        raise _fail(uri, e) from None


def _is_binlog(uri: str) -> bool:
    try:
        return read_range(uri, 0, len(MAGIC)) == MAGIC
    except BinlogError:
        return False


def expand(item: str, order) -> list:
    """The URIs of a remote input: an object, a folder's binlogs (recursive), a glob's matches,
    an `.index` object's list. `order(uris)` sorts them in binlog order."""
    from pyarrow import fs as pafs

    fs, p = _split(item)
    if _glob.has_magic(p):
        root = p
        while _glob.has_magic(root):
            root = root.rsplit("/", 1)[0]
        try:
            found = fs.get_file_info(pafs.FileSelector(root, recursive=True, allow_not_found=True))
        except OSError as e:
            raise _fail(item, e) from None
        hits = [f.path for f in found if f.type == pafs.FileType.File
                and fnmatch.fnmatchcase(f.path, p)]
        out = [_uri(item, h) for h in hits if not h.endswith((".index", ".state"))
               or _is_binlog(_uri(item, h))]
        if not out:
            raise BinlogError("no file matches this pattern", item)
        return order(out)
    i = info(item)
    if i.type == pafs.FileType.Directory:
        found = fs.get_file_info(pafs.FileSelector(p, recursive=True))
        out = [u for u in (_uri(item, f.path) for f in found if f.type == pafs.FileType.File)
               if _is_binlog(u)]
        if not out:
            raise BinlogError("no binlog file in this folder (none begins with the binlog magic "
                              "bytes fe 62 69 6e)", item)
        return order(out)
    if p.endswith(".index"):
        text = read_range(item, 0, i.size).decode("utf-8", "replace")
        base = item.rsplit("/", 1)[0]
        return [base + "/" + n.strip().replace("\\", "/").rsplit("/", 1)[-1]
                for n in text.splitlines() if n.strip()]
    return [item]


def local_copy(uri: str, ranges=None) -> str:
    """A local file holding the object's bytes: all of them (ranges None), or only `ranges`
    ((start, stop) pairs; stop None: the end) in a sparse file of the object's size. Kept per
    process under the temporary folder; the same request gives the same file."""
    total = size(uri)
    want = [(0, total)] if ranges is None else sorted(
        (max(0, a), total if b is None else min(b, total)) for a, b in ranges)
    key = hashlib.sha1(repr((uri, total, want)).encode()).hexdigest()[:20]
    with _lock:
        path = _copies.get(key)
        if path and os.path.exists(path):
            return path
    folder = os.path.join(tempfile.gettempdir(), f"binlog-grammar-remote-{os.getpid()}")
    os.makedirs(folder, exist_ok=True)
    path = os.path.join(folder, key + "." + uri.rstrip("/").rsplit("/", 1)[-1][-40:])
    fs, p = _split(uri)
    tmp = path + ".part"
    try:
        with fs.open_input_file(p) as src, open(tmp, "wb") as dst:
            dst.truncate(total)
            for a, b in want:
                pos = a
                while pos < b:
                    chunk = src.read_at(min(8 << 20, b - pos), pos)
                    if not chunk:
                        break
                    dst.seek(pos)
                    dst.write(chunk)
                    pos += len(chunk)
    except OSError as e:
        raise _fail(uri, e) from None
    os.replace(tmp, path)
    with _lock:
        _copies[key] = path
    return path


def split_copy(uri: str, start: int, stop: Optional[int], fde_pos: Optional[int]) -> str:
    """A local sparse copy of what reading one split touches: the file's head, the
    FORMAT_DESCRIPTION_EVENT in force and [start, stop)."""
    ranges = [(0, HEAD), (start, None if stop is None else stop + HEAD)]
    if fde_pos is not None:
        ranges.append((fde_pos, fde_pos + HEAD))
    return local_copy(uri, ranges)


def input_key(path: str) -> str:
    """What the pipeline's state names an input by: a remote input's URI, a local file's
    absolute path."""
    return str(path) if is_remote(path) else os.path.abspath(path)


def input_size(path: str) -> int:
    return size(path) if is_remote(path) else os.path.getsize(path)


def check_readable(path: str) -> None:
    """OSError when the input cannot be read (remote: its first bytes)."""
    if is_remote(path):
        try:
            read_range(path, 0, len(MAGIC))
        except BinlogError as e:
            raise OSError(str(e)) from None
        return
    with open(path, "rb"):
        pass


def storage_options(paths) -> dict:
    """The s3.* read options carrying this process's storage settings (the environment, Spark's
    s3a settings) to the executors, when any of `paths` is remote; {} otherwise."""
    if not any(is_remote(p) for p in paths):
        return {}
    return dict(_conf) if _conf else resolve({})
