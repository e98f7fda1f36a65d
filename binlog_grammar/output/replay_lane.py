"""The compiled replay lane of `dump`: runs of events whose replay form (output/replay.py's
Replay.lines, what `mariadb-binlog FILE` prints, with -v/-vv and -s as given) C writes straight
from the file's bytes (binlog_grammar.native._lane's Lane.replay, generated from
codegen/templates/native_replay.h.j2), byte for byte what Replay writes for them.

It shares the text lane's state (output/text_lane.py: the tables the Python path has read, their
plans, the ids) and its scheme: the lane runs until an event it does not write, the stream reads
that one as before (binlog.stream: `Stream.lane`), Replay writes it and the lane learns from it.
What it writes: MariaDB GTIDs whose session lines (domain, server, skip_parallel_replication) the
script already has, MySQL's GTIDs (mariadb-binlog's ignorable events), XIDs, ANNOTATE_ROWS whose
statement quoting.comment leaves as it is, and whole statements of row events (the TABLE_MAPs of
known tables and the rows events with a plan, up to STMT_END_F): their header lines, one BINLOG
block of the events' bytes (compressed rows events as their inflated twin, as replay.event_bytes
makes them), the -v/-vv rows and the row count. A statement is written whole or not at all, and
the lane starts only where Replay holds none (its cache and held headers empty), so no statement
is ever half the lane's.

The script's state crosses at every hand-over: the lane is given Replay's GTID session (domain,
server, parallel) and pending ANNOTATE_ROWS lines, and Replay is given back the pending lines and
the last header time. Every text the lane writes that is not a number, a time text or base64 is
read here from Replay itself (`replay_texts`: Replay's handlers run on probe events), and the time
texts are Replay's (`_head`, in the local time zone), given to the lane per second when it asks:
C computes no time zone and quotes no name.

The lane runs for `dump`'s replay form when the compiled backend runs, the stream reads every
event as it is (no filter, window, --skip-damaged, --server-version, --rewrite-db,
--print-table-metadata, and no `events` of its own: cli/mysqlbinlog_opts.py's --offset, server id
and domain rules wrap it) and --base64-output is not NEVER and -H is not given.
"""
from __future__ import annotations

import copy
import functools

from ..binlog.stream import Written
from ..generated import enums
from ..generated.catalog import EVENTS
from . import quoting
from .lanes import map_window, table_under
from .replay import STMT_END_F, THREAD_SPECIFIC_F, Replay
from .text_lane import MAX_STATEMENT_KEY, MAX_STATEMENTS, TextLane, lane_module, WINDOW

__all__ = ["ReplayLane", "attach", "replay_texts", "raw_writer"]

MAX_TEXT = 1 << 20  # bytes of text per run (the stream yields it, then the lane goes on)
# the seconds around a wanted one given their texts: 64 at first (a small file's span), twice as
# many at each later ask that goes on from the last window, up to 2048 (a long binlog's; half the
# lane's 4096 slots, so a statement's two windows fit); a second far from the last window (a
# jump: a damaged or hostile timestamp) gets a few, and the growth starts again
STAMPS_BEHIND, STAMPS_FIRST, STAMPS_MOST, STAMPS_JUMP = 8, 64, 2048, 8
_PROBE = dict(seq=555, domain=3, server=9, commit=777, log_pos=1234)
# native/replay.h's texts, by index (BG_RT_...)
TEXTS = ("gtid", "cid", "seq_pre", "seq_post", "xid", "commit", "table_map", "annotate",
         "annotate_short", "q", "block_head", "block_tail", "rows_count", "start")
_OPTIONS = {"short": 1, "positions": 2, "row_count": 4, "annotations": 8, "skip_gtids": 16,
            "decode_rows": 32}


class _Rec(dict):
    """A probe's data or header: fields as items and as attributes."""

    def __getattr__(self, name):
        try:
            return self[name]
        except KeyError:
            raise AttributeError(name) from None


class _Flags(int):
    names = ()


