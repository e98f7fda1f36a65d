"""Comparing what two readers parsed, type and name of every part included."""


def exact(v):
    """A parsed value with the type, name and padding of every part, for == between readers
    (construct's Containers and the generated readers' records)."""
    if isinstance(v, dict):
        return {k: exact(x) for k, x in v.items() if not str(k).startswith("_")}
    if isinstance(v, list):
        return (type(v).__name__ == "Bits", getattr(v, "pad", None), [exact(x) for x in v])
    return (type(v).__name__, v, getattr(v, "name", None), getattr(v, "names", None))
