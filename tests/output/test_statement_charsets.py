"""A statement whose bytes do not decode in its session's character_set_client (an odd number of
bytes in UTF-16, UCS-2 or UTF-32, bytes no charset maps) is hostile input like any other: every
reading command writes it without a traceback, on both backends (rule 12)."""
from __future__ import annotations

import struct
import subprocess
import sys

import pytest

from binlog_grammar import native

from helpers.mysql_binlog import mysql_file, query_data
from helpers.paths import ROOT, needs_corpus

# collation numbers of character_set_client: utf16_general_ci, ucs2_general_ci, utf32_general_ci,
# utf8mb4_general_ci, latin1_swedish_ci
CLIENTS = {"utf16": 54, "ucs2": 35, "utf32": 60, "utf8mb4": 45, "latin1": 8}
STATEMENTS = [b"ABC", b"\x00A\x00", b"\xd8\x00", b"\x00\x00\xd8\x00\x00", b"\xff\xfe\xfd"]


def status(client: int) -> bytes:
    return b"\x00" + bytes(4) + b"\x01" + struct.pack("<Q", 0x40000000) + b"\x06\x03std" + \
        b"\x04" + struct.pack("<HHH", client, client, 8)


@needs_corpus
@pytest.mark.parametrize("client", list(CLIENTS))
def test_undecodable_statements_are_written(client, tmp_path):
    path = tmp_path / "odd.000001"
    path.write_bytes(mysql_file([(query_data(q, status=status(CLIENTS[client])), 0)
                                 for q in STATEMENTS], repeat=1))
    # the compiled backend where it is built (tests/native/test_without_compiler.py runs without)
    for backend in ("python",) if native.unavailable() is not None else ("c", "python"):
        for words in (["dump", "--format", "text"], ["dump", "--format", "jsonl"], ["dump", "--format", "jsonl",
                      "--envelope", "debezium"], ["sql"], ["stats"], ["dump", "--format", "hexdump"]):
            r = subprocess.run([sys.executable, "-m", "binlog_grammar", "--backend", backend,
                                *words, str(path)], capture_output=True, cwd=ROOT)
            assert r.returncode == 0, (backend, words, r.stderr.decode(errors="replace")[-800:])
            assert b"Traceback" not in r.stderr
