"""What the commands share on the command line: the checks that turn an option's text into a
value (positions, dates and times, GTID sets, numbers, folders, schema files), the reading
options of dump, stats, sql and flashback, and the options that each parse but together make no
sense.

A check raises argparse.ArgumentTypeError with one line saying what is wrong; argparse prints it
as the command's usage error (exit status 2). UsageError is the same kind of problem found only
when the command runs (a --schema file that does not make schemas); main() prints it and exits 2.
"""
from __future__ import annotations

import argparse
import re
import sys
from pathlib import Path


class UsageError(Exception):
    """A usage problem found when the command runs: main() prints it and exits with status 2."""


# ---------------------------------------------------------------------------------------------
# checks (argparse types)

def datetime_arg(text):
    """--start-datetime, --stop-datetime: a date and time as mysqlbinlog reads it (cli.datetimes:
    MariaDB's forms, in the local zone or UTC under --utc, which contradictions() applies once
    every option is known), or an ISO text with an offset."""
    from .datetimes import parse

    try:
        return parse(text)
    except ValueError as e:
        raise argparse.ArgumentTypeError(
            f"not a date and time: {text!r}: {e} (write 2026-11-26 06:39:30)")


def gtid_set(text):
    """--include-gtids, --exclude-gtids: a binlog.stream.GtidSet (MySQL or MariaDB GTIDs)."""
    from ..binlog.stream import GtidSet

    try:
        gs = GtidSet(text)
    except ValueError as e:
        raise argparse.ArgumentTypeError(str(e))
    check_intervals(text, [(f"{u}{':' + t if t else ''}", lo, hi)
                           for (u, t), ivs in gs.mysql.items() for lo, hi in ivs], True)
    check_intervals(text, [(f"{d}-{s}", lo, hi) for d, s, lo, hi in gs.mariadb], False)
    return gs


def check_intervals(text, intervals, mysql):
    """A GTID interval runs from its first number to its last: `uuid:5-1` or `0-1-5-1` is empty,
    and MySQL numbers transactions from 1."""
    for where, lo, hi in intervals:
        if lo > hi:
            raise argparse.ArgumentTypeError(
                f"{text!r}: the interval {lo}-{hi} of {where} ends before it begins")
        if mysql and lo < 1:
            raise argparse.ArgumentTypeError(
                f"{text!r}: MySQL numbers the transactions of {where} from 1, not {lo}")


def gtid_position(text):
    """stream --gtid: MariaDB `domain-server-seq,...` or a MySQL GTID set `uuid[:tag]:1-5:7,...`."""
    from ..replication import MARIADB_GTID, MYSQL_GTID_PART, MariaDBGtidState, MySQLGtidSet

    parts = [p for p in text.replace("\n", ",").split(",") if p.strip()]
    try:
        if MARIADB_GTID.match(parts[0] if parts else ""):
            MariaDBGtidState(text)
            return text
        MySQLGtidSet(text)
    except ValueError as e:
        raise argparse.ArgumentTypeError(str(e))
    intervals = []
    for part in parts:
        m = MYSQL_GTID_PART.match(part)
        for iv in m[3].split(":")[1:]:
            lo, _, hi = iv.partition("-")
            intervals.append((m[1] + m[2], int(lo), int(hi or lo)))
    check_intervals(text, intervals, True)
    return text


def int_in(lo, hi=None, what="a number"):
    """An int type for argparse: at least `lo`, at most `hi` (None: no upper bound)."""

    def conv(text):
        try:
            n = int(text)
        except ValueError:
            raise argparse.ArgumentTypeError(f"not a whole number: {text!r}") from None
        if n < lo or (hi is not None and n > hi):
            span = f"from {lo} to {hi}" if hi is not None else f"{lo} or more"
            raise argparse.ArgumentTypeError(f"{what} is {span}, not {n}")
        return n

    conv.__name__ = "int"
    return conv


def seconds(minimum_exclusive=True):
    """A float type for argparse: a finite number of seconds, more than 0 (or 0 or more)."""

    def conv(text):
        import math

        try:
            x = float(text)
        except ValueError:
            raise argparse.ArgumentTypeError(f"not a number of seconds: {text!r}") from None
        if not math.isfinite(x) or x < 0 or (minimum_exclusive and x == 0):
            more = "more than 0" if minimum_exclusive else "0 or more"
            raise argparse.ArgumentTypeError(f"a number of seconds is {more}, not {text}")
        return x

    conv.__name__ = "float"
    return conv


def spec_dir(text):
    """A folder of spec files (--specs, --extra-specs)."""
    p = Path(text)
    if not p.exists():
        raise argparse.ArgumentTypeError(f"{text}: no such folder")
    if not p.is_dir():
        raise argparse.ArgumentTypeError(f"{text}: not a folder of spec files (*.yaml)")
    if not any(p.rglob("*.yaml")):
        raise argparse.ArgumentTypeError(f"{text}: no spec files (*.yaml) in this folder")
    return text


