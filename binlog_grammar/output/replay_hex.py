"""mysqlbinlog's `-H`/`--hexdump` comments in dump's replay form (output/replay.py): each event's
bytes as logged, between its header line and the rest of that line, which then starts `# Event: `:

    #261122  8:03:57 server id 1  end_log_pos 256 CRC32 0xa7cd1e1e
    # Position
    #           |Timestamp   |Type |Master ID   |Size        |Master Pos  |Flags
    #        4  |ed a1 02 6b |0f   |01 00 00 00 |fc 00 00 00 |00 01 00 00 |00 00
    #
    #       17  04 00 31 30 2e 31 31 2e  31 39 2d 4d 61 72 69 61  |..10.11.19-Maria|
    ...
    #
    # Event: 	Start: binlog v 4, ...

The box shows the first 19 bytes (the common header) field by field; then, from the end of the
event's common header on, 16 bytes a line as `hexdump -C` does: the file offset in hex, the bytes
in two groups of eight, and the printable ASCII ones (every other byte a dot: quoting.hex_column,
which says why that is safe after a `#`). Only numbers, hex digits and those 95 characters reach
the script, each inside a `#` comment line (DESIGN rule 12). Checked byte for byte against
mariadb-binlog -H by tests/output/test_replay.py.
"""
from __future__ import annotations

from . import quoting

BOX = "#           |Timestamp   |Type |Master ID   |Size        |Master Pos  |Flags"


def hex_lines(raw: bytes, offset: int, header_len: int) -> str:
    """The comment lines of one event (`raw`, as logged, at file offset `offset`; its common
    header `header_len` bytes long), each ending in a newline, up to and including the `#` line
    after the bytes; the caller writes `# Event: ` and the header's text after them."""
    h = raw[:19].ljust(19, b"\0")

    def run(a, b):
        return " ".join(f"{x:02x}" for x in h[a:b])

    out = ["# Position\n", BOX, "\n", f"# {offset:8x}  |{run(0, 4)} |{h[4]:02x}   |{run(5, 9)} "
           f"|{run(9, 13)} |{run(13, 17)} |{run(17, 19)}\n#\n"]
    body = raw[header_len:]
    for i in range(0, len(body), 16):
        chunk = body[i:i + 16]
        hexes = " ".join(f"{b:02x}" for b in chunk[:8])
        if len(chunk) > 8:
            hexes += "  " + " ".join(f"{b:02x}" for b in chunk[8:])
        out.append(f"# {offset + header_len + i:8x}  {hexes:<48}  |"
                   f"{quoting.hex_column(chunk)}|\n")
    if body:
        out.append("#\n")
    return "".join(out)

