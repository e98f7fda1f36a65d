"""The compiled backend's JSON-lines lane: a C loop that writes the `dump --format jsonl` records
of the events that make up most of a row-based binlog (GTIDs of both servers, ANNOTATE_ROWS,
XIDs, TABLE_MAPs and QUERY events the Python path has written for the same bytes, rows events
whose plan it has made) straight from the file's bytes, and stops at the first event it does not write, which the Python path then reads
and writes (output/jsonl_lane.py drives it).

Output: generated/native/jsonl_lane.c (templates/native_jsonl_lane.c.j2), built by setup.py as
binlog_grammar.native._jsonl_lane with generated/native/rows.c (the row images' JSON:
codegen/c_rows.py).

What comes from the specs, here: the "data" object of a GTID_EVENT (MariaDB), XID_EVENT and
ANNOTATE_ROWS_EVENT record is their parsed struct, so its writer is generated from their fields
in spec order (`data_writers`; MySQL's GTID_LOG_EVENT and ANONYMOUS_GTID too): fixed-width
integers and packed integers as numbers, a field's `if:` through codegen.c_expr (null when
false; `since:`/`until:` only document which servers write a field, as for the Python readers),
a `bytes` field of a fixed size or to the event's end as base64, a `str` field
to the event's end as a JSON string (printable ASCII only, each character's JSON text passed in
by the Python side, which made it with the json module). A field it cannot write is a SpecError
when it is always there (change this module with the spec), and stops the lane at run time when
its condition holds (the Python path writes that event). The rows events' post-header (the
table id's width expression, the flags, v2's extra data length) is read as codegen/c_lane.py
reads it. Everything else of a record (its keys, the file's name, the text of a TABLE_MAP's data
and of a row change's envelope) is made by the Python side (output/dump.py) and passed in.
"""
from __future__ import annotations

import json

from ..errors import SpecError
from ..lang.model import SpecSet
from . import c_expr, c_lane

HOT = ("GTID_EVENT", "XID_EVENT", "ANNOTATE_ROWS_EVENT", "GTID_LOG_EVENT", "ANONYMOUS_GTID_LOG_EVENT")
PARTIAL = "PARTIAL_UPDATE_ROWS_EVENT"  # its JSON diffs: the Python path's


def _refuse(ed, f, why):
    raise SpecError(f"the C JSON-lines lane cannot write {f.id} ({why}); change "
                    "codegen/c_json.py with the spec", f.file or ed.file, f.line or ed.line, f.id)


def _key(fid: str) -> str:
    """The C string literal of '"fid": ' (json.dumps's key and separator)."""
    return json.dumps(json.dumps({fid: 0})[1:-2])


def _field(ed, f, tr) -> dict:
    """One field's writer as the template needs it."""
    t = f.type
    if f.id.startswith("_") or f.enum or f.decode or f.value is not None or f.const is not None \
            or f.repeat is not None or f.repeat_until is not None or f.rebuild is not None:
        return _later(ed, f, tr, "a hidden, enum, decoded, computed or repeated field")
    # since/until document which servers write a field: neither Python reader reads by them
    out = dict(id=f.id, key=_key(f.id), cond=None, kind=None)
    if t.kind == "int" and t.endian == "le" and 1 <= t.width <= 8 and f.size is None:
        out.update(kind="int", width=t.width, signed=bool(t.signed))
    elif t.kind == "packed" and f.size is None:
        out.update(kind="packed")
    elif t.kind in ("bytes", "str") and f.size == "rest" and f.terminator is None \
            and f.prefix is None and f.pad is None:
        out.update(kind=t.kind)
    elif t.kind == "bytes" and isinstance(f.size, tuple) and f.size[0] == "num" and \
            f.terminator is None and f.prefix is None and f.pad is None:
        out.update(kind="fixed_bytes", size=int(f.size[1]))
    else:
        return _later(ed, f, tr, f"type {t.describe()}")
    if f.cond is not None:
        out["cond"] = _cond(ed, f, tr)
    return out


