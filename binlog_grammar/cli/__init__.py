"""The `binlog-grammar` command.

Exit status: 0 success; 1 the input had problems (a damaged event, a failed rebuild or checksum,
generated files that differ from the specs; everything before the damage has been written);
2 usage errors and spec errors.
"""
from __future__ import annotations

import argparse
import filecmp
import json
import re
import sys
import tempfile
from pathlib import Path

from ..errors import BinlogGrammarError, SpecError


def _cmd_generate(args) -> int:
    from ..codegen.construct import generate, generated_dir

    out = Path(args.output) if args.output else None
    if args.check:
        target = out or generated_dir()
        with tempfile.TemporaryDirectory() as tmp:
            generate(args.specs, Path(tmp), args.extra_specs)
            diff = _tree_diff(Path(tmp), target)
        if diff:
            print(f"generated files differ from the specs ({len(diff)}): " + ", ".join(diff[:20]))
            print("run `binlog-grammar generate` and commit the result")
            return 1
        print(f"{target}: up to date with the specs")
        return 0
    files = generate(args.specs, out, args.extra_specs)
    print(f"wrote {len(files)} files to {out or 'generated/'}")
    return 0


def _tree_diff(a: Path, b: Path) -> list:
    fa = {p.relative_to(a).as_posix() for p in a.rglob("*.py")}
    fb = {p.relative_to(b).as_posix() for p in b.rglob("*.py")} if b.exists() else set()
    diff = sorted(fa ^ fb)
    for rel in sorted(fa & fb):
        if not filecmp.cmp(a / rel, b / rel, shallow=False):
            diff.append(rel)
    return diff


def _cmd_docs(args) -> int:
    import time

    from .. import docs
    from ..lang.loader import load_specs

    started = time.monotonic()
    specs = load_specs(args.specs)
    try:
        files = docs.render(specs)
    except docs.DocsError as e:
        print(f"binlog-grammar: docs: {e}", file=sys.stderr)
        return 1
    out = Path(args.output) if args.output else docs.DOCS_DIR
    if args.check:
        diff = docs.diff(files, out)
        if diff:
            print(f"docs differ from the specs ({len(diff)} files): " + ", ".join(diff[:20]))
            print("run `binlog-grammar docs` and commit the result")
            return 1
        print(f"{out}: up to date with the specs ({len(files)} files)")
        return 0
    docs.write(files, out)
    print(f"wrote {len(files)} files to {out} in {time.monotonic() - started:.1f}s")
    return 0


def _cmd_verify(args) -> int:
    from ..binlog.stream import expand_inputs
    from ..binlog.verify import verify_file

    ok = True
    for path in [p for f in args.files for p in (expand_inputs([f]) if f.endswith(".index") else [f])]:
        report = verify_file(path, verify_checksum=not args.no_checksum)
        ok = ok and report["ok"]
        if args.json:
            print(json.dumps(report, sort_keys=True))
        else:
            print(_verify_text(report))
    return 0 if ok else 1


def _verify_text(r) -> str:
    lines = [f"{r['file']}: {r['events']} events, {r['byte_identical']} rebuilt byte-identical, "
             f"{r['checksums_verified']} checksums verified, {r['checksum_failures']} checksum failures"
             + (f", {r['inner_events']} events inside payloads" if r.get("inner_events") else "")]
    for e in r["errors"]:
        where = f"at offset {e['offset']}" if e["offset"] is not None else "in the file"
        what = f" ({e['event_type']})" if e["event_type"] else ""
        lines.append(f"  error {where}{what}: {e['message']}")
    lines.append("  OK" if r["ok"] else "  FAILED")
    return "\n".join(lines)


# ---------------------------------------------------------------------------------------------
# reading commands: dump, stats, sql, flashback

class _Progress:
    """A progress bar on stderr, only when it is a terminal and the input is large."""

    def __init__(self, enabled):
        self.enabled = enabled
        self.last = 0.0

    def __call__(self, done, total):
        import time

        now = time.monotonic()
        if not self.enabled or total < (8 << 20) or now - self.last < 0.2:
            return
        self.last = now
        frac = min(1.0, done / total)
        bar = "#" * int(frac * 30)
        sys.stderr.write(f"\r[{bar:<30}] {frac:6.1%} {done >> 20}/{total >> 20} MiB")
        sys.stderr.flush()

    def close(self):
        if self.enabled and self.last:
            sys.stderr.write("\r" + " " * 60 + "\r")
            sys.stderr.flush()