def _probe_event(name=None, **data):
    et = EVENTS.get(next((c for c, e in EVENTS.items() if e.name == name), -1)) if name else None
    header = _Rec(timestamp=0, server_id=_PROBE["server"], log_pos=_PROBE["log_pos"],
                  type_code=et.code if et else 0, flags=0)
    ev = _Rec(header=header, checksum=None, end=_PROBE["log_pos"], offset=7, name=name, type=et,
              extra={}, raw=b"", data=_Rec(data))
    return ev


def _after_tab(line: str) -> str:
    return line.split("\t", 1)[1]


@functools.lru_cache(maxsize=None)
def replay_texts() -> dict:
    """What Replay writes around the numbers of the events the lane writes, read from Replay's own
    handlers on probe events: {texts: tuple by TEXTS, gtid_suffix, gtid_info, rows_label,
    ignorable, twin, width}. A SpecError-free ValueError when Replay no longer writes them in a
    form the lane can follow (then the lane stays off: tests/native/test_replay_lane.py fails)."""
    p = _PROBE
    t = {}
    # a GTID by flags2: its header's words, START TRANSACTION, the parallel flag, the commit id
    flags = {name: bit for bit, name in enums.MARIADB_GTID_FLAGS2.items()}
    xa = flags.get("FL_PREPARED_XA", 0) | flags.get("FL_COMPLETED_XA", 0)
    suffix, info = [None] * 256, bytearray(256)
    ident = f"{p['domain']}-{p['server']}-{p['seq']}"
    rp, ev = Replay(), _probe_event("GTID_EVENT", domain_id=p["domain"], seq_no=p["seq"],
                                    commit_id=p["commit"], xid=None)
    for f2 in range(256):
        ev.data["flags2"] = f2
        rp.parallel = rp.domain = rp.server = None  # a fresh script's session: every SET line
        lines = rp._gtid_event(ev, ev.data, None)
        head = _after_tab(lines[0])
        t["gtid"], rest = head.split(ident, 1)
        bits = 0
        cid = f" cid={p['commit']}"
        if rest.startswith(cid.split(str(p["commit"]))[0]) and str(p["commit"]) in rest:
            t["cid"], rest = rest.split(str(p["commit"]), 1)
            bits |= 4
        seq = next(i for i, line in enumerate(lines) if line.endswith(f"={p['seq']}*/" + "/*!*/;"))
        t["seq_pre"], post = lines[seq].split(str(p["seq"]))
        t["seq_post"] = post + "\n"
        parallel = [line for line in lines if "skip_parallel_replication=" in line]
        if parallel and parallel[0].split("=")[1].startswith("1"):
            bits |= 2
        start = "".join(line + "\n" for line in lines[seq + 1:])
        if start:
            t["start"] = start
            bits |= 1
        if not f2 & xa:
            suffix[f2], info[f2] = rest, bits
    ev = _probe_event("XID_EVENT", xid=p["seq"])
    lines = Replay()._xid_event(ev, ev.data, None)
    t["xid"] = _after_tab(lines[0]).split(str(p["seq"]))[0]
    t["commit"] = "".join(line + "\n" for line in lines[1:])
    ev = _probe_event("TABLE_MAP_EVENT", db="d", table="t", table_id=p["seq"])
    head = _after_tab(Replay()._table_map_event(ev, ev.data, None)[0])
    t["table_map"], summary = head.split(":", 1)
    if ":" + summary != quoting.comment(f": {quoting.ident('d')}.{quoting.ident('t')} mapped to "
                                        f"number ") + str(p["seq"]):
        raise ValueError("Replay's Table_map line is not the label, the text lane's summary and "
                         "the table id")
    for short, key in ((False, "annotate"), (True, "annotate_short")):
        rp = Replay(short=short)
        ev = _probe_event("ANNOTATE_ROWS_EVENT", query="q")
        rp._annotate_rows_event(ev, ev.data, None)
        first, q = pending_lines(rp)
        t[key] = (_after_tab(first) if not short else first) + "\n"
        t["q"] = q[:-1]
    # the BINLOG block around an event's base64, and the row count
    raw = bytes(range(256)) * 2
    rp = Replay()
    probe = _probe_event("QUERY_EVENT")
    probe["raw"], probe["type"] = raw, _Rec(row_op=None)
    rp.cache = [_Rec(event=probe)]
    block = rp._flush()
    t["block_head"] = "\n".join(block[:2]) + "\n"
    width = len(block[2].split("\n")[0])
    t["block_tail"] = block[3] + "\n"
    t["rows_count"] = block[4][:-1]
    lane = lane_module()
    if lane is not None and lane.base64_lines(raw, width) != (block[2] + "\n").encode("ascii"):
        raise ValueError("native/base64.h does not write quoting.binlog_statement's lines")
    # rows events' labels, compressed ones' twins, MySQL's GTIDs as ignorable events
    label, ignorable, twin = [None] * 256, [None] * 256, bytearray(256)
    codes = {e.name: c for c, e in EVENTS.items()}
    for code, et in EVENTS.items():
        if et.row_op:
            ev = _probe_event(et.name, table_id=p["seq"], flags=_Flags(0))
            rp = Replay()
            rp._rows(_Rec(event=ev, changes=()))
            label[code] = _after_tab(rp.held[0]).split(str(p["seq"]))[0].encode()
            if "_COMPRESSED" in et.name:
                twin[code] = codes.get(et.name.replace("_COMPRESSED", ""), 0)
        elif et.name in ("GTID_LOG_EVENT", "ANONYMOUS_GTID_LOG_EVENT"):
            lines = Replay().lines(_Rec(event=_probe_event(et.name)))
            ignorable[code] = (_after_tab(lines[1]) + "\n"
                               + "".join(line + "\n" for line in lines[2:])).encode()
    missing = set(TEXTS) - set(t)
    if missing:
        raise ValueError(f"Replay's texts not found: {sorted(missing)}")
    enc = tuple(t[k].encode() for k in TEXTS)
    return dict(texts=enc, gtid_suffix=tuple(s.encode() if s is not None else None for s in suffix),
                gtid_info=bytes(info), rows_label=tuple(label), ignorable=tuple(ignorable),
                twin=bytes(twin), width=width)


