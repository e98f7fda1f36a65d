"""Packets on a socket: the 4-byte packet header (spec packet_header), sequence ids, payloads
of 16 MiB and more split on write and joined on read, every read and write with a timeout, and
payloads parsed with the spec structs of specs/protocol/ (a payload they refuse is a one-line
ProtocolError). What a payload is goes by the names of the spec's packet_kind (its first byte),
and the rules that tell packets with the same first byte apart by their length or by the bytes
after it (is_eof, err_struct) are stated with the specs' structs."""
from __future__ import annotations

import socket
import ssl
import time
from typing import Optional

from construct import ConstructError

from ..generated import enums
from ..generated import types as T
from .auth import Secret
from .errors import ConnectionLost, ProtocolError, first_line

MAX_PAYLOAD = 0xFFFFFF  # a packet carries at most this much; a longer payload continues
MAX_JOINED = (1 << 30) + (1 << 16)  # max_allowed_packet's ceiling (1 GiB) and some headroom
HEADER_LEN = T.packet_header.sizeof()  # the bytes before every payload

# the first byte of a payload, by its name in the spec's packet_kind
KIND = {name: code for code, name in enums.PACKET_KIND.items()}
OK = KIND["OK"]
AUTH_MORE_DATA = KIND["AUTH_MORE_DATA"]
HANDSHAKE_V10 = KIND["HANDSHAKE_V10"]
LOCAL_INFILE = KIND["LOCAL_INFILE"]
EOF = KIND["EOF"]
AUTH_SWITCH_REQUEST = EOF  # the same byte, during authentication (packet_kind EOF)
ERR = KIND["ERR"]

# A row or a column count that starts with EOF's byte starts with the longest form of a packed
# integer (that byte and 8 more); an EOF packet is shorter than that (packet_kind EOF)
EOF_BELOW = len(T.column_count_packet.build(dict(column_count=(1 << 64) - 1)))
# the byte after an ERR's error code when the SQL state follows, as text (spec sql_state_marker)
SQL_STATE_MARKER = T.sql_state_marker.parse(T.sql_state_marker.build(None))


def spec_parse(con, payload: bytes, what: str, server: str, secret: Optional[Secret] = None):
    """Parse a payload with a spec struct; bytes it refuses are a one-line ProtocolError."""
    try:
        return con.parse(payload)
    except (ConstructError, ValueError, TypeError, IndexError, KeyError, OverflowError) as e:
        why = first_line(e, 160)
        if secret is not None:
            why = secret.scrub(why)
        raise ProtocolError(f"malformed {what} packet ({len(payload)} bytes): {why}", server) from None