def _later(ed, f, tr, why) -> dict:
    """A field the lane does not write: refused now when always there, else at run time."""
    if f.cond is None:
        _refuse(ed, f, why)
    return dict(id=f.id, key=_key(f.id), cond=_cond(ed, f, tr), kind="refuse")


def _cond(ed, f, tr) -> str:
    try:
        return tr.translate(f.cond)
    except c_expr.Unsupported as e:
        _refuse(ed, f, f"its condition: {e}")


def data_writers(specs: SpecSet) -> list:
    """The hot events' data writers: [{name, code, fields, variables}]."""
    by_name = {n.name: (n, ed) for ed in specs.events for n in ed.names}
    out = []
    for name in HOT:
        n, ed = by_name[name]
        tr = c_expr.CTranslator(specs.enum_values())
        fields = [_field(ed, f, tr) for f in ed.fields]
        ids = {f["id"] for f in fields}
        allowed = {"v_" + i for i in ids} | {"v_remaining"}
        if tr.variables - allowed:
            raise SpecError(f"the C JSON-lines lane binds the fields and `remaining` only, not "
                            f"{sorted(tr.variables - allowed)}", ed.file, ed.line, name)
        used = {v[2:] for v in tr.variables if v != "v_remaining"}
        for f in fields:
            f["used"] = f["id"] in used
            if f["used"] and f["kind"] not in ("int", "packed", "refuse"):
                raise SpecError(f"the C JSON-lines lane binds integer fields only ({f['id']})",
                                ed.file, ed.line, name)
        same = next((w for w in out if w["layout"] == ed.layout), None)
        if same is not None:  # a layout's writer serves each of its hot events
            same["codes"].append(n.code)
            same["also"].append((name, n.code))
            continue
        out.append(dict(name=name, code=n.code, fields=fields, layout=ed.layout, codes=[n.code],
                        also=[], spec=str(ed.file), remaining="v_remaining" in tr.variables))
    return out


def rows_model(specs: SpecSet) -> dict:
    """The rows events the lane writes: codegen/c_lane.py's (lanes.h reads them), MySQL's partial
    updates aside (skipped), and the width of their table id."""
    m = c_lane.model(specs)
    return dict(rows=[r for r in m["rows"] if r["name"] != PARTIAL],
                skipped=[r for r in m["rows"] if r["name"] == PARTIAL],
                compressed_rows=m["compressed_rows"], table_id_width=m["table_id_width"])


def model(specs: SpecSet) -> dict:
    by_name = {n.name: n for ed in specs.events for n in ed.names}
    events = data_writers(specs)
    gtid = next(e for e in events if e["name"] == "GTID_EVENT")
    at = {f["id"]: k for k, f in enumerate(gtid["fields"]) if f["kind"] == "int" and not f["cond"]}
    if "seq_no" not in at or "domain_id" not in at:
        raise SpecError("the C JSON-lines lane makes a GTID of GTID_EVENT's seq_no and domain_id, "
                        "integers always there", gtid["spec"], 0, "GTID_EVENT")
    return dict(events=events, table_map_code=by_name["TABLE_MAP_EVENT"].code,
                query_compressed_code=by_name["QUERY_COMPRESSED_EVENT"].code,
                gtid_code=gtid["code"], gtid_seq_no=at["seq_no"], gtid_domain_id=at["domain_id"],
                **rows_model(specs))


PAYLOAD = "TRANSACTION_PAYLOAD_EVENT"