def pending_lines(rp) -> list:
    """The lines of the ANNOTATE_ROWS Replay holds for the next TABLE_MAP ([] none): its lines,
    or the (event, data) it makes them from."""
    held = rp.annotate
    if held is None:
        return []
    if isinstance(held, tuple):
        return rp._annotate_lines(*held, at=int(held[0].offset))
    return list(held)


def stamps(first: int, count: int) -> bytes:
    """The time texts of `count` seconds from `first`, as Replay's header lines write them."""
    rp = Replay()
    out = []
    for ts in range(first, first + count):
        ev = _probe_event()
        ev.header["timestamp"] = ts
        out.append(rp._head(ev, "")[1:16])
    text = "".join(out).encode("ascii")
    if len(text) != 15 * count:
        raise ValueError("a time text that is not 15 characters")
    return text


def attach(stream, replay):
    """Let the compiled replay lane write runs of the stream's events for `replay` (a Replay)
    when the compiled backend runs and the stream reads every event as it is; the lane, or
    None. A new Replay (the next file) is the lane's `replay` from then on."""
    mod = lane_module()
    if mod is None or replay.never or getattr(replay, "hexdump", False) \
            or "events" in vars(stream) \
            or not stream.filters.keeps_all or stream.window.active \
            or stream.skip_damaged or stream.server is not None \
            or stream.rewrite or stream.table_metadata or not hasattr(mod, "STAMP"):
        return None
    try:
        replay_texts()
    except (ValueError, IndexError, StopIteration, KeyError, AttributeError):
        return None  # Replay writes something the lane cannot follow: Python writes it all
    stream.lane = ReplayLane(mod, replay, stream.verify_checksum)
    return stream.lane