def _datetime(text):
    import datetime as dt

    try:
        d = dt.datetime.fromisoformat(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"not a date and time: {text!r} (write 2024-01-31 12:00:00)")
    return d if d.tzinfo else d.replace(tzinfo=dt.timezone.utc)


def _gtid_set(text):
    from ..binlog.stream import GtidSet

    try:
        gs = GtidSet(text)
    except ValueError as e:
        raise argparse.ArgumentTypeError(str(e))
    _check_intervals(text, [(f"{u}{':' + t if t else ''}", lo, hi)
                            for (u, t), ivs in gs.mysql.items() for lo, hi in ivs], True)
    _check_intervals(text, [(f"{d}-{s}", lo, hi) for d, s, lo, hi in gs.mariadb], False)
    return gs


def _check_intervals(text, intervals, mysql):
    """A GTID interval runs from its first number to its last: `uuid:5-1` or `0-1-5-1` is empty,
    and MySQL numbers transactions from 1."""
    for where, lo, hi in intervals:
        if lo > hi:
            raise argparse.ArgumentTypeError(
                f"{text!r}: the interval {lo}-{hi} of {where} ends before it begins")
        if mysql and lo < 1:
            raise argparse.ArgumentTypeError(
                f"{text!r}: MySQL numbers the transactions of {where} from 1, not {lo}")


def _gtid_position(text):
    """stream --gtid: MariaDB `domain-server-seq,...` or a MySQL GTID set `uuid[:tag]:1-5:7,...`."""
    from ..replication import (
        MARIADB_GTID as _MARIADB_GTID, MYSQL_GTID_PART as _MYSQL_GTID_PART, MariaDBGtidState, MySQLGtidSet)

    parts = [p for p in text.replace("\n", ",").split(",") if p.strip()]
    try:
        if _MARIADB_GTID.match(parts[0] if parts else ""):
            MariaDBGtidState(text)
            return text
        MySQLGtidSet(text)
    except ValueError as e:
        raise argparse.ArgumentTypeError(str(e))
    intervals = []
    for part in parts:
        m = _MYSQL_GTID_PART.match(part)
        for iv in m[3].split(":")[1:]:
            lo, _, hi = iv.partition("-")
            intervals.append((m[1] + m[2], int(lo), int(hi or lo)))
    _check_intervals(text, intervals, True)
    return text


def _int_in(lo, hi=None, what="a number"):
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


def _seconds(minimum_exclusive=True):
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


def _spec_dir(text):
    """A folder of spec files (--specs, --extra-specs)."""
    p = Path(text)
    if not p.exists():
        raise argparse.ArgumentTypeError(f"{text}: no such folder")
    if not p.is_dir():
        raise argparse.ArgumentTypeError(f"{text}: not a folder of spec files (*.yaml)")
    if not any(p.rglob("*.yaml")):
        raise argparse.ArgumentTypeError(f"{text}: no spec files (*.yaml) in this folder")
    return text


def _schema_file(text):
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
    problem = _schema_problem(data)
    if problem:
        raise argparse.ArgumentTypeError(f"{text}: not a schema file: {problem}")
    return text


def _schema_problem(data):
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


def _server_version(text):
    from ..runtime.construct import server_version

    try:
        server_version(text)
    except ValueError as e:
        raise argparse.ArgumentTypeError(str(e))
    return text


def _position(text):
    """--start-position, --stop-position: N or FILE:N (binlog_grammar.binlog.positions)."""
    from ..binlog.positions import parse_position

    if re.fullmatch(r"\s*-\d+\s*", text):
        raise argparse.ArgumentTypeError(f"a position is 0 or more, not {int(text)}")
    try:
        return parse_position(text)
    except ValueError as e:
        raise argparse.ArgumentTypeError(str(e)) from None


