"""Texts given back last first, held on disk: the inverse scripts' memory (`flashback`, `dump
--flashback` and their --jobs parent).

An inverse is written last transaction first, but a binlog can only be read first transaction
first: every transaction's text is made before the first line can be written. Held in memory,
that grows with the input (as mariadb-binlog --flashback's does); here each text is written to a
temporary file as it is made and only where it ends is kept, eight bytes in an array, so memory
stays flat at any input size.

The file has no name (tempfile.TemporaryFile, in $TMPDIR or the system's folder): nothing is
left behind however the process ends (an error, SIGINT, a closed pipe, SIGKILL). A text too long
for one read (a tail of the input read by the --jobs parent as one text) is given back in
blocks, each of whole characters.
"""
from __future__ import annotations

import codecs
import os
import tempfile
from array import array
from typing import Iterator, Tuple

ENCODING, ERRORS = "utf-8", "surrogateescape"  # values keep undecodable bytes as surrogates
BLOCK = 1 << 20  # the longest read of a text given back


class Backwards:
    """add(text) in order, then backwards(): the texts last first. write(text)... end() adds
    one text in parts. close() (or `with`) lets the file go."""

    def __init__(self, directory=None):
        self.file = tempfile.TemporaryFile(dir=directory)
        self.ends = array("q")  # where each text ends in the file
        self.size = 0

    def write(self, text: str):
        data = text.encode(ENCODING, ERRORS)
        self.file.write(data)
        self.size += len(data)

    def end(self):
        self.ends.append(self.size)

    def add(self, text: str):
        self.write(text)
        self.end()

    def __len__(self):
        return len(self.ends)

    def backwards(self) -> Iterator[Tuple[int, str]]:
        """(k, the k-th text added), last first; a text longer than BLOCK comes in several
        strings, each with its k."""
        self.file.flush()
        fd = self.file.fileno()
        for k in range(len(self.ends) - 1, -1, -1):
            start, stop = self.ends[k - 1] if k else 0, self.ends[k]
            if stop - start <= BLOCK:
                yield k, os.pread(fd, stop - start, start).decode(ENCODING, ERRORS)
                continue
            decoder = codecs.getincrementaldecoder(ENCODING)(ERRORS)
            while start < stop:
                data = os.pread(fd, min(BLOCK, stop - start), start)
                if not data:  # the file was cut under us: nothing more to give
                    break
                start += len(data)
                yield k, decoder.decode(data, final=start >= stop)

    def lines_backwards(self) -> Iterator[str]:
        """The texts last first, line by line (each line keeps its newline)."""
        parts, at = [], None  # the line being gathered, of text number `at`
        for k, text in self.backwards():
            if k != at and parts:
                yield "".join(parts)
                parts = []
            at = k
            lines = text.split("\n")
            if len(lines) > 1:
                parts.append(lines[0])
                yield "".join(parts) + "\n"
                yield from (line + "\n" for line in lines[1:-1])
                parts = []
            if lines[-1]:
                parts.append(lines[-1])
        if parts:
            yield "".join(parts)

    def close(self):
        self.file.close()

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()
        return False
