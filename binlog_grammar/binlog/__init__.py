"""Binlog files, in the order the bytes are read:

- header.py: the common event header without parsing the event: where type_code, event_length
  and flags sit (from the spec's layout, generated/fast.py's `layout_common_header`) and one
  unpack of (type_code, event_length). Every header walk reads headers here.
- framing.py: walk a file by its headers alone (scan: offset, type code, length), for stats and
  the Spark split planner.
- events.py: the event types of the generated catalog, a spec's `decode:` (which field of which
  event is stored compressed: decode_of) and `decompress`, the one place compressed bytes are
  inflated; query_text.
- parse.py: one event's bytes -> Event (header, data, checksum), read with FormatState, what the
  file's FORMAT_DESCRIPTION_EVENT says; the FDE's checks; rebuild_event, the bytes back.
- payload.py: the events inside a TRANSACTION_PAYLOAD_EVENT, inflated and framed like the file's.
- resync.py: damage: Damage, the checks that find what no CRC32 tells, and resynchronisation.
- reader.py: BinlogFile, a file -> events (magic, first event, format events, skip_damaged), and
  first_format_event; the names above that readers need are importable from here too.
- gtid.py: GTID events, the GTID text of an event, and GTID sets as text (filters, and where a
  replica resumes).
- rows.py: TABLE_MAPs -> tables, and rows events -> RowChanges (row images read by the readers
  codegen/table.py compiles per table, else the generated ones).
- stream.py: the reading API over files and indexes: events, row changes, transactions, filters.
- positions.py: where an event, a transaction or a time is in a set of files.
- verify.py: `verify`, every event checked and rebuilt.

Data flows down this list: no module imports one below it, except reader.py's re-exports and
rows/stream reading files through reader.BinlogFile.
"""