def payload_model(specs: SpecSet) -> dict:
    """What generated/native/payload.h reads of TRANSACTION_PAYLOAD_EVENT's spec: its code, the
    payload header's TLV cases (each a packed integer; their JSON text up to the value), the
    compression entry and the enum value the payload is inflated under (zstd), the payload."""
    ed = next(e for e in specs.events if any(n.name == PAYLOAD for n in e.names))
    code = next(n.code for n in ed.names if n.name == PAYLOAD)
    head, payload = ed.fields if len(ed.fields) == 2 else (None, None)
    t = head.type if head is not None else None
    dec = payload.decode if payload is not None else None
    if t is None or t.kind != "tlv" or t.tag.kind != "packed" or t.length is None \
            or t.length.kind != "packed" or not isinstance(t.end, int) or payload.size != "rest" \
            or dec is None or dec.get("codec") != "zstd" or dec.get("as") != "events":
        raise SpecError(f"the C loops read {PAYLOAD} as a packed TLV header, then zstd events to "
                        "the end; change codegen/c_json.py with the spec", ed.file, ed.line, PAYLOAD)
    tags = specs.enums[t.tag_enum].members if t.tag_enum else {}
    cases, compression, uncompressed, names = [], None, None, []
    for tag, f in t.cases:
        if f.type.kind != "packed" or f.cond is not None or tag >= 31:
            raise SpecError(f"the C loops read {PAYLOAD}'s header entries as packed integers",
                            f.file, f.line, f.id)
        tag_json = json.dumps(tags[tag][0]) if tag in tags else str(tag)
        prefix = '{"tag": %s, "id": %s, "value": ' % (tag_json, json.dumps(f.id))
        cases.append(dict(tag=tag, id=f.id, prefix=json.dumps(prefix)))
        if f.enum:
            compression = (tag, f)
        elif f.id == "uncompressed_size":
            uncompressed = tag
    cond = dec.get("if")
    if compression is None or not (isinstance(cond, tuple) and cond[0] == "bin" and cond[1] == "=="
                                   and cond[3][0] == "enum"):
        raise SpecError(f"the C loops inflate {PAYLOAD}'s payload under its compression entry",
                        ed.file, ed.line, PAYLOAD)
    members = specs.enums[compression[1].enum].members
    zstd = next(v for v, (name, _doc) in members.items() if name == cond[3][2])
    return dict(code=code, cases=cases, end=t.end, compression_tag=compression[0], zstd=zstd,
                zstd_name=cond[3][2],
                compression_names=sorted((v, name) for v, (name, _doc) in members.items()),
                uncompressed_tag=uncompressed, header_id=head.id, payload_id=payload.id,
                spec=str(ed.file))


def render(specs: SpecSet) -> dict:
    from .c_rows import BANNER
    from .python import template

    banner = BANNER.format(spec="the events of specs/events/ (codegen/c_json.py)")
    pm = payload_model(specs)
    tagged = tagged_model(specs)
    return {"jsonl_lane.c": template("native_jsonl_lane.c.j2").render(
                banner=banner, payload_code=pm["code"], tagged_code=tagged["code"], **model(specs)),
            "payload.h": template("native_payload.h.j2").render(banner=banner, tagged=tagged, **pm)}


def tagged_model(specs: SpecSet) -> dict:
    """codegen/c_stats.py's model of GTID_TAGGED_LOG_EVENT with the JSON text of its data
    (output/dump.py's: the message's integers, then each field as {tag, id, value})."""
    from .c_stats import TAGGED, tagged_model as fields

    m = fields(specs)
    ed = next(e for e in specs.events if any(n.name == TAGGED for n in e.names))
    t = ed.fields[3].type
    names = specs.enums[t.tag_enum].members if t.tag_enum else {}
    ids = dict((tag, f.id) for tag, f in t.cases)
    for f in m["known"]:
        tag_json = json.dumps(names[f["tag"]][0]) if f["tag"] in names else str(f["tag"])
        f["prefix"] = json.dumps('{"tag": %s, "id": %s, "value": ' % (tag_json, json.dumps(ids[f["tag"]])))
    k = [f.id for f in ed.fields]
    m.update(spec=str(ed.file), head=json.dumps('{"%s": %d, "%s": ' % (k[0], m["version"], k[1])),
             last=json.dumps(', "%s": ' % k[2]), fields=json.dumps(', "%s": [' % k[3]))
    return m
