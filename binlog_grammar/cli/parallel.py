"""`--jobs N` for dump (its text, JSON lines and hexdump, and mariadb-binlog's forms: the replay
script and its reading forms, whose splits start with the Replay state before them:
cli/replay_jobs.py), sql, flashback and stats: the input's files cut into transaction-aligned
splits (spark.split's rule: a cut before a GTID event, after an XID, before a BEGIN; each split
knows the FORMAT_DESCRIPTION_EVENT in force, the GTID in force and how many GTID events the
input holds before it, so `tx_seq` counts over the whole input), decoded and rendered by worker
processes (cli/pieces.py), written by the parent in input order as they come back, with at most
2 x N splits in flight. The splits are planned as they are submitted (cli/plan.py, on the
compiled header walk; spark.split.scan_file where that cannot run), so the workers start on the
first while the parent walks on. Text comes back through files of a spool in /dev/shm that the
next splits write over. The output, stderr and exit status are those of `--jobs 1`:

- the merge is of what each split noted: damage, rows shown raw, window boundaries inside a
  transaction (Window.crossed), fast-path fallbacks, stats' partial counts, refused transactions;
- what a split cannot render alone is read again by the parent, after everything before it: the
  JSON lines of rows whose character set an earlier split named (the charset answers are
  checked), and, from the first split with damage, an error, or an XA transaction (its PREPARE
  and COMMIT may be in two splits), the rest of the input, read as --jobs 1 reads it;
- files that are small or not binlog v4 are one piece; where a file's header walk stops before
  its end (damage, encryption), the rest of the input from the last cut before that point is
  read by the parent (the file from its start, the events before the cut for their state);
- mysqlbinlog's datetime cut (dump text and --hexdump with --start/--stop-datetime) depends on
  every event before it, so it runs on one process.

BINLOG_GRAMMAR_SPLIT_BYTES (for tests) sets the split size and lets files of any size be cut.
"""
from __future__ import annotations

import os
import stat
from collections import Counter, deque

from ..errors import BinlogError

# cli/pieces.py and binlog/ are imported when a run starts, not with this module: the commands
# import it to declare --jobs, and `--specs DIR` must compile its specs before any generated
# module is imported (codegen.grammar.use_specs)

SPLIT_BYTES = 4 << 20  # a split's size; files below MIN_BYTES are not cut
MIN_BYTES = 8 << 20
ENV_SPLIT = "BINLOG_GRAMMAR_SPLIT_BYTES"
ENV_JOBS = "BINLOG_GRAMMAR_JOBS"  # the default of --jobs
EXECUTOR = None  # one pool for many runs (the tests set it; a run otherwise starts its own)


def add_option(p):
    p.add_argument("--jobs", type=_jobs, default=None, metavar="N",
                   help="worker processes that decode splits of each file in parallel (default: "
                        f"the cores this process may run on, or ${ENV_JOBS}; files under 8 MiB, "
                        "and dump's mysqlbinlog forms unless N or the variable is given, are read "
                        "by one process)")


def _jobs(text):
    import argparse

    try:
        n = int(text)
    except ValueError:
        n = 0
    if n < 1:
        raise argparse.ArgumentTypeError(f"a number of processes of at least 1, not {text!r}")
    return n


def jobs_of(args) -> int:
    """--jobs; when not given, $BINLOG_GRAMMAR_JOBS, else the cores this process may run on.
    With the compiled backend, dump's text over the 127 MB bench binlog on 2 cores takes 0.44x
    mariadb-binlog's wall time with two workers against 0.69x with one process, and peak memory
    stays flat (about 60 MB for the parent, 35 MB a worker, on a 1 GB binlog too). Files under
    MIN_BYTES are one piece, so a small file never starts the pool."""
    if args.jobs:
        return args.jobs
    env = os.environ.get(ENV_JOBS)
    if env:
        import argparse

        from .options import UsageError

        try:
            return _jobs(env)
        except argparse.ArgumentTypeError as e:
            raise UsageError(f"{ENV_JOBS}: {e}") from None
    return default_jobs()


def default_jobs() -> int:
    """The cores this process may run on (its CPU affinity where the system has one)."""
    try:
        return max(1, len(os.sched_getaffinity(0)))
    except (AttributeError, OSError):
        return max(1, os.cpu_count() or 1)