def _add_reading_options(p):
    p.add_argument("files", nargs="+", metavar="FILE",
                   help="binlog files, read in order, or a binlog .index file")
    f = p.add_argument_group("filters (shared by dump, stats, sql, flashback)")
    f.add_argument("--start-position", type=_position, metavar="[FILE:]N",
                   help="skip events before offset N of the first file, or of FILE (an input "
                        "file, or the primary's binlog that relay logs name)")
    f.add_argument("--stop-position", type=_position, metavar="[FILE:]N",
                   help="stop at the event at or after offset N of the last file, or of FILE")
    f.add_argument("--start-datetime", type=_datetime, help="skip events before this time (UTC unless an offset is given)")
    f.add_argument("--stop-datetime", type=_datetime, help="skip events at or after this time")
    f.add_argument("--include-gtids", type=_gtid_set, help="keep only these transactions (MySQL uuid:1-5 or MariaDB d-s-n)")
    f.add_argument("--exclude-gtids", type=_gtid_set, help="drop these transactions")
    f.add_argument("--database", action="append", default=[], help="keep only this database (repeatable)")
    f.add_argument("--table", action="append", default=[], help="keep only db.table (shell patterns; repeatable)")
    f.add_argument("--exclude-table", action="append", default=[], help="drop db.table (shell patterns; repeatable)")
    r = p.add_argument_group("reading")
    r.add_argument("--no-checksum", action="store_true", help="do not verify CRC32s")
    r.add_argument("--skip-damaged", action="store_true",
                   help="step over damaged events to the next valid one and say how many bytes were skipped")
    r.add_argument("--schema", type=_schema_file,
                   help="JSON or YAML file of table schemas for binlogs without full metadata")
    r.add_argument("--server-version", type=_server_version, metavar="VERSION",
                   help="read as if this server wrote the files (mysql-8.4.0, mariadb-10.11.6), "
                        "instead of the version in their FORMAT_DESCRIPTION_EVENT")
    r.add_argument("--no-progress", action="store_true", help="no progress bar even on a terminal")
    r.add_argument("--follow-rotate", action="store_true",
                   help="after the last file, go on into the file its closing ROTATE_EVENT names "
                        "(when it is in the same folder), and so on")


def _open(args):
    from ..binlog.rows import load_schemas
    from ..binlog.stream import Filters, open_stream

    where = getattr(args, "positions", None)  # resolved by _contradictions
    if where is not None:
        files, start, stop = where.files, where.start, where.stop
    else:  # no positions, or inputs that could not be read (the command reports them)
        files = args.files
        start, stop = (p.pos if p is not None and p.file is None else None
                       for p in (args.start_position, args.stop_position))
    flt = Filters(start, stop, args.start_datetime, args.stop_datetime, args.include_gtids,
                  args.exclude_gtids, args.database, args.table, args.exclude_table)
    schemas = None
    if args.schema:
        try:
            schemas = load_schemas(args.schema)
        except (OSError, ValueError) as e:
            raise _Usage(f"--schema: {e}") from None
    progress = _Progress(not args.no_progress and sys.stderr.isatty())
    return open_stream(files, flt, not args.no_checksum, schemas, args.skip_damaged, progress,
                       args.server_version, args.follow_rotate, raw_rows=True), progress


class _Usage(Exception):
    pass


def _report_damage(stream) -> int:
    """Damage skipped and rows shown raw, in file order, on stderr; 1 when anything was damaged
    (rows of a valid file that could not be decoded are a note, not a failure)."""
    order = {p: i for i, p in enumerate(stream.paths)}
    items = [(d.file, d.offset or 0, f"skipped {d.skipped_bytes} damaged bytes of {d.file} at offset "
              f"{d.offset} ({d.event_type or 'unknown event'}): {d.message}") for d in stream.damage]
    items += [(u.file, u.offset, f"{'damaged rows event' if u.damaged else 'note: rows not decoded'} "
               f"of {u.file} at offset {u.offset} ({u.event_type}), shown raw: {u.message}")
              for u in stream.undecoded]
    for _f, _o, text in sorted(items, key=lambda x: (order.get(x[0], len(order)), x[1])):
        print(f"binlog-grammar: {text}", file=sys.stderr)
    return 1 if stream.damage or any(u.damaged for u in stream.undecoded) else 0


def _stdout():
    """stdout that writes undecodable bytes back as they were (values keep them as surrogates)."""
    out = sys.stdout
    try:
        out.reconfigure(errors="surrogateescape")
    except (AttributeError, ValueError):
        pass
    return out


def _cmd_dump(args) -> int:
    from ..output import dump

    stream, progress = _open(args)
    out = _stdout()
    try:
        if args.hexdump:
            from ..output.hexdump import render

            for se in stream.events():
                out.write(render(se) + "\n")
        elif args.format == "jsonl":
            writer = dump.JsonlWriter(rows_only=args.rows_only)
            for se in stream.events():
                for line in writer.lines(se):
                    out.write(line + "\n")
        else:
            for se in stream.events():
                for line in dump.text_lines(se):
                    out.write(line + "\n")
    finally:
        progress.close()
        out.flush()
    return _report_damage(stream)


