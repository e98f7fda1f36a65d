"""Reading one spec file: YAML whose mappings and lists remember their line numbers, so that a
mistake found later still names the file and the line, and version literals checked as they are read.

`read_yaml` gives YamlMap / YamlList values (a dict and a list with `line`, and `key_lines` /
`item_lines` for their keys and items); `line_of` finds the line of a value or of one of its keys.
"""
from __future__ import annotations

from pathlib import Path

import yaml

from ..errors import SpecError
from . import expr as E
from .model import YamlList, YamlMap  # noqa: F401 - defined beside the model, which holds some


class _Loader(yaml.SafeLoader):
    pass


def _construct_map(loader, node):
    loader.flatten_mapping(node)
    m = YamlMap()
    m.line = node.start_mark.line + 1
    m.key_lines = {}
    for knode, vnode in node.value:
        key = loader.construct_object(knode, deep=True)
        if key in m:
            raise SpecError(f"duplicate key {key!r}", None, knode.start_mark.line + 1)
        m[key] = loader.construct_object(vnode, deep=True)
        m.key_lines[key] = knode.start_mark.line + 1
    return m


def _construct_seq(loader, node):
    lst = YamlList(loader.construct_object(c, deep=True) for c in node.value)
    lst.line = node.start_mark.line + 1
    lst.item_lines = [c.start_mark.line + 1 for c in node.value]
    return lst


_Loader.add_constructor(yaml.resolver.BaseResolver.DEFAULT_MAPPING_TAG, _construct_map)
_Loader.add_constructor(yaml.resolver.BaseResolver.DEFAULT_SEQUENCE_TAG, _construct_seq)


def read_yaml(path: Path, rel: str):
    try:
        with open(path, encoding="utf-8") as fh:
            return yaml.load(fh, Loader=_Loader)
    except SpecError as e:
        e.file = rel
        raise SpecError(e.message, rel, e.line) from None
    except yaml.YAMLError as e:
        mark = getattr(e, "problem_mark", None)
        raise SpecError(f"not valid YAML: {getattr(e, 'problem', e)}", rel,
                        mark.line + 1 if mark else None) from None


def mark_source(obj, rel):
    """Remember which file a piece of YAML came from (an overlay's fields keep their own file)."""
    if isinstance(obj, (YamlMap, YamlList)):
        obj.src_file = rel


def line_of(obj, key=None, default=0):
    if isinstance(obj, YamlMap) and key is not None and key in obj.key_lines:
        return obj.key_lines[key]
    return getattr(obj, "line", default) or default



def version_of(rel, line, fid, v):
    """A since:/until:/overlay: version literal (None stays None); a SpecError when it is not one."""
    if v is None:
        return None
    try:
        return E.parse_version_literal(str(v))
    except ValueError:
        raise SpecError(f"bad version {v!r} (write mysql-8.0.1 or mariadb-10.5.2)", rel, line,
                        fid) from None
