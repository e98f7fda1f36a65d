"""The output formats, one registry: what `dump`, `stream`, `sql`/`flashback` and the Spark
source look up by name (design rule 11).

Each `Format` says how its output is made:
- "lines" formats (text, hexdump, JSON lines in each envelope) make a writer, `fmt.writer(...)`, that is
  given a stream's events in order and gives each one's lines (`writer.lines(se)`, strings
  without their last newline: the compiled backend gives a rows event's JSON lines as one) and, once the stream ends, what is left (`writer.end()`); `header` and
  `footer` are the lines written before the first event and after the last. One writer follows
  a whole stream: what an event says about later ones (the server's character set for text
  without charset metadata, the transaction a row change belongs to) is kept, so `dump` of the
  files and `stream` of the live server give the same lines for the same events.
- "transactions" formats (sql, flashback, flashback-binlog) turn whole transactions into a script
  (`fmt.render(transactions)`): only whole transactions are written (rule 12).

    from binlog_grammar.output import formats
    fmt = formats.lookup("jsonl", envelope="debezium")      # or formats.get("debezium")
    w = fmt.writer(rows_only=True, options={"topic.prefix": "shop"})
    for se in stream.events():
        for line in w.lines(se): print(line)
    for line in w.end(): print(line)

`lines_of(events, name, ...)` does that loop for callers that only want the lines (the Spark
source: one writer per split, in order).
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Callable, Iterable, Iterator, Optional

ENVELOPES = ("native", "debezium")
DEFAULT_ENVELOPE = "native"


@dataclass(frozen=True)
class Format:
    """One output format: its name, what it is, and how its writer is made."""

    name: str
    summary: str
    kind: str  # "lines" or "transactions"
    make: Callable = field(repr=False)  # lines: make(rows_only, options) -> writer; else render
    executable: bool = False  # written for a server or client to run (through output.quoting)
    frame: Optional[Callable] = field(default=None, repr=False)  # () -> (header, footer)

    @property
    def header(self) -> tuple:
        """The lines written before the first event's."""
        return tuple(self.frame()[0]) if self.frame else ()

    @property
    def footer(self) -> tuple:
        """The lines written after the last event's."""
        return tuple(self.frame()[1]) if self.frame else ()

    def writer(self, rows_only: bool = False, options: Optional[dict] = None):
        """A writer of this format's lines for one stream, given its events in order."""
        if self.kind != "lines":
            raise TypeError(f"{self.name} writes whole transactions: use render()")
        return self.make(rows_only, dict(options or {}))

    def render(self, transactions, **kw) -> Iterator[str]:
        """The script of a transactions format (sql, flashback)."""
        if self.kind != "transactions":
            raise TypeError(f"{self.name} writes lines per event: use writer()")
        return self.make(transactions, **kw)


class _TextWriter:
    """`dump`'s text: each event's lines on its own (the header and footer are the Format's)."""

    def lines(self, se) -> Iterable[str]:
        from .dump_text import text_lines

        return text_lines(se)

    def end(self) -> list:
        return []


def _text(rows_only, options):
    if options:
        raise ValueError(f"the text format takes no options (given: {', '.join(sorted(options))})")
    return _TextWriter()


class _HexWriter:
    """`dump --format hexdump`: each event's bytes, every run labelled by its spec field."""

    def lines(self, se) -> Iterable[str]:
        from .hexdump import render

        return (render(se),)

    def end(self) -> list:
        return []


def _hexdump(rows_only, options):
    if options:
        raise ValueError(f"the hexdump format takes no options (given: {', '.join(sorted(options))})")
    return _HexWriter()


def _native(rows_only, options):
    from .dump import JsonlWriter

    if options:
        raise ValueError("--debezium-option is for --envelope debezium (given: "
                         f"{', '.join(sorted(options))})")
    return JsonlWriter(rows_only=rows_only)


def _debezium(rows_only, options):
    from .debezium import DebeziumWriter

    return DebeziumWriter(options)


def _sql(flashback):
    def render(transactions, **kw):
        from .sql import render_sql

        return render_sql(transactions, flashback=flashback, **kw)
    return render


def _flashback_binlog(transactions, **kw):
    from .flashback_binlog import render

    return render(transactions, **kw)


def _text_frame():
    from .dump_text import TEXT_FOOTER, TEXT_HEADER

    return TEXT_HEADER, TEXT_FOOTER


class _Registry(dict):
    """name -> Format."""

    def __missing__(self, name):
        known = ", ".join(sorted(self))
        raise KeyError(f"no output format {name!r} (known: {known})")


FORMATS = _Registry()


def register(fmt: Format) -> Format:
    """Add a format to the registry (its name must be new)."""
    if fmt.name in FORMATS:
        raise ValueError(f"output format {fmt.name!r} is already registered")
    FORMATS[fmt.name] = fmt
    return fmt


register(Format("text", "events as mariadb-binlog -vv --base64-output=decode-rows prints them, "
                        "a script that restores nothing and runs safely", "lines", _text,
                executable=True, frame=_text_frame))
register(Format("hexdump", "every event's bytes in hex, each run labelled by its spec field",
                "lines", _hexdump))
register(Format("jsonl", "JSON lines, the native envelope: every event, row changes with "
                         "before/after/source", "lines", _native))
register(Format("debezium", "JSON lines, each row change as the Debezium MySQL/MariaDB "
                            "connector's change event", "lines", _debezium))
register(Format("sql", "the row changes as a replayable SQL script, transaction by transaction",
                "transactions", _sql(False), executable=True))
register(Format("flashback", "SQL that undoes the row changes, last transaction first",
                "transactions", _sql(True), executable=True))
register(Format("flashback-binlog", "the rows events inverted as BINLOG statements, last "
                                    "transaction first (dump --flashback, as mariadb-binlog's)",
                "transactions", _flashback_binlog, executable=True))


def get(name: str) -> Format:
    """The format registered under `name` (KeyError naming the known ones)."""
    return FORMATS[name]


def lookup(fmt: str, envelope: str = DEFAULT_ENVELOPE) -> Format:
    """The format the CLI's `--format F --envelope E` names: text, sql and flashback have no
    envelope; jsonl is "jsonl" (native) or "debezium"."""
    if envelope not in ENVELOPES:
        raise ValueError(f"no envelope {envelope!r} (known: {', '.join(ENVELOPES)})")
    if fmt == "jsonl":
        return get("jsonl" if envelope == "native" else "debezium")
    if envelope != DEFAULT_ENVELOPE:
        raise ValueError(f"--envelope is for --format jsonl, not {fmt}")
    return get(fmt)


def names() -> list:
    """The registered formats' names."""
    return sorted(FORMATS)


def lines_of(events, name: str = "jsonl", rows_only: bool = False,
             options: Optional[dict] = None) -> Iterator[str]:
    """The lines of a lines format for a stream's events (StreamEvents in stream order), header
    and footer included: one writer follows the whole stream. A writer may give several lines
    as one string (the compiled backend writes a rows event's records at once); here each JSON
    line is on its own (JSON text holds no raw newline)."""
    fmt = get(name)
    w = fmt.writer(rows_only=rows_only, options=options)
    split = fmt.name != "text"
    yield from fmt.header
    for se in events:
        for line in w.lines(se):
            if split and "\n" in line:
                yield from line.split("\n")
            else:
                yield line
    yield from w.end()
    yield from fmt.footer
