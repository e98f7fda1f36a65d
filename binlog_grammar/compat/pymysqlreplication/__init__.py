"""python-mysql-replication's API (`pymysqlreplication`) on this package's reader and replication
client: scripts written for that library run with one import changed,

    from binlog_grammar.compat.pymysqlreplication import BinLogStreamReader
    from binlog_grammar.compat.pymysqlreplication.row_event import WriteRowsEvent

or none after binlog_grammar.compat.install(). BinLogStreamReader (binlogstream.py) takes the
library's arguments and also reads files (`files=[...]`); the event classes are in event.py and
row_event.py, with the library's names, attributes and dump() lines.

Where this differs from the library, on purpose (tests/compat/ runs the same scripts through
both on a real MariaDB and compares what they print; these are the lines that may differ):

- Values the library decodes wrongly are what the server stored: YEAR 0000 is 0 (the library
  adds 1900 to every YEAR and gives 1900); a negative TIME with a fraction of a second is
  that time (the library gives -12:34:56.78 as -12:34:56.22: it reads the fraction of the
  negative value as if it were positive); a zero TIMESTAMP is None with the reason "out of datetime2 range", as zero
  DATETIMEs are (the library gives 1970-01-01 00:00:00); an empty binary string (VARBINARY,
  BLOB) is b'' (the library gives the str '', as `b"".decode(...)` needs no codec while
  every other binary value stays bytes); a BINARY(n) value is its n bytes as stored (the
  binlog leaves out its trailing zero bytes, and the library gives what is left: x'0100' in a
  BINARY(4) is b'\\x01'); ENUM and SET members
  and column names come from the binlog's metadata in all cases (binlog_row_metadata=FULL), and
  for binlogs without it from the TABLE_MAP only (the library asks the server's
  information_schema, which may describe a later version of the table).
- Events the library does not read are read: MariaDB's compressed rows events
  (WRITE/UPDATE/DELETE_ROWS_COMPRESSED_EVENT, log_bin_compress=ON) are Write/Update/
  DeleteRowsEvents and QUERY_COMPRESSED_EVENT a QueryEvent (the library gives neither, so their
  rows are lost); MySQL's TRANSACTION_PAYLOAD_EVENT is followed by the events inside it.
- A server is read with reconnection and resumption (ReplicationSource): a dropped connection
  does not end the iteration or deliver an event twice.
- `Read bytes:` in dump() is the bytes of the event after its header: for a rows event the
  bytes before its rows until `rows` is read, then all of them, as the library counts them;
  other events count all their bytes (the library stops where its parser stops).
- ctl_connection_settings, pymysql_wrapper, report_slave, slave_uuid, ignore_decode_errors,
  use_column_name_cache are accepted and change nothing (no second connection is made).
"""
from .binlogstream import BinLogStreamReader
from .event import (BeginLoadQueryEvent, BinLogEvent, ExecuteLoadQueryEvent, FormatDescriptionEvent,
                    GtidEvent, HeartbeatLogEvent, IntvarEvent, MariadbAnnotateRowsEvent,
                    MariadbBinLogCheckPointEvent, MariadbGtidEvent, MariadbGtidListEvent,
                    MariadbStartEncryptionEvent, NotImplementedEvent, PreviousGtidsEvent,
                    QueryEvent, RandEvent, RotateEvent, RowsQueryLogEvent, StopEvent, UserVarEvent,
                    XAPrepareEvent, XidEvent)
from .row_event import (DeleteRowsEvent, PartialUpdateRowsEvent, RowsEvent, TableMapEvent,
                        UpdateRowsEvent, WriteRowsEvent)

__all__ = ["BinLogStreamReader", "BinLogEvent", "BeginLoadQueryEvent", "DeleteRowsEvent",
           "ExecuteLoadQueryEvent", "FormatDescriptionEvent", "GtidEvent", "HeartbeatLogEvent",
           "IntvarEvent", "MariadbAnnotateRowsEvent", "MariadbBinLogCheckPointEvent",
           "MariadbGtidEvent", "MariadbGtidListEvent", "MariadbStartEncryptionEvent",
           "NotImplementedEvent", "PartialUpdateRowsEvent", "PreviousGtidsEvent", "QueryEvent",
           "RandEvent", "RotateEvent", "RowsEvent", "RowsQueryLogEvent", "StopEvent",
           "TableMapEvent", "UpdateRowsEvent", "UserVarEvent", "WriteRowsEvent", "XAPrepareEvent",
           "XidEvent"]
