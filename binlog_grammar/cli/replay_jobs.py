"""`--jobs N` for dump's mariadb-binlog forms (output/replay.py: the replay script, -v/-vv, -s,
--skip-gtids, --base64-output=decode-rows): the splits of cli/parallel.py, each written by a
worker that starts with the Replay state the sequential run holds at the split's start, merged
in input order; stdout, stderr and the exit status those of `--jobs 1`.

What Replay holds between events (its PRINT_EVENT_INFO), and where a split gets it from:

- the session of the last statements: `db`, `thread_id`, `flags2`, `sql_mode`, `auto_inc`,
  `charset`, `time_zone`, `lc_time_names`, `collation_db`, which only Replay._query_event sets,
  some as the last value seen (auto_inc, lc_time_names, collation_db), some only when a
  statement carries them (flags2, sql_mode, charset, time_zone), `db` not by BEGIN/COMMIT/XA,
  `thread_id` by the first statement and then only by thread-specific ones: the statements of
  the file before the split are run through a Replay of their own. The planner's header walk
  lists them with each cut (cli/plan.py: Piece.state, up to 256; a MariaDB row-based binlog has
  a statement only per DDL), and replay_from runs them; where it lists none (more of them, a
  file scan_file planned) the worker finds them by a compiled header walk that reads no other
  event (replay_at; one worker's walk goes on from its last split, as PieceCharsets's does);
- the GTID session lines (`domain`, `server`, `parallel`): the last GTID_EVENT before the
  split, the only one parsed (listed by the planner too);
- `mariadb` and `header_len`: the last FORMAT_DESCRIPTION_EVENT before it (the walk runs it);
- `_ts`/`_stamp`: a cache of the last header's time text, the same whatever it holds;
- what crosses an event: `cache` and `held` (a statement's TABLE_MAPs and rows events before its
  STMT_END_F), `annotate` (an ANNOTATE_ROWS for the next event); a split ends at a transaction
  boundary, where they are empty unless the binlog is odd: a worker that ends with one of them
  set hands the split to the parent;
- `loads`, LOAD DATA's files, named by the first free name in a folder: the order they are made
  in is the script's, so a LOAD DATA block (BEGIN_LOAD_QUERY, APPEND_BLOCK, EXECUTE_LOAD_QUERY)
  in a split or before it hands the rest to the parent, and no worker makes a file;
- a file's first lines: a new Replay at each file's FORMAT_DESCRIPTION_EVENT at offset 4, after
  `DELIMITER ;` and `DELIMITER /*!*/;` when anything was printed before (the parent writes them
  before the split's text), and the first file's FORMAT_DESCRIPTION_EVENT printed first when its
  first event is another one (that split goes to the parent);
- the header and footer: the parent's, once.

What the walk cannot know (an event before the split that does not parse, a compressed
transaction payload whose statements are inside it, a walk that stops before the split) and
what a worker meets (damage, an error, rows without their TABLE_MAP, the pending state above)
hand the rest of the input to the parent, as parallel.py does for the other commands: the parent
reads the file again from its start with one Replay (and the compiled lane), writes nothing of
the events before the split and goes on as --jobs 1.

dump runs this only when --jobs N or $BINLOG_GRAMMAR_JOBS asks for it (BY_DEFAULT), the compiled
replay lane may run (no filter, window, -H, NEVER,
--skip-damaged, --server-version, --rewrite-db, --print-table-metadata, --follow-rotate, server
id or domain rule, --offset) and parallel.wanted's sizes: when in doubt, one process.
"""
from __future__ import annotations

import copy
import os
from typing import Optional

from ..binlog.stream import StreamEvent, Written
from ..output.replay import Replay
from . import parallel
from .pieces import NeedsOrder, PieceStream, Result, collect, kept_lane
from .plan import REPLAY_STATE, REPLAY_UNSURE
from .walks import Last, picked

NEW_FILE = "DELIMITER ;\nDELIMITER /*!*/;\n"  # what the replay script says between two files
_APPLY = REPLAY_STATE  # the events whose lines set Replay's state (cli/plan.py lists them)
_LOADS = tuple(n for n in REPLAY_UNSURE if "LOAD" in n or "APPEND" in n)


