"""What one worker of `--jobs N` does (binlog_grammar.cli.parallel runs it): read pieces of the
input (spark.split's transaction-aligned splits, or a whole file) as one binlog.stream.Stream
would read those offsets of the whole input, and render them as the command does, into a
Result the parent merges in input order.

Nothing here knows how it is run: a process pool (today), threads (once the compiled reader
releases the GIL) or the parent itself (a piece that needs the state of everything before it).
"""
from __future__ import annotations

import codecs
import os
import re
from collections import Counter
from dataclasses import dataclass, field
from typing import Optional

from ..binlog import boundaries as B
from ..binlog.reader import BinlogFile, inner_events_or_damage
from ..binlog.rows import RowDecoder
from ..binlog.stream import Filters, Stream, StreamEvent, Written, gtid_of
from ..generated.catalog import EVENTS
from .walks import picked

# the event codes Stream._all_events tells apart (the same sets, from the catalog's roles)
GTID_CODES = frozenset(c for c, e in EVENTS.items() if e.role in B.GTID_ROLES)
ROWS_CODES = frozenset(c for c, e in EVENTS.items() if e.row_op)
TABLE_MAP_CODE = next(c for c, e in EVENTS.items() if e.name == "TABLE_MAP_EVENT")
HAS_INNER = frozenset(c for c, e in EVENTS.items() if any(d.target == "events" for d in e.decode))


def table_of(decoder, e):
    if e.type is not None and e.type.name == "TABLE_MAP_EVENT":
        return decoder.table_map(e)
    if e.type is not None and e.type.row_op:
        return decoder.tables.get(int(e.data.table_id))
    return None


@dataclass
class Config:
    """The reading and rendering options of one command run (picklable, sent to the workers)."""

    kind: str  # text, hexdump, jsonl, sql, flashback, stats
    filters: Filters
    verify_checksum: bool = True
    schemas: Optional[dict] = None
    skip_damaged: bool = False
    server_version: Optional[str] = None
    follow_rotate: bool = False
    cut: str = "transactions"
    rows_only: bool = False
    top: int = 10
    # where a worker leaves its text as a file for the parent to copy out (None: in the Result),
    # encoded as the parent's standard output encodes it
    spool: Optional[str] = None
    encoding: str = "utf-8"
    replay: Optional[dict] = None  # kind "replay": Replay's keywords, its renderer (replay_jobs)


@dataclass
class Piece:
    """Offsets start <= offset < stop (None: the file's end) of input file `file_index`, read
    after the FORMAT_DESCRIPTION_EVENT at fde_pos (None: from the file's start). tx_seq_base:
    GTID events of the input before `start`; None: go on from the piece before (one file after
    another, as Stream does). gtid: the GTID in force at `start`."""

    path: str
    file_index: int
    start: int = 4
    stop: Optional[int] = None
    fde_pos: Optional[int] = None
    tx_seq_base: Optional[int] = 0
    gtid: Optional[str] = None
    skip_to: Optional[int] = None  # events before this offset only set the state (not yielded)
    # dump's replay form: cli/plan.py's (statements and format events before `start`, the last
    # GTID_EVENT before it), each (offset, length); None: its worker walks the file for them
    state: Optional[tuple] = None


@dataclass
class Result:
    """What reading and rendering some pieces gave."""

    text: str = ""  # the command's output for the pieces (flashback: the pieces' blocks, last first)
    text_file: Optional[str] = None  # or that output in this file of cfg.spool (encoded)
    text_size: Optional[int] = None  # its first bytes that hold it (None: all; the file is yours)
    damage: list = field(default_factory=list)
    undecoded: list = field(default_factory=list)
    crossed: dict = field(default_factory=dict)  # Window.crossed of the pieces
    fallbacks: dict = field(default_factory=dict)  # path -> Counter
    stats: object = None  # output.stats.Stats of the pieces
    refused: list = field(default_factory=list)  # sql: the refusals, as text
    rotated: Optional[str] = None  # follow_rotate: the file the last piece's ROTATE_EVENT names
    sequential: str = ""  # why the pieces must be read again in the parent, after those before


