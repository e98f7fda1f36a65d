"""Load the YAML specs, check them, and give the validated model.

Every mistake is a SpecError naming the file, the line and the field, raised before anything is
generated.
"""
from __future__ import annotations

import hashlib
import os
import pickle
import re
from pathlib import Path
from typing import Optional

import yaml

from ..errors import SpecError
from . import expr as E
from .model import (
    ContextDef, EnumDef, EventDef, EventName, Field, SetDef, SetEntry, SpecSet, TypeDef, TypeSpec)

INT_RE = re.compile(r"^(u|s)(8|16|24|32|40|48|56|64)(le|be)?$")
FLOAT_RE = re.compile(r"^f(32|64)(le|be)$")
SIMPLE_TYPES = {"packed", "sv_uint", "sv_sint", "bytes", "str", "bitmap", "struct", "empty",
                "uintle", "uintbe", "decimal", "json_binary"}
FIELD_KEYS = {"id", "type", "doc", "doc-ref", "since", "until", "size", "if", "repeat",
              "repeat-until", "enum", "flags", "const", "rebuild", "pad", "prefix", "terminator",
              "fields", "bits", "order", "decode", "value", "precision", "scale"}
TYPE_KEYS = (FIELD_KEYS - {"id", "value"}) | {"doc", "as"}
EVENT_KEYS = {"event", "code", "events", "layout", "flavor", "doc", "doc-ref", "since", "until",
              "post_header_len", "post_header", "body", "types", "enums", "flags",
              "remaps_type_codes", "legacy_post_header_len"}
FILE_KEYS = {"types", "enums", "flags", "context", "sets"}
OVERLAY_KEYS = {"overlay", "until", "doc", "doc-ref", "types", "enums", "flags", "sets", "extend"}
SET_KEYS = {"enum", "doc", "doc-ref", "applies-to", "entries"}
SET_ENTRY_KEYS = {"members", "flavor", "since", "until", "doc", "doc-ref"}
RESERVED_IDS = {"items", "keys", "values", "get", "update", "copy", "pop", "clear", "setdefault",
                "popitem", "fromkeys", "search", "search_all"}
CODECS = {"zstd", "zlib", "mariadb_zlib"}
ID_RE = re.compile(r"^[a-z][a-z0-9_]*$")


# ---------------------------------------------------------------------------------------------
# YAML with line numbers

class _Map(dict):
    line = 0
    key_lines: dict


class _List(list):
    line = 0


class _Loader(yaml.SafeLoader):
    pass


def _construct_map(loader, node):
    loader.flatten_mapping(node)
    m = _Map()
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
    lst = _List(loader.construct_object(c, deep=True) for c in node.value)
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


def _mark(obj, rel):
    """Remember which file a piece of YAML came from (an overlay's fields keep their own file)."""
    if isinstance(obj, (_Map, _List)):
        obj.src_file = rel


def _line(obj, key=None, default=0):
    if isinstance(obj, _Map) and key is not None and key in obj.key_lines:
        return obj.key_lines[key]
    return getattr(obj, "line", default) or default


# ---------------------------------------------------------------------------------------------

def _comment1(text):
    text = " ".join(str(text).split())
    return text.split(". ")[0].rstrip(".")


def default_specs_dir() -> Path:
    """specs/ of the source tree, or the copy installed with the package."""
    here = Path(__file__).resolve().parent.parent
    for cand in (here.parent / "specs", here / "specs_data"):
        if (cand / "context.yaml").exists():
            return cand
    raise SpecError("cannot find the specs folder (looked beside the package)")


def load_specs(root=None, extra_dirs=()) -> SpecSet:
    """Read every spec file under `root` (and user folders), validate, and return the model.

    The validated model is kept in the user's cache folder, under a hash of the spec files and of
    this package's spec modules, so a process that needs it again (the per-table readers of
    fasttable.py) skips the YAML: same bytes in, same model out."""
    root = Path(root) if root else default_specs_dir()
    files = sorted(p for p in root.rglob("*.yaml"))
    for d in extra_dirs:
        files += sorted(Path(d).rglob("*.yaml"))
    cached = _model_cache(root, files)
    if cached is not None:
        try:
            with open(cached, "rb") as fh:
                return pickle.load(fh)
        except Exception:  # noqa: BLE001 - no cache, an old or a damaged one: read the YAML
            pass
    specs = _Builder(root, files).build()
    if cached is not None:
        try:
            cached.parent.mkdir(parents=True, exist_ok=True)
            tmp = cached.with_suffix(f".{os.getpid()}.tmp")
            with open(tmp, "wb") as fh:
                pickle.dump(specs, fh, protocol=pickle.HIGHEST_PROTOCOL)
            os.replace(tmp, cached)
        except OSError:  # a read-only home: no cache, nothing lost
            pass
    return specs


def _model_cache(root: Path, files) -> Optional[Path]:
    """Where the model of these spec files is cached (None: BINLOG_GRAMMAR_NO_CACHE is set)."""
    if os.environ.get("BINLOG_GRAMMAR_NO_CACHE"):
        return None
    h = hashlib.sha256()
    here = Path(__file__).parent
    for p in [*(here / n for n in ("loader.py", "model.py", "expr.py")), *files]:
        try:
            data = p.read_bytes()
        except OSError:
            return None
        rel = p.name if p.parent == here else str(p.relative_to(root) if p.is_relative_to(root) else p)
        h.update(f"{rel}\0{len(data)}\0".encode() + data)
    base = Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache")
    return base / "binlog-grammar" / "models" / f"{h.hexdigest()[:32]}.pickle"


