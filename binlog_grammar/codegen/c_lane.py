"""The compiled backend's text lane: a C loop that writes the `dump` text of the events that make
up most of a row-based binlog (GTIDs of both servers, MySQL's QUERY events whose statement the
Python path has written once, ANNOTATE_ROWS, TABLE_MAPs of known tables, rows events, XIDs)
straight from the file's bytes, and stops at the first event it does not write, which the
Python path then reads and writes (output/text_lane.py drives it).

Output: generated/native/lane.c (templates/native_lane.c.j2), built by setup.py as
binlog_grammar.native._lane with generated/native/rows.c (the row images: codegen/c_rows.py), and
generated/native/lanes.h (templates/native_lanes.h.j2): what this lane, the JSON-lines lane
(codegen/c_json.py) and stats' loop (codegen/c_stats.py) read alike, once, from this model.

What comes from the specs, here: the type codes of those events (by name; the rows events by
their `rows:` operation and layout), where GTID_EVENT's seq_no and domain_id and XID_EVENT's xid
sit and how wide they are, which bits of GTID_EVENT's flags2 announce the commit id (and how wide
it is) and the XA xid (from the conditions of those body fields, named by the flags' enum), the
width of a rows event's table id (rows_table_id's size expression, in C through codegen.c_expr),
its flags and, in version 2, the extra data length; MariaDB's compressed rows events (their
twin's post-header and bitmaps, then rows of the mariadb_zlib codec, which lanes.h inflates);
MySQL's GTID_LOG_EVENT (ANONYMOUS_GTID
shares its layout) and QUERY_EVENT with its status variables, read by C that codegen/c_fields.py
generates from their fields (`mysql`). A spec whose
fields are not the fixed-width integers this lane reads them as is an error at generation time
(change the spec and this module together). What the text says about each event is the Python
side's: output/text_lane.py gives a lane state (the module's Lane, whose C core uses no Python
object and writes without the GIL) the labels, the names of the rows flags, the set of bytes
quoting.comment leaves as they are and the quoted summary of each table, then the tables, ids
and plans the Python path has read, and the lines it wrote for each statement (keyed by what
they depend on: the header's flags, the first sql_mode, the database and the statement's bytes).
"""
from __future__ import annotations

from ..errors import SpecError
from ..lang.model import SpecSet
from . import c_expr, c_fields

ROWS_LAYOUTS = {"rows_event_v1": 1, "rows_event_v2": 2}
# MariaDB's compressed rows events: their twin's layout up to the column bitmaps, then the rows
# compressed (their `rows` field's decode: mariadb_zlib, inflated by lanes.h's bg_lanes_inflate)
COMPRESSED_LAYOUTS = {"rows_compressed_event_v1": 1, "rows_compressed_event_v2": 2}
TABLE_ID = "rows_table_id"


def _fixed(fields) -> dict:
    """{field id: (offset, width)} of the leading fixed-width little-endian integers."""
    out, at = {}, 0
    for f in fields:
        t = f.type
        if t.kind != "int" or t.endian != "le" or f.cond is not None:
            break
        out[f.id] = (at, t.width)
        at += t.width
    return out


def _section(ed, section) -> list:
    return [f for f in ed.fields if f.section == section]


def _need(table: dict, fid, width, ed, where) -> int:
    if fid not in table or table[fid][1] != width:
        raise SpecError(f"the C text lane reads {where}.{fid} as a {8 * width}-bit little-endian "
                        "integer at a fixed offset; change codegen/c_lane.py with the spec",
                        ed.file, ed.line, where)
    return table[fid][0]


def _flag_test(field, flags_field: str) -> int:
    """The mask of a field's condition `(flags_field & MASK) != 0`, or None."""
    c = field.cond
    if isinstance(c, tuple) and len(c) == 4 and c[:2] == ("bin", "!=") and c[3] == ("num", 0):
        t = c[2]
        if isinstance(t, tuple) and len(t) == 4 and t[:2] == ("bin", "&") and \
                t[2] == ("name", flags_field) and t[3][0] == "num":
            return t[3][1]
    return None


def _gtid_flags(specs: SpecSet, gtid) -> dict:
    """Which bits of flags2 announce GTID_EVENT's commit id and XA xid, read from the conditions
    of those body fields (the members of flags2's flag set they name, for the C's comment)."""
    flags2 = next((f for f in gtid.fields if f.id == "flags2"), None)
    members = specs.enums[flags2.flags].members if flags2 is not None and flags2.flags else {}
    out = {}
    for fid, key in (("commit_id", "gtid_commit_id"), ("xid", "gtid_xid")):
        f = next((f for f in _section(gtid, "body") if f.id == fid), None)
        mask = None if f is None else _flag_test(f, "flags2")
        if not mask or any(mask & bit and bit not in members for bit in (1 << k for k in range(8))):
            raise SpecError(f"the C text lane reads GTID_EVENT.{fid} as announced by bits of "
                            "flags2 (its flag set's): `if: (flags2 & MASK) != 0`; change "
                            "codegen/c_lane.py with the spec", gtid.file, gtid.line, "GTID_EVENT")
        out[f"{key}_mask"] = f"0x{mask:02x}"
        out[f"{key}_flags"] = " | ".join(members[b][0] for b in sorted(members) if mask & b)
        if fid == "commit_id":
            if f.type.kind != "int" or f.type.endian != "le":
                raise SpecError("the C text lane skips GTID_EVENT.commit_id as a fixed-width "
                                "integer", gtid.file, gtid.line, "GTID_EVENT")
            out["gtid_commit_id_width"] = f.type.width
    return out