# --jobs's default (the cores) splits these forms too only when this says so: on a shared 2-core
# machine two workers took more wall time than one process (docs/benchmarks.md, "dump --jobs for
# mariadb-binlog's forms"), so until an idle machine shows the gain only an explicit --jobs N
# or $BINLOG_GRAMMAR_JOBS splits them: when in doubt, one process
BY_DEFAULT = False


def wanted(args, stream) -> bool:
    """Split dump's replay form across processes (see the module)."""
    if not BY_DEFAULT and not getattr(args, "jobs", None) and not os.environ.get(parallel.ENV_JOBS):
        return False
    if args.base64_output == "never" or getattr(args, "mysql_hexdump", False) \
            or getattr(args, "follow_rotate", False) or "events" in vars(stream) \
            or not stream.filters.keeps_all or stream.window.active or stream.skip_damaged \
            or stream.server is not None:
        return False
    return parallel.wanted(args, stream, "replay")


class _NoLoads:
    """A worker's Replay.loads: LOAD DATA's files are the parent's to make, in order."""

    def __getattr__(self, name):
        raise NeedsOrder("LOAD DATA")


def run(args, stream, progress, forms, first):
    """dump's replay form of `stream` with args.jobs processes (cli/replay_opts.run_replay):
    `forms` Replay's keywords, `first` the first input file as named."""
    from .reading import report_damage, stdout

    out = stdout()
    replay = Replay(**forms)
    merge = Merge(forms, first, "events" if forms["decode_rows"] else "transactions")
    try:
        out.write("".join(line + "\n" for line in replay.header()))
        outcome, _ = parallel.run(args, stream, "replay", out.write, out=out, merge=merge)
        out.write("".join(line + "\n" for line in replay.footer()))
    finally:
        progress.close()
        out.flush()
    return report_damage(outcome)


class Merge:
    """The parent's side: what it writes before a split's text, and the rest read by itself."""

    def __init__(self, forms, first, cut):
        self.started = False  # an event was printed (then a new file starts with NEW_FILE)
        # the workers' Config.replay (render_piece goes by reference, as a module's function)
        self.replay = dict(forms=forms, first=first, render=render_piece)
        self.cut = cut

    def lead(self, r) -> str:
        text = NEW_FILE if self.started and r.new_file else ""
        self.started = self.started or r.events
        return text

    def sequential(self, cfg, pieces, outcome, emit):
        """The rest of the input in the parent as --jobs 1 reads it: the first piece's file from
        its start, nothing written of the events before the piece (pieces[0].skip_to)."""
        import dataclasses

        from ..output.replay_lane import attach

        first = pieces[0]
        cut = first.skip_to
        pieces = [dataclasses.replace(first, skip_to=None)] + list(pieces[1:])
        stream = PieceStream(pieces, outcome.paths, cfg, follow=True, strict=False)
        forms = cfg.replay["forms"]
        replay = Replay(**forms)
        lane = attach(stream, replay)
        if lane is not None and cut is not None:
            _stop_at(lane, first.path, cut)
        quiet, seen, started = cut is not None, False, self.started
        out = Result()
        try:
            for se in stream.events():
                if type(se) is Written:
                    if quiet and se.end <= cut:
                        continue
                    quiet = False
                    text = se.text
                    emit(text if isinstance(text, str) else text.decode("utf-8", "surrogateescape"))
                    continue
                ev = se.event
                fde = ev.name == "FORMAT_DESCRIPTION_EVENT" and int(ev.offset) == 4
                if quiet and (int(ev.offset) >= cut or (fde and seen)):
                    quiet = False
                seen = True
                write = (lambda text: None) if quiet else emit
                if started and fde:
                    write(NEW_FILE)
                    replay = Replay(**forms)
                    if lane is not None:
                        lane.replay = replay
                if not started and ev.name != "FORMAT_DESCRIPTION_EVENT":
                    first_fde = first_format_event(cfg.replay["first"])
                    if first_fde is not None:
                        lines = replay.lines(first_fde)
                        if not forms["decode_rows"]:
                            write("".join(line + "\n" for line in lines))
                started = True
                lines = replay.lines(se)
                if lines:
                    write("".join(line + "\n" for line in lines))
        finally:
            self.started = started
            collect(stream, out)
            outcome.paths[:] = stream.paths
            outcome.merge(out)


