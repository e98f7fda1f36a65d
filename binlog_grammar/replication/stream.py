"""The reading API over a replication source: a stream.Stream whose events come from the server
instead of files."""
from __future__ import annotations

from .source import GTID_EVENTS, ReplicationSource


def open_replication_stream(source: ReplicationSource, filters=None, schemas=None):
    """A stream.Stream whose events come from `source`: `.events()` and `.transactions()` work as
    for files (StreamEvents with tables and GTIDs attached, rows decoded on demand) and give the
    events the server's binlog files hold, no more: the ROTATE and FORMAT_DESCRIPTION events the
    server makes up for the dump (marked artificial by the source) are left out. Position
    filters do not apply (start with the source's file and pos instead)."""
    from ..binlog.stream import Stream

    class ReplicationStream(Stream):
        def __init__(self):
            super().__init__([], filters, source.verify_checksum, schemas)
            self.source = source

        def _all_events(self):
            from ..binlog.rows import RowDecoder
            from ..binlog.stream import StreamEvent, gtid_of, with_inner

            decoder = RowDecoder(self.schemas)
            current = None
            gtid = None
            seq = 0
            for ev in self.source:
                if ev.extra.get("artificial"):
                    # made up by the server (log position 0, LOG_EVENT_ARTIFICIAL_F): not in the
                    # binlog, so not in what the stream gives (dump of the files has none either);
                    # the source has already taken the file name and format from them
                    continue
                if ev.file != current:  # TABLE_MAPs and the GTID are kept per file, as for files
                    decoder = RowDecoder(self.schemas)
                    current = ev.file
                    gtid = None
                if ev.type is not None and ev.type.name in GTID_EVENTS:
                    gtid = gtid_of(ev)
                    seq += 1
                for e in with_inner(ev, self.source.state, self.verify_checksum):
                    table = None
                    if e.type is not None and e.type.name == "TABLE_MAP_EVENT":
                        table = decoder.table_map(e)
                    elif e.type is not None and e.type.row_op:
                        table = decoder.tables.get(int(e.data.table_id))
                    yield 0, StreamEvent(e, table, gtid, decoder, seq)

    return ReplicationStream()
