"""dump's options of mysqlbinlog's output forms: `-v`/`--verbose` (counted), `--base64-output`,
`-s`/`--short-form`, `-D`/`--disable-log-bin`, `-l`/`--local-load` and `--skip-gtids`, read as
mariadb-binlog reads them.

`--base64-output` takes AUTO, NEVER or DECODE-ROWS in any case (mysqlbinlog's typelib is
case-insensitive; a unique prefix is not taken here). All three are mariadb-binlog's forms, written
by binlog_grammar.output.replay: AUTO (the default) the replay script, NEVER the same refusing a row
event, DECODE-ROWS the same without BINLOG statements (with -vv what `mysqlbinlog -vv
--base64-output=decode-rows` prints). `--format text` asks for this project's own text instead
(binlog_grammar.output.dump_text: the same `###` row lines, but every event's lines whole in
themselves); `--format jsonl`, `--format hexdump` and --flashback for the other outputs.
`-H`/`--hexdump` adds mysqlbinlog's hex dump to mysqlbinlog's forms. `--jobs N` splits these forms
across processes too (cli/replay_jobs.py), where no filter or window applies."""
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
    """-v/--verbose, --base64-output, -s/--short-form, -D, -l, --skip-gtids on `parser` (dump)."""
    parser.add_argument("-v", "--verbose", action="count", default=0,
                        help="with the BINLOG blocks of row events, their rows as ### "
                             "pseudo-SQL comment lines (-vv: with each column's type), as "
                             "mysqlbinlog -v/-vv")
    parser.add_argument("--base64-output", type=base64_output, default=None,
                        metavar="AUTO|NEVER|DECODE-ROWS",
                        help="AUTO (the default): row events as BINLOG '...' statements the client "
                             "replays; "
                             "DECODE-ROWS: no BINLOG statements, rows only as -v/-vv's ### comment "
                             "lines (not replayable); "
                             "NEVER: refuse a row event; as mysqlbinlog's option")
    parser.add_argument("-s", "--short-form", action="store_true",
                        help="only the statements, without the # at and header comment "
                             "lines and BINLOG blocks of row events, as mysqlbinlog -s")
    parser.add_argument("-D", "--disable-log-bin", action="store_true",
                        help="the replay script turns the target's binary logging off while it "
                             "runs (SQL_LOG_BIN=0, restored at its end), as mysqlbinlog -D")
    parser.add_argument("-l", "--local-load", metavar="DIR", default=None,
                        help="the folder the replay script's LOAD DATA files are written into "
                             "(default: the temporary folder); the script loads them with "
                             "LOAD DATA LOCAL INFILE, as mysqlbinlog -l")
    for name, what in (("print-row-count", "the '# Number of rows: N' line after each "
                                               "statement's rows events"),
                       ("print-row-event-positions", "the '# at N' line before each event")):
        dest = name.replace("-", "_")
        parser.add_argument(f"--{name}", dest=dest, action="store_true", default=True,
                            help=f"{what} (on by default, as mariadb-binlog's --{name})")
        parser.add_argument(f"--skip-{name}", dest=dest, action="store_false",
                            help=f"leave out {what}, as mariadb-binlog --skip-{name}")
    parser.add_argument("--skip-annotate-row-events", action="store_true",
                        help="leave out the ANNOTATE_ROWS statements (#Q> lines), as "
                             "mariadb-binlog --skip-annotate-row-events")
    parser.add_argument("--skip-gtids", action="store_true",
                        help="leave out the GTID lines (and the GTID list and checkpoint), "
                             "as mysqlbinlog --skip-gtids")


def forms(args) -> dict:
    """Replay's keywords from dump's options."""
    return {"verbose": args.verbose, "short": args.short_form, "skip_gtids": args.skip_gtids,
            "never": args.base64_output == "never", "decode_rows": args.base64_output == "decode-rows",
            "disable_log_bin": args.disable_log_bin, "local_load": args.local_load,
            "hexdump": getattr(args, "mysql_hexdump", False),
            **_printing(args)}


