"""Server versions: the value a spec's version literal (`mysql-8.0.1`) and `ctx.server` stand for,
how two compare, a server's version string read as one, and the named sets of generated/sets.py
taken for a version.

Both the spec language (lang.expr parses literals and interprets comparisons) and the generated
modules (through runtime.construct) use these; this module imports neither of them.
"""
from __future__ import annotations

import re
from dataclasses import dataclass

__all__ = ["Version", "parse_version_literal", "version_compare", "vcmp", "version",
           "server_version", "set_members"]


@dataclass(frozen=True)
class Version:
    """A server version: its line (mysql or mariadb) and its number."""

    flavor: str
    number: tuple

    def __str__(self):
        return f"{self.flavor}-{'.'.join(map(str, self.number))}"


def parse_version_literal(text: str) -> Version:
    """The Version of a spec's literal `mysql-8.0.1` / `mariadb-10.11`."""
    flavor, _, num = text.partition("-")
    return Version(flavor, tuple(int(p) for p in num.split(".")))


def version_compare(op, a, b):
    """Versions compare only within one line (mysql or mariadb); across lines every comparison is false."""
    if not isinstance(a, Version) or not isinstance(b, Version) or a.flavor != b.flavor:
        return op == "!="
    x, y = a.number, b.number
    return {"<": x < y, "<=": x <= y, ">": x > y, ">=": x >= y, "==": x == y, "!=": x != y}[op]


vcmp = version_compare  # the name generated code calls it by (rt.vcmp)

_VERSION_RE = re.compile(r"(\d+)(?:\.(\d+))?(?:\.(\d+))?")


def version(text) -> Version | None:
    """The version of a server version string ('8.0.40-debug', '10.11.6-MariaDB-log')."""
    if text is None:
        return None
    if isinstance(text, Version):
        return text
    if isinstance(text, bytes):
        text = text.decode("latin-1")
    flavor = "mariadb" if "mariadb" in text.lower() else "mysql"
    if flavor == "mariadb" and text.startswith("5.5.5-"):
        text = text[6:]  # the replication handshake's prefix
    m = _VERSION_RE.match(text.strip())
    if not m:
        return Version(flavor, (0,))
    return Version(flavor, tuple(int(g) for g in m.groups() if g is not None))


def server_version(text: str) -> Version:
    """`mysql-8.4.0`, `mariadb-10.11.6`, or a server's own version string (`10.11.6-MariaDB`)."""
    if text.startswith(("mysql-", "mariadb-")):
        try:
            return parse_version_literal(text)
        except ValueError:
            raise ValueError(f"not a server version: {text!r}") from None
    v = version(text)
    if v.number == (0,):
        raise ValueError(f"not a server version: {text!r}")
    return v


_SET_CACHE: dict = {}


def set_members(entries, server) -> frozenset:
    """The members of a named set (generated/sets.py) for a server version: the union of the
    entries whose line (flavor) and since/until range take in `server`. With no version known
    (None), only the entries that name neither a line nor a version apply."""
    key = (entries, server)
    got = _SET_CACHE.get(key)
    if got is not None:
        return got
    out = set()
    for flavor, since, until, members in entries:
        if server is None:
            if flavor is None and since is None and until is None:
                out |= members
            continue
        if flavor is not None and server.flavor != flavor:
            continue
        if since is not None and not version_compare(">=", server, since):
            continue
        if until is not None and not version_compare("<", server, until):
            continue
        out |= members
    got = frozenset(out)
    if len(_SET_CACHE) > 4096:
        _SET_CACHE.clear()
    _SET_CACHE[key] = got
    return got
