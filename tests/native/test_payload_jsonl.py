"""MySQL 8's compressed transactions (TRANSACTION_PAYLOAD_EVENT) in the compiled JSON-lines lane
(binlog_grammar.native._jsonl_lane, generated/native/payload.h): the payload's record (its header's
entries by name, its bytes in base64) and the records of the events inside it (inflated by
libzstd, each with the payload's position and "inner": true) written by C; `dump --format jsonl`
prints the same bytes on both backends (--jobs 1 and 2, --rows-only) over repeated transactions
each with its own values, payloads the Python path must read (headers it reads otherwise, frames
cut, followed by bytes, lying about their size, inner events cut short or a GTID inside) and
damaged copies; and the lane writes every payload but the first (before, it stopped at each)."""
import os
import random

import pytest
import zstandard

from binlog_grammar import native
from helpers.native import cli_dump, damage
from helpers.payload_binlog import PAYLOAD, header, payload_body, payload_file, repeated, transaction
from helpers.paths import needs_corpus

from test_mysql_jsonl import stops  # noqa: F401 - the fixture

pytestmark = [pytest.mark.skipif(
    native.unavailable() is not None or native._extension("_jsonl_lane")[0] is None,
    reason="the compiled extensions are not built"), needs_corpus]
JSONL = ("--format", "jsonl")


def _zstd_built():
    """Whether the lane inflates payloads: always where setup.py finds zstd.h (Debian:
    libzstd-dev, which tools/test.sh installs)."""
    mod = native.jsonl_lane()
    return (mod is not None and "TRANSACTION_PAYLOAD_EVENT" in mod.CODES) or \
        any(os.path.exists(d + "/zstd.h") for d in ("/usr/include", "/usr/local/include"))


def _same(path, *opts):
    c, py = cli_dump(path, "c", *JSONL, *opts), cli_dump(path, "python", *JSONL, *opts)
    assert c == py
    return py


@pytest.mark.parametrize("gtid_code", [33, 34], ids=["gtid", "anonymous"])
@pytest.mark.parametrize("opts", [(), ("--rows-only",), ("--jobs", "2")], ids=["all", "rows", "jobs2"])
def test_repeated_payloads_are_written_in_c(tmp_path, stops, gtid_code, opts):
    path = tmp_path / "compressed.000001"
    path.write_bytes(repeated(40, rows=3, gtid_code=gtid_code))
    code, out, _err = _same(path, *opts)
    assert code == 0 and out.count('"TRANSACTION_PAYLOAD_EVENT"') == (0 if "--rows-only" in opts else 40)
    if not _zstd_built():
        pytest.skip("built without zstd.h: the payloads are the Python path's")
    if opts == ("--jobs", "2"):
        return  # each worker learns the tables from its own first payload
    # the first payload is the Python path's (its table and plan are learned from it)
    assert stops.get(PAYLOAD, 0) == 1


def _good(k):
    return payload_body(transaction(k))


def _hostile():
    """Payload data the Python path must read (or report): a list of (name, data)."""
    inner = transaction(7)
    frame = zstandard.ZstdCompressor(level=3).compress(inner)
    sizes = [(3, len(inner)), (1, len(frame))]
    gtid_inner = bytes(19) + inner  # a header of zeros: type 0 ... then a GTID's code below
    gtid_inner = bytearray(inner[:19]) + inner[19:inner[9]]
    gtid_inner[4] = 33
    cut = inner[:-3]
    skippable = b"\x50\x2a\x4d\x18" + (4).to_bytes(4, "little") + b"abcd"
    return [
        ("truncated frame", header([(2, 0), *sizes]) + frame[:-5]),
        ("bytes after the frame", header([(2, 0), *sizes]) + frame + b"\x00\x01"),
        ("two frames", header([(2, 0), *sizes]) + frame + frame),
        ("skippable frame first", header([(2, 0), *sizes]) + skippable + frame),
        ("unknown tag", header([(9, 5), (2, 0), *sizes]) + frame),
        ("not compressed", header([(2, 255), (1, len(inner))]) + inner),
        ("unknown compression", header([(2, 7), *sizes]) + frame),
        ("no compression entry", header(sizes) + frame),
        ("smaller stated size", header([(2, 0), (3, len(inner) - 1), (1, len(frame))]) + frame),
        ("larger stated size", header([(2, 0), (3, len(inner) + 100), (1, len(frame))]) + frame),
        ("value longer than its length", header([(2, b"\x00\x00"), *sizes]) + frame),
        ("repeated entry", header([(2, 0), (2, 0), *sizes]) + frame),
        ("no end mark", header([(2, 0)])[:-1]),
        ("empty frame", header([(2, 0)]) + zstandard.ZstdCompressor().compress(b"")),
        ("inner event cut short", payload_body(cut)),
        ("a GTID inside", payload_body(bytes(gtid_inner) + inner)),
        ("damaged frame", header([(2, 0), *sizes]) + frame[:8] + bytes(len(frame) - 8)),
    ]


@pytest.mark.parametrize("name,body", _hostile(), ids=[n for n, _b in _hostile()])
def test_payloads_the_python_path_reads(tmp_path, name, body):
    """Each between payloads the lane writes: the same bytes, exit status and errors."""
    path = tmp_path / "hostile.000001"
    path.write_bytes(payload_file([_good(0), _good(1), body, _good(2), _good(3)]))
    _same(path)
    _same(path, "--rows-only")


def test_damaged_payload_files(tmp_path):
    rnd = random.Random(26)
    data = payload_file([_good(k) for k in range(6)])
    start = data.index(bytes([PAYLOAD]), 150) - 4  # damage past the format events
    for k in range(40):
        path = tmp_path / f"damaged{k}.000001"
        path.write_bytes(data[:start] + damage(data[start:], rnd))
        _same(path)
