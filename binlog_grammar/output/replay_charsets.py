"""When a string value can be written into a replay script as text, and when only its bytes will do.

A script (`sql`, `flashback`, the `repair` plan) is UTF-8 (binlog_grammar.output.quoting fixes the
client's and the session's character set to utf8mb4). A value of a column in character set X that
is written as UTF-8 text is converted by the server from utf8mb4 into X when it is stored. That
stores the logged bytes only when the server's conversion of each character is the inverse of
the project's decoding of X (binlog_grammar.runtime.values.CHARSET_CODECS). Where the two tables
disagree the text form stores other bytes, silently under a non-strict sql_mode. Such values are
written as `_X X'..'` of their exact bytes instead (which the server stores as they are; a
runtime.values.LoggedText encodes back into the bytes it was decoded from, also where its codec
reads two codes as one character).

`text_round_trips(text, charset)` decides, one character at a time (every charset here converts
character by character, so a string round-trips when each of its characters does). False when:
- the text holds bytes its charset did not decode (surrogate escapes, ucs2's lone surrogates);
- the text is a LoggedText: its codec would not encode it back into the logged bytes, so neither
  does the server (sjis 0x5C, which both read as U+005C and the server writes as 0x815F; cp932's
  NEC row 13; euc-jp's 0x8FA2B7 read as U+007E; big5's duplicates), unless SERVER_CODES says the
  server writes its characters as logged (cp932's IBM extension kanji and Roman numerals);
- the charset is one of NOT_EXACT's and the text holds one of its characters, or ucs2 text holds
  a character above U+FFFF (a surrogate pair read from two ucs2 codes);
- the charset was not measured (MEASURED; gb18030, which MariaDB 10.11 lacks, and names the
  project does not know) and the text is not printable ASCII.

How it was measured (tools/charset_sweep.py, MariaDB 10.11.19, the code of this commit): every
code of every charset in MEASURED that the server stores as one character (all 256 bytes, every
lead 0x80-0xFF x trail 0x00-0xFF, ujis/eucjpms 0x8F x 0xA1-0xFE x 0xA1-0xFE, every 16-bit unit of
ucs2/utf16/utf16le, every BMP code point of utf8mb3/utf8mb4/utf32 and every 257th supplementary
one: 531,863 codes) was logged, written by `binlog-grammar sql` with every UTF-8 value as text,
and replayed through the `mariadb` client: the codes stored differently were greek 3, cp1256 8,
sjis 1, cp932 398, ujis 2, eucjpms 9, big5 7; those that are not LoggedText give NOT_EXACT.
With this rule the same sweep stores every code as logged, and writes as bytes no code whose
text form would store it.
"""
from __future__ import annotations

from typing import Dict, FrozenSet, Optional

from ..runtime.values import LoggedText

__all__ = ["text_round_trips", "MEASURED", "NOT_EXACT", "NOT_EXACT_ROWS", "SERVER_CODES",
           "not_exact"]

# Character sets whose every code the sweep replayed (the aliases "utf8" = utf8mb3).
MEASURED = frozenset({
    "utf8mb4", "utf8mb3", "utf8", "latin1", "ascii", "latin2", "latin5", "latin7", "greek",
    "hebrew", "cp1250", "cp1251", "cp1256", "cp1257", "cp850", "cp852", "cp866", "koi8r", "koi8u",
    "sjis", "cp932", "ujis", "eucjpms", "gbk", "gb2312", "big5", "euckr", "tis620", "macroman",
    "macce", "ucs2", "utf16", "utf16le", "utf32"})

# Per charset, the characters the project decodes from one code and encodes back into it, but
# the server converts from Unicode into another code or into '?' (the code, the character, what
# the server stores for it).
NOT_EXACT: Dict[str, str] = {
    # A4 EURO SIGN, A5 DRACHMA SIGN, AA GREEK YPOGEGRAMMENI: the server's greek has none (-> 3F)
    "greek": "\u20ac\u20af\u037a",
    # 8A 8F 98 9A 9F AA C0 FF: Python's cp1256 (Windows-1256 of 1998) has Urdu letters where the
    # server's table has the older ones (-> 3F)
    "cp1256": "\u0679\u0688\u06a9\u0691\u06ba\u06be\u06c1\u06d2",
    # A1C0 FULLWIDTH REVERSE SOLIDUS (-> 3F)
    "ujis": "\uff3c",
    # A1C1 A1C2 A1DD A1F1 A1F2 A2CC (-> 3F), 8FA2C3 BROKEN BAR (-> 3F), 8FA2F1 NUMERO SIGN
    # (-> ADE2, its cp932 row 13 code)
    "eucjpms": "\u301c\u2016\u2212\xa2\xa3\xac\xa6\u2116",
    # A15A A1C3 A1C5 (-> 3F)
    "big5": "\u2574\uffe3\u02cd",
}

