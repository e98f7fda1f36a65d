"""Values made from the specs (drawn by hypothesis or chosen for the docs' examples), and how they
compare with what the generated structs parse."""
from __future__ import annotations


class _Rebuilt:
    """A field whose value the build computes (spec key `rebuild:`)."""

    def __repr__(self):
        return "REBUILT"


REBUILT = _Rebuilt()


class RebuiltInt(int):
    """A made value that the build recomputes in part (a rebuild that keeps some of the field's own
    bits): the build reads it, and it matches whatever is parsed."""


class KnownValues(dict):
    """The values of a struct made so far, as expressions see them. A REBUILT field answers with
    the length or count made for what it describes (`shadow`), or is unknown (LookupError)."""

    def __init__(self, values, shadow):
        super().__init__()
        self.v = values
        self.s = shadow

    def __contains__(self, k):
        return k in self.v

    def __getitem__(self, k):
        val = self.v[k]
        if val is REBUILT or isinstance(val, RebuiltInt):
            if k in self.s:
                return self.s[k]
            if val is REBUILT:
                raise LookupError(k)
        return val


def normalize(value):
    """Parsed or made values in plain Python form (construct's private keys dropped)."""
    if isinstance(value, dict):
        return {k: normalize(v) for k, v in value.items() if not str(k).startswith("_")}
    if isinstance(value, (list, tuple)):
        return [normalize(v) for v in value]
    if isinstance(value, bool) or value is None or value is REBUILT:
        return value
    if isinstance(value, int):
        return int(value)
    return value


def matches(made, parsed) -> bool:
    """Is `parsed` the value that was made (a rebuilt field matches whatever the build wrote)?"""
    if made is REBUILT or isinstance(made, RebuiltInt):
        return True
    if isinstance(made, dict):
        if not isinstance(parsed, dict):
            return False
        keys = {k for k in made if not str(k).startswith("_")}
        pkeys = {k for k in parsed if not str(k).startswith("_")}
        return keys == pkeys and all(matches(made[k], parsed[k]) for k in keys)
    if isinstance(made, (list, tuple)):
        return (isinstance(parsed, (list, tuple)) and len(made) == len(parsed)
                and all(matches(a, b) for a, b in zip(made, parsed)))
    return normalize(made) == normalize(parsed)