def _cmd_stats(args) -> int:
    from ..output.stats import Stats

    stream, progress = _open(args)
    st = Stats(top=args.top)
    try:
        for item in stream._grouped():
            if hasattr(item, "events"):
                st.add_transaction(item)
            else:
                st.add_event(item)
    finally:
        progress.close()
    st.fallbacks = stream.fallbacks
    print(json.dumps(st.as_dict(), indent=2) if args.json else st.text())
    return _report_damage(stream)


def _cmd_sql(args, flashback=False) -> int:
    from ..output.sql import render_sql

    stream, progress = _open(args)
    refused = []  # transactions written as comments: the script says why, stderr how many
    try:
        txs = stream.transactions()
        if flashback:
            txs = list(txs)  # the inverse runs from the last transaction back
        out = _stdout()
        for line in render_sql(txs, flashback=flashback, on_refused=refused.append):
            out.write(line if line.endswith("\n") else line + "\n")
    except ValueError as e:
        print(f"binlog-grammar: {e}", file=sys.stderr)
        return 1
    finally:
        progress.close()
        sys.stdout.flush()
    status = _report_damage(stream)
    if refused:
        n = len(refused)
        print(f"binlog-grammar: note: {n} transaction{'s' * (n != 1)} could not be "
              f"{'inverted' if flashback else 'written as SQL'} and "
              f"{'is a comment' if n == 1 else 'are comments'} in the script; the first: "
              f"{refused[0]}", file=sys.stderr)
    return status


def _cmd_pipeline(args) -> int:
    from ..spark.pipeline import run_pipeline

    return run_pipeline(args)


def _add_stream_command(sub):
    """`stream`: a live server's binlog over the replication protocol, printed as `dump` prints
    files (binlog_grammar.replication)."""

    def run(args):
        from ..replication import cmd_stream

        return cmd_stream(args)

    st = sub.add_parser("stream", help="read a live server's binlog as a replica and print it as "
                                       "dump does")
    c = st.add_argument_group("server")
    c.add_argument("--host", default="127.0.0.1", help="server host (default 127.0.0.1)")
    c.add_argument("--port", type=_int_in(1, 65535, "a port"), default=3306,
                   help="server port (default 3306)")
    c.add_argument("--user", default="root", help="account with REPLICATION SLAVE (and BINLOG MONITOR / "
                                                  "REPLICATION CLIENT for --until-now)")
    c.add_argument("--password-env", metavar="VAR",
                   help="environment variable holding the password (never on the command line)")
    c.add_argument("--server-id", type=_int_in(1, (1 << 32) - 1, "a server id"),
                   help="replica server id (default: a random one, kept across reconnects)")
    w = st.add_argument_group("where to start and stop")
    w.add_argument("--file", help="binlog file to start in (default: the first one)")
    w.add_argument("--pos", type=_int_in(4, (1 << 32) - 1, "a binlog position"),  # COM_BINLOG_DUMP u32le
                   help="position in --file to start at (default 4)")
    w.add_argument("--gtid", type=_gtid_position,
                   help="start after this GTID position: MariaDB domain-server-seq,... or MySQL uuid:1-100")
    w.add_argument("--until-now", action="store_true",
                   help="stop at the end of the binlog as it is when connecting (else follow new events)")
    o = st.add_argument_group("output")
    o.add_argument("--format", choices=["text", "jsonl"], default="text", help="as dump: text or jsonl")
    o.add_argument("--rows-only", action="store_true", help="jsonl: only row changes")
    o.add_argument("--database", action="append", default=[], help="keep only this database (repeatable)")
    o.add_argument("--table", action="append", default=[],
                   help="keep only db.table (shell patterns; repeatable)")
    o.add_argument("--exclude-table", action="append", default=[],
                   help="drop db.table (shell patterns; repeatable)")
    o.add_argument("--schema", type=_schema_file,
                   help="JSON or YAML file of table schemas for binlogs without full metadata")
    o.add_argument("--no-checksum", action="store_true", help="do not verify CRC32s")
    o.add_argument("--any-binlog-format", action="store_true",
                   help="read a server whose binlog_format is not ROW (row changes may be missing)")
    n = st.add_argument_group("connection")
    n.add_argument("--heartbeat", type=_seconds(), default=5.0, help="heartbeat period in seconds (default 5)")
    n.add_argument("--connect-timeout", type=_seconds(), default=10.0,
                   help="seconds to connect and log in (default 10)")
    n.add_argument("--read-timeout", type=_seconds(), default=30.0,
                   help="seconds to wait for an answer (default 30)")
    n.add_argument("--no-reconnect", action="store_true", help="end with an error when the connection drops")
    n.add_argument("--reconnect-timeout", type=_seconds(False), default=None,
                   help="give up reconnecting after this many seconds (default: never while "
                        "following, 60 with --until-now); attempts back off from 0.1 s to 5 s")
    n.add_argument("--ssl-mode", default="preferred",
                   choices=["disabled", "preferred", "required", "verify-ca", "verify-identity"],
                   help="TLS, as the mysql client's --ssl-mode (default preferred)")
    n.add_argument("--ssl-ca", help="CA certificates (PEM) for verify-ca / verify-identity")
    n.add_argument("--ssl-cert", help="client certificate (PEM)")
    n.add_argument("--ssl-key", help="client certificate's key (PEM)")
    n.add_argument("--server-public-key", metavar="PEM",
                   help="server's RSA public key, to send the password without TLS "
                        "(caching_sha2_password, sha256_password)")
    n.add_argument("--get-server-public-key", action="store_true",
                   help="ask the server for its RSA public key when needed (trusts the network)")
    st.set_defaults(func=run)