class PieceStream(Stream):
    """A Stream over pieces of `paths` (the whole input, for the window's first and last file)."""

    def __init__(self, pieces, paths, cfg: Config, follow=False, strict=True):
        super().__init__([], cfg.filters, cfg.verify_checksum, cfg.schemas, cfg.skip_damaged,
                         None, cfg.server_version, cfg.follow_rotate, True, cfg.cut)
        self.paths = list(paths)
        self.pieces = list(pieces)
        self.rotate = cfg.follow_rotate
        self.follow = follow  # go on into the file a ROTATE_EVENT names (else only say which)
        self.rotated = None
        # strict (a worker): rows whose TABLE_MAP_EVENT is not in the piece need the pieces
        # before it (a damaged TABLE_MAP leaves the earlier mapping of its table id in force)
        self.strict = strict

    def _table(self, decoder, e):
        t = table_of(decoder, e)
        if t is None and self.strict and e.type is not None and e.type.row_op:
            raise NeedsOrder("rows without their TABLE_MAP_EVENT")
        return t

    def _all_events(self):
        seq = 0
        n = 0
        while n < len(self.pieces):
            piece = self.pieces[n]
            n += 1
            i, path = piece.file_index, piece.path
            if piece.tx_seq_base is not None:
                seq = piece.tx_seq_base
            decoder = RowDecoder(self.schemas)
            kwargs = {"skip_damaged": True} if self.skip_damaged else {}
            mid = piece.fde_pos is not None
            f = BinlogFile(path, self.verify_checksum, start=piece.start if mid else None,
                           format_at=piece.fde_pos if mid else None, **kwargs)
            decoder.fallbacks = f.fallbacks
            self.fallbacks.setdefault(path, Counter())
            gtid = piece.gtid
            server, tables, stop = self.server, decoder.tables, piece.stop
            last = None
            skip, before = piece.skip_to or 0, None
            try:
                for ev in f:
                    if stop is not None and ev.offset >= stop:
                        break
                    if ev.offset < piece.start:
                        continue
                    if server is not None and f.state.server is not server:
                        f.state.server = server
                    code = ev.type.code if ev.type is not None else None
                    if code in GTID_CODES:
                        gtid = gtid_of(ev)
                        seq += 1
                    if ev.offset < skip:  # the file before a split read again: its state only
                        if code == TABLE_MAP_CODE:
                            decoder.table_map(ev)
                        elif code in HAS_INNER:
                            for e in inner_events_or_damage(ev, f.state, self.verify_checksum):
                                table_of(decoder, e)
                        before = Counter(f.fallbacks)  # counted by the splits that read them
                        continue
                    if code in ROWS_CODES:
                        yield i, StreamEvent(ev, self._table(decoder, ev), gtid, decoder, seq,
                                             self._on_undecoded)
                    elif code == TABLE_MAP_CODE:
                        yield i, StreamEvent(ev, decoder.table_map(ev), gtid, decoder, seq)
                    elif code in HAS_INNER:
                        for e in inner_events_or_damage(ev, f.state, self.verify_checksum,
                                                        self.damage if self.skip_damaged else None):
                            yield i, StreamEvent(e, self._table(decoder, e), gtid, decoder, seq,
                                                 self._on_undecoded)
                    else:
                        yield i, StreamEvent(ev, None, gtid, decoder, seq)
                    last = ev
                    ran = self._lane_after(ev, f, decoder, stop) if self.lane is not None else None
                    while ran is not None:  # the events that follow, written by the lane
                        if ran.text:
                            yield i, ran
                        gtid = ran.gtid or gtid
                        seq += ran.gtids
                        tables.update(ran.tables)
                        last = None
                        ran = self._lane_on(f, ran.end, stop)
            finally:
                self.fallbacks[path].update(f.fallbacks - before if before is not None
                                            else f.fallbacks)
            self.damage += getattr(f, "damage", [])
            if stop is None and self.rotate and i == len(self.paths) - 1:
                self.rotated = self._rotated_to(path, last)
                if self.rotated is not None and self.follow:
                    self.paths.append(self.rotated)
                    self.pieces.append(Piece(self.rotated, len(self.paths) - 1, tx_seq_base=None))
                    self.rotated = None

    def _lane_on(self, f, pos, stop):
        """The lane's next run from where its last ended (its text was full, or its window of
        the file): no event read by Python in between (one in every 256 KB of text, a fifth of
        the text workers' time on Python's side); None when it writes none."""
        go_on = getattr(self.lane, "go_on", None)
        ran = go_on(f, pos, stop) if go_on is not None else None
        if ran is None or ran.end == pos:
            return None
        f.skip_to = ran.end
        return ran


