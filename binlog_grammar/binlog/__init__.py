"""Binlog files, in the order the bytes are read; each module imports only modules above it:

- header.py: the common event header without parsing the event: where type_code, event_length
  and flags sit (from the spec's layout, generated/fast.py's `layout_common_header`) and one
  unpack of (type_code, event_length). Every header walk reads headers here.
- events.py: the event types of the generated catalog, a spec's `decode:` (which field of which
  event is stored compressed: decode_of) and `decompress` (runtime/codecs.py's, the one place
  compressed bytes are inflated); query_text.
- parse.py: one event's bytes -> Event (header, data, checksum), read with FormatState, what the
  file's FORMAT_DESCRIPTION_EVENT says; the FDE's checks; rebuild_event, the bytes back.
- resync.py: damage: Damage, the checks that find what no CRC32 tells, and resynchronisation.
- payload.py: the events inside a TRANSACTION_PAYLOAD_EVENT, inflated and framed like the file's.
- batch.py: the events BinlogFile reads in batches when the compiled backend runs (the compiled
  walk, then the compiled loop _rows.frame_events): FramedEvent, an Event whose header, checksum
  and (where the generated reader cannot refuse it, or rows_head vouches) data are read on first
  use; whatever is not plain goes to the event-by-event path.
- reader.py: BinlogFile, a file -> events (magic, first event, format events, skip_damaged), and
  first_format_event; the names above that readers need are importable from here too.
- framing.py: walk a file by its headers alone (scan: offset, type code, length), for stats and
  positions.
- gtid.py: GTID events, the GTID text of an event, and GTID sets as text (filters, and where a
  replica resumes).
- boundaries.py: what an event does to a transaction (opens, ends, inside, between), from the
  specs' role: of each event, a statement's text and MariaDB's FL_STANDALONE flag; every reader
  that finds transactions asks it (stream, repair, the replication source, the split planner).
- rows.py: TABLE_MAPs -> tables, and rows events -> RowChanges (row images read by the readers
  codegen/table.py compiles per table, else the generated ones).
- invert.py: a rows event inverted as mariadb-binlog --flashback inverts it (WRITE<->DELETE,
  UPDATE's images swapped, rows last first), its bytes built by the generated structs.
- rewrite.py: --rewrite-db's rules, and a TABLE_MAP rebuilt by the generated structs with its
  database renamed (new length, new CRC32): rewrite_table_map, rewrite_event.
- window.py: what --start/--stop-position and --start/--stop-datetime keep: whole
  transactions by their first event, or mysqlbinlog's cut event by event.
- stream.py: the reading API over files and indexes: events, row changes, transactions, filters.
- positions.py: where --start-position and --stop-position point in files, index files and relay
  logs; positions in the order a server writes them (position_key).
- verify.py: `verify`, every event checked and rebuilt.
"""
