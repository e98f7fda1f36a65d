"""The event pages (one per event layout), the index, the event type codes and the pages of the
TLV lists (QUERY_EVENT status variables, TABLE_MAP_EVENT optional metadata); Builder assembles
them with the reference pages into the whole documentation."""
from __future__ import annotations

from pathlib import Path

from ..lang.events import ROLES
from ..lang.model import EventDef, SpecSet
from . import examples as X
from .blocks import (
    BR, C, FACTS, H, L, P, ROW, SRC, T, TABLE, DocsError, Page, join, src, version_rich)
from .model import (
    FLAVORS, Model, event_page_id, event_title, field_anchor, flavor_name, iter_fields)
from .pages_reference import ReferencePages
from .tables import StructTables, ctx_rich, event_examples, hex_block, struct_section, tlv_blocks


class Builder(ReferencePages):
    def __init__(self, specs: SpecSet):
        self.specs = specs
        self.m = Model(specs)
        self.maker = X.ExampleMaker(specs)
        self.pages = []
        self.examples = {}  # layout -> [Example]

    def build(self):
        events = sorted(self.specs.events, key=lambda e: (min(n.code for n in e.names), e.layout))
        event_pages = [self.event_page(ev) for ev in events]
        self.pages = [self.index_page(events), self.event_types_page(), self.tlv_index_page(
            "status-vars", "QUERY_EVENT status variables", "QUERY_EVENT", "status_vars", "status variable"),
            self.tlv_index_page("table-map-metadata", "TABLE_MAP_EVENT optional metadata",
                                "TABLE_MAP_EVENT", "optional_metadata", "optional metadata field"),
            self.column_types_page(), self.enums_page(), self.types_page(), self.context_page(),
            self.versions_page(), self.guide_page()] + event_pages
        return self.pages

    # -- event pages -------------------------------------------------------------------------
    @staticmethod
    def role_rich(ev: EventDef):
        """The spec's role: of the event's names (what each is to a transaction), or None."""
        roles = [(n.name, n.role) for n in ev.names if n.role]
        if not roles:
            return None
        if len({r for _n, r in roles}) == 1 and len(roles) == len(ev.names):
            return [C(roles[0][1]), T(f": {ROLES[roles[0][1]]}")]
        return join([[C(name), T(" "), C(role), T(f": {ROLES[role]}")] for name, role in roles], "; ")

    def event_page(self, ev: EventDef) -> Page:
        pid = event_page_id(ev)
        blocks = [H(1, event_title(ev)), P(T(ev.doc))]
        codes = []
        for n in ev.names:
            codes.append([C(f"{n.code} (0x{n.code:02x})"), T(" "), C(n.name),
                          T(f": {n.doc}" if n.doc and len(ev.names) > 1 else "")])
            if len(codes) > 1:
                codes[-1].insert(0, BR)
        written = version_rich(ev.since, ev.until) or [T("every version the specs cover")]
        phl = [C(str(ev.post_header_len[0]))]
        if len(ev.post_header_len) > 1:
            phl += [T(" (also seen: "), *join([[C(str(x))] for x in ev.post_header_len[1:]]), T(")")]
        legacy = []
        for n in ev.names:
            if n.legacy_post_header_len:
                legacy.append([C(n.name), T(": " + ", ".join(
                    f"binlog v{k}: {v}" for k, v in sorted(n.legacy_post_header_len.items())))])
        facts = [("Type code" + ("s" if len(ev.names) > 1 else ""), join(codes, "")),
                 ("Flavor", [T(flavor_name(ev.flavor))]),
                 ("Written", written),
                 ("Role", self.role_rich(ev)),
                 ("Post-header length", phl),
                 ("Without an FDE", join(legacy, "; ") if legacy else None),
                 ("Struct", [C(ev.layout)]),
                 ("Source", [T(ev.doc_ref)] if ev.doc_ref else None),
                 ("Spec", [SRC(ev.file)])]
        blocks.append(FACTS(facts))
        search = [(n.name, None, "event", f"type code {n.code}. {n.doc or ev.doc}") for n in ev.names]
        if ev.remaps:
            blocks.append(H(2, "Type codes that mean other events", "remaps"))
            for r in ev.remaps:
                rows = [ROW([[C(str(a))], [C(str(b)), T(" "), *self.code_link(b)]])
                        for a, b in sorted(r["map"].items())]
                blocks += [P(T(r["doc"])), FACTS([("When", [C(src(r["if"]))]),
                                                  ("Source", [T(r.get("doc_ref", ""))] if r.get("doc_ref") else None)]),
                           TABLE(["Code in the file", "Means"], rows, cls="remap")]
        blocks.append(H(2, "Layout", "layout"))
        if ev.fields:
            blocks.append(P(T("Positions count from the first byte of the event data, just after the "
                              "common header; the checksum footer follows the last field. "
                              "\"Versions\" are documentary unless a condition reads them.")))
            tables, s = struct_section(self.m, pid, ev.fields, ev.layout, field_anchor, "field",
                                       split_sections=True)
            blocks += tables
            search += s
        else:
            blocks.append(P(T("The event has no data: the common header (and the checksum) only.")))
        used_types = sorted({t for t, users in self.m.used_by_type.items()
                             if any(u[0] == pid for u in users)})
        used_enums = sorted({e for e, users in self.m.used_by_enum.items()
                             if any(u[0] == pid for u in users)})
        if used_types or used_enums:
            blocks.append(H(2, "Named types and enums", "uses"))
            blocks.append(FACTS([("Types", join([[L(t, "types", t)] for t in used_types]) if used_types else None),
                                 ("Enums and flags", join([[L(e, "enums", e)] for e in used_enums]) if used_enums else None)]))
        blocks.append(H(2, "Example", "example"))
        exs = event_examples(ev, self.maker)
        self.examples[ev.layout] = exs
        blocks.append(P(T("Built by the generated struct from a deterministic example value (small "
                          "numbers, first enum members, strings holding their field's name, one "
                          "element per array, trailing fields present), then parsed back. Each "
                          "[n] marks where the bytes of row n of the layout table start.")))
        for ex in exs:
            title = " = ".join([", ".join(ex.names)]) if len(exs) > 1 or len(ev.names) > 1 else ex.names[0]
            anchor = "example-" + ex.names[0].lower()
            blocks.append(H(3, title, anchor))
            blocks.append(P(T(f"{len(ex.data)} bytes of event data; context: "), *ctx_rich(ex.ctx)))
            if ex.data:
                blocks.append(hex_block(ex, ev.fields, pid))
            else:
                blocks.append(P(T("No bytes.")))
        return Page(pid, event_title(ev), blocks, nav=event_title(ev), group="events", search=search)

    def code_link(self, code):
        for ev in self.specs.events:
            for n in ev.names:
                if n.code == code:
                    return [L(n.name, event_page_id(ev), None)]
        return [T("(unknown)")]

    # -- index -------------------------------------------------------------------------------
    def index_page(self, events) -> Page:
        s = self.specs
        n_codes = sum(len(ev.names) for ev in s.events)
        blocks = [H(1, "The MySQL and MariaDB binary log format"),
                  P(T(f"Rendered from the YAML specs of binlog-grammar: {len(s.events)} event layouts "
                      f"for {n_codes} type codes, {len(s.types)} named types, {len(s.enums)} enums and "
                      "flag sets. Every table row is a spec field; every example is built and parsed "
                      "by the generated construct structs. Do not edit these pages: change the specs (the "
                      "language is described in "), SRC("specs/README.md"), T(") and run "),
                    C("binlog-grammar docs"), T(".")),
                  H(2, "Framing", "framing"),
                  P(T("A binlog file starts with "), L("binlog_magic", "types", "binlog_magic"),
                    T(". Every event is a "), L("common_header", "types", "common_header"),
                    T(", the event data (the post-header and body of its type, below), and an "),
                    L("event_checksum", "types", "event_checksum"),
                    T(" when the FORMAT_DESCRIPTION_EVENT announces CRC32. The parser of an event "
                      "reads the "), L("context values", "context", None, code=False),
                    T(" that the file's first event announced.")),
                  H(2, "Indexes", "indexes"),
                  {"kind": "list", "items": [
                      [L("Event type codes", "event-types", None, code=False), T(": every type code of MySQL and MariaDB")],
                      [L("QUERY_EVENT status variables", "status-vars", None, code=False)],
                      [L("TABLE_MAP_EVENT optional metadata", "table-map-metadata", None, code=False)],
                      [L("Column types", "column-types", None, code=False), T(": type codes and their metadata bytes")],
                      [L("Enums and flag sets", "enums", None, code=False)],
                      [L("Named types", "types", None, code=False), T(" (and the built-in types)")],
                      [L("Context values", "context", None, code=False), T(" that expressions read as "), C("ctx.NAME")],
                      [L("Version history", "versions", None, code=False), T(": what changed in which server version")],
                  ]},
                  H(2, "Event layouts", "events")]
        groups = {}
        for ev in events:
            groups.setdefault(Path(ev.file).parent.name, []).append(ev)
        for g in sorted(groups):
            rows = []
            for ev in groups[g]:
                rows.append(ROW([[L(event_title(ev), event_page_id(ev), None)],
                                 [T(", ".join(str(n.code) for n in ev.names))],
                                 [T(flavor_name(ev.flavor))], [T(ev.doc)]]))
            blocks += [H(3, g, "group-" + g), TABLE(["Events", "Codes", "Flavor", "What"], rows, cls="index")]
        return Page("index", "binlog format", blocks, nav="Overview", group="pages")

    def event_types_page(self) -> Page:
        blocks = [H(1, "Event type codes"),
                  P(T("Every type code the specs describe, by flavor; the code is byte 4 of the "),
                    L("common_header", "types", "common_header"), T(".")),
                  ]
        search = []
        for flavor, label in FLAVORS:
            rows = []
            for ev in self.specs.events:
                if ev.flavor != flavor:
                    continue
                for n in ev.names:
                    rows.append((n.code, ROW([[T(str(n.code))], [T(f"0x{n.code:02x}")],
                                              [L(n.name, event_page_id(ev), None)],
                                              version_rich(ev.since, ev.until),
                                              [T(n.doc or ev.doc)]], anchor=n.name, cls="code")))
                    search.append((n.name, n.name, "type code", f"{label} type code {n.code}"))
            rows.sort(key=lambda r: r[0])
            blocks += [H(2, label, flavor),
                       TABLE(["Code", "Hex", "Event", "Written", "What"], [r for _c, r in rows],
                             cls="codes", name=flavor)]
        return Page("event-types", "Event type codes", blocks, nav="Event type codes", group="pages",
                    search=search)

    def find_tlv(self, event_name, field_id):
        ev, _n = self.specs.event_by_name(event_name)
        for f, path in iter_fields(ev.fields):
            if f.id == field_id:
                t = self.m.resolve(f.type)
                if t.kind == "tlv":
                    return ev, f, path, t
        raise DocsError(f"{event_name} has no TLV field {field_id}")

    def tlv_index_page(self, pid, title, event_name, field_id, what) -> Page:
        ev, f, path, t = self.find_tlv(event_name, field_id)
        owner = f.type.name if f.type.kind == "named" else ev.layout
        where = [L(f"{ev.layout}.{path}", event_page_id(ev), field_anchor(path))]
        if f.type.kind == "named":
            where += [T(" (type "), L(f.type.name, "types", f.type.name), T(")")]
        blocks = [H(1, title), P(T(f.doc)),
                  FACTS([("Field", where)])]
        st = StructTables(self.m, pid, lambda p: p, what, owner)
        blocks += tlv_blocks(st, t, "")
        # rows for tags the enum names but the spec gives no case
        if t.tag_enum:
            known = {k for k, _cf in t.cases}
            rest = [(v, nd) for v, nd in sorted(self.specs.enums[t.tag_enum].members.items())
                    if v not in known]
            if rest:
                stop = {"stop": "no case: a reader keeps the rest of the list raw",
                        "skip": "no case: its value is kept raw",
                        "error": "no case: a parse error"}[t.unknown]
                rows = [ROW([[T(str(v))], [C(name)], [T(doc)], [T(stop)]], cls="nocase")
                        for v, (name, doc) in rest]
                blocks += [H(2, "Codes without a case", "no-case"),
                           TABLE(["Tag", "Name", "Meaning", "Parsed as"], rows, cls="nocase")]
        for sub in st.subs:
            blocks += sub
        prefix = f"{event_name}.{field_id}."
        sets = [sd for _n, sd in sorted(self.specs.sets.items())
                if any(a.startswith(prefix) for a in sd.applies_to)]
        if sets:
            blocks += [H(2, "Which columns each list counts", "column-classes"),
                       P(T("A list does not say which column each of its entries is for: it has one "
                           "entry per column of a class, in column order, and the servers do not "
                           "agree on the classes. A STRING column counts as the real type its "
                           "metadata names (CHAR, ENUM or SET). The set of a server is the union "
                           "of the entries that apply to it (spec key "), C("sets:"), T(", "),
                         SRC("specs/README.md"), T(")."))]
            for sd in sets:
                blocks += self.set_blocks(sd, prefix, st.search)
        return Page(pid, title, blocks, nav=title, group="pages", search=st.search)
