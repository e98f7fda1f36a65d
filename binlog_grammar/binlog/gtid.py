"""GTIDs: the events that announce one, the GTID text of such an event, and GTID sets as text.

Two readers of GTID set text, with different jobs:
- GtidSet, the filters' set (`--include-gtids`, `--exclude-gtids`, repair's applied GTIDs): MySQL
  `uuid[:tag]:1-5:7` and MariaDB `domain-server-seq` or `domain-server-first-last` elements, in
  one set; a MySQL UUID is 36 hex digits and dashes and a tag is compared as written.
- MariaDBGtidState and MySQLGtidSet, where a replica resumes (`stream --gtid`): the last GTID of
  each MariaDB domain, or a MySQL set that grows as transactions complete and is sent to the
  server (spec mysql_gtid_set). Here a UUID's dashes are optional and a tag is folded to lower
  case, as the server takes them.
Elements are separated by commas or newlines; intervals are `:lo` or `:lo-hi`.
"""
from __future__ import annotations

import re
from typing import Optional

from ..runtime import construct as rt

# every event that opens a transaction with a GTID (MySQL GTID, ANONYMOUS_GTID and tagged GTID,
# MariaDB's GTID_EVENT)
GTID_EVENTS = frozenset({"GTID_LOG_EVENT", "ANONYMOUS_GTID_LOG_EVENT", "GTID_TAGGED_LOG_EVENT",
                         "GTID_EVENT"})
FL_STANDALONE = 0x01  # MariaDB GTID_EVENT flags2: a single statement without BEGIN/COMMIT

_INTERVALS = r"((?::\d+(?:-\d+)?)+)"  # :1-5:7
_TAG = r"((?::[A-Za-z_][A-Za-z0-9_]*)?)"
# the filters' elements: MySQL uuid[:tag]:intervals; MariaDB domain-server-seq[-last]
MYSQL_GTID = re.compile(r"^([0-9a-fA-F-]{36})" + _TAG + _INTERVALS + "$")
MARIADB_GTID_RANGE = re.compile(r"^(\d+)-(\d+)-(\d+)(?:-(\d+))?$")
# where a replica resumes: one MariaDB GTID (domain-server-sequence); one element of a MySQL GTID
# set (uuid[:tag]:1-5:7, the UUID's dashes optional)
MARIADB_GTID = re.compile(r"^\s*(\d+)-(\d+)-(\d+)\s*$")
MYSQL_GTID_PART = re.compile(r"^\s*([0-9a-fA-F]{8}-?[0-9a-fA-F]{4}-?[0-9a-fA-F]{4}-?[0-9a-fA-F]{4}-?"
                             r"[0-9a-fA-F]{12})" + _TAG + _INTERVALS + r"\s*$")


def gtid_of(ev) -> Optional[str]:
    """The GTID an event announces, as text: MySQL `uuid:gno` (`uuid:tag:gno` when tagged),
    MariaDB `domain-server-seq`; None for anonymous transactions and other events."""
    name = ev.name
    d = ev.data
    if name == "GTID_LOG_EVENT":
        return f"{uuid_text(bytes(d['sid']))}:{int(d['gno'])}"
    if name == "GTID_TAGGED_LOG_EVENT":
        uuid = rt.tlv_value(d.fields, "uuid")
        tag = rt.tlv_value(d.fields, "tag")
        gno = rt.tlv_value(d.fields, "gno")
        if uuid is None or gno is None:
            return None
        u = uuid_text(bytes(uuid))
        return f"{u}:{tag}:{gno}" if tag else f"{u}:{gno}"
    if name == "GTID_EVENT":
        return f"{int(d['domain_id'])}-{int(ev.header['server_id'])}-{int(d['seq_no'])}"
    return None


def uuid_text(b: bytes) -> str:
    """A server UUID (16 bytes) as text: 8-4-4-4-12 lower-case hex digits."""
    return dashed(b.hex())


def dashed(h: str) -> str:
    """32 hex digits as a UUID's 8-4-4-4-12 groups."""
    return f"{h[:8]}-{h[8:12]}-{h[12:16]}-{h[16:20]}-{h[20:]}"


def elements(text: str) -> list:
    """The elements of a GTID set's text (separated by commas or newlines), blank ones left out."""
    return [p for p in text.replace("\n", ",").split(",") if p.strip()]


def intervals(text: str) -> list:
    """[(lo, hi)] of an element's intervals `:1-5:7` (the third group of the patterns above)."""
    out = []
    for iv in text.split(":")[1:]:
        lo, _, hi = iv.partition("-")
        out.append((int(lo), int(hi or lo)))
    return out


class GtidSet:
    """A set of GTIDs: MySQL `uuid[:tag]:1-5:7,...`, and MariaDB `domain-server-seq` (one GTID)
    or `domain-server-first-last` (a range of sequence numbers)."""

    def __init__(self, text: str):
        self.text = text
        self.mysql = {}  # (uuid, tag) -> [(lo, hi)]
        self.mariadb = []  # (domain, server, lo, hi)
        for part in (p.strip() for p in elements(text)):
            m = MYSQL_GTID.match(part)
            if m:
                key = (m[1].lower(), m[2][1:] if m[2] else "")
                self.mysql.setdefault(key, []).extend(intervals(m[3]))
                continue
            m = MARIADB_GTID_RANGE.match(part)
            if m:
                d, s, lo, hi = int(m[1]), int(m[2]), int(m[3]), m[4]
                self.mariadb.append((d, s, lo, int(hi) if hi else lo))
                continue
            raise ValueError(f"not a GTID set element: {part!r} (MySQL uuid[:tag]:1-5 or MariaDB "
                             f"domain-server-seq)")

    def __contains__(self, gtid: Optional[str]) -> bool:
        if not gtid:
            return False
        m = MARIADB_GTID_RANGE.match(gtid)
        if m:
            d, s, n = int(m[1]), int(m[2]), int(m[3])
            return any(d == a and s == b and lo <= n <= hi for a, b, lo, hi in self.mariadb)
        parts = gtid.split(":")
        key = (parts[0].lower(), parts[1] if len(parts) == 3 else "")
        n = int(parts[-1])
        return any(lo <= n <= hi for lo, hi in self.mysql.get(key, ()))

    def __repr__(self):
        return f"GtidSet({self.text!r})"


class MariaDBGtidState:
    """The MariaDB GTID position of a replica: the last GTID of each replication domain."""

    def __init__(self, text: str = ""):
        self.domains = {}
        for part in elements(text):
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
        for part in elements(text):
            m = MYSQL_GTID_PART.match(part)
            if not m:
                raise ValueError(f"not a MySQL GTID set element (uuid[:tag]:1-5:7): {part.strip()!r}")
            key = (m[1].replace("-", "").lower(), m[2][1:].lower() if m[2] else "")
            for lo, hi in intervals(m[3]):
                self.add_interval(key, lo, hi)

    def add_interval(self, key, lo, hi):
        """Add lo..hi to the intervals of key (uuid hex, tag), merging what touches."""
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
        self.add_interval((uuid, tag), n, n)

    def __str__(self):
        out = []
        for (u, tag), ivs in sorted(self.sids.items()):
            out.append(dashed(u) + (f":{tag}" if tag else "") + "".join(
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