def _printing(args) -> dict:
    """Replay's keywords of mariadb-binlog's on-by-default printing options."""
    return {"row_count": args.print_row_count, "positions": args.print_row_event_positions,
            "annotations": not args.skip_annotate_row_events,
            # any server id or domain rule (cli/mysqlbinlog_opts.py): mariadb-binlog's footer resets
            "reset_ids": any(getattr(args, name, None) is not None
                             for name in ("do_server_ids", "ignore_server_ids", "do_domain_ids",
                                          "ignore_domain_ids"))}


def replay_wanted(args) -> bool:
    """Does dump print mariadb-binlog's forms (output/replay.py: the replay script, or with
    DECODE-ROWS its reading form)? Not when --format (text: this project's text; jsonl), --hexdump
    or --flashback asks for another output."""
    return (getattr(args, "format", None) is None and not getattr(args, "hexdump", False)
            and not getattr(args, "flashback", False)
            and getattr(args, "envelope", "native") == "native")


def run_replay(args) -> int:
    """dump's replay form (output/replay.py) of the inputs; filters keep or drop whole
    transactions, as `sql` has them (DECODE-ROWS, which no client replays: events, as
    mysqlbinlog's window). NEVER and a row event: an error naming the file, the
    offset and the event type, exit status 1, as mysqlbinlog refuses it."""
    import sys

    from ..output.replay import NeverError, Replay
    from ..output.replay_lane import attach as attach_lane
    from .reading import open_input, report_damage, stdout

    stream, progress = open_input(args)
    from . import replay_jobs

    if replay_jobs.wanted(args, stream):  # --jobs N: splits written by workers
        return replay_jobs.run(args, stream, progress, forms(args), first_path(args))
    if args.base64_output != "decode-rows":  # DECODE-ROWS, for reading: cut as mysqlbinlog's
        stream.cut = "transactions"  # replayable output: a window keeps or drops whole transactions
    out = stdout()
    replay = Replay(**forms(args))
    lane = attach_lane(stream, replay)  # runs of events written in C (output/replay_lane.py)
    write = out.write
    started = False
    try:
        write("".join(line + "\n" for line in replay.header()))
        for se in stream.events():
            if lane is not None and lane.put(se, out):  # a run the lane wrote
                continue
            ev = se.event
            if started and ev.name == "FORMAT_DESCRIPTION_EVENT" and int(ev.offset) == 4:
                write("DELIMITER ;\nDELIMITER /*!*/;\n")  # the next file, as mysqlbinlog
                replay = Replay(**forms(args))
                if lane is not None:
                    lane.replay = replay
            if not started and ev.name != "FORMAT_DESCRIPTION_EVENT":
                # a window that starts later: the first file's FORMAT_DESCRIPTION_EVENT first,
                # as mysqlbinlog prints it (the server applies no BINLOG statement before one)
                first = replay_jobs.first_format_event(first_path(args))
                if first is not None:
                    lines = replay.lines(first)  # read; DECODE-ROWS prints it only in its window
                    if args.base64_output != "decode-rows":
                        write("".join(line + "\n" for line in lines))
            started = True
            try:
                lines = replay.lines(se)
            except NeverError:
                out.flush()
                where = getattr(stream, "current_file", None) or " ".join(map(str, args.files))
                print(f"binlog-grammar: dump: {where}: the {ev.name} at {int(ev.offset)} is a "
                      f"row event, which --base64-output=NEVER refuses (as mysqlbinlog "
                      f"does): use AUTO or DECODE-ROWS", file=sys.stderr)
                return 1
            if lines:
                write("".join(line + "\n" for line in lines))
        write("".join(line + "\n" for line in replay.footer()))
    finally:
        progress.close()
        out.flush()
    return report_damage(stream)


def first_path(args):
    """The first input file as named (None: none), whose FORMAT_DESCRIPTION_EVENT a window that
    starts later prints first."""
    where = getattr(args, "positions", None)
    files = where.files if where is not None else args.files
    return str(files[0]) if files else None