def _stop_at(lane, path, cut):
    """The lane's runs in `path` before offset `cut` end there (the parent writes from it)."""
    after = lane.after

    def limited(ev, f, decoder, stop=None):
        if f.path == path and ev.end < cut:
            stop = cut if stop is None else min(stop, cut)
        return after(ev, f, decoder, stop)

    lane.after = limited


def first_format_event(path):
    """The FORMAT_DESCRIPTION_EVENT of the file at `path` as a StreamEvent, None when unread."""
    from ..binlog.parse import FormatState, parse_event
    from ..errors import BinlogError
    from ..output.flashback_binlog import FormatEvents

    if path is None:
        return None
    raw = FormatEvents()(path, 5)
    if raw is None:
        return None
    try:
        return StreamEvent(parse_event(raw, FormatState(), file=path, offset=4))
    except (BinlogError, ValueError):
        return None


def render_piece(cfg, stream, out, write, raw=False):
    """A worker's split (pieces.render): its text through write(), and on `out` whether it starts
    a file (new_file) and printed anything (events)."""
    from ..output.replay_lane import attach

    piece = stream.pieces[0]
    forms = cfg.replay["forms"]
    replay = Replay(**forms) if piece.start <= 4 else \
        replay_from(piece.path, piece.state, forms) or replay_at(piece.path, piece.start, forms)
    replay.loads = _NoLoads()
    lane = attach(stream, replay)
    if lane is not None and len(stream.pieces) == 1:  # the tables and plans of its last piece
        lane = stream.lane = kept_lane(cfg, lane, piece.path)
        lane.replay = replay
    out.new_file = out.events = False
    for se in stream.events():
        if type(se) is Written:
            text = se.text
            write(text if raw or isinstance(text, str)
                  else text.decode("utf-8", "surrogateescape"))
            continue
        ev = se.event
        if not out.events:
            if piece.start == 4 and (ev.name != "FORMAT_DESCRIPTION_EVENT" or int(ev.offset) != 4):
                raise NeedsOrder("a file that does not start with its FORMAT_DESCRIPTION_EVENT")
            out.new_file = piece.start == 4
            out.events = True
        if ev.name in _LOADS:
            raise NeedsOrder("LOAD DATA")
        lines = replay.lines(se)
        if lines:
            write("".join(line + "\n" for line in lines))
    if replay.cache or replay.held or replay.annotate is not None:
        raise NeedsOrder("a statement or ANNOTATE_ROWS open at the split's end")


def replay_from(path, state, forms) -> Optional[Replay]:
    """replay_at's Replay from the events cli/plan.py listed before the split (Piece.state: the
    statements and format events, the last GTID_EVENT), with no walk of the file; None when it
    listed none, or a format event after the file's first (the walk then reads each event under
    the format it was written with)."""
    from ..binlog.reader import FDE_CODE, FormatState, first_format_event, update_state
    from ..errors import BinlogError

    if state is None:
        return None
    refs, gtid = state
    try:
        fde = first_format_event(path)[0]
    except BinlogError as e:
        raise NeedsOrder(str(e)) from None
    st = FormatState()
    update_state(st, fde)
    rp = Replay(**forms)
    rp.lines(StreamEvent(fde))
    for ref in refs:
        ev = _parse(path, ref, st)
        if ev.type is None or ev.type.code == FDE_CODE or ev.name not in _APPLY:
            return None
        rp.lines(StreamEvent(ev))
        if rp.annotate is not None or rp.cache or rp.held:
            raise NeedsOrder("a statement open before the split")
    if gtid is not None:
        rp.lines(StreamEvent(_parse(path, gtid, st)))
    return rp


_WALKED = {}  # path -> [file key, offset walked to, FormatState, Replay, last GTID (pos, length)]


