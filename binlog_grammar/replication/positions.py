"""Where a replica stands: binlog positions in the server's order. The GTID state it resumes
from (MariaDBGtidState, MySQLGtidSet) is binlog.gtid's, with every other reading of GTID text."""
from __future__ import annotations


def _file_key(name: str):
    """Binlog files in server order: by the number after the last dot."""
    stem, _, num = (name or "").rpartition(".")
    return (int(num), stem) if num.isdigit() else (-1, name or "")


def position_key(file: str, pos: int):
    """A sort key of (file, pos): positions in the order the server wrote them."""
    return (_file_key(file), pos)