def config(args, kind) -> Config:
    from ..binlog.rows import load_schemas
    from ..binlog.stream import Filters
    from .pieces import Config

    where = getattr(args, "positions", None)
    if where is not None:
        start, stop = where.start, where.stop
    else:
        start, stop = (p.pos if p is not None and p.file is None else None
                       for p in (args.start_position, args.stop_position))
    flt = Filters(start, stop, args.start_datetime, args.stop_datetime, args.include_gtids,
                  args.exclude_gtids, args.database, args.table, args.exclude_table)
    cut = "events" if kind in ("text", "hexdump") else "transactions"
    return Config(kind, flt, not args.no_checksum, load_schemas(args.schema) if args.schema else None,
                  args.skip_damaged, args.server_version, args.follow_rotate, cut,
                  getattr(args, "rows_only", False), getattr(args, "top", 10))


def wanted(args, stream, kind) -> bool:
    """Run on several processes: more than one job, and input worth it."""
    if jobs_of(args) < 2 or not stream.paths or getattr(stream, "rewrite", None) or \
            getattr(stream, "table_metadata", False):
        return False  # --rewrite-db, --print-table-metadata: the stream reads in this process
    if kind in ("text", "hexdump") and (args.start_datetime or args.stop_datetime):
        return False  # mysqlbinlog's datetime cut depends on every event before
    if os.environ.get(ENV_SPLIT):
        return True
    return any(_size(p) >= MIN_BYTES for p in stream.paths)


def _size(p) -> int:
    try:
        return os.path.getsize(p)
    except OSError:
        return 0


class Outcome:
    """What report_damage reads of a stream, merged from the splits in input order."""

    def __init__(self, cfg: Config, paths):
        from ..binlog.window import Window

        self.paths = list(paths)
        self.damage, self.undecoded, self.refused = [], [], []
        self.fallbacks = {}
        self.window = Window(cfg.filters, lambda: len(self.paths) - 1)

    @property
    def notes(self):
        return self.window.notes()

    def merge(self, r: Result):
        self.damage += r.damage
        self.undecoded += r.undecoded
        self.refused += r.refused
        for option, (kept, dropped, first) in r.crossed.items():
            seen = self.window.crossed.setdefault(option, [0, 0, None])
            seen[0] += kept
            seen[1] += dropped
            if seen[2] is None:
                seen[2] = first
        for path, c in r.fallbacks.items():
            self.fallbacks.setdefault(path, Counter()).update(c)


def plan_file(path, index, seq, split_bytes, min_bytes):
    """(pieces of one file, GTID events in it, whole): `whole` False when the header walk did not
    reach the file's end (then the GTID count is not known past it)."""
    from .pieces import Piece
    from .plan import plan_cuts
    from ..spark.split import scan_file

    cut = None if _size(path) < min_bytes else split_bytes
    fast = plan_cuts(path, cut)  # the compiled walk's plan: scan_file's cuts, sooner
    if fast is not None:
        return [Piece(path, index, c["start"], c["stop"], c["fde_pos"], seq + c["gtids_before"],
                      c["gtid"]) for c in fast.cuts], fast.gtid_events, True
    try:
        sc = scan_file(path, cut)
    except (OSError, BinlogError):  # the parent reads it and reports it as --jobs 1 does
        return [Piece(path, index, 4, None, None, seq, None)], 0, False
    whole = sc.splittable and sc.scanned_to == sc.size
    if not whole or len(sc.cuts) < 2:
        return [Piece(path, index, 4, None, None, seq, None)], sc.gtid_events, whole
    return [Piece(path, index, c["start"], c["stop"], c["fde_pos"], seq + c["gtids_before"],
                  c["gtid"]) for c in sc.cuts], sc.gtid_events, whole