def replay_at(path, stop, forms) -> Replay:
    """A Replay holding what the sequential run's holds before offset `stop` of `path` (a
    transaction boundary), from the file's statements, last GTID_EVENT and format events
    before it; NeedsOrder where these do not say (see the module). A worker's splits of a file
    come in input order: the walk goes on from the last one's."""
    from ..binlog.framing import Walk
    from ..binlog.reader import FDE_CODE, FormatState, event_name, first_format_event
    from ..binlog.reader import update_state
    from ..errors import BinlogError

    try:
        st = os.stat(path)
    except OSError as e:
        raise NeedsOrder(str(e)) from None
    key = (st.st_ino, st.st_size, st.st_mtime_ns, repr(sorted(forms.items())))
    got = _WALKED.get(path)
    if got is None or got[0] != key or got[1] > stop:
        state = FormatState()
        try:
            fde = first_format_event(path)[0]
        except BinlogError as e:
            raise NeedsOrder(str(e)) from None
        update_state(state, fde)
        rp = Replay(**forms)
        rp.lines(StreamEvent(fde))
        got = [key, 4, state, rp, None]
    _WALKED[path] = got
    _key, at, state, rp, gtid = got
    if at < stop:
        try:
            gtid = _walk(path, at, stop, st.st_size, state, rp, gtid, Walk, event_name, FDE_CODE)
        except BaseException:
            del _WALKED[path]  # half walked: the next split walks the file again
            raise
        got[1], got[4] = stop, gtid
    out = copy.copy(rp)
    out.cache, out.held = [], []
    if gtid is not None:
        out.lines(StreamEvent(_parse(path, gtid, state)))
    return out


def _walk(path, at, stop, size, state, rp, gtid, Walk, event_name, FDE_CODE):
    """Run the statements and format events of `path` from `at` to `stop` through `rp`; the
    (offset, length) of the last GTID_EVENT before `stop` when rp has not run it (else `gtid`)."""
    from ..binlog.reader import update_state

    def codes():
        names = {c: event_name(c, state) for c in range(256)}
        apply = {c for c, n in names.items() if n in _APPLY}
        refuse = {c for c, n in names.items()
                  if n in _LOADS or n == "START_ENCRYPTION_EVENT"} | _payload_codes()
        gtids = bytearray(names[c] == "GTID_EVENT" for c in range(256))
        return apply, refuse, gtids

    apply, refuse, gtids = codes()
    keep = bytearray(c in apply or c in refuse for c in range(256))
    last = Last(gtids)
    walk = Walk(path, state.header_len, at, stop, size=size, short=True)
    for pos, code, length in picked(walk, keep, last):
        if pos == 4:
            continue  # the file's own, run when the walk began
        if code in refuse:
            raise NeedsOrder("a LOAD DATA block, a transaction payload or encryption before "
                             "the split")
        ev = _parse(path, (pos, length), state)
        if code == FDE_CODE:
            if last.ref is not None:  # parsed with the format it was written under
                gtid, last.ref = (last.ref[0], last.ref[2]), None
            if gtid is not None:
                rp.lines(StreamEvent(_parse(path, gtid, state)))
                gtid = None
            update_state(state, ev)
            apply, refuse, again = codes()
            if again != gtids:
                raise NeedsOrder("a format event that moves the GTID event's code")
            keep[:] = bytes(c in apply or c in refuse for c in range(256))
        rp.lines(StreamEvent(ev))
        if rp.annotate is not None or rp.cache or rp.held:
            raise NeedsOrder("a statement open before the split")
    if walk.stop is None or (walk.stop.status != "end" and walk.stop.pos < stop):
        raise NeedsOrder("the file's events end before the split")
    return gtid if last.ref is None else (last.ref[0], last.ref[2])


def _payload_codes():
    from .pieces import HAS_INNER

    return set(HAS_INNER)


def _parse(path, ref, state):
    from ..binlog.reader import parse_event
    from ..errors import BinlogError

    pos, length = ref
    with open(path, "rb") as fh:
        fh.seek(pos)
        raw = fh.read(length)
    try:
        return parse_event(raw, state, file=path, offset=pos, verify_checksum=False)
    except (BinlogError, ValueError) as e:
        raise NeedsOrder(f"an event before the split that does not parse: {e}") from None


__all__ = ["wanted", "run", "Merge", "render_piece", "replay_at", "replay_from", "first_format_event", "NEW_FILE"]
