"""When a string value can be written into a replay script as text, and when only its bytes will do.

A script (`sql`, `flashback`, the `repair` plan) is UTF-8 (binlog_grammar.output.quoting fixes the
client's and the session's character set to utf8mb4). A value of a column in character set X that
is written as UTF-8 text is converted by the server from utf8mb4 into X when it is stored. That
stores the logged bytes only when the server's conversion of each character is the inverse of
the project's decoding of X (binlog_grammar.runtime.values.CHARSET_CODECS). Where the two tables
disagree (SJIS's backslash, cp932's NEC/IBM rows, ...) the text form stores other bytes, silently
under a non-strict sql_mode. Such values are written as `_X X'..'` of their exact bytes instead.

`text_round_trips(text, charset)` decides. The rule is data:
- EXACT_AS_TEXT: character sets whose every character round-trips as text: the UTF-8 ones (the
  conversion is the identity for valid text), ascii, and latin1 (runtime.values decodes it as the
  server does);
- everything else: text only when every character is printable ASCII outside the characters the
  charset maps differently (ASCII_NOT_EXACT).
Text holding bytes its charset cannot decode (surrogate escapes) never round-trips as text.
"""
from __future__ import annotations

from typing import Optional

__all__ = ["text_round_trips", "EXACT_AS_TEXT", "ASCII_NOT_EXACT"]

# MySQL character set names whose every valid character is stored back as logged from UTF-8 text.
EXACT_AS_TEXT = frozenset({"utf8mb4", "utf8mb3", "utf8", "ascii",
                           "latin1"})  # MySQL's latin1 is cp1252 with 81 8D 8F 90 9D as U+0081...

# Per character set, printable ASCII characters that the server does not convert from Unicode to
# the byte the project decodes them from (empty for the others).
ASCII_NOT_EXACT = {
    "sjis": "\\~",
    "cp932": "\\~",
    "ujis": "\\~",
    "eucjpms": "\\~",
}


def _printable_ascii(text: str, refused: str) -> bool:
    return all(" " <= ch <= "~" and ch not in refused for ch in text)


def text_round_trips(text: str, charset: Optional[str]) -> bool:
    """Does writing `text` as a UTF-8 string literal store, in a column of MySQL character set
    `charset`, the bytes the project decoded it from? (None: the charset is unknown; the text is
    written as the UTF-8 it is, which is what the server's default charset decoding gave.)"""
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:  # bytes the charset did not decode (surrogate escapes)
        return False
    if charset is None or charset in EXACT_AS_TEXT:
        return True
    return _printable_ascii(text, ASCII_NOT_EXACT.get(charset, ""))
