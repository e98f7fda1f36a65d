"""Checking what a spec file defines by name besides events: context values, enums and flag
sets, named sets of enum members, and named types (with the check that no two refer to each other
in a cycle).

`DefinitionReader` is a part of the loader's builder (binlog_grammar.lang.loader); it uses the
builder's field checks (binlog_grammar.lang.fields) for the fields of named types.
"""
from __future__ import annotations

from ..errors import SpecError
from . import expr as E
from .fields import FIELD_KEYS, ID_RE
from .model import ContextDef, EnumDef, Field, SetDef, SetEntry, TypeDef
from .source import line_of, version_of


TYPE_KEYS = (FIELD_KEYS - {"id", "value"}) | {"doc", "as"}
SET_KEYS = {"enum", "doc", "doc-ref", "applies-to", "entries"}
SET_ENTRY_KEYS = {"members", "flavor", "since", "until", "doc", "doc-ref"}


class DefinitionReader:
    """Context values, enums, sets and named types, for the builder of binlog_grammar.lang.loader."""

    # -- context -------------------------------------------------------------------------
    def _context(self, rel, items):
        if not isinstance(items, list):
            raise SpecError("context must be a list", rel, line_of(items))
        for it in items:
            cid = it.get("id")
            if not cid or not it.get("doc"):
                raise SpecError("each context value needs an id and a doc", rel, line_of(it))
            if cid in self.context:
                raise SpecError(f"context value {cid!r} is defined twice", rel, line_of(it))
            values = it.get("values")
            if it.get("type") == "version" and isinstance(values, list):
                values = [E.parse_version_literal(v) for v in values]
            self.context[cid] = ContextDef(cid, it["doc"], values, it.get("type", "int"),
                                           it.get("doc-ref", ""))

    # -- enums ---------------------------------------------------------------------------
    def _enum(self, rel, parent, name, body, is_flags):
        line = line_of(parent, name)
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
            mline = line_of(members_raw, value, line)
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
                                rel, line_of(body, k, line))
        enum = body.get("enum")
        e = self.enums.get(enum)
        if e is None or e.is_flags:
            raise SpecError(f"set {name!r}: enum: must name an enum of the specs (got {enum!r})", rel,
                            line_of(body, "enum", line))
        by_name = e.by_name()
        raw = body.get("entries")
        if not isinstance(raw, list) or not raw:
            raise SpecError(f"set {name!r} needs entries: a list of {{members: [...], ...}}", rel,
                            line_of(body, "entries", line))
        entries = []
        for it in raw:
            erel = getattr(it, "src_file", rel)
            eline = line_of(it, default=line_of(body, "entries", line))
            if not isinstance(it, dict):
                raise SpecError(f"set {name!r}: each entry is a mapping with members:", erel, eline)
            for k in it:
                if k not in SET_ENTRY_KEYS:
                    raise SpecError(f"set {name!r}: unknown key {k!r} in an entry (allowed: "
                                    f"{', '.join(sorted(SET_ENTRY_KEYS))})", erel, line_of(it, k, eline))
            members = it.get("members")
            mline = line_of(it, "members", eline)
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
                                line_of(it, "flavor", eline))
            since = version_of(erel, line_of(it, "since", eline), name, it.get("since"))
            until = version_of(erel, line_of(it, "until", eline), name, it.get("until"))
            for v, k in ((since, "since"), (until, "until")):
                if v is None:
                    continue
                if flavor is not None and v.flavor != flavor:
                    raise SpecError(f"set {name!r}: {k} {v} is not a {flavor} version", erel,
                                    line_of(it, k, eline))
                flavor = v.flavor
            if since is not None and until is not None and (since.flavor != until.flavor
                                                            or since.number >= until.number):
                raise SpecError(f"set {name!r}: since {since} is not before until {until}", erel,
                                line_of(it, "until", eline))
            entries.append(SetEntry(out, flavor, since, until, it.get("doc", ""), it.get("doc-ref", ""),
                                    erel, eline))
        applies = body.get("applies-to") or []
        if not isinstance(applies, list):
            applies = [applies]
        for path in applies:
            self._check_field_path(rel, line_of(body, "applies-to", line), name, str(path))
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
                raise SpecError(f"unknown key {k!r} in type {name!r}", rel, line_of(body, k))
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
                                f"{', '.join(sorted(ADAPTERS))})", rel, line_of(body, "as", line))
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
