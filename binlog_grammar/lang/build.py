"""The builder of the validated model: every spec file read (YAML with line numbers), overlays
applied, then every definition checked (binlog_grammar.lang.loader calls it when the model cache
has no copy; a process that finds the cached model never imports the YAML reader or the checks)."""
from __future__ import annotations

from pathlib import Path

from ..errors import SpecError
from .definitions import DefinitionReader
from .events import EVENT_KEYS, EventReader
from .fields import FieldReader
from .model import SpecSet
from .overlays import apply_overlay, overlay_version
from .source import line_of, read_yaml

FILE_KEYS = {"types", "enums", "flags", "context", "sets"}


class Builder(FieldReader, DefinitionReader, EventReader):
    """Reads the spec files in two passes: first the names (context, enums, types, sets, events),
    then every definition checked against them."""

    def __init__(self, root: Path, files):
        self.root = root
        self.files = files
        self.context = {}
        self.types = {}
        self.enums = {}
        self.events = []
        self.type_files = {}
        self.raw_types = []  # (rel, name, mapping)
        self.raw_sets = []  # (rel, name, mapping, line)
        self.sets = {}

    def rel(self, p: Path) -> str:
        try:
            return str(Path("specs") / p.relative_to(self.root))
        except ValueError:
            return str(p)

    def build(self) -> SpecSet:
        docs = [(self.rel(p), read_yaml(p, self.rel(p))) for p in self.files]
        overlays = [(rel, d) for rel, d in docs if isinstance(d, dict) and "overlay" in d]
        docs = [(rel, d) for rel, d in docs if not (isinstance(d, dict) and "overlay" in d)]
        for rel, ov in sorted(overlays, key=lambda x: overlay_version(*x)):
            docs.append((rel, apply_overlay(rel, ov, docs)))
        # pass 1: context, enums, flags, names of types and events
        for rel, doc in docs:
            if doc is None:
                continue
            if not isinstance(doc, dict):
                raise SpecError("a spec file must be a YAML mapping", rel, 1)
            is_event = "event" in doc or "events" in doc
            allowed = EVENT_KEYS if is_event else FILE_KEYS
            for k in doc:
                if k not in allowed:
                    raise SpecError(f"unknown top-level key {k!r} (allowed: {', '.join(sorted(allowed))})",
                                    rel, line_of(doc, k))
            if "context" in doc:
                self._context(rel, doc["context"])
            for k, is_flags in (("enums", False), ("flags", True)):
                for name, body in (doc.get(k) or {}).items():
                    self._enum(rel, doc[k], name, body, is_flags)
            for name, body in (doc.get("types") or {}).items():
                if name in self.types or any(n == name for _r, n, _b, _l in self.raw_types):
                    raise SpecError(f"type {name!r} is defined twice", rel, line_of(doc["types"], name))
                self.raw_types.append((rel, name, body, line_of(doc["types"], name)))
                self.type_files.setdefault(rel, []).append(name)
            for name, body in (doc.get("sets") or {}).items():
                if any(n == name for _r, n, _b, _l in self.raw_sets):
                    raise SpecError(f"set {name!r} is defined twice", rel, line_of(doc["sets"], name))
                self.raw_sets.append((getattr(doc["sets"], "src_file", rel), name, body,
                                      line_of(doc["sets"], name)))
        self._event_type_enum(docs)
        self.enum_values = {n: e.by_name() for n, e in self.enums.items()}
        self.type_names = {n for _r, n, _b, _l in self.raw_types}
        # pass 2: named types, then events
        for rel, name, body, line in self.raw_types:
            self.types[name] = self._typedef(rel, name, body, line)
        for rel, doc in docs:
            if doc and ("event" in doc or "events" in doc):
                self.events.append(self._event(rel, doc))
        self._check_codes()
        self._check_type_cycles()
        for rel, name, body, line in self.raw_sets:
            self.sets[name] = self._set(rel, name, body, line)
        return SpecSet(str(self.root), [self.rel(p) for p in self.files], self.context, self.types,
                       self.enums, self.events, self.type_files, self.sets)