class _Builder:
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
        for rel, ov in sorted(overlays, key=lambda x: self._overlay_version(*x)):
            docs.append((rel, self._apply_overlay(rel, ov, docs)))
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
                                    rel, _line(doc, k))
            if "context" in doc:
                self._context(rel, doc["context"])
            for k, is_flags in (("enums", False), ("flags", True)):
                for name, body in (doc.get(k) or {}).items():
                    self._enum(rel, doc[k], name, body, is_flags)
            for name, body in (doc.get("types") or {}).items():
                if name in self.types or any(n == name for _r, n, _b, _l in self.raw_types):
                    raise SpecError(f"type {name!r} is defined twice", rel, _line(doc["types"], name))
                self.raw_types.append((rel, name, body, _line(doc["types"], name)))
                self.type_files.setdefault(rel, []).append(name)
            for name, body in (doc.get("sets") or {}).items():
                if any(n == name for _r, n, _b, _l in self.raw_sets):
                    raise SpecError(f"set {name!r} is defined twice", rel, _line(doc["sets"], name))
                self.raw_sets.append((getattr(doc["sets"], "src_file", rel), name, body,
                                      _line(doc["sets"], name)))
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

    # -- version overlays ----------------------------------------------------------------
    def _overlay_version(self, rel, ov):
        v = self._version(rel, _line(ov, "overlay"), None, ov.get("overlay"))
        if v is None:
            raise SpecError("overlay: needs the first server version it applies to", rel, _line(ov))
        return (v.flavor, v.number, rel)

    def _apply_overlay(self, rel, ov, docs):
        """Apply a version overlay (specs/versions/*.yaml) to the other files' YAML, before they
        are validated: enum members, switch and TLV cases, and fields appended to an event or a
        struct type (present only for servers of the overlay's line from its version on). Returns
        what the overlay defines itself (types, enums, flags) as an ordinary file."""
        for k in ov:
            if k not in OVERLAY_KEYS:
                raise SpecError(f"unknown key {k!r} in a version overlay (allowed: "
                                f"{', '.join(sorted(OVERLAY_KEYS))})", rel, _line(ov, k))
        if not ov.get("doc"):
            raise SpecError("a version overlay needs a doc", rel, _line(ov))
        since = str(ov["overlay"])
        until = ov.get("until")
        gate = f"ctx.server >= {since}" + (f" and ctx.server < {until}" if until else "")
        self._version(rel, _line(ov, "until"), None, until)
        for step in ov.get("extend") or []:
            line = _line(step, default=_line(ov, "extend"))
            if not isinstance(step, dict) or "target" not in step:
                raise SpecError("each extend: entry needs a target", rel, line)
            ops = [k for k in ("members", "cases", "append") if k in step]
            extra = set(step) - {"target", "members", "cases", "append", "doc", "doc-ref"}
            if len(ops) != 1 or extra:
                raise SpecError("an extend: entry has a target and one of members, cases, append",
                                rel, line)
            target, op = step["target"], ops[0]
            node = self._overlay_target(rel, line, str(target), op, docs)
            if op == "members" and getattr(node, "is_set", False):
                # a named set: the members join it for servers of the overlay's line from its
                # version on (one more entry, with the overlay's since/until)
                entry = _Map(members=step["members"], since=since)
                entry.line = line
                entry.key_lines = {"members": _line(step, "members", line)}
                if until:
                    entry["until"] = until
                for k in ("doc", "doc-ref"):
                    if step.get(k):
                        entry[k] = step[k]
                _mark(entry, rel)
                entries = node.setdefault("entries", _List())
                if not isinstance(entries, list):
                    raise SpecError(f"set {target}: entries must be a list", rel, line)
                entries.append(entry)
            elif op == "members":
                members = node.setdefault("members", _Map())
                for k, v in step["members"].items():
                    if k in members:
                        raise SpecError(f"enum {target}: member {k} already exists", rel, line)
                    members[k] = v
            elif op == "cases":
                t = node.get("type")
                body = t.get("tlv") if isinstance(t, dict) and "tlv" in t else t
                if not isinstance(body, dict) or "cases" not in body:
                    raise SpecError(f"{target} is not a switch or a TLV list", rel, line)
                for k, v in step["cases"].items():
                    if k in body["cases"]:
                        raise SpecError(f"{target}: case {k} already exists", rel, line)
                    _mark(v, rel)
                    body["cases"][k] = v
            else:
                fields = node.setdefault("body", []) if "event" in node or "events" in node \
                    else node.get("fields")
                if not isinstance(fields, list):
                    raise SpecError(f"{target} is not an event or a struct type", rel, line)
                for f in step["append"]:
                    if not isinstance(f, dict):
                        raise SpecError("append: takes fields", rel, line)
                    src, f = f, _Map(f)
                    f.line = _line(src, default=_line(step["append"], default=line))
                    f.key_lines = dict(getattr(src, "key_lines", {}))
                    cond = f.get("if")
                    f["if"] = f"{gate} and ({cond})" if cond is not None else gate
                    f.setdefault("since", since)
                    if until:
                        f.setdefault("until", until)
                    _mark(f, rel)
                    fields.append(f)
        return {k: ov[k] for k in ("types", "enums", "flags", "sets") if k in ov}

    def _overlay_target(self, rel, line, target, op, docs):
        """The YAML mapping an overlay extends: an enum, a named type, an event, or a field of
        one (EVENT_NAME.field.subfield)."""
        head, *path = target.split(".")
        for _r, d in docs:
            if not isinstance(d, dict):
                continue
            if op == "members" and not path:
                for sect in ("enums", "flags"):
                    if head in (d.get(sect) or {}):
                        return d[sect][head]
                if head in (d.get("sets") or {}):
                    node = d["sets"][head]
                    if isinstance(node, _Map):
                        node.is_set = True
                    return node
            if not path and head in (d.get("types") or {}):
                return d["types"][head]
            names = [d.get("event")] + [e.get("name") for e in d.get("events") or [] if isinstance(e, dict)]
            if head in names:
                node = d
                for part in path:
                    fields = list(node.get("post_header") or []) + list(node.get("body") or []) \
                        if node is d else node.get("fields") or []
                    node = next((f for f in fields if isinstance(f, dict) and f.get("id") == part), None)
                    if node is None:
                        raise SpecError(f"overlay target {target}: no field {part!r}", rel, line)
                return node
            if path and head in (d.get("types") or {}):
                node = d["types"][head]
                for part in path:
                    node = next((f for f in node.get("fields") or []
                                 if isinstance(f, dict) and f.get("id") == part), None)
                    if node is None:
                        raise SpecError(f"overlay target {target}: no field {part!r}", rel, line)
                return node
        raise SpecError(f"overlay target {target!r} is not an enum, set, type or event of the specs",
                        rel, line)

    # -- context -------------------------------------------------------------------------
    def _context(self, rel, items):
        if not isinstance(items, list):
            raise SpecError("context must be a list", rel, _line(items))
        for it in items:
            cid = it.get("id")
            if not cid or not it.get("doc"):
                raise SpecError("each context value needs an id and a doc", rel, _line(it))
            if cid in self.context:
                raise SpecError(f"context value {cid!r} is defined twice", rel, _line(it))
            values = it.get("values")
            if it.get("type") == "version" and isinstance(values, list):
                values = [E.parse_version_literal(v) for v in values]
            self.context[cid] = ContextDef(cid, it["doc"], values, it.get("type", "int"),
                                           it.get("doc-ref", ""))

    # -- enums ---------------------------------------------------------------------------
    def _enum(self, rel, parent, name, body, is_flags):
        line = _line(parent, name)
        what = "flag set" if is_flags else "enum"
        if name in self.enums:
            raise SpecError(f"{what} {name!r} is defined twice", rel, line)
        if not isinstance(body, dict) or not body.get("doc"):
            raise SpecError(f"{what} {name!r} needs a doc", rel, line)
        key = "bits" if is_flags else "members"
        members_raw = body.get(key)
        if not isinstance(members_raw, dict) or not members_raw:
            raise SpecError(f"{what} {name!r} needs a mapping '{key}: {{value: NAME}}'", rel, line)
        members = {}
        seen = set()
        for value, m in members_raw.items():
            mline = _line(members_raw, value, line)
            if not isinstance(value, int):
                raise SpecError(f"{what} {name!r}: key {value!r} must be a number", rel, mline)
            if isinstance(m, str):
                mname, mdoc = m, ""
            elif isinstance(m, dict) and m.get("id"):
                mname, mdoc = m["id"], m.get("doc", "")
            else:
                raise SpecError(f"{what} {name!r}: member {value} needs a name (or id/doc)", rel, mline)
            if mname in seen:
                raise SpecError(f"{what} {name!r}: member name {mname!r} is used twice", rel, mline)
            seen.add(mname)
            members[value] = (mname, mdoc)
        self.enums[name] = EnumDef(name, body["doc"], rel, line, members, is_flags, body.get("doc-ref", ""))

    # -- named sets ----------------------------------------------------------------------
    def _set(self, rel, name, body, line):
        """A named set of enum members (`sets:`), with one entry per server line and version
        range that adds members to it."""
        if not ID_RE.match(name):
            raise SpecError(f"set name {name!r} must be snake_case", rel, line)
        if name in self.enums or name in self.type_names:
            raise SpecError(f"set {name!r}: an enum or a type has that name already", rel, line)
        if not isinstance(body, dict) or not body.get("doc"):
            raise SpecError(f"set {name!r} needs a doc", rel, line)
        for k in body:
            if k not in SET_KEYS:
                raise SpecError(f"set {name!r}: unknown key {k!r} (allowed: {', '.join(sorted(SET_KEYS))})",
                                rel, _line(body, k, line))
        enum = body.get("enum")
        e = self.enums.get(enum)
        if e is None or e.is_flags:
            raise SpecError(f"set {name!r}: enum: must name an enum of the specs (got {enum!r})", rel,
                            _line(body, "enum", line))
        by_name = e.by_name()
        raw = body.get("entries")
        if not isinstance(raw, list) or not raw:
            raise SpecError(f"set {name!r} needs entries: a list of {{members: [...], ...}}", rel,
                            _line(body, "entries", line))
        entries = []
        for it in raw:
            erel = getattr(it, "src_file", rel)
            eline = _line(it, default=_line(body, "entries", line))
            if not isinstance(it, dict):
                raise SpecError(f"set {name!r}: each entry is a mapping with members:", erel, eline)
            for k in it:
                if k not in SET_ENTRY_KEYS:
                    raise SpecError(f"set {name!r}: unknown key {k!r} in an entry (allowed: "
                                    f"{', '.join(sorted(SET_ENTRY_KEYS))})", erel, _line(it, k, eline))
            members = it.get("members")
            mline = _line(it, "members", eline)
            if not isinstance(members, list) or not members:
                raise SpecError(f"set {name!r}: an entry needs members: a list of {enum} names",
                                erel, mline)
            lines = getattr(members, "item_lines", None) or [mline] * len(members)
            out = []
            for m, ml in zip(members, lines):
                if not isinstance(m, str) or m not in by_name:
                    raise SpecError(f"set {name!r}: {m!r} is not a member of enum {enum}", erel, ml)
                if any(m == n for n, _v in out):
                    raise SpecError(f"set {name!r}: {m} appears twice in one entry", erel, ml)
                out.append((m, by_name[m]))
            flavor = it.get("flavor")
            if flavor is not None and flavor not in ("mysql", "mariadb"):
                raise SpecError(f"set {name!r}: flavor must be mysql or mariadb", erel,
                                _line(it, "flavor", eline))
            since = self._version(erel, _line(it, "since", eline), name, it.get("since"))
            until = self._version(erel, _line(it, "until", eline), name, it.get("until"))
            for v, k in ((since, "since"), (until, "until")):
                if v is None:
                    continue
                if flavor is not None and v.flavor != flavor:
                    raise SpecError(f"set {name!r}: {k} {v} is not a {flavor} version", erel,
                                    _line(it, k, eline))
                flavor = v.flavor
            if since is not None and until is not None and (since.flavor != until.flavor
                                                            or since.number >= until.number):
                raise SpecError(f"set {name!r}: since {since} is not before until {until}", erel,
                                _line(it, "until", eline))
            entries.append(SetEntry(out, flavor, since, until, it.get("doc", ""), it.get("doc-ref", ""),
                                    erel, eline))
        applies = body.get("applies-to") or []
        if not isinstance(applies, list):
            applies = [applies]
        for path in applies:
            self._check_field_path(rel, _line(body, "applies-to", line), name, str(path))
        return SetDef(name, body["doc"], rel, line, enum, entries, body.get("doc-ref", ""),
                      [str(p) for p in applies])

    def _check_field_path(self, rel, line, name, path):
        """`EVENT.field` or `EVENT.field.case` (a case of a TLV field) must name something."""
        head, *parts = path.split(".")
        ev = next((ev for ev in self.events if any(n.name == head for n in ev.names)), None)
        if ev is None or not parts:
            raise SpecError(f"set {name!r}: applies-to {path!r} does not name an event's field", rel, line)
        fields, prev = ev.fields, None
        for part in parts:
            f = next((x for x in fields if x.id == part), None) if fields is not None else None
            if f is None and prev is not None:
                t = self._resolve(prev.type)
                if t.kind == "tlv":
                    f = next((cf for _k, cf in t.cases if cf.id == part), None)
            if f is None:
                raise SpecError(f"set {name!r}: applies-to {path!r}: no field {part!r}", rel, line)
            prev = f
            t = self._resolve(f.type)
            fields = t.fields if t.kind == "struct" else None

    def _resolve(self, t):
        while t.kind == "named":
            t = self.types[t.name].field.type
        return t

    # -- types ---------------------------------------------------------------------------
    def _typedef(self, rel, name, body, line):
        if not isinstance(body, dict):
            raise SpecError(f"type {name!r} must be a mapping", rel, line)
        if not body.get("doc"):
            raise SpecError(f"type {name!r} needs a doc", rel, line)
        for k in body:
            if k not in TYPE_KEYS:
                raise SpecError(f"unknown key {k!r} in type {name!r}", rel, _line(body, k))
        spec = dict(body)
        spec.pop("as", None)
        spec["id"] = name
        if "fields" in spec and "type" not in spec:
            spec["type"] = "struct"
        f = self._field(rel, spec, scope=[], where_struct=f"type {name}", is_typedef=True,
                        line=line)
        adapter = body.get("as")
        if adapter is not None:
            from ..runtime.values import ADAPTERS

            if adapter not in ADAPTERS:
                raise SpecError(f"type {name!r}: unknown value adapter as: {adapter!r} (known: "
                                f"{', '.join(sorted(ADAPTERS))})", rel, _line(body, "as", line))
        return TypeDef(name, body["doc"], rel, line, f, body.get("doc-ref", ""), adapter)

    def _check_type_cycles(self):
        deps = {n: self._type_deps(td.field) for n, td in self.types.items()}
        state = {}

        def visit(n, path):
            if state.get(n) == 1:
                td = self.types[n]
                raise SpecError(f"named types refer to each other in a cycle: {' -> '.join(path + [n])}",
                                td.file, td.line)
            if state.get(n) == 2:
                return
            state[n] = 1
            for d in sorted(deps[n]):
                visit(d, path + [n])
            state[n] = 2

        for n in sorted(deps):
            visit(n, [])
        self.type_deps = deps

    def _type_deps(self, f: Field):
        out = set()

        def walk_t(t):
            if t is None:
                return
            if t.kind == "named":
                out.add(t.name)
            for sub in t.fields:
                walk_f(sub)
            for c in t.cases:
                if isinstance(c[1], Field):
                    walk_f(c[1])
                else:
                    walk_t(c[1])
            walk_t(t.default)
            walk_t(t.tag)
            walk_t(t.length)

        def walk_f(ff):
            walk_t(ff.type)
            walk_t(ff.prefix)

        walk_f(f)
        return out

    # -- fields --------------------------------------------------------------------------
    def _expr(self, rel, line, fid, src, visible, allow_underscore=False):
        try:
            node = E.parse(src)
        except SyntaxError as e:
            raise SpecError(f"bad expression {src!r}: {e}", rel, line, fid) from None
        E.check(node, visible=visible, enums=self.enum_values, context=self.context,
                where=(rel, line, fid), allow_underscore=allow_underscore)
        return node

    def _version(self, rel, line, fid, v):
        if v is None:
            return None
        try:
            return E.parse_version_literal(str(v))
        except ValueError:
            raise SpecError(f"bad version {v!r} (write mysql-8.0.1 or mariadb-10.5.2)", rel, line,
                            fid) from None

    def _type(self, rel, line, fid, t, scope, spec) -> TypeSpec:
        if isinstance(t, dict):
            if "switch-on" in t:
                return self._switch(rel, line, fid, t, scope)
            if "tlv" in t:
                return self._tlv(rel, line, fid, t["tlv"], scope)
            raise SpecError("a type mapping must be a switch (switch-on:) or a tlv (tlv:)", rel,
                            _line(t, default=line), fid)
        if not isinstance(t, str):
            raise SpecError(f"type must be a name, not {t!r}", rel, line, fid)
        m = INT_RE.match(t)
        if m:
            width = int(m.group(2)) // 8
            if width > 1 and not m.group(3):
                raise SpecError(f"type {t!r} needs a byte order: {t}le or {t}be", rel, line, fid)
            if width == 1 and m.group(3):
                raise SpecError(f"type {t!r}: one byte has no byte order, write {t[:-2]}", rel, line, fid)
            return TypeSpec("int", t, width, m.group(1) == "s", m.group(3) or "le")
        m = FLOAT_RE.match(t)
        if m:
            return TypeSpec("float", t, int(m.group(1)) // 8, True, m.group(2))
        if t == "decimal":
            if "precision" not in spec or "scale" not in spec:
                raise SpecError("type decimal needs precision: and scale: expressions", rel, line, fid)
            return TypeSpec("decimal", t, args={
                k: self._expr(rel, _line(spec, k, line), fid, spec[k], scope)
                for k in ("precision", "scale")})
        if t in ("uintle", "uintbe"):
            return TypeSpec("uintvar", t, endian=t[-2:])
        if t == "struct":
            fields = spec.get("fields")
            if not isinstance(fields, list) or not fields:
                raise SpecError("type struct needs a list of fields", rel, line, fid)
            return TypeSpec("struct", fields=self._fields(rel, fields, scope, f"{fid}"))
        if t == "bitmap":
            if "bits" not in spec:
                raise SpecError("a bitmap needs bits: <expression>", rel, line, fid)
            order = spec.get("order", "lsb")
            if order not in ("lsb", "msb"):
                raise SpecError("bitmap order must be lsb or msb", rel, line, fid)
            return TypeSpec("bitmap", "bitmap", bits=self._expr(rel, line, fid, spec["bits"], scope),
                            order=order)
        if t in SIMPLE_TYPES:
            return TypeSpec(t, t)
        if t in self.type_names:
            return TypeSpec("named", t)
        raise SpecError(f"unknown type {t!r}", rel, line, fid)

    def _switch(self, rel, line, fid, t, scope):
        on = self._expr(rel, line, fid, t["switch-on"], scope)
        cases = []
        seen = set()
        for k, sub in (t.get("cases") or {}).items():
            kl = _line(t.get("cases"), k, line)
            try:
                key = E.constant_value(E.parse(k), self.enum_values)
            except (SyntaxError, KeyError) as e:
                raise SpecError(f"bad case key {k!r}: {e}", rel, kl, fid) from None
            if key in seen:
                raise SpecError(f"case {k!r} appears twice", rel, kl, fid)
            seen.add(key)
            cases.append((key, self._case_type(rel, kl, fid, sub, scope), str(k)))
        if not cases:
            raise SpecError("a switch needs cases", rel, line, fid)
        default = None
        if "default" in t:
            default = self._case_type(rel, _line(t, "default", line), fid, t["default"], scope)
        for k in t:
            if k not in ("switch-on", "cases", "default"):
                raise SpecError(f"unknown key {k!r} in switch", rel, _line(t, k, line), fid)
        return TypeSpec("switch", switch_on=on, cases=cases, default=default)

    def _case_type(self, rel, line, fid, sub, scope):
        if isinstance(sub, dict) and "switch-on" not in sub and "tlv" not in sub:
            raise SpecError("a switch case is a type name (define a named type for anything bigger)",
                            rel, line, fid)
        return self._type(rel, line, fid, sub, [], {})

    def _tlv(self, rel, line, fid, t, scope):
        if not isinstance(t, dict):
            raise SpecError("tlv: needs a mapping", rel, line, fid)
        for k in t:
            if k not in ("tag", "length", "end", "unknown", "cases", "enum"):
                raise SpecError(f"unknown key {k!r} in tlv", rel, _line(t, k, line), fid)
        tag = self._type(rel, line, fid, t.get("tag", "u8"), scope, {})
        if tag.kind not in ("int", "packed", "sv_uint"):
            raise SpecError("a tlv tag must be an integer type", rel, line, fid)
        length = None
        if t.get("length", "none") != "none":
            length = self._type(rel, line, fid, t["length"], scope, {})
            if length.kind not in ("int", "packed", "sv_uint"):
                raise SpecError("a tlv length must be an integer type or none", rel, line, fid)
        end = t.get("end", "eos")
        if end != "eos" and not isinstance(end, int):
            raise SpecError("tlv end must be eos or a tag number", rel, line, fid)
        unknown = t.get("unknown", "stop")
        if unknown not in ("stop", "skip", "error"):
            raise SpecError("tlv unknown must be stop, skip or error", rel, line, fid)
        if unknown == "skip" and length is None:
            raise SpecError("unknown: skip needs an explicit length", rel, line, fid)
        enum = t.get("enum")
        if enum is not None and enum not in self.enums:
            raise SpecError(f"unknown enum {enum!r}", rel, line, fid)
        cases = []
        seen_keys, seen_ids = set(), set()
        raw_cases = t.get("cases") or {}
        for k, sub in raw_cases.items():
            kl = _line(raw_cases, k, line)
            try:
                key = E.constant_value(E.parse(k), self.enum_values)
            except (SyntaxError, KeyError) as e:
                raise SpecError(f"bad tlv case key {k!r}: {e}", rel, kl, fid) from None
            if key in seen_keys:
                raise SpecError(f"tlv case {k!r} appears twice", rel, kl, fid)
            if not isinstance(sub, dict):
                raise SpecError("a tlv case is a field (id, type, doc)", rel, kl, fid)
            cf = self._field(getattr(sub, "src_file", rel), sub, scope=[], where_struct=f"{fid} case {k}",
                             line=kl)
            if cf.id in seen_ids:
                raise SpecError(f"tlv case id {cf.id!r} is used twice", rel, kl, fid)
            seen_keys.add(key)
            seen_ids.add(cf.id)
            cases.append((key, cf))
        if isinstance(end, int) and end in seen_keys:
            raise SpecError("the end-mark tag cannot also be a case", rel, line, fid)
        return TypeSpec("tlv", "tlv", tag=tag, length=length, end=end, unknown=unknown,
                        cases=cases, tag_enum=enum)

    def _fields(self, rel, items, outer_scope, where):
        if not isinstance(items, list):
            raise SpecError(f"{where}: fields must be a list", rel, _line(items))
        out = []
        ids = set()
        all_ids = [it.get("id") for it in items if isinstance(it, dict)]
        for it in items:
            if not isinstance(it, dict):
                raise SpecError(f"{where}: each field must be a mapping", rel, _line(items))
            f = self._field(getattr(it, "src_file", rel), it, scope=sorted(ids), where_struct=where,
                            all_ids=all_ids)
            if f.id in ids:
                raise SpecError(f"field id {f.id!r} is used twice in {where}", rel, f.line, f.id)
            ids.add(f.id)
            out.append(f)
        self._check_trailing(rel, out)
        return out

    def _check_trailing(self, rel, fields):
        """After a field guarded by `remaining`, every later field must be conditional or take the rest."""
        guarded = False
        for f in fields:
            if f.cond is not None and E.uses_remaining(f.cond):
                guarded = True
            elif guarded and f.cond is None and f.size != "rest" and f.repeat != "eos":
                raise SpecError("a field after a 'remaining'-guarded field must itself be conditional "
                                "(it would be missing when the guarded one is)", rel, f.line, f.id)

    def _field(self, rel, it, scope, where_struct, all_ids=(), is_typedef=False, line=None):
        line = line or _line(it)
        fid = it.get("id")
        if not isinstance(fid, str) or not (ID_RE.match(fid) or is_typedef):
            raise SpecError(f"{where_struct}: every field needs an id in snake_case (got {fid!r})",
                            rel, line)
        if fid in RESERVED_IDS:
            raise SpecError(f"id {fid!r} is reserved (it is a method of parsed values)", rel, line, fid)
        for k in it:
            if k not in FIELD_KEYS:
                raise SpecError(f"unknown key {k!r}", rel, _line(it, k, line), fid)
        if not is_typedef and not it.get("doc"):
            raise SpecError("every field needs a doc line", rel, line, fid)
        if "value" in it:
            return self._computed(rel, it, scope, fid, line)
        if "type" not in it:
            if "fields" in it:
                it = dict(it, type="struct")
            else:
                raise SpecError("every field needs a type", rel, line, fid)
        visible = set(scope)

        def ex(key, vis=None, **kw):
            return self._expr(rel, _line(it, key, line), fid, it[key],
                              visible if vis is None else vis, **kw)

        t = self._type(rel, _line(it, "type", line), fid, it["type"], sorted(visible), it)
        f = Field(fid, t, it.get("doc", ""), rel, line, doc_ref=it.get("doc-ref", ""), raw=it)
        f.since = self._version(rel, line, fid, it.get("since"))
        f.until = self._version(rel, line, fid, it.get("until"))
        if "size" in it:
            f.size = "rest" if it["size"] == "rest" else ex("size")
        if "if" in it:
            f.cond = ex("if")
        if "repeat" in it:
            f.repeat = "eos" if it["repeat"] == "eos" else ex("repeat")
        if "repeat-until" in it:
            if "repeat" in it:
                raise SpecError("use either repeat or repeat-until", rel, line, fid)
            f.repeat_until = ex("repeat-until", allow_underscore=True)
        for key in ("enum", "flags"):
            if key in it:
                name = it[key]
                e = self.enums.get(name)
                if e is None or e.is_flags != (key == "flags"):
                    raise SpecError(f"unknown {'flag set' if key == 'flags' else 'enum'} {name!r}",
                                    rel, _line(it, key, line), fid)
                if t.kind not in ("int", "packed", "uintvar", "sv_uint"):
                    raise SpecError(f"{key} applies to integer fields only", rel, line, fid)
                setattr(f, key, name)
        if "const" in it:
            f.const = it["const"]
        if "rebuild" in it:
            f.rebuild = ex("rebuild", vis=set(all_ids) | visible)
        if "decode" in it:
            f.decode = self._decode(rel, _line(it, "decode", line), fid, it["decode"], visible)
        if t.kind in ("bytes", "str"):
            ways = [k for k in ("size", "prefix", "terminator") if k in it]
            if len(ways) != 1:
                raise SpecError(f"a {t.kind} field needs exactly one of size, prefix, terminator",
                                rel, line, fid)
            if "prefix" in it:
                f.prefix = self._type(rel, line, fid, it["prefix"], [], {})
                if f.prefix.kind not in ("int", "packed", "sv_uint"):
                    raise SpecError("prefix must be an integer type", rel, line, fid)
            if "terminator" in it:
                f.terminator = it["terminator"]
                if not isinstance(f.terminator, int) or not 0 <= f.terminator < 256:
                    raise SpecError("terminator must be a byte value", rel, line, fid)
            if "pad" in it:
                if t.kind != "str" or "size" not in it:
                    raise SpecError("pad applies to fixed-size str fields", rel, line, fid)
                f.pad = it["pad"]
        else:
            for k in ("prefix", "terminator", "pad"):
                if k in it:
                    raise SpecError(f"{k} applies to bytes and str fields only", rel, line, fid)
        if t.kind == "uintvar" and f.size in (None, "rest"):
            raise SpecError(f"{t.name} needs size: <expression>", rel, line, fid)
        if t.kind == "bitmap" and f.size is not None:
            raise SpecError("a bitmap's size comes from bits; do not give size", rel, line, fid)
        if ("fields" in it) and t.kind != "struct":
            raise SpecError("fields applies to type struct", rel, line, fid)
        if ("bits" in it or "order" in it) and t.kind != "bitmap":
            raise SpecError("bits/order apply to bitmaps", rel, line, fid)
        if ("precision" in it or "scale" in it) and t.kind != "decimal":
            raise SpecError("precision/scale apply to type decimal", rel, line, fid)
        return f

    def _computed(self, rel, it, scope, fid, line):
        """A field with `value:` is computed from the fields before it; it takes no bytes."""
        extra = sorted(set(it) - {"id", "value", "doc", "doc-ref", "since", "until"})
        if extra:
            raise SpecError(f"a computed field (value:) takes only id, value, doc: drop {', '.join(extra)}",
                            rel, line, fid)
        node = self._expr(rel, _line(it, "value", line), fid, it["value"], set(scope))
        f = Field(fid, TypeSpec("computed", "computed"), it.get("doc", ""), rel, line,
                  doc_ref=it.get("doc-ref", ""), raw=it)
        f.value = node
        return f

    def _decode(self, rel, line, fid, d, visible):
        if not isinstance(d, dict) or "codec" not in d or "as" not in d:
            raise SpecError("decode needs codec: and as:", rel, line, fid)
        if d["codec"] not in CODECS:
            raise SpecError(f"unknown codec {d['codec']!r} (known: {', '.join(sorted(CODECS))})",
                            rel, line, fid)
        target = d["as"]
        if target not in ("events", "str", "bytes") and target not in self.type_names:
            raise SpecError(f"decode as: {target!r} is not events, str, bytes or a named type",
                            rel, line, fid)
        cond = None
        if "if" in d:
            cond = self._expr(rel, line, fid, d["if"], visible)
        return {"codec": d["codec"], "as": target, "if": cond, "if_src": d.get("if")}

    # -- events --------------------------------------------------------------------------
    def _event_type_enum(self, docs):
        """The event_type enum is made from the event specs, so a code is written once."""
        members = {}
        for rel, doc in docs:
            if not doc or not ("event" in doc or "events" in doc):
                continue
            entries = [doc] if "event" in doc else (doc.get("events") or [])
            for e in entries:
                if not isinstance(e, dict):
                    continue
                name = e.get("event") or e.get("name")
                code = e.get("code")
                if isinstance(code, int) and isinstance(name, str) and code not in members:
                    members[code] = (name, _comment1(e.get("doc") or doc.get("doc") or ""))
        if "event_type" in self.enums:
            e = self.enums["event_type"]
            raise SpecError("event_type is made from the event specs; do not define it", e.file, e.line)
        self.enums["event_type"] = EnumDef("event_type", "Event type codes, from specs/events/.",
                                           "specs/events/", 0, dict(sorted(members.items())))

    def _event(self, rel, doc):
        line = _line(doc)
        if "event" in doc and "events" in doc:
            raise SpecError("use either event:/code: or events:", rel, line)
        names = []
        if "event" in doc:
            if not isinstance(doc.get("code"), int):
                raise SpecError(f"event {doc['event']} needs a numeric code", rel, line)
            names.append(EventName(doc["event"], doc["code"], doc.get("doc", ""), line,
                                   self._legacy(rel, line, doc)))
        else:
            for e in doc["events"]:
                if not isinstance(e, dict) or not isinstance(e.get("code"), int) or not e.get("name"):
                    raise SpecError("each entry of events: needs name and code", rel, _line(e, default=line))
                for k in e:
                    if k not in ("name", "code", "doc", "legacy_post_header_len", "rows"):
                        raise SpecError(f"unknown key {k!r} in an events: entry", rel, _line(e, k, line))
                names.append(EventName(e["name"], e["code"], e.get("doc", ""), _line(e, default=line),
                                       self._legacy(rel, _line(e, default=line), e),
                                       self._row_op(rel, _line(e, default=line), e)))
        for n in names:
            if not re.match(r"^[A-Z][A-Z0-9_]*$", n.name):
                raise SpecError(f"event name {n.name!r} must be UPPER_CASE", rel, n.line)
        if not doc.get("doc"):
            raise SpecError("an event needs a doc", rel, line)
        flavor = doc.get("flavor", "mysql")
        if flavor not in ("mysql", "mariadb"):
            raise SpecError("flavor must be mysql or mariadb", rel, _line(doc, "flavor", line))
        ph = doc.get("post_header") or []
        body = doc.get("body") or []
        items = list(ph) + list(body)
        fields = self._fields(rel, items, [], names[0].name) if items else []
        for i, f in enumerate(fields):
            f.section = "post_header" if i < len(ph) else "body"
        phl = doc.get("post_header_len", [0])
        if isinstance(phl, int):
            phl = [phl]
        if not isinstance(phl, list) or not all(isinstance(x, int) for x in phl):
            raise SpecError("post_header_len must be a number or a list of numbers", rel,
                            _line(doc, "post_header_len", line))
        layout = doc.get("layout") or names[0].name
        ev = EventDef(names, layout, flavor, doc["doc"], rel, line, fields, phl,
                      doc.get("doc-ref", ""), self._version(rel, line, None, doc.get("since")),
                      self._version(rel, line, None, doc.get("until")))
        ev.remaps = self._remaps(rel, doc, fields)
        return ev

    def _row_op(self, rel, line, d):
        """rows: insert|update|delete - a rows event, and which row images each of its rows holds."""
        op = d.get("rows")
        if op is not None and op not in ("insert", "update", "delete"):
            raise SpecError("rows: must be insert, update or delete", rel, line)
        return op

    def _legacy(self, rel, line, d):
        """legacy_post_header_len: {binlog version: length} for files without an FDE (v1, v3)."""
        m = d.get("legacy_post_header_len") or {}
        if not isinstance(m, dict) or not all(k in (1, 3) and isinstance(v, int) for k, v in m.items()):
            raise SpecError("legacy_post_header_len maps binlog version 1 or 3 to a length", rel, line)
        return dict(m)

    def _remaps(self, rel, doc, fields):
        """remaps_type_codes: after this event, type codes in the file mean other event types."""
        out = []
        items = doc.get("remaps_type_codes") or []
        for it in items:
            line = _line(it, default=_line(doc, "remaps_type_codes"))
            if not isinstance(it, dict) or not it.get("doc") or "if" not in it or "map" not in it:
                raise SpecError("each remaps_type_codes entry needs doc, if and map", rel, line)
            cond = self._expr(rel, line, "remaps_type_codes", it["if"], {f.id for f in fields})
            mapping = it["map"]
            if not isinstance(mapping, dict) or not all(isinstance(k, int) and isinstance(v, int)
                                                        for k, v in mapping.items()):
                raise SpecError("map must be {code in the file: event type code}", rel, line)
            out.append({"doc": it["doc"], "doc_ref": it.get("doc-ref", ""), "if": cond,
                        "if_src": it["if"], "map": dict(mapping)})
        return out

    def _check_codes(self):
        codes, names, layouts = {}, {}, {}
        for ev in self.events:
            if ev.layout in layouts:
                raise SpecError(f"layout name {ev.layout!r} is also used by {layouts[ev.layout]}",
                                ev.file, ev.line)
            layouts[ev.layout] = ev.file
            for n in ev.names:
                if n.code in codes:
                    raise SpecError(f"event code {n.code} ({n.name}) is already used by {codes[n.code]}",
                                    ev.file, n.line)
                if n.name in names:
                    raise SpecError(f"event name {n.name} is already defined in {names[n.name]}",
                                    ev.file, n.line)
                codes[n.code] = f"{n.name} in {ev.file}"
                names[n.name] = ev.file