class PieceCharsets:
    """output.dump.ServerCharsets for a piece of a file: what the piece's own QUERY_EVENTs say,
    else what those of the file before the piece said (read, when first asked, by a header walk
    that parses only the QUERY_EVENTs and FORMAT_DESCRIPTION_EVENTs before it)."""

    def __init__(self, base, piece):
        self.base = base  # the piece's own
        self.piece = piece
        self.before = None

    def see(self, ev):
        self.base.see(ev)

    # what the compiled JSON-lines lane watches to know when its plans' character sets may have
    # changed (output/jsonl_lane.py): the piece's own answers over those of the file before it,
    # read now (a lane kept from a worker's last piece holds plans made under that piece's
    # answers, which the pieces between may have changed)
    @property
    def server(self):
        return {**self._before().server, **self.base.server}

    @property
    def databases(self):
        return {**self._before().databases, **self.base.databases}

    def _before(self):
        if self.before is None:
            self.before = _charsets_before(self.piece.path,
                                           self.piece.skip_to or self.piece.start)
        return self.before

    def charset(self, file, db):
        own = self.base.databases.get((file, db))
        if own:
            return own
        return self._before().databases.get((file, db)) or self.base.server.get(file) \
            or self.before.server.get(file)


_BEFORE = {}  # path -> [file key, offset walked to, walk stopped early, FormatState, charsets]


def _charsets_before(path, stop):
    """ServerCharsets of the QUERY_EVENTs of `path` before offset `stop`. A worker's pieces of a
    file come in input order: the walk goes on from where the last piece's ended (each piece
    walking the file from its start made the pieces' walks quadratic: 3.2 million events walked
    for the 28 pieces of the 127 MB bench binlog)."""
    from ..binlog.framing import Walk
    from ..binlog.reader import FDE_CODE, FormatState, event_name, first_format_event, parse_event
    from ..binlog.reader import update_state
    from ..errors import BinlogError
    from ..output.dump import ServerCharsets

    out = ServerCharsets()
    if stop <= 4:
        return out
    try:
        st = os.stat(path)
        key = (st.st_ino, st.st_size, st.st_mtime_ns)
    except OSError:
        key = None
    got = _BEFORE.get(path)
    if got is None or key is None or got[0] != key or got[1] > stop:
        state = FormatState()
        update_state(state, first_format_event(path)[0])
        got = [key, 4, False, state, ServerCharsets()]
    _key, at, dead, state, cs = got

    def queries():
        return {c for c in range(256) if B.ROLE_OF.get(event_name(c, state)) == B.STATEMENT_ROLE}

    if not dead and at < stop:
        wanted = queries()
        keep = bytearray(256)  # the codes the walk gives (the others are not read)
        for c in wanted | {FDE_CODE}:
            keep[c] = 1
        walk = Walk(path, state.header_len, at, stop, size=key[1] if key else None, short=True)
        with open(path, "rb") as fh:
            for pos, code, length in picked(walk, keep):
                if pos == 4 or (code not in wanted and code != FDE_CODE):
                    continue
                fh.seek(pos)
                try:
                    ev = parse_event(fh.read(length), state, file=path, offset=pos,
                                     verify_checksum=False)
                except BinlogError:  # damaged: --jobs 1 does not see it either (or stops before)
                    continue
                if code == FDE_CODE:
                    update_state(state, ev)
                    wanted = queries()
                    keep[:] = bytes(c in wanted or c == FDE_CODE for c in range(256))
                else:
                    cs.see(ev)
        dead = walk.stop is None or walk.stop.status != "end"  # the file's events end there
        at = stop
    _BEFORE[path] = [key, at, dead, state, cs]
    out.server, out.databases = dict(cs.server), dict(cs.databases)
    return out


_XA = re.compile(r"\s*XA\b", re.I)


def _has_xa(tx) -> bool:
    if tx.end == "xa_prepare":
        return True
    for se in tx.events:
        ev = se.event
        if B.is_statement_event(ev):
            q = ev.data.get("query") if hasattr(ev.data, "get") else None
            q = q.decode("utf-8", "replace") if isinstance(q, (bytes, bytearray)) else str(q or "")
            if _XA.match(q):
                return True
    return False


class NeedsOrder(Exception):
    """The pieces hold what only a reading of everything before them renders right."""


_KEPT = None  # (key, lane): the text or JSON-lines lane of this worker's last piece


