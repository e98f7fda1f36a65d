"""dump's options of mysqlbinlog's output forms: `-v`/`--verbose` (counted), `--base64-output`,
`-s`/`--short-form` and `--skip-gtids`, read as mariadb-binlog reads them.

`--base64-output` takes AUTO, NEVER or DECODE-ROWS in any case (mysqlbinlog's typelib is
case-insensitive; a unique prefix is not taken here). DECODE-ROWS is the `###` text dump has
always printed (binlog_grammar.output.dump_text); AUTO and NEVER are the replay form
(binlog_grammar.output.replay), NEVER refusing a row event as mysqlbinlog does."""
from __future__ import annotations

import argparse

BASE64_OUTPUT = ("auto", "never", "decode-rows")


def base64_output(text: str) -> str:
    """The --base64-output value, case-insensitive; argparse's error names the choices."""
    value = str(text).strip().lower()
    if value not in BASE64_OUTPUT:
        raise argparse.ArgumentTypeError(
            f"invalid value {text!r} (choose from AUTO, NEVER, DECODE-ROWS)")
    return value


def add_replay_options(parser):
    """-v/--verbose, --base64-output, -s/--short-form, --skip-gtids on `parser` (dump)."""
    parser.add_argument("-v", "--verbose", action="count", default=0,
                        help="with the BINLOG blocks of row events, their rows as `###` "
                             "pseudo-SQL comment lines (-vv: with each column's type), as "
                             "mysqlbinlog -v/-vv")
    parser.add_argument("--base64-output", type=base64_output, default=None,
                        metavar="AUTO|NEVER|DECODE-ROWS",
                        help="AUTO: row events as BINLOG '...' statements the client replays; "
                             "DECODE-ROWS: rows only as `###` comment lines (not replayable); "
                             "NEVER: refuse a row event; as mysqlbinlog's option")
    parser.add_argument("-s", "--short-form", action="store_true",
                        help="only the statements, without the `# at` and header comment "
                             "lines and BINLOG blocks of row events, as mysqlbinlog -s")
    parser.add_argument("--skip-gtids", action="store_true",
                        help="leave out the GTID lines (and the GTID list and checkpoint), "
                             "as mysqlbinlog --skip-gtids")


def replay_wanted(args) -> bool:
    """Does dump print the replay form (else the DECODE-ROWS text)?"""
    mode = getattr(args, "base64_output", None)
    return mode in ("auto", "never")
