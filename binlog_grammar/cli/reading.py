"""What the reading commands (dump, stats, sql, flashback) share when they run: the stream their
options open (open_input), the progress bar, stdout that writes undecodable bytes back as they
were, and the report of damage skipped, rows shown raw (which sets their exit status) and window
boundaries that fell inside a transaction."""
from __future__ import annotations

import sys

from .options import UsageError


# inputs smaller than this read too fast for a bar (BINLOG_GRAMMAR_PROGRESS_MIN_BYTES: another size)
MIN_BYTES = 8 << 20


def progress_wanted(args, writes_as_it_reads=True) -> bool:
    """Whether a command shows its progress: stderr is a terminal, no --quiet (--no-progress),
    and, for a command that writes while it reads (dump, sql, flashback), stdout is not that
    terminal (its lines and the bar would mix)."""
    if getattr(args, "no_progress", False) or not sys.stderr.isatty():
        return False
    return not (writes_as_it_reads and sys.stdout.isatty())


class Progress:
    """Bytes done, rate and time left on stderr (a tqdm bar), when `enabled` and the input has
    MIN_BYTES or more. Called as progress(done, total) with byte counts; close() clears it."""

    def __init__(self, enabled, what=None):
        import os

        self.enabled, self.what, self.bar, self.next, self.step = enabled, what, None, 0, 1
        self.min_bytes = int(os.environ.get("BINLOG_GRAMMAR_PROGRESS_MIN_BYTES", MIN_BYTES))

    def __call__(self, done, total):
        if not self.enabled or done < self.next or total < self.min_bytes:
            return
        if self.bar is None:
            import shutil

            from tqdm import tqdm

            # a terminal that says it has 0 columns and rows (a fresh pty) gets 80x24: tqdm
            # would draw an empty bar, or none
            size = shutil.get_terminal_size((80, 24))
            self.bar = tqdm(total=total, desc=self.what, unit="B", unit_scale=True,
                            unit_divisor=1024, file=sys.stderr, leave=False, mininterval=0.2,
                            ncols=size.columns, nrows=size.lines)
            self.step = max(1, total // 1000)
        elif total != self.bar.total:
            self.bar.total = total
        self.bar.update(min(done, total) - self.bar.n)
        self.next = done + self.step

    def close(self):
        if self.bar is not None:
            self.bar.close()
            self.bar = None


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
    progress = Progress(progress_wanted(args, getattr(args, "command", None) != "stats"))
    # a window keeps whole transactions (binlog/window.py), except in the texts for reading
    # (dump --format text, --base64-output=decode-rows) and the hex view, which cut where
    # mysqlbinlog does
    reading = getattr(args, "hexdump", False) or getattr(args, "format", None) == "text" \
        or getattr(args, "base64_output", None) == "decode-rows"
    stream = open_stream(files, flt, not args.no_checksum, schemas, args.skip_damaged, progress,
                         args.server_version, args.follow_rotate, raw_rows=True,
                         cut="events" if reading else "transactions")
    rules_of = getattr(args, "rewrite_rules", None)  # --rewrite-db (cli/rewrite_opts.py)
    stream.rewrite = rules_of(args) if rules_of is not None else None
    stream.table_metadata = getattr(args, "print_table_metadata", False)
    return stream, progress


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
