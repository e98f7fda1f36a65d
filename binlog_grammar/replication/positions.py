"""Where a replica stands: binlog positions in the server's order, and the GTID state it
resumes from (a MariaDB GTID position, a MySQL GTID set with its COM_BINLOG_DUMP_GTID encoding)."""
from __future__ import annotations

import re


def _file_key(name: str):
    """Binlog files in server order: by the number after the last dot."""
    stem, _, num = (name or "").rpartition(".")
    return (int(num), stem) if num.isdigit() else (-1, name or "")


def position_key(file: str, pos: int):
    """A sort key of (file, pos): positions in the order the server wrote them."""
    return (_file_key(file), pos)


# one MariaDB GTID (domain-server-sequence); one element of a MySQL GTID set (uuid[:tag]:1-5:7)
MARIADB_GTID = re.compile(r"^\s*(\d+)-(\d+)-(\d+)\s*$")
MYSQL_GTID_PART = re.compile(r"^\s*([0-9a-fA-F]{8}-?[0-9a-fA-F]{4}-?[0-9a-fA-F]{4}-?[0-9a-fA-F]{4}-?"
                             r"[0-9a-fA-F]{12})((?::[A-Za-z_][A-Za-z0-9_]*)?)((?::\d+(?:-\d+)?)+)\s*$")


class MariaDBGtidState:
    """The MariaDB GTID position of a replica: the last GTID of each replication domain."""

    def __init__(self, text: str = ""):
        self.domains = {}
        for part in (p for p in text.replace("\n", ",").split(",") if p.strip()):
            m = MARIADB_GTID.match(part)
            if not m:
                raise ValueError(f"not a MariaDB GTID (domain-server-sequence): {part.strip()!r}")
            self.domains[int(m[1])] = (int(m[2]), int(m[3]))

    def add(self, gtid: str):
        m = MARIADB_GTID.match(gtid or "")
        if m:
            self.domains[int(m[1])] = (int(m[2]), int(m[3]))

    def __str__(self):
        return ",".join(f"{d}-{s}-{n}" for d, (s, n) in sorted(self.domains.items()))

    def __repr__(self):
        return f"MariaDBGtidState({str(self)!r})"


class MySQLGtidSet:
    """A MySQL GTID set (uuid[:tag]:1-5:7,...) that grows as transactions complete, and its
    binary encoding (spec mysql_gtid_set) for COM_BINLOG_DUMP_GTID."""

    def __init__(self, text: str = ""):
        self.sids = {}  # (uuid hex without dashes, tag) -> sorted list of [lo, hi]
        for part in (p for p in text.replace("\n", ",").split(",") if p.strip()):
            m = MYSQL_GTID_PART.match(part)
            if not m:
                raise ValueError(f"not a MySQL GTID set element (uuid[:tag]:1-5:7): {part.strip()!r}")
            key = (m[1].replace("-", "").lower(), m[2][1:].lower() if m[2] else "")
            for iv in m[3].split(":")[1:]:
                lo, _, hi = iv.partition("-")
                self._add(key, int(lo), int(hi or lo))

    def _add(self, key, lo, hi):
        ivs = self.sids.setdefault(key, [])
        ivs.append([lo, hi])
        ivs.sort()
        merged = []
        for a, b in ivs:
            if merged and a <= merged[-1][1] + 1:
                merged[-1][1] = max(merged[-1][1], b)
            else:
                merged.append([a, b])
        self.sids[key] = merged

    def add(self, gtid: str):
        parts = (gtid or "").split(":")
        if len(parts) < 2 or not parts[-1].isdigit():
            return
        uuid = parts[0].replace("-", "").lower()
        tag = parts[1].lower() if len(parts) == 3 else ""
        n = int(parts[-1])
        self._add((uuid, tag), n, n)

    def __str__(self):
        out = []
        for (u, tag), ivs in sorted(self.sids.items()):
            uu = f"{u[:8]}-{u[8:12]}-{u[12:16]}-{u[16:20]}-{u[20:]}"
            out.append(uu + (f":{tag}" if tag else "") + "".join(
                f":{a}" if a == b else f":{a}-{b}" for a, b in ivs))
        return ",".join(out)

    def encoded(self) -> dict:
        """The value for spec mysql_gtid_set (untagged format unless a tag is present)."""
        tagged = any(tag for _u, tag in self.sids)
        sids = []
        for (u, tag), ivs in sorted(self.sids.items()):
            sids.append(dict(uuid=bytes.fromhex(u), tag=tag if tagged else None,
                             intervals=[dict(start=a, end=b + 1) for a, b in ivs]))
        return dict(gtid_format=1 if tagged else 0, sids=sids)