def _compressed(ed, out: list) -> None:
    """A compressed rows layout's events into out, when it is its twin's post-header and column
    bitmaps then one `rows` field of the mariadb_zlib codec (else a SpecError)."""
    version = COMPRESSED_LAYOUTS[ed.layout]
    ph, body = _section(ed, "post_header"), _section(ed, "body")
    ids = [f.id for f in ph]
    want = ["table_id", "flags"] + (["extra_data_len"] if version == 2 else [])
    last = body[-1] if body else None
    if ids != want or last is None or last.id != "rows" or \
            (last.decode or {}).get("codec") != "mariadb_zlib":
        raise SpecError("the C loops read a compressed rows event as its twin's post-header and "
                        "column bitmaps, then rows of the mariadb_zlib codec; change "
                        "codegen/c_lane.py with the spec", ed.file, ed.line, ed.layout)
    for n in ed.names:
        if n.row_op:
            out.append(dict(code=n.code, name=n.name, op=n.row_op, version=version))


def model(specs: SpecSet) -> dict:
    by_name = {n.name: (n, ed) for ed in specs.events for n in ed.names}
    gname, gtid = by_name["GTID_EVENT"]
    g = _fixed(_section(gtid, "post_header"))
    xname, xid = by_name["XID_EVENT"]
    x = _fixed(_section(xid, "body"))
    rows, compressed = [], []
    for ed in specs.events:
        if ed.layout in COMPRESSED_LAYOUTS:
            _compressed(ed, compressed)
        if ed.layout not in ROWS_LAYOUTS:
            continue
        ph = _section(ed, "post_header")
        if ph[0].type.kind != "named" or ph[0].type.name != TABLE_ID or ph[1].type.name != "u16le":
            raise SpecError("the C text lane reads a rows event's post-header as table_id "
                            f"({TABLE_ID}) then u16le flags", ed.file, ed.line, ed.layout)
        if ROWS_LAYOUTS[ed.layout] == 2 and (len(ph) < 3 or ph[2].type.name != "u16le"):
            raise SpecError("the C text lane reads a v2 rows event's extra data length as the "
                            "u16le after the flags", ed.file, ed.line, ed.layout)
        for n in ed.names:
            if n.row_op:
                rows.append(dict(code=n.code, name=n.name, op=n.row_op,
                                 version=ROWS_LAYOUTS[ed.layout]))
    if not rows:
        raise SpecError("no rows events of the v1/v2 layouts in the specs", "", 0, "rows")
    size = specs.types[TABLE_ID].field.size
    tr = c_expr.CTranslator(specs.enum_values())
    table_id_width = tr.translate(size)
    if tr.variables - {"ctx_post_header_len"}:
        raise SpecError(f"{TABLE_ID}'s size may read ctx.post_header_len only", "", 0, TABLE_ID)
    return dict(
        gtid_code=gname.code, gtid_seq_no=_need(g, "seq_no", 8, gtid, "GTID_EVENT"),
        gtid_domain_id=_need(g, "domain_id", 4, gtid, "GTID_EVENT"),
        xid_code=xname.code, xid_at=_need(x, "xid", 8, xid, "XID_EVENT"),
        table_map_code=by_name["TABLE_MAP_EVENT"][0].code,
        annotate_code=by_name["ANNOTATE_ROWS_EVENT"][0].code,
        rows=rows, compressed_rows=compressed, table_id_width=table_id_width, **_gtid_flags(specs, gtid), **mysql(specs))


def mysql(specs: SpecSet) -> dict:
    """MySQL's GTID_LOG_EVENT and ANONYMOUS_GTID_LOG_EVENT (one layout) and QUERY_EVENT: their
    codes and their C readers (codegen/c_fields.py), which give the text the GTID's sid and gno
    and a statement's post-header, default database, text and first sql_mode status variable."""
    by_name = {n.name: n for ed in specs.events for n in ed.names}
    readers = "\n\n".join((
        c_fields.reader(specs, "GTID_LOG_EVENT", "mysql_gtid", {"sid": "span", "gno": "int"}),
        c_fields.reader(specs, "QUERY_EVENT", "query",
                        {"thread_id": "int", "exec_time": "int", "error_code": "int",
                         "db": "span", "query": "span"}, {"sql_mode": "int"})))
    gtid = next(ed for ed in specs.events if by_name["GTID_LOG_EVENT"] in ed.names)
    sid = next((f for f in gtid.fields if f.id == "sid"), None)
    if "ANONYMOUS_GTID_LOG_EVENT" not in {n.name for n in gtid.names} or sid is None or \
            sid.size != ("num", 16):
        raise SpecError("the C loops read ANONYMOUS_GTID_LOG_EVENT with GTID_LOG_EVENT's layout, "
                        "whose sid is a UUID's 16 bytes", gtid.file, gtid.line, "GTID_LOG_EVENT")
    return dict(mysql_gtid_code=by_name["GTID_LOG_EVENT"].code,
                anonymous_gtid_code=by_name["ANONYMOUS_GTID_LOG_EVENT"].code,
                query_code=by_name["QUERY_EVENT"].code, field_readers=readers)


def render(specs: SpecSet) -> dict:
    from .c_rows import BANNER
    from .python import template

    m = model(specs)
    banner = BANNER.format(spec="the events of specs/events/ (codegen/c_lane.py)")
    return {"lane.c": template("native_lane.c.j2").render(banner=banner, **m),
            "lane_state.h": template("native_lane_state.h.j2").render(banner=banner, **m),
            "lanes.h": template("native_lanes.h.j2").render(banner=banner, **m),
            "replay.h": template("native_replay.h.j2").render(banner=banner, **m)}