def kept_lane(cfg: Config, fresh, path):
    """The lane for a worker's next piece: when the piece is of the file its last piece was of
    (unchanged, read with the same options), the lane of that piece, which knows the file's
    tables and plans (so the Python path reads the first TABLE_MAP of each table and the first
    rows event of each shape once per worker, not once per piece: a tenth of the workers' time
    on the 127 MB bench binlog), its table ids forgotten (the piece's RowDecoder starts empty,
    and a rows event must find its TABLE_MAP in the piece). The JSON-lines lane also forgets
    the GTID and transaction number, takes the piece's JsonlWriter, and keeps its plans only
    where the piece's character sets are those they were made under (output/jsonl_lane.py)."""
    global _KEPT
    try:
        st = os.stat(path)
    except OSError:
        return fresh
    key = (path, st.st_ino, st.st_size, st.st_mtime_ns, cfg.kind, cfg.rows_only,
           cfg.verify_checksum, repr(cfg.schemas), cfg.server_version, type(fresh), repr(cfg.replay))
    if _KEPT is not None and _KEPT[0] == key and hasattr(_KEPT[1], "forget_ids"):
        _KEPT[1].forget_ids()
        return _KEPT[1]
    _KEPT = (key, fresh)
    return fresh


def render(cfg: Config, stream: PieceStream, out: Result, write, writer=None, stats=None,
           check_xa=True, raw=False, keep=False):
    """Render the stream as the command does, without its header and footer, through write(str).
    writer: dump.JsonlWriter (jsonl); stats: output.stats.Stats (stats). raw: write() takes the
    compiled lane's text as the UTF-8 bytes it wrote too. keep: the stream is one piece, and
    the text or JSON-lines lane of the last such stream may go on with it (kept_lane)."""
    kind = cfg.kind
    if kind == "text":
        from ..output import dump_text
        from ..output.text_lane import attach

        attach(stream)
        if keep and stream.lane is not None and len(stream.pieces) == 1:
            stream.lane = kept_lane(cfg, stream.lane, stream.pieces[0].path)
        if stream.lane is not None and hasattr(stream.lane, "raw"):
            stream.lane.raw = bool(raw)
        for se in stream.events():
            if type(se) is Written:  # a run of events the compiled lane wrote
                write(se.text)
            else:
                write("".join(line + "\n" for line in dump_text.text_lines(se)))
    elif kind == "replay":  # dump's mariadb-binlog forms: cli/replay_jobs.render_piece
        cfg.replay["render"](cfg, stream, out, write, raw)
    elif kind == "hexdump":
        from ..output.hexdump import render as hexdump

        for se in stream.events():
            write(hexdump(se) + "\n")
    elif kind == "jsonl":
        from ..output.jsonl_lane import attach as attach_jsonl

        lane = attach_jsonl(stream, writer)  # runs of records written in C, as UTF-8 bytes
        if keep and lane is not None and len(stream.pieces) == 1:
            lane = stream.lane = kept_lane(cfg, lane, stream.pieces[0].path)
            lane.writer, lane.chained = writer, True  # its own writer: PieceCharsets; _lane_on
        for se in stream.events():
            if type(se) is Written:
                write(se.text if raw else se.text.decode("utf-8", "surrogateescape"))
                continue
            if lane is not None:
                lane.seen(se)
            for line in writer.lines(se):
                write(line + "\n")
    elif kind in ("sql", "flashback"):
        from ..output import formats  # the registry's entry, as the command's header

        def txs():
            for tx in stream.transactions():
                if check_xa and _has_xa(tx):
                    raise NeedsOrder("an XA transaction")  # its two phases may be in two pieces
                yield tx

        refused = []
        # flashback renders each transaction as it is read, as the command does (rows whose
        # table no TABLE_MAP before them maps are refused, not decoded with a later map)
        for line in formats.get(kind).render(txs(), session=False,
                                             on_refused=refused.append):
            write(line if line.endswith("\n") else line + "\n")
        out.refused += [str(e) for e in refused]
    elif kind == "stats":
        for item in stream._grouped():
            if hasattr(item, "events"):
                stats.add_transaction(item)
            else:
                stats.add_event(item)
    else:
        raise ValueError(f"unknown kind {kind!r}")


def collect(stream: PieceStream, out: Result):
    """What the stream noted while it was read, into `out`."""
    out.damage += stream.damage
    out.undecoded += stream.undecoded
    for option, seen in stream.window.crossed.items():
        out.crossed[option] = list(seen)
    for path, c in stream.fallbacks.items():
        out.fallbacks.setdefault(path, Counter()).update(c)
    out.rotated = stream.rotated