def build_parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog="binlog-grammar",
                                description="Grammar-driven MySQL/MariaDB binlog tools.")
    p.add_argument("--specs", dest="user_specs", action="append", default=[], metavar="DIR",
                   type=_spec_dir,
                   help="read with the project's specs plus the spec files (events, types, version "
                        "overlays) of this folder (repeatable); compiled once into ~/.cache/binlog-grammar")
    sub = p.add_subparsers(dest="command", required=True)

    g = sub.add_parser("generate", help="compile specs/ into construct modules under generated/")
    g.add_argument("--specs", type=_spec_dir, help="specs folder (default: the project's specs/)")
    g.add_argument("--extra-specs", action="append", default=[], type=_spec_dir,
                   help="another folder of spec files to load with the main ones (repeatable)")
    g.add_argument("--output", "--out", help="where to write (default: generated/)")
    g.add_argument("--check", action="store_true",
                   help="do not write; exit 1 if the committed files differ from a fresh generation")
    g.set_defaults(func=_cmd_generate)

    d = sub.add_parser("docs", help="render the format documentation (Markdown and HTML) from the specs")
    d.add_argument("--specs", type=_spec_dir, help="specs folder (default: the project's specs/)")
    d.add_argument("--output", help="where to write (default: generated/docs/; the HTML site goes "
                                    "to its html/ folder)")
    d.add_argument("--check", action="store_true",
                   help="do not write; exit 1 if the committed docs differ from a fresh render")
    d.set_defaults(func=_cmd_docs)

    v = sub.add_parser("verify", help="parse and rebuild every event, check CRC32s")
    v.add_argument("files", nargs="+", metavar="FILE")
    v.add_argument("--json", action="store_true", help="one JSON object per file")
    v.add_argument("--no-checksum", action="store_true", help="do not verify CRC32s")
    v.set_defaults(func=_cmd_verify)

    du = sub.add_parser("dump", help="print events and row changes (mysqlbinlog -vv style, or JSON lines)")
    _add_reading_options(du)
    du.add_argument("--format", choices=["text", "jsonl"], default="text",
                    help="text (mysqlbinlog -vv style, the default) or jsonl (one JSON object per line; "
                         "row changes in the Debezium envelope)")
    du.add_argument("--rows-only", action="store_true", help="jsonl: only row changes")
    du.add_argument("--hexdump", action="store_true",
                    help="hex view of every event with each byte run labelled by its spec field")
    du.set_defaults(func=_cmd_dump)

    stt = sub.add_parser("stats", help="counts and bytes by event type, by table, by transaction size")
    _add_reading_options(stt)
    stt.add_argument("--json", action="store_true", help="the figures as one JSON object")
    stt.add_argument("--top", type=_int_in(0, what="a number of transactions"), default=10,
                     help="how many largest/longest transactions to list")
    stt.set_defaults(func=_cmd_stats)

    sq = sub.add_parser("sql", help="replayable SQL from the row changes, transaction by transaction")
    _add_reading_options(sq)
    sq.set_defaults(func=_cmd_sql)

    fb = sub.add_parser("flashback", help="SQL that undoes the row changes, last transaction first")
    _add_reading_options(fb)
    fb.set_defaults(func=lambda a: _cmd_sql(a, flashback=True))

    pl = sub.add_parser("pipeline", help="binlogs to a Parquet change log and per-table snapshots, on Spark")
    pl.add_argument("--input", nargs="+", required=True, metavar="PATH",
                    help="binlog files, globs or .index files (any filesystem Spark reads)")
    pl.add_argument("--output", required=True, help="output folder (changes/, snapshots/, state)")
    pl.add_argument("--master", default="local[*]", help="Spark master (default: local[*])")
    pl.add_argument("--table", action="append", default=[], help="keep only db.table (repeatable)")
    pl.add_argument("--exclude-table", action="append", default=[], help="drop db.table (repeatable)")
    pl.add_argument("--schema", type=_schema_file,
                    help="JSON or YAML file of table schemas (names, keys) for binlogs without full "
                         "metadata")
    pl.add_argument("--no-checksum", action="store_true", help="do not verify CRC32s")
    pl.add_argument("--split-bytes", type=_int_in(0, what="a size in bytes"), default=64 << 20,
                    help="split files larger than this at transaction boundaries (default 64 MiB)")
    pl.set_defaults(func=_cmd_pipeline)

    _add_stream_command(sub)
    from ..repair.command import add_repair_command  # the package lives in binlog_grammar/repair/

    add_repair_command(sub)
    for name, sp in sub.choices.items():
        sp.set_defaults(subparser=sp)
    return p


