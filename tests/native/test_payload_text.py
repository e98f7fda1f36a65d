"""MySQL 8's compressed transactions (TRANSACTION_PAYLOAD_EVENT) in the compiled text lane
(binlog_grammar.native._lane, generated/native/payload.h): the payload's header line and the text
of the events inside it (inflated by libzstd, each "# at" the payload's offset and its offset in
the payload, ending at the payload's offset plus its length, no CRC32) written by C; the lane
learns the tables, plans and statements of a payload the Python path wrote from its inner events.
`dump --format text` prints the same bytes on both backends (--jobs 1 and 2) over repeated
transactions, payloads the Python path must read (test_payload_jsonl.py's hostile list) and
damaged copies; and the lane writes every payload but the first (before, it stopped at each)."""
import random

import pytest

from binlog_grammar import native
from binlog_grammar.output import text_lane
from helpers.native import cli_dump, damage
from helpers.payload_binlog import PAYLOAD, good, hostile, payload_file, repeated, zstd_built
from helpers.paths import CORPUS, needs_corpus


pytestmark = [pytest.mark.skipif(
    native.unavailable() is not None or native._extension("_lane")[0] is None,
    reason="the compiled extensions are not built"), needs_corpus]


@pytest.fixture
def text_stops(monkeypatch):
    """The runs of the text lane that stopped at an event, by the event's type code."""
    got = {}
    real = text_lane.TextLane.go_on

    def go_on(self, f, pos, stop=None):
        cfg = self.cfg

        class Spy:
            def __getattr__(_s, name):
                return getattr(cfg, name)

            def text(_s, buf, base, pos, *a):
                r = cfg.text(buf, base, pos, *a)
                at = r[1] - base
                if r[5] == self.mod.EVENT and at + 4 < len(buf):
                    got[buf[at + 4]] = got.get(buf[at + 4], 0) + 1
                return r

        if cfg is None:
            return real(self, f, pos, stop)
        self.cfg = Spy()
        try:
            return real(self, f, pos, stop)
        finally:
            self.cfg = cfg

    monkeypatch.setattr(text_lane.TextLane, "go_on", go_on)
    return got


def same_jsonl(path, *opts):
    c, py = cli_dump(path, "c", *opts), cli_dump(path, "python", *opts)
    assert c == py
    return py


@pytest.mark.parametrize("gtid_code", [33, 34], ids=["gtid", "anonymous"])
@pytest.mark.parametrize("opts", [(), ("--jobs", "2")], ids=["jobs1", "jobs2"])
def test_repeated_payloads_are_written_in_c(tmp_path, text_stops, gtid_code, opts):
    path = tmp_path / "compressed.000001"
    path.write_bytes(repeated(40, rows=3, gtid_code=gtid_code))
    code, out, _err = same_jsonl(path, *opts)
    assert code == 0 and out.count("\tTRANSACTION_PAYLOAD_EVENT\n") == 40
    assert out.count("(inside the payload, offset ") == 160
    if not zstd_built():
        pytest.skip("built without zstd.h: the payloads are the Python path's")
    if opts:
        return  # each worker learns the tables from its own first payload
    # the first payload is the Python path's (its table, plan and BEGIN are learnt from it)
    assert text_stops.get(PAYLOAD, 0) == 1


def test_the_corpus_payload_file():
    same_jsonl(CORPUS / "transaction_compression.000001")


def test_a_table_id_mapped_twice_in_a_payload(tmp_path):
    """Two TABLE_MAPs of one table id (tables tb1, then tb2) inside a payload the Python path
    writes: the lane learns each body with its own table's name, and writes the next payload's
    tb1 as tb1 (read from the stream's last table of the id, both bodies were tb2)."""
    from helpers.payload_binlog import inner_events, payload_body, transaction

    begin, tmap, rows, xid = inner_events()
    assert tmap[4] == 19 and tmap.count(b"\x03tb1\x00") == 1
    twice = begin + tmap + tmap.replace(b"\x03tb1\x00", b"\x03tb2\x00") + rows + xid
    path = tmp_path / "twice.000001"
    path.write_bytes(payload_file([payload_body(twice), payload_body(transaction(1)),
                                   payload_body(transaction(2))]))
    _code, out, _err = same_jsonl(path)
    assert out.count("Table_map: `test`.`tb1`") == 3 and out.count("Table_map: `test`.`tb2`") == 1


@pytest.mark.parametrize("name,body", hostile(), ids=[n for n, _b in hostile()])
def test_payloads_the_python_path_reads(tmp_path, name, body):
    """Each between payloads the lane writes: the same bytes, exit status and errors."""
    path = tmp_path / "hostile.000001"
    path.write_bytes(payload_file([good(0), good(1), body, good(2), good(3)]))
    same_jsonl(path)


def test_damaged_payload_files(tmp_path):
    rnd = random.Random(34)
    data = payload_file([good(k) for k in range(6)])
    start = data.index(bytes([PAYLOAD]), 150) - 4  # damage past the format events
    for k in range(30):
        path = tmp_path / f"damaged{k}.000001"
        path.write_bytes(data[:start] + damage(data[start:], rnd))
        same_jsonl(path)
