"""Checking event specs: names and codes (each written once: the event_type enum is made from
them), the post-header and body fields, post-header lengths, legacy lengths for files without a
FORMAT_DESCRIPTION_EVENT, and the type-code remaps an event announces.

`EventReader` is a part of the loader's builder (binlog_grammar.lang.loader); it uses the
builder's field checks (binlog_grammar.lang.fields).
"""
from __future__ import annotations

import re

from ..errors import SpecError
from .model import EnumDef, EventDef, EventName
from .source import line_of, version_of


EVENT_KEYS = {"event", "code", "events", "layout", "flavor", "doc", "doc-ref", "since", "until",
              "post_header_len", "post_header", "body", "types", "enums", "flags",
              "remaps_type_codes", "legacy_post_header_len", "role"}

# role: what an event is to the transaction it is read in; binlog/boundaries.py reads the roles
# (from the generated catalog) to decide where transactions start and end. An event without a
# role belongs to no transaction by itself (ROTATE, FORMAT_DESCRIPTION, checkpoints ...).
ROLES = {
    "gtid": "Opens a transaction and gives its GTID (MySQL); a BEGIN, or the one statement of "
            "a transaction of its own, follows.",
    "gtid_begin": "Opens a transaction, gives its GTID and is its BEGIN (MariaDB): no BEGIN "
                  "follows; unless its FL_STANDALONE flag is set, everything up to the XID or "
                  "COMMIT belongs to it.",
    "statement": "A statement whose text says what it does: BEGIN or XA START opens, COMMIT, "
                 "ROLLBACK or XA COMMIT/ROLLBACK ends, SAVEPOINT, ROLLBACK TO, RELEASE SAVEPOINT "
                 "and XA END stay inside; any other statement (DDL, DML) belongs to the open "
                 "transaction, or is a transaction of its own.",
    "commit": "Ends the open transaction with a commit.",
    "xa_prepare": "Ends the open XA transaction's first phase (XA PREPARE).",
    "table_map": "Maps a table for the rows events after it; part of the transaction around it.",
    "rows": "Row changes (the role of every events: entry with rows: insert, update or "
            "delete; not written as role:); part of the transaction around it.",
    "annotate": "The statement behind the rows events that follow; part of the transaction.",
    "context": "A value the next statement uses (auto-increment, RAND seeds, user variables); "
               "part of the transaction.",
    "payload": "A whole transaction's events, compressed: part of the transaction, and all of it "
               "when no BEGIN came before.",
    "group_replication": "Group replication's certification data; part of the transaction.",
}


def _comment1(text):
    text = " ".join(str(text).split())
    return text.split(". ")[0].rstrip(".")


class EventReader:
    """Events, for the builder of binlog_grammar.lang.loader."""

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
        line = line_of(doc)
        if "event" in doc and "events" in doc:
            raise SpecError("use either event:/code: or events:", rel, line)
        names = []
        if "event" in doc:
            if not isinstance(doc.get("code"), int):
                raise SpecError(f"event {doc['event']} needs a numeric code", rel, line)
            names.append(EventName(doc["event"], doc["code"], doc.get("doc", ""), line,
                                   self._legacy(rel, line, doc),
                                   role=self._role(rel, line_of(doc, "role", line), doc)))
        else:
            for e in doc["events"]:
                if not isinstance(e, dict) or not isinstance(e.get("code"), int) or not e.get("name"):
                    raise SpecError("each entry of events: needs name and code", rel, line_of(e, default=line))
                for k in e:
                    if k not in ("name", "code", "doc", "legacy_post_header_len", "rows", "role"):
                        raise SpecError(f"unknown key {k!r} in an events: entry", rel, line_of(e, k, line))
                eline = line_of(e, default=line)
                op = self._row_op(rel, eline, e)
                # an entry's role, else the file's (every entry of it); rows: makes it "rows"
                rline = line_of(e, "role", eline) if "role" in e else line_of(doc, "role", line)
                role = self._role(rel, rline, e if "role" in e else doc)
                if op is not None:
                    if role is not None:
                        raise SpecError("a rows event's role is rows, given by rows:; do not write "
                                        "role:", rel, rline, "role")
                    role = "rows"
                names.append(EventName(e["name"], e["code"], e.get("doc", ""), eline,
                                       self._legacy(rel, eline, e), op, role))
        for n in names:
            if not re.match(r"^[A-Z][A-Z0-9_]*$", n.name):
                raise SpecError(f"event name {n.name!r} must be UPPER_CASE", rel, n.line)
        if not doc.get("doc"):
            raise SpecError("an event needs a doc", rel, line)
        flavor = doc.get("flavor", "mysql")
        if flavor not in ("mysql", "mariadb"):
            raise SpecError("flavor must be mysql or mariadb", rel, line_of(doc, "flavor", line))
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
                            line_of(doc, "post_header_len", line))
        layout = doc.get("layout") or names[0].name
        ev = EventDef(names, layout, flavor, doc["doc"], rel, line, fields, phl,
                      doc.get("doc-ref", ""), version_of(rel, line, None, doc.get("since")),
                      version_of(rel, line, None, doc.get("until")))
        ev.remaps = self._remaps(rel, doc, fields)
        return ev

    def _row_op(self, rel, line, d):
        """rows: insert|update|delete - a rows event, and which row images each of its rows holds."""
        op = d.get("rows")
        if op is not None and op not in ("insert", "update", "delete"):
            raise SpecError("rows: must be insert, update or delete", rel, line)
        return op

    def _role(self, rel, line, d):
        """role: one of ROLES (rows events get theirs from rows:)."""
        role = d.get("role")
        if role is None:
            return None
        if role == "rows":
            raise SpecError("role rows is given by rows: insert|update|delete in an events: entry",
                            rel, line, "role")
        if not isinstance(role, str) or role not in ROLES:
            raise SpecError(f"unknown role {role!r} (known: "
                            f"{', '.join(r for r in ROLES if r != 'rows')})", rel, line, "role")
        return role

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
            line = line_of(it, default=line_of(doc, "remaps_type_codes"))
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
