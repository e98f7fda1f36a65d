"""The reference pages: column types, enums and flag sets, named types, context values, the
version history and the guide to adding a version; and the blocks of the named column classes
(`sets:`), which the column types page and the optional-metadata page both show."""
from __future__ import annotations

import re
from pathlib import Path

from ..lang.model import TypeSpec
from .blocks import (
    C, CODE, FACTS, H, L, P, ROW, SRC, T, TABLE, DocsError, Page, join, plain_text, src, version_rich)
from .model import FLAVORS, event_page_id, event_title, field_anchor, flavor_name, iter_fields
from .tables import struct_section


class ReferencePages:
    """The reference pages of Builder (pages_events.py), which sets `self.specs` (the SpecSet) and
    `self.m` (its Model)."""

    # -- column classes ----------------------------------------------------------------------
    def set_page(self, sd) -> str:
        """The page that shows a named set: the optional-metadata page for the sets of its lists."""
        if any(a.startswith("TABLE_MAP_EVENT.optional_metadata.") for a in sd.applies_to):
            return "table-map-metadata"
        return "column-types"

    def applies_rich(self, path):
        head, _, rest = path.partition(".")
        om = "optional_metadata."
        if head == "TABLE_MAP_EVENT" and rest.startswith(om):
            return [L(rest[len(om):], "table-map-metadata", rest[len(om):])]
        try:
            ev, _n = self.specs.event_by_name(head)
        except KeyError:
            return [C(path)]
        return [L(path, event_page_id(ev), field_anchor(rest))]

    def set_blocks(self, sd, prefix, search):
        """One named set: its doc, the lists it counts for, and its entries."""
        lists = [self.applies_rich(a) for a in sd.applies_to]
        rows = []
        for e in sd.entries:
            who = flavor_name(e.flavor) if e.flavor else "MySQL and MariaDB"
            when = version_rich(e.since, e.until)
            members = join([[L(n, "column-types", n)] for n, _v in e.members])
            rows.append(ROW([[T(who)] + ([T(", ")] + when if when else []), members, [T(e.doc)],
                             [T(e.doc_ref)] if e.doc_ref else [],
                             [SRC(f"{e.file}#L{e.line}" if e.line else e.file)]], cls="setentry"))
        search.append((sd.name, sd.name, "column class", sd.doc))
        return [H(3, [C(sd.name)], sd.name), P(T(sd.doc)),
                FACTS([("Counted by", join(lists) if lists else None),
                       ("Source", [T(sd.doc_ref)] if sd.doc_ref else None),
                       ("Spec", [SRC(f"{sd.file}#L{sd.line}")])]),
                TABLE(["Servers", "Column types", "Why", "Source", "Spec"], rows, cls="setentries",
                      name=sd.name)]

    def column_types_page(self) -> Page:
        ev, _n = self.specs.event_by_name("TABLE_MAP_EVENT")
        enum_name, switch, spath = None, None, None
        for f, path in iter_fields(ev.fields):
            if f.enum and f.repeat is not None and enum_name is None:
                enum_name = f.enum
        for f, path in iter_fields(ev.fields):
            t = f.type
            if t.kind == "switch" and enum_name and all(s.startswith(enum_name + "::") for _k, _c, s in t.cases):
                switch, spath = t, path
                break
        if enum_name is None or switch is None:
            raise DocsError("TABLE_MAP_EVENT has no column type array with a metadata switch")
        e = self.specs.enums[enum_name]
        cases = {k: c for k, c, _s in switch.cases}
        blocks = [H(1, "Column types"),
                  P(T("Every column type code a "), L("TABLE_MAP_EVENT", event_page_id(ev), None),
                    T(" can announce ("), L(enum_name, "enums", enum_name),
                    T("), with the metadata bytes it carries in "),
                    L(f"{ev.layout}.{spath}", event_page_id(ev), field_anchor(spath)),
                    T(" (switch on "), C(src(switch.switch_on)), T(").")),
                  P(T("Value encoding: the layout of the column's value in a row image, from the "),
                    L("column_value", "types", "column_value"), T(" switch of "),
                    SRC("specs/types/columns.yaml"), T(", and the Python value it becomes. A STRING "
                      "column takes the layout of the real type its metadata names (CHAR, ENUM or SET)."))]
        values = {}
        if "column_value" in self.specs.types:
            vt = self.specs.types["column_value"].field.type
            values = {k: c for k, c, _s in vt.cases}
        rows = []
        search = []
        classes = {}  # type code -> [rich]: the sets that count it, with their servers
        for sname, sd in sorted(self.specs.sets.items()):
            if sd.enum != enum_name:
                continue
            for ent in sd.entries:
                who = flavor_name(ent.flavor) if ent.flavor else ""
                when = plain_text(version_rich(ent.since, ent.until))
                note = ", ".join(x for x in (who, when) if x)
                for _n, v in ent.members:
                    classes.setdefault(v, []).append(
                        [L(sname, self.set_page(sd), sname)] + ([T(f" ({note})")] if note else []))
        for v in sorted(e.members):
            name, doc = e.members[v]
            ct = cases.get(v, switch.default)
            if ct is None:
                meta, size = [T("parse error (no case)")], []
            elif ct.kind == "empty":
                meta, size = [T("none")], [T("0")]
            else:
                meta = self.meta_rich(ct)
                size = self.m.elem_size_rich(ct)
            rows.append(ROW([[T(str(v))], [C(name)], [T(doc)], size, meta, self.value_rich(values.get(v)),
                             join(classes.get(v, []), "; ")], anchor=name, cls="coltype"))
            search.append((name, name, "column type", f"column type {v}. {doc}"))
        blocks.append(P(T("Optional metadata: the column classes ("), C("sets:"), T(" of "),
                        SRC("specs/types/column_classes.yaml"), T(") that give a column of this type an "
                        "entry in an optional-metadata list; see "),
                        L("which columns each list counts", "table-map-metadata", "column-classes",
                          code=False), T(".")))
        blocks.append(TABLE(["Code", "Type", "Meaning", "Metadata bytes", "Metadata",
                             "Value encoding", "Optional metadata"], rows, cls="coltypes"))
        others = [sd for _n, sd in sorted(self.specs.sets.items())
                  if sd.enum == enum_name and self.set_page(sd) == "column-types"]
        if others:
            blocks.append(H(2, "Other column classes", "column-classes"))
            for sd in others:
                blocks += self.set_blocks(sd, "", search)
        return Page("column-types", "Column types", blocks, nav="Column types", group="pages",
                    search=search)

    def value_rich(self, vt):
        if vt is None:
            return [T("not decodable from a binlog (see "), SRC("specs/types/columns.yaml"), T(")")]
        if vt.kind != "named":
            return [C(vt.describe())]
        td = self.specs.types[vt.name]
        out = [L(vt.name, "types", vt.name), T(": " + td.doc)]
        if td.adapter:
            out += [T(" Python value: "), C(td.adapter), T(".")]
        return out

    def meta_rich(self, ct: TypeSpec):
        if ct.kind != "named":
            return [C(ct.describe())]
        td = self.specs.types[ct.name]
        t = td.field.type
        out = [L(ct.name, "types", ct.name)]
        if t.kind == "struct":
            out += [T(": ")] + join([[C(f.id), T(" "), C(f.type.describe())] for f in t.fields])
        elif t.kind == "int":
            out += [T(": "), C(t.name)]
        return out

    def enums_page(self) -> Page:
        blocks = [H(1, "Enums and flag sets"),
                  P(T("An enum field parses to an integer with a name; a flags field to an integer "
                      "with the names of its set bits."))]
        search = []
        names = sorted(self.specs.enums)
        blocks.append({"kind": "list", "items": [
            [L(n, "enums", n), T(" (flags)" if self.specs.enums[n].is_flags else "")] for n in names]})
        for name in names:
            e = self.specs.enums[name]
            users = sorted(self.m.used_by_enum.get(name, ()))
            blocks += [H(2, [C(name), T(" (flags)" if e.is_flags else " (enum)")], name), P(T(e.doc)),
                       FACTS([("Source", [T(e.doc_ref)] if e.doc_ref else None),
                              ("Spec", [SRC(f"{e.file}#L{e.line}" if e.line else e.file)]),
                              ("Used by", join([[L(label, pg, anc)] for pg, anc, label in users]) if users else None)])]
            rows = []
            for v in sorted(e.members):
                mname, mdoc = e.members[v]
                shown = f"0x{v:x}" if e.is_flags else str(v)
                anchor = f"{name}.{mname}"
                rows.append(ROW([[T(shown)], [C(mname)], [T(mdoc or "")]], anchor=anchor, cls="member"))
                search.append((mname, anchor, f"{name} member", f"{name} {shown}. {mdoc or ''}".strip()))
            blocks.append(TABLE(["Bit" if e.is_flags else "Value", "Name", "Meaning"], rows,
                                cls="members", name=name))
            search.append((name, name, "flags" if e.is_flags else "enum", e.doc))
        return Page("enums", "Enums and flag sets", blocks, nav="Enums and flags", group="pages",
                    search=search)

    def types_page(self) -> Page:
        blocks = [H(1, "Named types"),
                  P(T("Named types are defined under "), C("types:"), T(" in any spec file and used "
                    "by name; each has its own table here, with the events and types that use it.")),
                  H(2, "Built-in types", "builtin"),
                  TABLE(["Type", "Bytes", "Meaning"], [
                      ROW([[C("u8"), T(", "), C("s8"), T(", "), C("u16le"), T(" … "), C("s64be")], [T("1 to 8")],
                           [T("Integers: u unsigned, s signed; le little-endian, be big-endian.")]],
                          anchor="builtin-int"),
                      ROW([[C("uintle"), T(", "), C("uintbe")], [T("its size")],
                           [T("Unsigned integer whose width is an expression.")]], anchor="builtin-uintvar"),
                      ROW([[C("packed")], [T("1, 3, 4 or 9")],
                           [T("Length-encoded integer: a first byte below 0xFB is the value; 0xFC, 0xFD, "
                              "0xFE are followed by 2, 3, 8 little-endian bytes.")]], anchor="builtin-packed"),
                      ROW([[C("sv_uint")], [T("1 to 9")],
                           [T("Variable-length integer of MySQL's serialization library: the trailing one "
                              "bits of the first byte count the extra bytes.")]], anchor="builtin-sv_uint"),
                      ROW([[C("sv_sint")], [T("1 to 9")], [T("Signed form of sv_uint (sign in bit 0).")]],
                          anchor="builtin-sv_sint"),
                      ROW([[C("bytes")], [T("its size")], [T("Raw bytes: fixed size, length prefix, "
                                                            "terminator or the rest of the region.")]],
                          anchor="builtin-bytes"),
                      ROW([[C("str")], [T("its size")], [T("Text; bytes that are not UTF-8 are kept exactly.")]],
                          anchor="builtin-str"),
                      ROW([[C("bitmap")], [C("(bits + 7) / 8")],
                           [T("One bit per item, bit 0 of byte 0 first (lsb) or bit 7 first (msb).")]],
                          anchor="builtin-bitmap"),
                      ROW([[C("empty")], [T("0")], [T("No bytes.")]], anchor="builtin-empty"),
                  ], cls="builtin")]
        search = []
        by_file = self.specs.type_files
        for file in sorted(by_file):
            blocks.append(H(2, [SRC(file)], "file-" + re.sub(r"[^a-z0-9]+", "-", file.lower()).strip("-")))
            for name in by_file[file]:
                blocks += self.type_blocks(name, search)
        return Page("types", "Named types", blocks, nav="Named types", group="pages", search=search)

    def type_blocks(self, name, search):
        td = self.specs.types[name]
        users = sorted(self.m.used_by_type.get(name, ()))
        size = self.m.field_fixed(td.field)
        blocks = [H(3, [C(name)], name), P(T(td.doc)),
                  FACTS([("Size", [T(f"{size} bytes")] if size is not None else [T("varies")]),
                         ("Python value", [C(td.adapter), T(" (binlog_grammar/runtime/values.py)")]
                          if td.adapter else None),
                         ("Source", [T(td.doc_ref)] if td.doc_ref else None),
                         ("Spec", [SRC(f"{td.file}#L{td.line}" if td.line else td.file)]),
                         ("Used by", join([[L(label, pg, anc)] for pg, anc, label in users]) if users else None)])]
        f = td.field
        if f.type.kind == "struct" and f.repeat is None and f.cond is None and f.size is None:
            tables, s = struct_section(self.m, "types", f.type.fields, name,
                                       lambda p, _n=name: f"{_n}.{p}", "type field")
        else:  # an alias: one row, the type itself; its parts are anchored as name.part
            tables, s = struct_section(self.m, "types", [f], name, lambda p: p, "type field",
                                       reserved={name})
        search.append((name, name, "type", td.doc))
        search += s
        return blocks + tables

    def context_page(self) -> Page:
        rows = []
        for cid, cdef in self.specs.context.items():
            vals = cdef.values
            shown = (", ".join(str(v) for v in vals) if isinstance(vals, list)
                     else "the event's own" if vals == "event" else str(vals))
            rows.append(ROW([[C(f"ctx.{cid}")], [T(cdef.type)], [T(cdef.doc)], [T(shown)],
                             [T(cdef.doc_ref)] if cdef.doc_ref else []], anchor=cid, cls="ctx"))
        blocks = [H(1, "Context values"),
                  P(T("What the reader knows when it parses an event, from that event's common header "
                      "and the file's FORMAT_DESCRIPTION_EVENT; expressions read them as "), C("ctx.NAME"),
                    T(". The examples use the first value listed (the event's own type code and "
                      "post-header length, a server of the event's flavor).")),
                  TABLE(["Name", "Type", "Meaning", "Values the tests draw", "Source"], rows, cls="ctx")]
        search = [(f"ctx.{cid}", cid, "context value", c.doc) for cid, c in self.specs.context.items()]
        return Page("context", "Context values", blocks, nav="Context values", group="pages",
                    search=search)

    # -- the guide to adding a version -------------------------------------------------------
    def guide_page(self) -> Page:
        root = Path(self.specs.root)
        real = root / "versions" / "mysql-9.0.0.yaml"
        example = real.read_text(encoding="utf-8") if real.exists() else ""
        b = [H(1, "How to add a MySQL version"),
             P(T("A server version that changes the binlog is a YAML change. Find what changed in "
                 "the server source ("), C("libbinlogevents"), T(" / "), C("libs/mysql/binlog/event"),
               T(" for MySQL, "), C("sql/log_event*.cc"), T(" for MariaDB), then write it in one of "
                 "three ways; none needs a Python change.")),
             H(2, "1. A version overlay", "overlay"),
             P(T("A file "), C("specs/versions/mysql-X.Y.Z.yaml"), T(" (or "), C("mariadb-X.Y.Z"),
               T(") names the first version it applies to and extends the specs of the versions "
                 "before it. Each "), C("extend"), T(" entry has a "), C("target"), T(" and one operation:")),
             TABLE(["operation", "target", "effect"], [
                 ROW([[C("members")], [T("an enum or flag set")], [T("new type codes, status-variable codes, metadata types")]]),
                 ROW([[C("cases")], [T("a switch or TLV type, or an event field such as "),
                                     C("TABLE_MAP_EVENT.optional_metadata")],
                      [T("new cases (a column layout, a status variable, an optional metadata field)")]]),
                 ROW([[C("append")], [T("an event or a struct type")], [T("fields appended to its end; each is read only for servers of the overlay's line from its version on ("), C("ctx.server >= mysql-X.Y.Z"), T(", combined with the field's own "), C("if"), T(")")]]),
             ]),
             P(T("Where MySQL itself tells a newer field by the bytes left rather than by version, say so "
                 "with "), C("if: remaining >= N"), T(" on the appended field, as the server does. New "
                 "types, enums and flag sets may be defined in the overlay itself. This is MySQL 9.0's, "
                 "the whole of what the project knows about VECTOR:")),
             CODE(example),
             H(2, "2. A new event", "event"),
             P(T("A new event type is a new event spec file; put it in a folder named after the version, "
                 "like "), C("specs/versions/mysql-8.3.0/gtid_tagged.yaml"), T(", with "),
               C("since:"), T(" set. Its code must be new.")),
             H(2, "3. A field of every version", "field"),
             P(T("When a field was always there but undocumented, add it to the event file with "),
               C("since:"), T(" / "), C("until:"), T(" annotations and, if older servers do not write it, "
                 "an "), C("if:"), T(" on "), C("ctx.server"), T(" or "), C("remaining"), T(".")),
             H(2, "Then", "then"),
             P(T("Run "), C("binlog-grammar generate"), T(" and "), C("binlog-grammar docs"),
               T(" and commit both; add a test with bytes of the new version (the round-trip tests "
                 "cover the new structs by themselves). To try it without changing the project, "
                 "keep the files in your own folder and read with "), C("binlog-grammar --specs DIR dump FILE"),
               T("; a mistake in them is reported with your file and line. The reader takes the "
                 "server version from each file's FORMAT_DESCRIPTION_EVENT. "),
               C("tests/specs/test_versions.py"), T(" does all of this for a made-up MySQL 99.0: a field "
                 "appended to XID_EVENT, a QUERY_EVENT status variable and a TABLE_MAP optional "
                 "metadata field, from YAML in a temporary folder.")),
             ]
        return Page("guide-versions", "How to add a MySQL version", b, nav="Adding a version",
                    group="pages")

    # -- versions ----------------------------------------------------------------------------
    def version_changes(self):
        """[(Version, change, item rich, where rich, doc)] from every since/until of the specs."""
        out = []
        for ev in self.specs.events:
            pid = event_page_id(ev)
            for v, change in ((ev.since, "first written"), (ev.until, "no longer written")):
                if v is not None:
                    out.append((v, change, "event", [L(event_title(ev), pid, None)], [], ev.doc))
            for f, path in iter_fields(ev.fields):
                for v, change in ((f.since, "added"), (f.until, "removed")):
                    if v is not None:
                        out.append((v, change, "field", [L(path, pid, field_anchor(path))],
                                    [L(ev.layout, pid, None)], f.doc))
        for name, td in self.specs.types.items():
            for f, path in iter_fields([td.field]):
                if path == name:
                    continue
                sub = path[len(name) + 1:]
                for v, change in ((f.since, "added"), (f.until, "removed")):
                    if v is not None:
                        out.append((v, change, "field", [L(sub, "types", f"{name}.{sub}")],
                                    [L(name, "types", name)], f.doc))
            for v, change in ((td.field.since, "added"), (td.field.until, "removed")):
                if v is not None:
                    out.append((v, change, "type", [L(name, "types", name)], [], td.doc))
        return out

    def versions_page(self) -> Page:
        changes = self.version_changes()
        blocks = [H(1, "Version history"),
                  P(T("Computed from the "), C("since"), T(" and "), C("until"), T(" annotations of the "
                    "events and fields in the specs: for each server version, what it started or "
                    "stopped writing. A field's "), C("until"), T(" is the first version without it."))]
        search = []
        order = {"first written": 0, "added": 1, "removed": 2, "no longer written": 3}
        for flavor, label in FLAVORS:
            mine = [c for c in changes if c[0].flavor == flavor]
            if not mine:
                continue
            blocks.append(H(2, label, flavor))
            versions = sorted({c[0].number for c in mine})
            blocks.append(P(*join([[L(".".join(map(str, v)), "versions", f"{flavor}-{'.'.join(map(str, v))}",
                                     code=False)] for v in versions], " · ")))
            for v in versions:
                vname = f"{flavor}-{'.'.join(map(str, v))}"
                rows = []
                these = sorted((c for c in mine if c[0].number == v),
                               key=lambda c: (order[c[1]], plain_text(c[4]), plain_text(c[3])))
                for _v, change, kind, item, where, doc in these:
                    rows.append(ROW([[T(change)], [T(kind)], item, where, [T(doc)]], cls="change"))
                    search.append((f"{label} {'.'.join(map(str, v))}: {plain_text(item)}", vname,
                                   "version", f"{change}: {doc}"))
                blocks += [H(3, f"{label} {'.'.join(map(str, v))}", vname),
                           TABLE(["Change", "What", "Name", "In", "Meaning"], rows, cls="versions",
                                 name=vname)]
        return Page("versions", "Version history", blocks, nav="Version history", group="pages",
                    search=search)