def work(cfg: Config, pieces: list, paths: list, spool_file: Optional[str] = None) -> Result:
    """Read and render `pieces` with fresh state (the worker's job). A piece that needs what the
    pieces before it hold (damage, an exception, XA, charset answers it could not know: the
    parent checks these) comes back marked `sequential`. `spool_file`: the file of cfg.spool
    the text is written over (from its start; the parent's, kept), else a new one."""
    out = Result()
    chunks = []
    stream = PieceStream(pieces, paths, cfg)
    writer = stats = None
    if cfg.kind == "jsonl":
        from ..output.dump import JsonlWriter

        writer = JsonlWriter(rows_only=cfg.rows_only)
        writer.charsets = PieceCharsets(writer.charsets, pieces[0])
    elif cfg.kind == "stats":
        from ..output.stats import Stats

        stats = Stats(top=cfg.top)
    spooled = _Spool(cfg, spool_file) if cfg.spool is not None else None
    try:
        render(cfg, stream, out, spooled.write if spooled else chunks.append, writer, stats,
               raw=spooled is not None and spooled.utf8, keep=True)
    except NeedsOrder as e:
        return Result(sequential=str(e))
    except Exception as e:  # noqa: BLE001 - the parent reads it again and meets the error itself
        return Result(sequential=f"{type(e).__name__}: {e}")
    finally:
        if spooled is not None:
            out.text_file, out.text_size = spooled.close()
        # the lane's window of the file goes now: the stream is in a reference cycle (its
        # window's callback) and would keep the mapped pages in this worker's memory until the
        # next garbage collection (a worker grew past 100 MB on a 1 GB binlog)
        stream.lane = None
    collect(stream, out)
    if out.damage:
        # damage: the reader resynchronises from it, which may cross the piece's end; the
        # parent reads this file again from the piece on, as --jobs 1 does
        return Result(sequential="damage")
    out.text = "".join(chunks)
    out.stats = stats
    return out


class _Spool:
    """The pieces' text written into a file of cfg.spool as it comes, encoded as the parent's
    output encodes it: the parent copies the file into its output in the kernel (os.sendfile),
    instead of unpickling, decoding and encoding the text again. `path`: a file of the parent's
    written over from its start (its length says nothing: the text is the first `size` bytes),
    else a new file. Runs of the lane's text (a quarter of a megabyte) are written as they come,
    smaller texts (one event) gathered first; no buffer of the file object copies either."""

    GATHER = 1 << 16

    def __init__(self, cfg: Config, path: Optional[str] = None):
        import tempfile

        if path is None:
            fd, self.path = tempfile.mkstemp(dir=cfg.spool, suffix=".text")
            self.kept = False
        else:
            fd, self.path = os.open(path, os.O_WRONLY | os.O_CREAT, 0o600), path
            self.kept = True
        self.fh = open(fd, "wb", buffering=0)
        self.encoding = cfg.encoding
        # bytes the lane wrote are the text this encoding gives (UTF-8, surrogateescape)
        self.utf8 = codecs.lookup(cfg.encoding).name == "utf-8"
        self.size = 0
        self.small, self.gathered = [], 0

    def write(self, text):
        """Write a str, or the lane's UTF-8 bytes (when self.utf8)."""
        data = text if type(text) is bytes else text.encode(self.encoding, "surrogateescape")
        if len(data) < self.GATHER:
            self.small.append(data)
            self.gathered += len(data)
            if self.gathered < self.GATHER:
                return
            data = b"".join(self.small)
            self.small, self.gathered = [], 0
        elif self.small:
            self._write(b"".join(self.small))
            self.small, self.gathered = [], 0
        self._write(data)

    def _write(self, data):
        view, n = memoryview(data), 0
        while n < len(data):
            n += self.fh.write(view[n:])
        self.size += len(data)

    def close(self):
        """(the file's path, the length of the text in it); (None, None), and no file of its
        own, when nothing was written."""
        try:
            if self.small:
                self._write(b"".join(self.small))
        finally:
            self.fh.close()
        if self.size:
            return self.path, (self.size if self.kept else None)
        if not self.kept:
            os.unlink(self.path)
        return None, None


def init(backend, user_specs):
    """A worker's start: the backend and the specs the parent chose; its standard output goes
    nowhere (a forked worker inherits the parent's, whose text the parent writes itself)."""
    import sys

    from .. import native

    sys.stdout = open(os.devnull, "w")

    native.select(backend)
    if user_specs:
        from ..codegen.grammar import use_specs

        use_specs(user_specs)
