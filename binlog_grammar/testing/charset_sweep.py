"""The character-set round-trip sweep: every code of every character set the project decodes,
logged by a real MariaDB, written back by `binlog-grammar sql` and replayed through the `mariadb`
client; the stored bytes must be the logged ones (issue 25).

One throwaway server (binary logging, binlog_format=ROW, binlog_row_metadata=FULL, so each
column's collation is in the binlog) runs it:

1. The candidates of a charset (`candidates`): every single byte; for the double-byte charsets
   every lead 0x80-0xFF x trail 0x00-0xFF; for ujis/eucjpms also 0x8F x lead x trail (0xA1-0xFE);
   for the Unicode ones every 16-bit unit (ucs2, utf16, utf16le), every BMP code point (utf8mb3,
   utf8mb4, utf32) and the supplementary planes by a stride. `stride` thins the multi-byte ones
   (each lead keeps every stride-th trail, starting at a different trail per lead).
2. The server says which candidates are codes: a candidate is kept when `CAST(b AS CHAR
   CHARACTER SET cs)` stores exactly its bytes (the server replaces what it does not accept, and
   strict mode refuses it) as one character. That happens with binary logging off, in `scratch`.
3. The codes are inserted into `src.t_<cs>` (id = the code's bytes as a number, v VARCHAR(2) in
   the charset) with binary logging on; the binlog is read by `binlog-grammar sql --database src`.
4. The table is moved to `ref`, an empty copy takes its place, and the script is piped into the
   real `mariadb` client. Every row of `ref` is compared byte for byte (CAST(v AS BINARY)) with
   the replayed `src` row of the same id.

`run(rules=...)` replays once per rule: "current" is the code as it is; "text" writes every value
that is UTF-8 as text (the rule before binlog_grammar.output.replay_charsets, measured to find
which characters need their bytes); "hex" writes every value as `_cs X'..'`.
"""
from __future__ import annotations

import subprocess
import sys
import time
from dataclasses import dataclass, field
from typing import Dict, List

from ..runtime.values import CHARSET_CODECS, Text
from .mariadb import MariaDB

# MySQL charset names the project decodes that MariaDB 10.11 does not have ("utf8" is an alias
# of utf8mb3 there, swept as utf8mb3).
NOT_ON_MARIADB = {"gb18030": "MariaDB 10.11 has no gb18030 (MySQL 8 has)",
                  "utf8": "an alias of utf8mb3 in MariaDB 10.11 (swept as utf8mb3)"}
DOUBLE_BYTE = ("big5", "sjis", "cp932", "gbk", "gb2312", "euckr")
EUC_3BYTE = ("ujis", "eucjpms")
UNICODE_16 = ("ucs2", "utf16", "utf16le")
UNICODE_CP = {"utf8mb3": "utf-8", "utf8mb4": "utf-8", "utf32": "utf-32-be"}

# The rules a replay can be made with, as Python run before the `sql` command (the rule is looked
# up by binlog_grammar.output.quoting, which imported text_round_trips by name).
_RULES = {
    "current": "",
    "text": "def _rule(text, charset):\n"
            "    try:\n        text.encode('utf-8')\n    except UnicodeEncodeError:\n"
            "        return False\n    return True\n",
    "hex": "def _rule(text, charset):\n    return charset is None\n",
}
_RUNNER = """import sys
import binlog_grammar.output.quoting as q
import binlog_grammar.output.replay_charsets as r
{rule}
if {patch}:
    q.text_round_trips = r.text_round_trips = _rule
from binlog_grammar.cli import main
sys.exit(main(sys.argv[1:]))
"""


# Codes the full sweep found stored differently by one of the rules (before the fix or by the
# first, conservative rule): a strided run always tries them.
KNOWN = {
    "greek": (0xA4, 0xA5, 0xAA),
    "cp1256": (0x8A, 0x8F, 0x98, 0x9A, 0x9F, 0xAA, 0xC0, 0xFF),
    "sjis": (0x5C, 0x815F, 0x825C, 0xF05C),
    "cp932": (0x5C, 0x8790, 0x8791, 0x879C, 0xED40, 0xEEEF, 0xEEF9, 0xEEFC, 0xFA40, 0xFA5C),
    "ujis": (0x7E, 0xA1C0, 0x8FA2B7),
    "eucjpms": (0xA1C1, 0xA1C2, 0xA1DD, 0xA1F1, 0xA1F2, 0xA2CC, 0x8FA2B7, 0x8FA2C3, 0x8FA2F1),
    "big5": (0xA15A, 0xA1C3, 0xA1C5, 0xA1FE, 0xA240, 0xA241, 0xA2CC, 0xA2CE, 0xA451),
    "ucs2": (0xD800, 0xDBFF, 0xDC00, 0xDFFF),
}