class Executor:
    """A process pool of workers forked from this process, which has imported what they run
    (cli/forkpool.py; concurrent.futures' pool with forkserver, else spawn, where there is no
    fork). A forked worker starts at once: with the compiled backend a split takes tens of
    milliseconds, and a worker that imports the package and the extensions again (forkserver)
    took longer than the whole file on one process.

    Forking is safe here: the pool has no thread, this process's standard streams are flushed
    first (a worker inherits their buffers), a worker leaves by os._exit, and its standard output
    is /dev/null (it sends its text back; pieces.init)."""

    def __init__(self, jobs, backend, user_specs):
        from .pieces import init

        import sys

        if hasattr(os, "fork"):
            from . import pieces  # noqa: F401 - imported before the fork, for the workers
            from .forkpool import ForkPool
            from ..output import dump, dump_text, sql, stats, text_lane  # noqa: F401
            from ..output import replay_lane  # noqa: F401

            for stream in (sys.stdout, sys.stderr):
                try:
                    stream.flush()
                except (AttributeError, OSError, ValueError):
                    pass
            self.pool = ForkPool(jobs, init, (backend, user_specs))
            return
        import multiprocessing as mp
        from concurrent.futures import ProcessPoolExecutor

        methods = mp.get_all_start_methods()
        if "forkserver" in methods:
            ctx = mp.get_context("forkserver")
            ctx.set_forkserver_preload(["binlog_grammar.cli.pieces", "binlog_grammar.output.dump",
                                       "binlog_grammar.output.dump_text",
                                       "binlog_grammar.output.sql", "binlog_grammar.output.stats"])
        else:
            ctx = mp.get_context("spawn")
        self.pool = ProcessPoolExecutor(jobs, mp_context=ctx, initializer=init,
                                        initargs=(backend, user_specs))

    def submit(self, fn, *a):
        return self.pool.submit(fn, *a)

    def close(self):
        if hasattr(self.pool, "shutdown"):
            self.pool.shutdown(wait=True, cancel_futures=True)
        else:
            self.pool.close()


def run(args, stream, kind, write, executor=None, out=None, merge=None):
    """Read `stream.paths` as `kind` with args.jobs processes; write(str) gets the output in
    input order (flashback: once all is read, last transaction first). Returns the Outcome and,
    for stats, the merged Stats. `out`: the text stream `write` writes to; when it is a file
    (standard output), the workers' text comes back as spooled files copied into it. `merge`
    (kind "replay", cli/replay_jobs.Merge): the Config's replay and cut, what the parent writes
    before a split's text (lead(result)) and how it reads the rest itself (sequential)."""
    import dataclasses
    import shutil

    cfg = config(args, kind)
    if merge is not None:
        cfg = dataclasses.replace(cfg, replay=merge.replay, cut=merge.cut)
    spool = _spool_dir() if out is not None and kind in ("text", "hexdump", "jsonl", "replay") \
        else None
    if spool is not None:
        cfg = dataclasses.replace(cfg, spool=spool, encoding=getattr(out, "encoding", None) or "utf-8")
        write = _FileWriter(out, write)
    try:
        with _terminated_as_exit(spool is not None):
            return _run(args, stream, kind, write, executor, cfg, merge)
    finally:
        if spool is not None:
            shutil.rmtree(spool, ignore_errors=True)


class _terminated_as_exit:
    """While the spool exists, SIGTERM and SIGHUP (a `kill`, a closed terminal) raise SystemExit
    (status 128 + the signal, as a shell reports a process the signal ended) so that the spool
    is removed on the way out; their default would end the process and leave it in /dev/shm.
    Only where their handler is the default one, and in the main thread (where Python can)."""

    SIGNALS = ("SIGTERM", "SIGHUP")

    def __init__(self, active):
        self.active, self.saved = active, {}

    def __enter__(self):
        import signal
        import threading

        if not self.active or threading.current_thread() is not threading.main_thread():
            return self
        for name in self.SIGNALS:
            sig = getattr(signal, name, None)
            if sig is not None and signal.getsignal(sig) == signal.SIG_DFL:
                self.saved[sig] = signal.signal(sig, _exit_on_signal)
        return self

    def __exit__(self, *exc):
        import signal

        for sig, handler in self.saved.items():
            signal.signal(sig, handler)
        return False


def _exit_on_signal(signum, frame):
    raise SystemExit(128 + signum)


class _FileWriter:
    """write(str) as before, and file(path): a spooled text copied to the output after what was
    written before it."""

    def __init__(self, out, write):
        self.out, self.write_text = out, write

    def __call__(self, text):
        self.write_text(text)

    def file(self, path, size=None):
        """Copy the first `size` bytes of the spooled file at `path` (None: all of it, and the
        file is removed after)."""
        out, own = self.out, size is None
        try:
            try:
                fd = out.fileno()
            except (AttributeError, OSError, ValueError):
                fd = None
            with open(path, "rb") as fh:
                if size is None:
                    size = os.fstat(fh.fileno()).st_size
                if fd is not None:
                    out.flush()
                    sent = 0
                    # into a pipe or socket sendfile lends the file's pages, which the next
                    # piece written over this spool file changes before the reader reads them:
                    # copied there (its output was other pieces' text, under a slow reader)
                    mode = os.fstat(fd).st_mode
                    lend = stat.S_ISREG(mode) or stat.S_ISCHR(mode)
                    while sent < size:
                        if lend:
                            n = os.sendfile(fd, fh.fileno(), sent, size - sent)
                        else:
                            n = os.write(fd, os.pread(fh.fileno(), min(size - sent, 1 << 20), sent))
                        if n == 0:
                            break
                        sent += n
                else:  # not a file (a test's StringIO): as text
                    self.write_text(fh.read(size).decode(getattr(out, "encoding", None) or "utf-8",
                                                         "surrogateescape"))
        finally:
            if own:
                os.unlink(path)