def raw_writer(out):
    """stdout's byte buffer when stdout writes UTF-8 with surrogateescape (the lane's runs are
    the UTF-8 bytes it wrote, what `out` would write of them), else None."""
    import codecs

    try:
        if codecs.lookup(out.encoding).name != "utf-8" or out.errors != "surrogateescape":
            return None
    except (AttributeError, TypeError, LookupError):
        return None
    return getattr(out, "buffer", None)


class ReplayLane(TextLane):
    """Stream.lane for `dump`'s replay form: after each event the stream reads (and Replay
    wrote), `after()` writes the events that follow it while it can."""

    def __init__(self, mod, replay, verify_checksum: bool = True):
        super().__init__(mod, verify_checksum)
        self.replay = replay
        self.raw = True  # Written.text as the UTF-8 bytes the lane wrote
        self.runs = self.stopped = 0  # runs that wrote events; runs that stopped at an event
        self._ready = None  # the Lane replay_setup() was given to
        self._stamp_of = {}
        self._ahead = STAMPS_FIRST
        self._window = (-1, -1 - STAMPS_FIRST)  # the seconds given texts last
        self._states, self._learned = {}, 0  # session states by number; statements learned

    def _state(self, rp) -> int:
        """The number of Replay's session state (what its QUERY_EVENT lines depend on), -1 when
        too many were seen to number more."""
        key = (rp.db, rp.thread_id, rp.flags2, rp.sql_mode, rp.auto_inc, rp.charset,
               rp.time_zone, rp.lc_time_names, rp.collation_db, rp.mariadb, rp.short)
        n = self._states.get(key)
        if n is None and len(self._states) < MAX_STATEMENTS:
            n = self._states[key] = len(self._states)
        return -1 if n is None else n

    def _statement(self, ev, phl, crc):
        """A QUERY_EVENT Replay just wrote: the lines it writes for the same statement under the
        session state it left (Replay run again on a copy of itself: a statement that changed
        the session writes no session line the second time), for the lane to write the same
        statement again under that state."""
        rp = self.replay
        if self._ready is not self.cfg or self._learned >= MAX_STATEMENTS or \
                len(ev.raw) > MAX_STATEMENT_KEY:
            return
        state = self._state(rp)
        probe = copy.copy(rp)
        try:
            lines = probe._query_event(ev, ev.data, None)
        except (ValueError, TypeError, KeyError, AttributeError, UnicodeError):
            return
        if state < 0 or self._state(probe) != state:
            return
        d, ts, at, pre = ev.data, int(ev.header.timestamp), 0, ""
        if not rp.short:
            head = f"Query\tthread_id={int(d.thread_id)}\texec_time={int(d.exec_time)}" \
                   f"\terror_code={int(d.error_code)}"
            text = lines[0].split("\t", 1)[-1] if lines else ""
            if not text.startswith(head):
                return
            pre, at = text[len(head):] + "\n", 1
        mark = f"={ts}"
        stamp = next((k for k in range(at, len(lines)) if mark in lines[k]), None)
        if stamp is None:
            return
        pre += "".join(line + "\n" for line in lines[at:stamp])
        left, right = lines[stamp].split(mark, 1)
        post = right + "\n" + "".join(line + "\n" for line in lines[stamp + 1:])
        if self.cfg.replay_statement(bytes(ev.raw), phl, crc, state,
                                     (pre + left + "=").encode("utf-8", "surrogateescape"),
                                     post.encode("utf-8", "surrogateescape")):
            self._learned += 1

    def _setup(self, cfg):
        if self._ready is cfg:
            return
        t = replay_texts()
        rp = self.replay
        options = sum(bit for name, bit in _OPTIONS.items() if getattr(rp, name, False))
        cfg.replay_setup(t["texts"], t["gtid_suffix"], t["gtid_info"], t["rows_label"],
                         t["ignorable"], t["twin"], t["width"], options, rp.verbose, STMT_END_F,
                         THREAD_SPECIFIC_F)
        self._ready = cfg
        self._states, self._learned = {}, 0

    def _stamps(self, cfg, ts: int):
        lo, hi = self._window
        if lo <= ts <= hi + STAMPS_FIRST:  # time going on: a longer window each time
            first, count = max(0, ts - STAMPS_BEHIND), STAMPS_BEHIND + self._ahead
            self._ahead = min(2 * self._ahead, STAMPS_MOST)
        else:  # the first ask, or a jump
            first, count = max(0, ts - STAMPS_JUMP), 2 * STAMPS_JUMP
            self._ahead = STAMPS_FIRST
        count = min(count, 0x100000000 - first)
        self._window = (first, first + count)
        text = stamps(first, count)
        cfg.replay_stamps(first, text)
        if len(self._stamp_of) > 1 << 16:
            self._stamp_of.clear()
        for k in range(count):
            self._stamp_of[first + k] = text[15 * k:15 * k + 15].decode("ascii")

    def after(self, ev, f, decoder, stop=None):
        """A Written run of the events after `ev` and before offset `stop` (None: the file's
        end); None when the lane writes none."""
        if f.path != self.path:
            self._start(f)
            self._ready = None
        cfg = self._config(f)
        if cfg is None:
            return None
        self._setup(cfg)
        self._learn(ev, decoder)
        rp = self.replay
        if rp.cache or rp.held:
            return None  # a statement Replay holds: it writes the statement to its end
        return self._run(cfg, f, ev.end, stop)

    def _run(self, cfg, f, pos, stop):
        rp = self.replay
        start = pos
        annotate = None if rp.annotate is None else \
            "".join(line + "\n" for line in pending_lines(rp)).encode("utf-8", "surrogateescape")
        texts, gtid, gtids, tables, last_ts, asked = [], None, 0, {}, -1, set()
        session = tuple(-1 if v is None else int(v) for v in (rp.domain, rp.server, rp.parallel))
        thread = -1 if rp.thread_id is None else int(rp.thread_id)
        state = self._state(rp)
        while True:
            if self.map is None or not self.base <= pos or \
                    pos + WINDOW // 2 > self.base + len(self.map):
                self.map, self.base = map_window(f.path, pos, WINDOW)
                if self.map is None:
                    break
            end_of_map = self.base + len(self.map)
            limit = end_of_map if stop is None else min(stop, end_of_map)
            (text, end, reason, need, g, n, assigned, annotate, ts) = cfg.replay(
                self.map, self.base, pos, limit, MAX_TEXT, *session, annotate, state, thread)
            if end != pos:
                texts.append(text)
                gtid, gtids, last_ts = g or gtid, gtids + n, ts if ts >= 0 else last_ts
                for tid, reg in assigned:
                    self.ids[tid] = reg
                    tables[tid] = table_under(self.by_id, self.regs, reg, tid)
                pos = end
            if reason == self.mod.STAMP and need not in asked:  # each second once a run:
                asked.add(need)  # two that share the lane's slot end it (Python reads on)
                self._stamps(cfg, need)
                continue
            break
        if pos == start:
            return None
        self.runs += 1
        self.stopped += reason == self.mod.EVENT
        rp.annotate = None  # whatever it held went with the first event written, and the lane
        # ends a run before an ANNOTATE_ROWS it wrote and no event printed yet
        if last_ts >= 0 and last_ts in self._stamp_of:
            rp._ts, rp._stamp = last_ts, self._stamp_of[last_ts]
        text = b"".join(texts)
        return Written(text if self.raw else text.decode("utf-8", "surrogateescape"), pos, gtid,
                       gtids, tables)

    def put(self, item, out) -> bool:
        """Write `item` of the stream to `out` (a text stream) when it is a run this lane wrote
        (its UTF-8 bytes to out's byte buffer when out writes UTF-8 with surrogateescape, else
        decoded through out); False for any other item."""
        if type(item) is not Written:
            return False
        text = item.text
        raw = raw_writer(out) if isinstance(text, bytes) else None
        if raw is None:
            out.write(text if isinstance(text, str) else text.decode("utf-8", "surrogateescape"))
        else:
            out.flush()  # the text written through out so far goes first
            raw.write(text)
        return True

    def go_on(self, f, pos, stop=None):
        """Not for the replay form (its state crosses from the event before): None."""
        return None
