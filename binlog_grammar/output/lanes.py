"""What the Python drivers of the compiled lanes share (text_lane.py for `dump`'s text,
jsonl_lane.py for its JSON lines): the window of the file a lane reads, mapped, and the table a
TABLE_MAP the lane wrote gives a table id."""
from __future__ import annotations

import mmap
import os
from dataclasses import replace


def map_window(path, pos: int, window: int):
    """(a read-only map of the file's bytes from about pos on, at most `window` of them (each
    driver's WINDOW), its offset); (None, 0) when the file cannot be mapped (the Python path reads it). A window, not
    the whole file: the pages of a map count in the process's memory while it stands."""
    base = pos - pos % mmap.ALLOCATIONGRANULARITY
    try:
        with open(path, "rb") as fh:
            size = os.fstat(fh.fileno()).st_size
            if size <= base:
                return None, 0
            return mmap.mmap(fh.fileno(), min(window, size - base), access=mmap.ACCESS_READ,
                             offset=base), base
    except (OSError, ValueError):  # gone, not mappable
        return None, 0


def table_under(by_id: dict, regs: list, reg: int, table_id: int):
    """The table of number `reg` (regs[reg]) under `table_id`, kept in by_id: the same table
    under another id is a copy with that id, as RowDecoder.table_map gives it."""
    t = by_id.get((reg, table_id))
    if t is None:
        base = regs[reg]
        t = by_id[(reg, table_id)] = base if base.table_id == table_id else \
            replace(base, table_id=table_id)
    return t
