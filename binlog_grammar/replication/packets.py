"""Packets on a socket: the 4-byte packet header (spec packet_header), sequence ids, payloads
of 16 MiB and more split on write and joined on read, every read and write with a timeout, and
payloads parsed with the spec structs of specs/protocol/ (a payload they refuse is a one-line
ProtocolError)."""
from __future__ import annotations

import socket
import ssl
import time
from typing import Optional

from construct import ConstructError

from ..generated import types as T
from .auth import Secret
from .errors import ConnectionLost, ProtocolError, first_line

MAX_PAYLOAD = 0xFFFFFF  # a packet carries at most this much; a longer payload continues
MAX_JOINED = (1 << 30) + (1 << 16)  # max_allowed_packet's ceiling (1 GiB) and some headroom


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
            head = spec_parse(T.packet_header, self.recv_exact(4), "packet header", self.server)
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
    """The first byte of a payload (what kind of packet it is), -1 for an empty one."""
    return payload[0] if payload else -1


def printable(data: bytes, limit: int = 60) -> str:
    """Bytes a peer sent, quoted for a message: ASCII as it is, \\r \\n \\t, other bytes as \\xNN,
    the first `limit` bytes."""
    out = []
    for b in bytes(data[:limit]):
        c = chr(b)
        out.append({"\r": "\\r", "\n": "\\n", "\t": "\\t", "'": "\\'", "\\": "\\\\"}.get(c)
                   or (c if 32 <= b < 127 else f"\\x{b:02x}"))
    return "'" + "".join(out) + ("...'" if len(data) > limit else "'")
