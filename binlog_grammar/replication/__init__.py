"""A live replication client: a MySQL or MariaDB server's binlog read over the network, the way a
replica reads it, with every protocol packet read and written through the structs generated from
specs/protocol/ (packet header, HandshakeV10, HandshakeResponse41, AuthSwitchRequest,
AuthMoreData, OK/ERR/EOF, COM_QUERY and its text result set, COM_REGISTER_SLAVE,
COM_BINLOG_DUMP, COM_BINLOG_DUMP_GTID, the binlog stream packet), and a packet's kind told by
the spec's packet_kind (its first byte). What the specs cannot say is code here: joining a
payload split over 16 MiB packets, the authentication methods' rules (their cryptography is not
written here: RSA-OAEP and PEM keys come from the `cryptography` package, Ed25519's curve
arithmetic from libsodium through PyNaCl), and the replication session itself.

    from binlog_grammar.replication import ReplicationSource, open_replication_stream

    src = ReplicationSource("127.0.0.1", 3306, "repl", password=os.environ["PW"], until_now=True)
    for ev in src:                    # reader.Event objects, as BinlogFile yields them
        print(ev.file, ev.offset, ev.name)

    for se in open_replication_stream(src).events():   # stream.StreamEvents, rows decoded
        print(se.event.name, se.gtid, se.changes)

The source connects (TCP, optional TLS), authenticates (mysql_native_password,
caching_sha2_password fast and full, sha256_password, MariaDB client_ed25519,
mysql_clear_password over TLS), checks that binary logging is on (and row-based unless
`require_row_format=False`), announces CRC32 checksums, GTID capability and a heartbeat period,
registers as a replica and asks for the binlog from a file and position, from a MariaDB GTID
position (`@slave_connect_state`) or after a MySQL GTID set (COM_BINLOG_DUMP_GTID). Events are
parsed with reader.parse_event and reader.update_state, as a file's events are; the fake ROTATE
and FORMAT_DESCRIPTION events the server makes up are yielded once, marked
`ev.extra["artificial"] = True` (open_replication_stream, and so `stream`, leaves them out: they
are in no binlog file); heartbeats are not yielded, unless `yield_heartbeats=True` (the
pymysqlreplication shim's, whose users get them as events), marked `ev.extra["heartbeat"] = True`.

When the connection drops (server shut down, killed or restarted, network cut, the server went
silent for three heartbeat periods; a clean shutdown ends a blocking dump with an EOF packet, which
is a drop too, not the end of the binlog) the source reconnects with exponential backoff (0.1 s
doubling up to 5 s, for ever while following) and asks again from the
end of the last complete transaction (or, in GTID mode, from the GTID state of the complete
transactions), then skips what it already delivered: no event is lost or delivered twice. Errors
that a retry cannot mend (authentication, a purged binlog, bad bytes) end the iteration at once
with a one-line ReplicationError (or BinlogError for a damaged event). Every wait has a bound.

The password is kept in a `Secret` that never prints; it is not in any message, log line, repr
or exception this module makes (messages a server sends back are scrubbed of it too).

The package, in the order a connection uses it:

    errors.py      ConnectionLost, ServerError, ProtocolError; which errors a reconnection may mend
    auth.py        Secret (the password) and the authentication methods' arithmetic
    packets.py     PacketIO: packets on a socket; payloads parsed with the protocol spec structs
    connection.py  TLSOptions, Connection (handshake, login, queries), binlog_status
    source.py      ReplicationSource: the events, reconnection, resumption
    stream.py      open_replication_stream: a stream.Stream over a source

What other modules import is re-exported here, with the two things a replica's position is made
of, which reading files needs as much: binlog positions in server order (binlog.positions) and
MariaDB GTID states and MySQL GTID sets (binlog.gtid).
"""
from __future__ import annotations

from ..errors import BinlogError, ReplicationError
from .auth import (
    AUTH_FIRST, Secret, caching_sha2_scramble, ed25519_sign, native_password_scramble, rsa_oaep_encrypt, rsa_password, rsa_password_plaintext, rsa_public_key)
from .connection import TLS_MODES, Connection, TLSOptions, binlog_status
from .errors import (
    RETRYABLE_CODES, ConnectionLost, ProtocolError, ServerError, first_line, retryable)
from .packets import MAX_JOINED, MAX_PAYLOAD, PacketIO, printable, spec_parse
from ..binlog.gtid import MARIADB_GTID, MYSQL_GTID_PART, MariaDBGtidState, MySQLGtidSet
from ..binlog.positions import position_key
from .source import BOUNDED_RECONNECT_TIMEOUT, RECONNECT_REPORT_EVERY, ReplicationSource
from .stream import open_replication_stream

__all__ = ["ReplicationSource", "Connection", "TLSOptions", "Secret", "ConnectionLost", "ServerError",
           "ProtocolError", "ReplicationError", "open_replication_stream", "MariaDBGtidState",
           "MySQLGtidSet", "PacketIO", "native_password_scramble", "caching_sha2_scramble",
           "ed25519_sign", "rsa_oaep_encrypt", "rsa_password_plaintext", "BinlogError",
           # used by the CLI, spark/, repair/ and the tests
           "AUTH_FIRST", "BOUNDED_RECONNECT_TIMEOUT", "MARIADB_GTID", "MAX_JOINED", "MAX_PAYLOAD",
           "MYSQL_GTID_PART", "RECONNECT_REPORT_EVERY", "RETRYABLE_CODES", "TLS_MODES", "binlog_status",
           "first_line", "position_key", "printable", "retryable", "rsa_password", "rsa_public_key",
           "spec_parse"]