class _Slots:
    """The spool's files, reused: a worker writes a piece's text over the start of a free one
    and says how long it is; the parent copies that much out and frees the file. A file written
    again reuses its memory pages (a new one in /dev/shm is allocated and zeroed page by page, and
    freed again when it is removed: a tenth of a second on 280 MB of text)."""

    def __init__(self, spool):
        self.spool, self.free, self.made = spool, [], 0

    def take(self):
        if self.spool is None:
            return None
        if self.free:
            return self.free.pop()
        self.made += 1
        return os.path.join(self.spool, f"{self.made}.text")

    def give(self, path):
        if path is not None:
            self.free.append(path)


def _spool_dir():
    """A private folder for the workers' texts: in memory (/dev/shm) where there is one, named
    with the command's process id."""
    import tempfile

    shm = "/dev/shm"
    where = shm if os.path.isdir(shm) and os.access(shm, os.W_OK) else None
    try:
        return tempfile.mkdtemp(prefix=f"binlog-grammar-jobs-{os.getpid()}-", dir=where)
    except OSError:
        return None


def _run(args, stream, kind, write, executor, cfg, merge=None):
    from ..output.spill import Backwards
    from .pieces import Piece, work

    forced = os.environ.get(ENV_SPLIT)
    split_bytes = int(forced) if forced else SPLIT_BYTES
    min_bytes = 0 if forced else MIN_BYTES
    jobs = jobs_of(args)
    paths = list(stream.paths)
    outcome = Outcome(cfg, paths)
    stats = None
    if kind == "stats":
        from ..output.stats import Stats

        stats = Stats(top=cfg.top)
    # flashback: each split's blocks, in input order, on disk (output/spill.py) till all is read
    blocks = Backwards() if kind == "flashback" else None
    emit = blocks.add if blocks is not None else write
    executor = executor or EXECUTOR
    own = executor is None
    executor = executor or Executor(jobs, getattr(args, "backend", None),
                                    getattr(args, "user_specs", None))
    progress = getattr(stream, "progress", None)
    total, done = sum(_size(p) for p in paths), 0
    planner = _Planner(paths, split_bytes, min_bytes)
    slots = _Slots(cfg.spool)
    try:
        rest = None  # the piece from which the parent reads on
        inflight = deque()
        while True:
            while rest is None and len(inflight) < 2 * jobs:
                p = planner.next()
                if p is None:
                    break
                if isinstance(p, _Rest):
                    rest = p.piece
                    break
                slot = slots.take()
                inflight.append((p, executor.submit(work, cfg, [p], list(outcome.paths), slot),
                                 slot))
            if not inflight:
                if rest is None:
                    break
                tail = [rest] + [Piece(p, i, tx_seq_base=None)
                                 for i, p in enumerate(paths) if i > rest.file_index]
                if merge is not None:
                    merge.sequential(cfg, tail, outcome, emit)
                else:
                    _sequential(cfg, tail, outcome, emit, stats, blocks)
                break
            piece, fut, slot = inflight.popleft()
            r = fut.result()
            if r.sequential:
                # damage, an error or XA: from here on, as --jobs 1 reads it (the splits in
                # flight after it are dropped)
                for _p, f, _s in inflight:
                    f.cancel()
                inflight.clear()
                # the file is read again from its start, the events before the split for
                # their state only (table maps, GTID, tx_seq, character sets), as --jobs 1 has it
                rest = Piece(piece.path, piece.file_index, 4, None, None,
                             planner.starts[piece.path], None,
                             piece.start if piece.start > 4 else None)
                continue
            outcome.merge(r)
            if stats is not None and r.stats is not None:
                stats.merge(r.stats)
            lead = merge.lead(r) if merge is not None else ""
            if lead:
                emit(lead)
            if r.text:
                emit(r.text)
            if r.text_file:
                write.file(r.text_file, r.text_size)
            slots.give(slot)
            if progress is not None:
                done = min(total, done + ((piece.stop or _size(piece.path)) - piece.start))
                progress(done, total)
            if r.rotated and not inflight and planner.idle():
                paths.append(r.rotated)  # (the next file of the plan: no path repeats)
                outcome.paths.append(r.rotated)
                total += _size(r.rotated)
        if blocks is not None:
            for _k, text in blocks.backwards():
                write(text)
    finally:
        if own:
            executor.close()
        if blocks is not None:
            blocks.close()
    if stats is not None:
        stats.fallbacks = outcome.fallbacks
    return outcome, stats