# Per charset, rows of codes whose characters are NOT_EXACT too: cp932's NEC-selected IBM
# extensions, which Python encodes as 0xED40-0xEEFC and the server as their IBM extension codes
# 0xFA40-0xFC4B (373 characters: the small Roman numerals, ￤ ＇ ＂ and 362 kanji).
NOT_EXACT_ROWS = {"cp932": ((0xED40, 0xEEFC),)}

_CODECS = {"cp932": "cp932"}


def _row_chars(charset: str) -> str:
    codec = _CODECS[charset]
    out = []
    for lo, hi in NOT_EXACT_ROWS.get(charset, ()):
        for code in range(lo, hi + 1):
            raw = code.to_bytes(2, "big")
            try:
                ch = raw.decode(codec)
            except UnicodeDecodeError:
                continue
            if ch.encode(codec) == raw:  # the others are LoggedText
                out.append(ch)
    return "".join(out)


def _ibm_codes() -> Dict[str, bytes]:
    """cp932: the IBM extension code (0xFA40-0xFC4B) of each character of NOT_EXACT_ROWS, which
    is what the server writes for it (the sweep: 0xED40's text is stored as 0xFA5C)."""
    row = set(_row_chars("cp932"))
    out = {}
    for code in range(0xFA40, 0xFC4C):
        raw = code.to_bytes(2, "big")
        try:
            ch = raw.decode("cp932")
        except UnicodeDecodeError:
            continue
        if ch in row:
            out[ch] = raw
    return out


# Per charset, what the server writes for characters of NOT_EXACT_ROWS: a LoggedText holding
# these codes round-trips as text.
SERVER_CODES = {"cp932": _ibm_codes()}

_NOT_EXACT: Dict[str, FrozenSet[str]] = {
    cs: frozenset(NOT_EXACT.get(cs, "") + (_row_chars(cs) if cs in NOT_EXACT_ROWS else ""))
    for cs in set(NOT_EXACT) | set(NOT_EXACT_ROWS)}


def not_exact(charset: str) -> FrozenSet[str]:
    """The characters of a measured charset that do not round-trip as text."""
    return _NOT_EXACT.get(charset, frozenset())


def _server_writes(text: LoggedText, charset: Optional[str]) -> Optional[bytes]:
    """The bytes the server stores for a LoggedText written as text, when known (only for the
    characters SERVER_CODES names and those the codec encodes as the server does)."""
    codes = SERVER_CODES.get(charset)
    if codes is None or not codes.keys() & set(text):
        return None
    refused = _NOT_EXACT.get(charset, frozenset())
    out = []
    for ch in text:
        if ch in codes:
            out.append(codes[ch])
        elif ch in refused:
            return None
        else:
            try:
                out.append(str.encode(ch, text.codec))
            except UnicodeEncodeError:
                return None
    return b"".join(out)


def text_round_trips(text: str, charset: Optional[str]) -> bool:
    """Does writing `text` as a UTF-8 string literal store, in a column of MySQL character set
    `charset`, the bytes the project decoded it from? (None: the charset is unknown; the text is
    written as the UTF-8 it is, which is what the server's default charset decoding gave.)"""
    if isinstance(text, LoggedText):
        return _server_writes(text, charset) == text.logged
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:  # bytes the charset did not decode (surrogate escapes)
        return False
    if charset is None:
        return True
    if charset not in MEASURED:
        return all(" " <= ch <= "~" for ch in text)
    if text.isascii():
        return True
    if charset == "ucs2" and any(ch > "\uffff" for ch in text):
        return False
    refused = _NOT_EXACT.get(charset)
    return refused is None or refused.isdisjoint(text)