class PacketIO:
    """Packets over a socket: the 4-byte header (spec packet_header), sequence ids, payloads of
    0xFFFFFF bytes and more split on write and joined on read. Every read has a timeout; with a
    `deadline` (time.monotonic()) the whole exchange has one too."""

    def __init__(self, sock, server: str, timeout: float, max_packet: int = MAX_JOINED):
        self.sock = sock
        self.server = server
        self.timeout = timeout
        self.deadline: Optional[float] = None
        self.seq = 0
        self.max_packet = max_packet

    def next_timeout(self) -> float:
        """The timeout of the next socket operation: `timeout`, cut short by the deadline."""
        t = self.timeout
        if self.deadline is not None:
            left = self.deadline - time.monotonic()
            if left <= 0:
                raise ConnectionLost("the server did not answer in time", self.server)
            t = min(t, left) if t else left
        return t

    def recv_exact(self, n: int) -> bytes:
        buf = bytearray()
        while len(buf) < n:
            t = self.next_timeout()
            try:
                self.sock.settimeout(t)
                chunk = self.sock.recv(min(n - len(buf), 1 << 20))
            except (socket.timeout, TimeoutError):
                raise ConnectionLost(f"the server sent nothing for {t:.1f} s", self.server) from None
            except ssl.SSLError as e:
                raise ConnectionLost(f"TLS error: {first_line(e.reason or e)}", self.server) from None
            except OSError as e:
                raise ConnectionLost(f"connection lost: {first_line(e.strerror or e)}",
                                     self.server) from None
            if not chunk:
                raise ConnectionLost("the server closed the connection", self.server)
            buf += chunk
        return bytes(buf)

    def read(self) -> bytes:
        """One payload (joined from as many packets as it took)."""
        parts = []
        total = 0
        while True:
            head = spec_parse(T.packet_header, self.recv_exact(HEADER_LEN), "packet header", self.server)
            if head.sequence_id != self.seq:
                raise ProtocolError(f"packet sequence number {head.sequence_id}, expected {self.seq} "
                                    f"(the stream is out of step)", self.server)
            self.seq = (self.seq + 1) & 0xFF
            n = head.payload_length
            total += n
            if total > self.max_packet:
                raise ProtocolError(f"a packet of more than {self.max_packet} bytes", self.server)
            parts.append(self.recv_exact(n) if n else b"")
            if n < MAX_PAYLOAD:
                return parts[0] if len(parts) == 1 else b"".join(parts)

    def write(self, payload: bytes):
        """Send one payload (split into packets of 0xFFFFFF bytes and a shorter last one)."""
        out = []
        pos = 0
        while True:
            chunk = payload[pos:pos + MAX_PAYLOAD]
            out.append(T.packet.build(dict(sequence_id=self.seq, payload=chunk)))
            self.seq = (self.seq + 1) & 0xFF
            pos += len(chunk)
            if len(chunk) < MAX_PAYLOAD:
                break
        try:
            self.sock.settimeout(self.next_timeout())
            self.sock.sendall(b"".join(out))
        except (socket.timeout, TimeoutError):
            raise ConnectionLost("the server did not take what was sent in time", self.server) from None
        except ssl.SSLError as e:
            raise ConnectionLost(f"TLS error: {first_line(e.reason or e)}", self.server) from None
        except OSError as e:
            raise ConnectionLost(f"connection lost: {first_line(e.strerror or e)}", self.server) from None

    def command(self, payload: bytes):
        """Start a new exchange (sequence 0) with this command payload."""
        self.seq = 0
        self.write(payload)


def packet_kind(payload: bytes) -> int:
    """The first byte of a payload (what kind of packet it is: a member of the spec's
    packet_kind), -1 for an empty one."""
    return payload[0] if payload else -1


def is_eof(payload: bytes, deprecate_eof: bool = False) -> bool:
    """Does this payload end a result set or a non-blocking binlog dump: an EOF packet, or with
    CLIENT_DEPRECATE_EOF the OK packet that replaces it (packet_kind EOF)?"""
    limit = MAX_PAYLOAD if deprecate_eof else EOF_BELOW
    return packet_kind(payload) == EOF and len(payload) < limit


def err_struct(payload: bytes):
    """The spec struct of an ERR payload: err_packet when its sql_state_marker follows the error
    code, else err_packet_pre41 (packet_kind ERR)."""
    try:
        pre = T.err_packet_pre41.parse(payload)
    except (ConstructError, ValueError, TypeError, IndexError, KeyError, OverflowError):
        return T.err_packet_pre41  # too short for either: spec_parse names what is wrong
    return T.err_packet if pre.error_message.startswith(SQL_STATE_MARKER) else T.err_packet_pre41


def printable(data: bytes, limit: int = 60) -> str:
    """Bytes a peer sent, quoted for a message: ASCII as it is, \\r \\n \\t, other bytes as \\xNN,
    the first `limit` bytes."""
    out = []
    for b in bytes(data[:limit]):
        c = chr(b)
        out.append({"\r": "\\r", "\n": "\\n", "\t": "\\t", "'": "\\'", "\\": "\\\\"}.get(c)
                   or (c if 32 <= b < 127 else f"\\x{b:02x}"))
    return "'" + "".join(out) + ("...'" if len(data) > limit else "'")
