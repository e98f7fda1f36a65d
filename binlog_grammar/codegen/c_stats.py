"""The compiled backend's `stats` loop: a C loop over a window of a binlog that counts events and
bytes by type, row changes and bytes by table, and whole transactions (their number, sizes, and
the largest and longest of them), and stops at the first event it does not count itself, which
the Python path (output/stats_fast.py) then reads.

Output: generated/native/stats.c (templates/native_stats.c.j2), built by setup.py as
binlog_grammar.native._stats with generated/native/framing.c (the header walk the Python side's
records come from; the CRC32 footers are checked in stats.c, by zlib when it is there) and
generated/native/rows.c (the row images, counted with the COUNT sink: the same acceptance as the
Python side's `_rows.rows`).

What comes from the specs: where MariaDB's GTID_EVENT keeps seq_no and domain_id, how long its
post-header is and which flags2 bits announce what its body holds, XID_EVENT's code and where its
xid sits, ANNOTATE_ROWS_EVENT's code, the rows events of the v1 and v2 layouts and the width of
their table id, and the C readers of MySQL's GTID_LOG_EVENT / ANONYMOUS_GTID and QUERY_EVENT
(codegen/c_lane.py's model, which reads them from specs/events/ and specs/types/, and
codegen/c_fields.py). A MySQL transaction is counted when its GTID is followed by a QUERY_EVENT
whose statement's bytes are one the Python path found to be BEGIN (binlog/boundaries.py decides;
output/stats_loop.py passes them in), then table maps, rows events and its XID. What each event does to a transaction is not decided here: output/stats_fast.py
passes, per type code, an action made from binlog/boundaries.py's roles (parts and commits,
TABLE_MAPs, rows events, MariaDB's GTID opening a transaction), and the flag that makes a MariaDB
GTID standalone (binlog.gtid); anything else, an event of a type not yet counted by the Python
path, and an event the Python path would find damaged, makes the loop stop.
"""
from __future__ import annotations

from ..errors import SpecError
from ..lang.model import SpecSet
from . import c_lane

GTID = "GTID_EVENT"


def model(specs: SpecSet) -> dict:
    m = c_lane.model(specs)
    phl = [ed.post_header_len for ed in specs.events if any(n.name == GTID for n in ed.names)]
    if len(phl) != 1 or not phl[0] or len(set(phl[0])) != 1:
        raise SpecError(f"the C stats loop reads {GTID} with one post-header length", "", 0, GTID)
    m["gtid_post_header_len"] = phl[0][0]
    m["tagged"] = tagged_model(specs)
    return m


TAGGED = "GTID_TAGGED_LOG_EVENT"


def tagged_model(specs: SpecSet) -> dict:
    """What stats.c reads of MySQL 8.3+'s GTID_TAGGED_LOG_EVENT: its code and its serialized
    fields (format version, message size, last non-ignorable id, then (id, value) pairs): the ids
    of uuid (16 integers), gno (signed) and tag (a prefixed string), and which other ids hold one
    unsigned integer or one signed one (each skipped)."""
    ed = next(e for e in specs.events if any(n.name == TAGGED for n in e.names))
    ids = [f.id for f in ed.fields]
    if ids != ["format_version", "message_size", "last_non_ignorable_field_id", "fields"] or \
            ed.fields[3].type.kind != "tlv" or ed.fields[3].type.length is not None:
        raise SpecError(f"the C stats loop reads {TAGGED} as the serialization library's message "
                        "of (id, value) pairs", ed.file, ed.line, TAGGED)
    cases, known = {}, []
    for tag, f in ed.fields[3].type.cases:
        kind = f.type.kind if f.repeat is None and f.prefix is None else \
            ("uuid" if f.repeat is not None and f.type.kind == "sv_uint" else
             "tag" if f.prefix is not None and f.type.kind == "str" else None)
        if kind not in ("sv_uint", "sv_sint", "uuid", "tag"):
            raise SpecError(f"the C stats loop cannot skip {TAGGED}'s {f.id}", f.file, f.line, f.id)
        cases[f.id] = tag
        known.append(dict(tag=tag, kind=kind))
    return dict(code=next(n.code for n in ed.names if n.name == TAGGED), known=known,
                version=ed.fields[0].const, uuid=cases["uuid"], gno=cases["gno"], tag=cases["tag"])


def render(specs: SpecSet) -> dict:
    from .c_rows import BANNER
    from .python import template

    banner = BANNER.format(spec="the events of specs/events/ (codegen/c_stats.py)")
    return {"stats.c": template("native_stats.c.j2").render(banner=banner, **model(specs))}