def _contradictions(args):
    """Options that each parse but together make no sense: what is wrong, or None."""
    start, stop = getattr(args, "start_position", None), getattr(args, "stop_position", None)
    if start is not None or stop is not None:
        problem = _resolve_positions(args, start, stop)
        if problem:
            return problem
    start, stop = getattr(args, "start_datetime", None), getattr(args, "stop_datetime", None)
    if start is not None and stop is not None and stop <= start:
        return (f"--stop-datetime {stop.isoformat(' ')} is not after --start-datetime "
                f"{start.isoformat(' ')}")
    fmt = getattr(args, "format", None)
    if getattr(args, "rows_only", False) and fmt != "jsonl":
        return "--rows-only applies to --format jsonl"
    if getattr(args, "hexdump", False) and fmt == "jsonl":
        return "--hexdump and --format jsonl are two different outputs: give one"
    if args.command == "stream":
        if args.gtid is not None and args.file is not None:
            return "give either --file (and --pos) or --gtid, not both"
        if args.gtid is not None and args.pos is not None:
            return "--pos is a position in --file; with --gtid the server finds the position"
    return None


def _resolve_positions(args, start, stop):
    """Where --start-position and --stop-position point (binlog_grammar.binlog.positions): the files to
    read and the offsets, kept on args for _open; what is wrong with them, or None. A position
    inside an event is a warning on stderr."""
    from ..errors import BinlogError
    from ..binlog.positions import PositionError, resolve_positions

    try:
        args.positions = resolve_positions(args.files, start, stop,
                                           getattr(args, "follow_rotate", False))
    except PositionError as e:
        return str(e)
    except BinlogError:
        return None  # the command reports an unreadable input
    for note in args.positions.notes:
        print(f"binlog-grammar {args.command}: warning: {note}", file=sys.stderr)
    return None


def main(argv=None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    problem = _contradictions(args)
    if problem:
        args.subparser.error(problem)
    try:
        if args.user_specs and args.command not in ("generate", "docs"):
            from ..codegen.grammar import use_specs

            use_specs(args.user_specs)
        return args.func(args)
    except SpecError as e:
        print(f"binlog-grammar: spec error: {e}", file=sys.stderr)
        return 2
    except _Usage as e:
        print(f"binlog-grammar: {e}", file=sys.stderr)
        return 2
    except BinlogGrammarError as e:
        print(f"binlog-grammar: {e}", file=sys.stderr)
        return 1
    except KeyboardInterrupt:
        return 130
    except BrokenPipeError:
        return 0


if __name__ == "__main__":
    sys.exit(main())
