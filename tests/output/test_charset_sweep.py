"""The character-set round-trip sweep, bounded (issue 25): codes of every character set the project
decodes, logged by a real MariaDB, written by `binlog-grammar sql` and piped through the real
`mariadb` client, are stored as they were logged (binlog_grammar.testing.charset_sweep says how;
tools/charset_sweep.py runs every code).

Here every single-byte charset is swept whole; the multi-byte ones keep every STRIDE-th trail byte
(16-bit unit, BMP code point) and the codes the full sweep found damaged (charset_sweep.KNOWN).
The same run replays the values as the code before replay_charsets wrote them (every UTF-8 value
as text): that must damage codes, or the sweep could not see what it checks.
"""
from __future__ import annotations

import pytest

from binlog_grammar.output.replay_charsets import (MEASURED, NOT_EXACT, not_exact,
                                                   text_round_trips)
from binlog_grammar.runtime.values import CHARSET_CODECS, LoggedText, errors_of
from binlog_grammar.testing.charset_sweep import NOT_ON_MARIADB, Sweep, charsets, decode

from helpers.services import need_mariadb

STRIDE = 11

# What the code before replay_charsets stored differently, among the codes a STRIDE run tries
# (single-byte charsets whole; the full run's figures are in replay_charsets' docstring).
TEXT_DAMAGE_AT_LEAST = {"greek": 3, "cp1256": 8, "sjis": 1, "cp932": 10, "ujis": 2, "eucjpms": 9,
                        "big5": 7}


@pytest.fixture(scope="module")
def sweep():
    need_mariadb()
    with Sweep() as s:
        yield s.run(charsets(), ("text", "current"), stride=STRIDE)


def _codes(diff, limit=12):
    return ", ".join(f"{logged} stored as {stored}"
                     for _, (logged, stored) in sorted(diff.items())[:limit])


@pytest.mark.server
def test_every_code_replays_as_logged(sweep):
    damaged = {cs: r.differing["current"] for cs, r in sweep.items() if r.differing["current"]}
    assert not damaged, "; ".join(f"{cs}: {len(d)} codes ({_codes(d)})"
                                  for cs, d in damaged.items())
    assert all(r.codes > 0 for r in sweep.values()), {cs: r.codes for cs, r in sweep.items()}


@pytest.mark.server
def test_text_form_damages_what_the_rule_refuses(sweep):
    """The replay with every value as text (the code before the rule) stores other bytes for the
    codes the rule writes as bytes, and the rule says text for no such code."""
    for cs, least in TEXT_DAMAGE_AT_LEAST.items():
        assert len(sweep[cs].differing["text"]) >= least, (cs, sweep[cs].differing["text"])
    wrong = {}
    for cs, r in sweep.items():
        for code in r.differing["text"]:
            if text_round_trips(decode(cs, r.codes_bytes[code]), cs):
                wrong.setdefault(cs, []).append(f"{code:X}")
    assert not wrong, f"the rule says text for codes whose text form is stored differently: {wrong}"


def test_every_decoded_charset_is_measured_or_not_on_the_server():
    """A charset the project learns to decode is swept (tools/charset_sweep.py) before
    replay_charsets calls it measured; until then its non-ASCII text is written as bytes."""
    assert set(CHARSET_CODECS) == MEASURED | {"gb18030"}
    assert set(NOT_ON_MARIADB) == {"gb18030", "utf8"}
    assert set(charsets()) == MEASURED - {"utf8"}
    assert not text_round_trips("\u4e2d", "gb18030") and text_round_trips("a b", "gb18030")


def test_rule_data():
    assert len(not_exact("cp932")) == 373 and "\u7e8a" in not_exact("cp932")
    for cs, chars in NOT_EXACT.items():
        assert all(not text_round_trips(f"a{ch}b", cs) for ch in chars), cs
    assert text_round_trips("Ωжか한 ~\\", "utf8mb4") and text_round_trips("\u7e8a", "sjis")
    assert text_round_trips("\\~", "sjis") and text_round_trips("ab\\", "cp932")
    # a value whose codec reads two codes as one character: only its bytes say which
    assert not text_round_trips(LoggedText("\\", b"\\", "mysql_sjis"), "sjis")
    assert LoggedText("\\", b"\\", "mysql_sjis").encode("mysql_sjis") == b"\\"
    assert LoggedText("\\", b"\\", "mysql_sjis").encode("utf-8") == b"\\"
    # cp932's NEC-selected IBM and IBM codes read as one character: the server writes the IBM one
    assert text_round_trips(decode("cp932", b"a\xfa\x5c"), "cp932")
    assert not text_round_trips(decode("cp932", b"a\xed\x40"), "cp932")
    assert not text_round_trips(decode("cp932", b"\x87\x90"), "cp932")
    assert not text_round_trips("\U0001f600", "ucs2") and text_round_trips("\U0001f600", "utf16")
    assert not text_round_trips("a\udc82", "sjis") and not text_round_trips("\ud800", "ucs2")


def test_decoding_keeps_the_logged_bytes():
    """sjis 0x5C and 0x815F, cp932's NEC and IBM duplicates, euc-jp 0x8FA2B7 and 0x7E, ucs2's
    lone surrogates: each value encodes back into the bytes it was read from."""
    cases = {"sjis": [b"\\", b"\x81\x5f", b"a\\b", b"\x82\\"],
             "cp932": [b"\x87\x90", b"\x81\xe0", b"\xed\x40", b"\xfa\x5c", b"\xee\xf9"],
             "ujis": [b"\x8f\xa2\xb7", b"~"], "eucjpms": [b"\x8f\xa2\xb7"],
             "big5": [b"\xa1\xfe", b"\xa2\x41"], "ucs2": [b"\xd8\x00", b"\xd8\x3d\xde\x00"]}
    for cs, raws in cases.items():
        codec = CHARSET_CODECS[cs]
        for raw in raws:
            assert decode(cs, raw).encode(codec, errors_of(codec)) == raw, (cs, raw)
