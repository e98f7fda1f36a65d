"""What the reading commands (dump, stats, sql, flashback) share when they run: the stream their
options open (open_input), the progress bar, stdout that writes undecodable bytes back as they
were, and the report of damage skipped, rows shown raw (which sets their exit status) and window
boundaries that fell inside a transaction."""
from __future__ import annotations

import sys

from .options import UsageError


class Progress:
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


def open_input(args):
    """(binlog.stream.Stream, Progress) of the reading options in `args`."""
    from ..binlog.rows import load_schemas
    from ..binlog.stream import Filters, open_stream

    where = getattr(args, "positions", None)  # resolved by options.contradictions
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
            raise UsageError(f"--schema: {e}") from None
    progress = Progress(not args.no_progress and sys.stderr.isatty())
    # a window keeps whole transactions (binlog/window.py), except in the text dump and the hex
    # view, which cut where mysqlbinlog does
    reading = getattr(args, "hexdump", False) or getattr(args, "format", None) == "text"
    return open_stream(files, flt, not args.no_checksum, schemas, args.skip_damaged, progress,
                       args.server_version, args.follow_rotate, raw_rows=True,
                       cut="events" if reading else "transactions"), progress


def report_damage(stream) -> int:
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
    for text in getattr(stream, "notes", ()):  # window boundaries inside a transaction
        print(f"binlog-grammar: note: {text}", file=sys.stderr)
    return 1 if stream.damage or any(u.damaged for u in stream.undecoded) else 0


def stdout():
    """stdout that writes undecodable bytes back as they were (values keep them as surrogates)."""
    out = sys.stdout
    try:
        out.reconfigure(errors="surrogateescape")
    except (AttributeError, ValueError):
        pass
    return out