def schema_file(text):
    """--schema: a JSON or YAML file that maps 'db.table' to a table schema. It is read here to
    refuse a file that is not one (one line naming the file, and the line of a parse error); the
    command reads it again."""
    import yaml

    try:
        with open(text, encoding="utf-8") as fh:
            data = yaml.safe_load(fh)
    except OSError as e:
        raise argparse.ArgumentTypeError(f"{text}: {e.strerror or e}") from None
    except UnicodeDecodeError:
        raise argparse.ArgumentTypeError(f"{text}: not a JSON or YAML file (not UTF-8 text)") from None
    except yaml.YAMLError as e:
        mark = getattr(e, "problem_mark", None)
        where = f"{text}:{mark.line + 1}" if mark is not None else text
        what = " ".join(str(getattr(e, "problem", None) or e).split())
        raise argparse.ArgumentTypeError(f"{where}: not a JSON or YAML schema file ({what})") from None
    problem = schema_problem(data)
    if problem:
        raise argparse.ArgumentTypeError(f"{text}: not a schema file: {problem}")
    return text


def schema_problem(data):
    """What makes `data` not a schema mapping ('db.table' -> {columns, primary_key}), or None."""
    if not isinstance(data, dict):
        return "it must map 'db.table' to a table schema"
    for name, t in data.items():
        if not isinstance(name, str) or "." not in name:
            return f"the key {name!r} is not a 'db.table' name"
        if not isinstance(t, dict):
            return f"{name}: a table schema is a mapping with 'columns' (and 'primary_key')"
        cols = t.get("columns") or []
        if not isinstance(cols, list):
            return f"{name}: columns is a list"
        for i, c in enumerate(cols):
            if not isinstance(c, (str, dict)):
                return f"{name}: column {i + 1} is a name or a mapping (name, unsigned, charset, ...)"
        pk = t.get("primary_key") or []
        if not isinstance(pk, list) or not all(isinstance(k, str) for k in pk):
            return f"{name}: primary_key is a list of column names"
    return None


def server_version(text):
    """--server-version: a version the specs know (mysql-8.4.0, mariadb-10.11.6)."""
    from ..runtime.construct import server_version as parse_version

    try:
        parse_version(text)
    except ValueError as e:
        raise argparse.ArgumentTypeError(str(e))
    return text


def position(text):
    """--start-position, --stop-position: N or FILE:N (binlog_grammar.binlog.positions)."""
    from ..binlog.positions import parse_position

    if re.fullmatch(r"\s*-\d+\s*", text):
        raise argparse.ArgumentTypeError(f"a position is 0 or more, not {int(text)}")
    try:
        return parse_position(text)
    except ValueError as e:
        raise argparse.ArgumentTypeError(str(e)) from None


# ---------------------------------------------------------------------------------------------
# option groups

def add_reading_options(p):
    """The input files, filters and reading options of dump, stats, sql and flashback."""
    p.add_argument("files", nargs="+", metavar="FILE",
                   help="binlog files, read in order, or a binlog .index file")
    f = p.add_argument_group("filters (shared by dump, stats, sql, flashback)")
    f.add_argument("--start-position", type=position, metavar="[FILE:]N",
                   help="skip events before offset N of the first file, or of FILE (an input "
                        "file, or the primary's binlog that relay logs name)")
    f.add_argument("--stop-position", type=position, metavar="[FILE:]N",
                   help="stop at the event at or after offset N of the last file, or of FILE")
    f.add_argument("--start-datetime", type=datetime_arg, metavar="DATETIME",
                   help="skip events before this time, in the local time zone (TZ) unless --utc "
                        "or an offset is given; mysqlbinlog's forms (2026-11-26 6:39:30, "
                        "20261126063930, ...)")
    f.add_argument("--stop-datetime", type=datetime_arg, metavar="DATETIME",
                   help="stop at the first event at or after this time")
    f.add_argument("--include-gtids", type=gtid_set, help="keep only these transactions (MySQL uuid:1-5 or MariaDB d-s-n)")
    f.add_argument("--exclude-gtids", type=gtid_set, help="drop these transactions")
    f.add_argument("--database", action="append", default=[], help="keep only this database (repeatable)")
    f.add_argument("--table", action="append", default=[], help="keep only db.table (shell patterns; a name without its database is that table in any database; repeatable)")
    f.add_argument("--exclude-table", action="append", default=[], help="drop db.table (shell patterns; repeatable)")
    r = p.add_argument_group("reading")
    r.add_argument("--no-checksum", action="store_true", help="do not verify CRC32s")
    r.add_argument("--skip-damaged", action="store_true",
                   help="step over damaged events to the next valid one and say how many bytes were skipped")
    r.add_argument("--schema", type=schema_file,
                   help="JSON or YAML file of table schemas for binlogs without full metadata")
    r.add_argument("--server-version", type=server_version, metavar="VERSION",
                   help="read as if this server wrote the files (mysql-8.4.0, mariadb-10.11.6), "
                        "instead of the version in their FORMAT_DESCRIPTION_EVENT")
    add_quiet_option(r)
    add_utc_option(r)
    r.add_argument("--follow-rotate", action="store_true",
                   help="after the last file, go on into the file its closing ROTATE_EVENT names "
                        "(when it is in the same folder), and so on")


