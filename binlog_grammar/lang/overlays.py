"""Version overlays (specs/versions/*.yaml): what a server version adds to the other spec files.

An overlay is applied to the other files' YAML before anything is validated, so what it adds is
checked like the rest and its mistakes name the overlay's own file and line (`mark_source`).
Overlays apply in version order (`overlay_version`), each one on the YAML the earlier ones left.
"""
from __future__ import annotations

from ..errors import SpecError
from .source import YamlList, YamlMap, line_of, mark_source, version_of


OVERLAY_KEYS = {"overlay", "until", "doc", "doc-ref", "types", "enums", "flags", "sets", "extend"}


def overlay_version(rel, ov):
    v = version_of(rel, line_of(ov, "overlay"), None, ov.get("overlay"))
    if v is None:
        raise SpecError("overlay: needs the first server version it applies to", rel, line_of(ov))
    return (v.flavor, v.number, rel)


def apply_overlay(rel, ov, docs):
    """Apply a version overlay (specs/versions/*.yaml) to the other files' YAML, before they
    are validated: enum members, switch and TLV cases, and fields appended to an event or a
    struct type (present only for servers of the overlay's line from its version on). Returns
    what the overlay defines itself (types, enums, flags) as an ordinary file."""
    for k in ov:
        if k not in OVERLAY_KEYS:
            raise SpecError(f"unknown key {k!r} in a version overlay (allowed: "
                            f"{', '.join(sorted(OVERLAY_KEYS))})", rel, line_of(ov, k))
    if not ov.get("doc"):
        raise SpecError("a version overlay needs a doc", rel, line_of(ov))
    since = str(ov["overlay"])
    until = ov.get("until")
    gate = f"ctx.server >= {since}" + (f" and ctx.server < {until}" if until else "")
    version_of(rel, line_of(ov, "until"), None, until)
    for step in ov.get("extend") or []:
        line = line_of(step, default=line_of(ov, "extend"))
        if not isinstance(step, dict) or "target" not in step:
            raise SpecError("each extend: entry needs a target", rel, line)
        ops = [k for k in ("members", "cases", "append") if k in step]
        extra = set(step) - {"target", "members", "cases", "append", "doc", "doc-ref"}
        if len(ops) != 1 or extra:
            raise SpecError("an extend: entry has a target and one of members, cases, append",
                            rel, line)
        target, op = step["target"], ops[0]
        node = _overlay_target(rel, line, str(target), op, docs)
        if op == "members" and getattr(node, "is_set", False):
            # a named set: the members join it for servers of the overlay's line from its
            # version on (one more entry, with the overlay's since/until)
            entry = YamlMap(members=step["members"], since=since)
            entry.line = line
            entry.key_lines = {"members": line_of(step, "members", line)}
            if until:
                entry["until"] = until
            for k in ("doc", "doc-ref"):
                if step.get(k):
                    entry[k] = step[k]
            mark_source(entry, rel)
            entries = node.setdefault("entries", YamlList())
            if not isinstance(entries, list):
                raise SpecError(f"set {target}: entries must be a list", rel, line)
            entries.append(entry)
        elif op == "members":
            members = node.setdefault("members", YamlMap())
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
                mark_source(v, rel)
                body["cases"][k] = v
        else:
            fields = node.setdefault("body", []) if "event" in node or "events" in node \
                else node.get("fields")
            if not isinstance(fields, list):
                raise SpecError(f"{target} is not an event or a struct type", rel, line)
            for f in step["append"]:
                if not isinstance(f, dict):
                    raise SpecError("append: takes fields", rel, line)
                src, f = f, YamlMap(f)
                f.line = line_of(src, default=line_of(step["append"], default=line))
                f.key_lines = dict(getattr(src, "key_lines", {}))
                cond = f.get("if")
                f["if"] = f"{gate} and ({cond})" if cond is not None else gate
                f.setdefault("since", since)
                if until:
                    f.setdefault("until", until)
                mark_source(f, rel)
                fields.append(f)
    return {k: ov[k] for k in ("types", "enums", "flags", "sets") if k in ov}


def _overlay_target(rel, line, target, op, docs):
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
                if isinstance(node, YamlMap):
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
