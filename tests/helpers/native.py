"""What the compiled backend's tests share: a command run in process on a chosen backend, and
random damage to row-image bytes."""
import io
from contextlib import redirect_stderr, redirect_stdout

from binlog_grammar import native


def cli_dump(path, backend, *opts):
    """`binlog-grammar --backend BACKEND dump --no-progress --format text OPTS PATH` in this process: (exit status, standard output, standard error); the backend choice is
    undone after."""
    from binlog_grammar.cli import main

    out, err = io.StringIO(), io.StringIO()
    try:
        with redirect_stdout(out), redirect_stderr(err):
            try:
                # this project's ### text, which the compiled text lane writes
                code = main(["--backend", backend, "dump", "--no-progress", "--format", "text",
                             *opts, str(path)])
            except SystemExit as e:
                code = e.code
    finally:
        native.select(None)
    return code, out.getvalue(), err.getvalue()


def damage(data: bytes, rnd) -> bytes:
    """`data` with 1 to 4 random changes: a flipped bit, a cut run, inserted bytes."""
    data = bytearray(data)
    for _ in range(rnd.randint(1, 4)):
        how = rnd.randrange(3)
        at = rnd.randrange(len(data) + 1)
        if how == 0 and data:
            data[min(at, len(data) - 1)] ^= 1 << rnd.randrange(8)
        elif how == 1:
            del data[at:at + rnd.randint(1, 8)]
        else:
            data[at:at] = bytes(rnd.randrange(256) for _ in range(rnd.randint(1, 4)))
    return bytes(data)


def lane_counts(stream) -> tuple:
    """(events a lane wrote, events the Python path read) of a stream with a lane attached."""
    from binlog_grammar.binlog.stream import Written

    written = python = 0
    for se in stream.events():
        if type(se) is Written:
            written += se.text.count("# at ")
        else:
            python += 1
    return written, python


def same_jsonl(path, *opts):
    """`dump --format jsonl` of path on the compiled and the Python backend: asserted equal, the
    Python backend's (exit status, output, errors)."""
    c = cli_dump(path, "c", "--format", "jsonl", *opts)
    py = cli_dump(path, "python", "--format", "jsonl", *opts)
    assert c == py
    return py


# each value option of the Debezium envelope the compiled forms implement, one at a time
# (tests/output/test_debezium_native.py, test_debezium_lane.py)
VALUE_OPTIONS = [("decimal.handling.mode", v) for v in ("string", "double")] + \
    [("time.precision.mode", v) for v in ("adaptive", "connect")] + \
    [("binary.handling.mode", v) for v in ("base64", "base64-url-safe", "hex")] + \
    [("bigint.unsigned.handling.mode", "precise"), ("enable.time.adjuster", "false"),
     ("include.query", "true"), ("connector", "mysql")]


def api_read(path, backend, **kw):
    """What a user of open_stream sees, on `backend`: one line per event and change, then the
    error (its class, message, offset) or None, the damage skipped, and how many events came
    through the batches."""
    from binlog_grammar.binlog.batch import FramedEvent
    from binlog_grammar.binlog.stream import open_stream
    from binlog_grammar.errors import BinlogError

    native.select(backend)
    seen, batched, err = [], 0, None
    s = open_stream([path], **kw)
    try:
        for se in s.events():
            ev = se.event
            batched += type(ev) is FramedEvent
            seen.append((repr(ev), ev.header, ev.checksum, ev.checksum_ok, ev.name, ev.end,
                         se.gtid, repr(se.table)))
            seen += [repr(c) for c in se.changes]
    except BinlogError as e:
        err = (type(e).__name__, e.message, e.offset, e.event_type)
    finally:
        native.select(None)
    return seen, err, [repr(d) for d in s.damage], batched


def cli_stats(backend, *argv):
    """`stats` of argv on `backend`, in process: (exit status, the JSON object or the text lines
    without the backend's, errors); the backend named in the output is checked."""
    import contextlib
    import io
    import json

    from binlog_grammar.cli import main

    out, err = io.StringIO(), io.StringIO()
    try:
        with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
            try:
                rc = main(["--backend", backend, "stats", "--no-progress", *map(str, argv)])
            except SystemExit as e:
                rc = e.code
    finally:
        native.select(None)
    text = out.getvalue()
    if "--json" in argv and rc == 0:
        d = json.loads(text)
        assert d.pop("backend") == backend
        return rc, d, err.getvalue()
    return rc, [ln for ln in text.splitlines() if not ln.startswith("backend: ")], err.getvalue()


def same_stats(*argv):
    """`stats` of argv on both backends, asserted equal: the compiled backend's."""
    c = cli_stats("c", *argv)
    assert c == cli_stats("python", *argv)
    return c