def add_utc_option(group):
    """--utc: times printed and read in UTC instead of the local zone (as TZ=UTC does)."""
    group.add_argument("--utc", action="store_true",
                       help="print event times and read --start/--stop-datetime in UTC instead "
                            "of the local time zone (as TZ=UTC does; JSON lines are always UTC)")


def add_quiet_option(group):
    """--quiet (and its older name --no-progress): no progress bar, even on a terminal."""
    group.add_argument("--quiet", "--no-progress", dest="no_progress", action="store_true",
                       help="no progress bar on stderr, even on a terminal")


def add_tls_options(group, ssl_mode_help, public_key_help, get_public_key_help):
    """--ssl-mode, --ssl-ca, --ssl-cert, --ssl-key, the server's RSA public key and
    --enable-cleartext-plugin (stream, repair): the mysql client's options, with the help texts
    the command gives."""
    group.add_argument("--ssl-mode", default="preferred",
                       choices=["disabled", "preferred", "required", "verify-ca", "verify-identity"],
                       help=ssl_mode_help)
    group.add_argument("--ssl-ca", help="CA certificates (PEM) for verify-ca / verify-identity")
    group.add_argument("--ssl-cert", help="client certificate (PEM)")
    group.add_argument("--ssl-key", help="client certificate's key (PEM)")
    group.add_argument("--server-public-key", metavar="PEM", help=public_key_help)
    group.add_argument("--get-server-public-key", action="store_true", help=get_public_key_help)
    group.add_argument("--enable-cleartext-plugin", action="store_true",
                       help="send the password itself when the server asks for it "
                            "(mysql_clear_password, or sha256/caching_sha2 full authentication "
                            "over TLS) even though its certificate was not verified (refused "
                            "unless --ssl-mode is verify-ca or verify-identity)")


# ---------------------------------------------------------------------------------------------
# options that contradict each other

def contradictions(args):
    """Options that each parse but together make no sense: what is wrong, or None. A command's
    own such checks are its `contradictions` default (set_defaults), asked after these. First
    --utc is applied and the datetime options become instants (cli.datetimes.resolve)."""
    if getattr(args, "utc", False) or getattr(args, "start_datetime", None) is not None \
            or getattr(args, "stop_datetime", None) is not None:
        from .datetimes import resolve

        resolve(args)
    else:  # nothing to resolve (cli.datetimes, and its clock and zone, not loaded)
        args.datetime_texts = {}
    start, stop = getattr(args, "start_position", None), getattr(args, "stop_position", None)
    if start is not None or stop is not None:
        problem = resolve_positions(args, start, stop)
        if problem:
            return problem
    start, stop = getattr(args, "start_datetime", None), getattr(args, "stop_datetime", None)
    if start is not None and stop is not None and stop <= start:
        texts = getattr(args, "datetime_texts", {})
        return (f"--stop-datetime {texts.get('stop_datetime', stop.isoformat(' '))} "
                f"({stop.isoformat(' ')}) is not after --start-datetime "
                f"{texts.get('start_datetime', start.isoformat(' '))} ({start.isoformat(' ')})")
    fmt = getattr(args, "format", None)
    if getattr(args, "rows_only", False) and fmt != "jsonl":
        return "--rows-only applies to --format jsonl"
    if getattr(args, "mysql_hexdump", False) and (fmt is not None or getattr(args, "flashback", False)):
        return ("--hexdump (-H) is mysqlbinlog's hex dump in its forms (the replay script, "
                "--base64-output=decode-rows): give no --format or --flashback with it")
    own = getattr(args, "contradictions", None)
    return own(args) if own is not None else None


def resolve_positions(args, start, stop):
    """Where --start-position and --stop-position point (binlog_grammar.binlog.positions): the files to
    read and the offsets, kept on args as `positions` for reading.open_input; what is wrong with
    them, or None. A position inside an event is a warning on stderr."""
    from ..errors import BinlogError
    from ..binlog.positions import PositionError, resolve_positions as resolve

    try:
        args.positions = resolve(args.files, start, stop, getattr(args, "follow_rotate", False))
    except PositionError as e:
        return str(e)
    except BinlogError:
        return None  # the command reports an unreadable input
    for note in args.positions.notes:
        print(f"binlog-grammar {args.command}: warning: {note}", file=sys.stderr)
    return None