class _Rest:
    """From this piece on, the parent reads the input (planner.next() gives it)."""

    def __init__(self, piece):
        self.piece = piece


class _Planner:
    """The pieces of `paths` (a list that may grow: --follow-rotate) in input order, planned as
    they are asked for, so that the workers start on the first while the rest is planned:
    next() gives a Piece, a _Rest, or None when everything given so far is planned. A file the
    compiled walk plans (cli/plan.py) gives its pieces as they are found; where that walk stops
    before the file's end (damage, encryption), the rest of the file is the parent's, read from
    the file's start with the events before the rest for their state only. Other files are
    planned whole (plan_file)."""

    def __init__(self, paths, split_bytes, min_bytes):
        self.paths, self.split_bytes, self.min_bytes = paths, split_bytes, min_bytes
        self.index, self.seq = 0, 0  # the next file to plan; GTID events of the files before it
        self.starts = {}  # path -> GTID events of the input before it
        self.walk = None  # (the iterator of a CutWalk, the walk) of the file being planned
        self.queue = deque()
        self.stopped = False

    def idle(self) -> bool:
        return self.walk is None and not self.queue and self.index >= len(self.paths)

    def next(self):
        from .pieces import Piece
        from .plan import cut_walk

        while not self.stopped:
            if self.queue:
                return self.queue.popleft()
            if self.walk is not None:
                it, w = self.walk
                c = next(it, None)
                path, i = w.path, self.index
                if c is not None:
                    return Piece(path, i, c["start"], c["stop"], c["fde_pos"],
                                 self.seq + c["gtids_before"], c["gtid"], state=c.get("state"))
                self.walk = None
                if not w.whole:
                    self.stopped = True
                    return _Rest(Piece(path, i, 4, None, None, self.seq, None,
                                       w.rest if w.rest > 4 else None))
                self.seq += w.gtid_events
                self.index += 1
                continue
            if self.index >= len(self.paths):
                return None
            path = self.paths[self.index]
            self.starts[path] = self.seq
            size = None if _size(path) < self.min_bytes else self.split_bytes
            w = cut_walk(path, size)
            if w is not None:
                self.walk = (iter(w), w)
                continue
            pieces, gtids, whole = plan_file(path, self.index, self.seq, self.split_bytes,
                                             self.min_bytes)
            if not whole:
                self.stopped = True
                return _Rest(pieces[0])
            self.queue.extend(pieces)
            self.seq += gtids
            self.index += 1
        return None


def _sequential(cfg, pieces, outcome, emit, stats, spill=None):
    """The rest of the input in the parent, one piece after another, as --jobs 1 reads it (errors
    raise from where they are met, after the output before them was written). spill
    (flashback): the Backwards its text goes to, as one block."""
    from .pieces import PieceStream, Result, collect, render

    out = Result()
    writer = None
    if cfg.kind == "jsonl":
        from ..output.dump import JsonlWriter
        from .pieces import PieceCharsets

        writer = JsonlWriter(rows_only=cfg.rows_only)
        writer.charsets = PieceCharsets(writer.charsets, pieces[0])  # the file before the first piece
    stream = PieceStream(pieces, outcome.paths, cfg, follow=True, strict=False)
    try:
        render(cfg, stream, out, spill.write if spill is not None else emit, writer, stats,
               check_xa=False)
    finally:
        collect(stream, out)
        outcome.paths[:] = stream.paths
        outcome.merge(out)
    if spill is not None:
        spill.end()


__all__ = ["add_option", "jobs_of", "default_jobs", "wanted", "run", "Outcome", "Executor"]