def charsets() -> List[str]:
    """The charsets the project decodes (runtime.values.CHARSET_CODECS) that the server has."""
    return [cs for cs in CHARSET_CODECS if cs not in NOT_ON_MARIADB]


def _strided(lo: int, hi: int, stride: int, phase: int) -> range:
    return range(lo + phase % stride, hi, stride)


def candidates(cs: str, stride: int = 1, supplementary_stride: int = 257) -> List[bytes]:
    """Byte strings that may be one character of `cs` (the server keeps those that are)."""
    out = candidates_strided(cs, stride, supplementary_stride)
    if stride > 1:
        have = set(out)
        out += [b for b in (c.to_bytes((c.bit_length() + 7) // 8 or 1, "big")
                            for c in KNOWN.get(cs, ())) if b not in have]
    return out


def candidates_strided(cs: str, stride: int, supplementary_stride: int) -> List[bytes]:
    if cs in UNICODE_16:
        enc = "big" if cs != "utf16le" else "little"
        out = [u.to_bytes(2, enc) for u in range(0, 0x10000, stride)]
        if cs != "ucs2":
            codec = "utf-16-be" if enc == "big" else "utf-16-le"
            out += [chr(cp).encode(codec) for cp in range(0x10000, 0x110000, supplementary_stride)]
        return out
    if cs in UNICODE_CP:
        bmp = [chr(cp) for cp in range(0, 0x10000, stride) if not 0xD800 <= cp < 0xE000]
        supp = [] if cs == "utf8mb3" else [
            chr(cp) for cp in range(0x10000, 0x110000, supplementary_stride)]
        return [ch.encode(UNICODE_CP[cs]) for ch in bmp + supp]
    out = [bytes([b]) for b in range(256)]
    if cs in DOUBLE_BYTE or cs in EUC_3BYTE:
        out += [bytes([lead, t]) for lead in range(0x80, 0x100)
                for t in _strided(0, 0x100, stride, lead)]
    if cs in EUC_3BYTE:
        out += [bytes([0x8F, lead, t]) for lead in range(0xA1, 0xFF)
                for t in _strided(0xA1, 0xFF, stride, lead)]
    return out


@dataclass
class Result:
    """One charset: the codes the server accepted, and per rule the codes stored differently
    ({id: (logged hex, replayed hex or None when the row is missing)})."""

    charset: str
    candidates: int = 0
    codes: int = 0
    differing: Dict[str, Dict[int, tuple]] = field(default_factory=dict)
    codes_bytes: Dict[int, bytes] = field(default_factory=dict)


def decode(cs: str, raw: bytes):
    """The value the project reads from `raw` in a column of charset `cs` (a str, or a
    runtime.values.LoggedText)."""
    return Text().bind({"charset": cs, "type_name": "VARCHAR"})({"data": raw})


def _batches(rows, size=2000):
    for i in range(0, len(rows), size):
        yield rows[i:i + size]


class Sweep:
    """`with Sweep() as s: results = s.run([...])`: one server for every charset."""

    def __init__(self, server: MariaDB = None):
        self.server = server
        self.own = server is None

    def __enter__(self):
        if self.own:
            self.server = MariaDB(["--binlog-row-metadata=FULL", "--max-allowed-packet=64M"])
            self.server.start()
        return self

    def __exit__(self, *exc):
        if self.own:
            self.server.cleanup()

    def _sql(self, text: str) -> str:
        return self.server.sql(text)

    def load(self, css: List[str], stride: int = 1, supplementary_stride: int = 257):
        """Candidates into scratch, the accepted codes into src.t_<cs> (logged)."""
        results = {}
        self._sql("SET sql_log_bin=0; CREATE DATABASE scratch; CREATE DATABASE src;"
                  "CREATE DATABASE ref;")
        for cs in css:
            cand = candidates(cs, stride, supplementary_stride)
            results[cs] = Result(cs, candidates=len(cand))
            stmts = ["SET sql_log_bin=0; USE scratch;",
                     f"CREATE TABLE scratch.c_{cs} (id BIGINT PRIMARY KEY, b VARBINARY(8));"]
            for batch in _batches(cand):
                stmts.append(f"INSERT INTO scratch.c_{cs} VALUES " + ",".join(
                    f"({int.from_bytes(b, 'big')},X'{b.hex()}')" for b in batch) + ";")
            stmts += [
                f"CREATE TABLE src.t_{cs} (id BIGINT PRIMARY KEY, v VARCHAR(2) CHARACTER SET {cs})"
                " ENGINE=InnoDB;",
                f"CREATE TABLE scratch.v_{cs} LIKE src.t_{cs};",
                f"INSERT IGNORE INTO scratch.v_{cs} SELECT id, CAST(b AS CHAR CHARACTER SET {cs})"
                f" FROM scratch.c_{cs};",
                f"DELETE v FROM scratch.v_{cs} v JOIN scratch.c_{cs} c USING (id) WHERE "
                f"CAST(v.v AS BINARY) <> c.b OR CHAR_LENGTH(v.v) <> 1;",
                "SET sql_log_bin=1;",
                f"INSERT INTO src.t_{cs} SELECT * FROM scratch.v_{cs};",
                f"SELECT COUNT(*) FROM src.t_{cs};",
            ]
            results[cs].codes = int(self._sql("\n".join(stmts)).split()[-1])
            results[cs].codes_bytes = {
                int(i): bytes.fromhex(h) for i, h in (
                    line.split("\t") for line in
                    self._sql(f"SELECT id, HEX(v) FROM src.t_{cs}").splitlines() if line)}
        self._sql("FLUSH BINARY LOGS")
        self.files = [str(p) for p in self.server.binlogs()[:-1]]
        return results

    def script(self, rule: str = "current") -> bytes:
        """`binlog-grammar sql --database src` of the server's binlogs, with `rule`."""
        code = _RUNNER.format(rule=_RULES[rule], patch=bool(_RULES[rule]))
        files = self.files  # the replays write binlogs too: only the logged codes
        r = subprocess.run([sys.executable, "-c", code, "sql", "--no-progress", "--database",
                            "src", *files], capture_output=True)
        if r.returncode != 0:
            raise RuntimeError(f"binlog-grammar sql failed: {r.stderr.decode()[-2000:]}")
        return r.stdout

    def replay(self, css: List[str], script: bytes) -> Dict[str, Dict[int, tuple]]:
        """Empty the src tables (the logged rows wait in ref), pipe the script into `mariadb`,
        compare every row; the tables go back as they were."""
        self._sql("SET sql_log_bin=0;" + "".join(
            f"RENAME TABLE src.t_{cs} TO ref.t_{cs}; CREATE TABLE src.t_{cs} LIKE ref.t_{cs};"
            for cs in css))
        r = subprocess.run(self.server._client() + ["--batch"], input=script,
                           capture_output=True)
        if r.returncode != 0:
            raise RuntimeError(f"the replay failed: {r.stderr.decode()[-2000:]}")
        out = {}
        for cs in css:
            rows = self._sql(
                f"SELECT r.id, HEX(r.v), IFNULL(HEX(t.v), 'missing') FROM ref.t_{cs} r "
                f"LEFT JOIN src.t_{cs} t ON t.id = r.id "
                f"WHERE t.id IS NULL OR CAST(t.v AS BINARY) <> CAST(r.v AS BINARY) "
                f"UNION ALL SELECT t.id, 'missing', HEX(t.v) FROM src.t_{cs} t "
                f"LEFT JOIN ref.t_{cs} r ON t.id = r.id WHERE r.id IS NULL")
            out[cs] = {int(i): (a, b) for i, a, b in
                       (line.split("\t") for line in rows.splitlines() if line)}
        self._sql("SET sql_log_bin=0;" + "".join(
            f"DROP TABLE src.t_{cs}; RENAME TABLE ref.t_{cs} TO src.t_{cs};" for cs in css))
        return out

    def run(self, css: List[str] = None, rules=("text", "current"), stride: int = 1,
            supplementary_stride: int = 257, log=None) -> Dict[str, Result]:
        css = list(css or charsets())
        t0 = time.time()
        results = self.load(css, stride, supplementary_stride)
        if log:
            log(f"loaded {sum(r.codes for r in results.values())} codes of {len(css)} charsets "
                f"in {time.time() - t0:.1f}s")
        for rule in rules:
            t0 = time.time()
            script = self.script(rule)
            diffs = self.replay(css, script)
            for cs in css:
                results[cs].differing[rule] = diffs[cs]
            if log:
                log(f"rule {rule}: script {len(script)} bytes, replayed and compared in "
                    f"{time.time() - t0:.1f}s")
        return results
