"""A live replication client: a MySQL or MariaDB server's binlog read over the network, the way a
replica reads it, with every protocol packet read and written through the structs generated from
specs/protocol/ (packet header, HandshakeV10, HandshakeResponse41, AuthSwitchRequest,
AuthMoreData, OK/ERR/EOF, COM_QUERY and its text result set, COM_REGISTER_SLAVE,
COM_BINLOG_DUMP, COM_BINLOG_DUMP_GTID, the binlog stream packet). What the specs cannot say is
code here: joining a payload split over 16 MiB packets, telling a packet's kind from its first
byte, the authentication methods' rules (their cryptography is not written here: RSA-OAEP and
PEM keys come from the `cryptography` package, Ed25519's curve arithmetic from libsodium through
PyNaCl), and the replication session itself.

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
are in no binlog file); heartbeats are not yielded.

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
"""
from __future__ import annotations

import hashlib
import logging
import os
import random
import re
import socket
import ssl
import threading
import time
import zlib
from dataclasses import dataclass, replace
from typing import Optional

from construct import ConstructError

from . import __version__
from .errors import BinlogError, ReplicationError
from .generated import enums
from .generated import types as T
from .reader import Event, FormatState, event_name, parse_event, update_state

log = logging.getLogger("binlog_grammar.replication")

MAX_PAYLOAD = 0xFFFFFF  # a packet carries at most this much; a longer payload continues
MAX_JOINED = (1 << 30) + (1 << 16)  # max_allowed_packet's ceiling (1 GiB) and some headroom
MAX_GREETING = 1 << 16  # a server's greeting is a few hundred bytes; more is something else

CAPS = {name: bit for bit, name in enums.CAPABILITY_FLAGS.items()}
# what this client can use, when the server offers it
CLIENT_WANTS = (CAPS["CLIENT_LONG_PASSWORD"] | CAPS["CLIENT_LONG_FLAG"] | CAPS["CLIENT_PROTOCOL_41"]
                | CAPS["CLIENT_TRANSACTIONS"] | CAPS["CLIENT_SECURE_CONNECTION"]
                | CAPS["CLIENT_MULTI_RESULTS"] | CAPS["CLIENT_PLUGIN_AUTH"]
                | CAPS["CLIENT_PLUGIN_AUTH_LENENC_CLIENT_DATA"] | CAPS["CLIENT_CONNECT_ATTRS"]
                | CAPS["CLIENT_DEPRECATE_EOF"])
UTF8MB4_GENERAL_CI = 45
ARTIFICIAL = next(bit for bit, name in enums.EVENT_FLAGS.items() if name == "LOG_EVENT_ARTIFICIAL_F")
DUMP_FLAGS = {name: bit for bit, name in enums.BINLOG_DUMP_FLAGS.items()}
DUMP_GTID_FLAGS = {name: bit for bit, name in enums.BINLOG_DUMP_GTID_FLAGS.items()}
MARIA_SLAVE_CAPABILITY_GTID = 4  # MariaDB sql/log_event.h, MARIA_SLAVE_CAPABILITY_MINE

# server errors a new connection may mend: too many connections, shutdown in progress, the
# connection or query was killed or aborted, network read/write errors
RETRYABLE_CODES = {1040, 1053, 1077, 1152, 1153, 1154, 1155, 1156, 1157, 1158, 1159, 1160, 1161,
                   1184, 1317, 1927, 2006, 2013}
HEARTBEATS = {"HEARTBEAT_LOG_EVENT", "HEARTBEAT_LOG_EVENT_V2"}
GTID_EVENTS = {"GTID_LOG_EVENT", "ANONYMOUS_GTID_LOG_EVENT", "GTID_TAGGED_LOG_EVENT", "GTID_EVENT"}
MARIADB_FL_STANDALONE = 0x01
BOUNDED_RECONNECT_TIMEOUT = 60.0  # seconds a source with an end keeps reconnecting by default
RECONNECT_REPORT_EVERY = 60.0  # while the server stays down, one log line this often


# ---------------------------------------------------------------------------------------------
# errors

class ConnectionLost(ReplicationError):
    """The connection failed or dropped, or the server went silent: a new connection may mend it."""


class ServerError(ReplicationError):
    """The server answered with an ERR packet."""


class ProtocolError(ReplicationError):
    """The server sent bytes the protocol specs refuse, or a packet out of place."""


def _retryable(e: Exception) -> bool:
    if isinstance(e, ConnectionLost):
        return True
    return isinstance(e, ServerError) and e.code in RETRYABLE_CODES


def _first_line(text, limit=300) -> str:
    text = " ".join(str(text).split())
    return text if len(text) <= limit else text[:limit] + "..."


# ---------------------------------------------------------------------------------------------
# the password

class Secret:
    """A password that does not print: repr and str show asterisks; reveal() gives the bytes."""

    __slots__ = ("_value",)

    def __init__(self, value):
        if isinstance(value, Secret):
            value = value.reveal()
        if value is None:
            value = b""
        self._value = value.encode("utf-8") if isinstance(value, str) else bytes(value)

    def reveal(self) -> bytes:
        return self._value

    def __bool__(self):
        return bool(self._value)

    def __repr__(self):
        return "Secret('******')"

    __str__ = __repr__

    def __reduce__(self):
        raise TypeError("a Secret cannot be pickled")

    def scrub(self, text: str) -> str:
        """The text with any occurrence of the secret replaced by asterisks."""
        if not self._value:
            return text
        for form in {self._value.decode("utf-8", "replace"), self._value.decode("latin-1")}:
            if form:
                text = text.replace(form, "******")
        return text


# ---------------------------------------------------------------------------------------------
# authentication methods (the arithmetic; the packets are spec structs)

def _xor(a: bytes, b: bytes) -> bytes:
    return bytes(x ^ y for x, y in zip(a, b))


def native_password_scramble(password: bytes, nonce: bytes) -> bytes:
    """mysql_native_password: SHA1(password) XOR SHA1(nonce + SHA1(SHA1(password)))."""
    if not password:
        return b""
    h1 = hashlib.sha1(password).digest()
    h2 = hashlib.sha1(h1).digest()
    return _xor(h1, hashlib.sha1(nonce[:20] + h2).digest())


def caching_sha2_scramble(password: bytes, nonce: bytes) -> bytes:
    """caching_sha2_password fast path: SHA256(password) XOR SHA256(SHA256(SHA256(password)) + nonce)."""
    if not password:
        return b""
    h1 = hashlib.sha256(password).digest()
    h2 = hashlib.sha256(h1).digest()
    return _xor(h1, hashlib.sha256(h2 + nonce[:20]).digest())


# MariaDB's client_ed25519 signs the server's 32-byte nonce with Ed25519, taking the password as
# the secret key: crypto_sign() of MariaDB's ref10 code (plugin/auth_ed25519/ref10/sign.c, and
# the same in Connector/C's plugins/auth/ed25519.c) hashes the password, of any length, with
# SHA-512; the first 32 bytes, clamped, are the secret scalar, the last 32 the nonce prefix. That is
# RFC 8032's Ed25519 with the password in place of the 32-byte seed, so a library that takes only a
# 32-byte seed (cryptography's Ed25519PrivateKey.from_private_bytes) signs as MariaDB does only for
# 32-byte passwords. The curve arithmetic is libsodium's (PyNaCl's bindings: scalar multiplication
# of the base point and scalar arithmetic modulo the group order), fed the password's hash.

def ed25519_sign(message: bytes, secret: bytes) -> bytes:
    """The 64-byte Ed25519 signature of `message` with the secret key `secret` of any length, the
    key being SHA-512(secret) (RFC 8032 section 5.1.6 with its 32-byte seed; MariaDB's
    client_ed25519 with the password)."""
    from nacl.bindings import (crypto_core_ed25519_scalar_add, crypto_core_ed25519_scalar_mul,
                               crypto_core_ed25519_scalar_reduce,
                               crypto_scalarmult_ed25519_base_noclamp)

    h = hashlib.sha512(secret).digest()
    a = bytearray(h[:32])  # clamped (RFC 8032 section 5.1.5), then reduced modulo the group order
    a[0] &= 248
    a[31] &= 63
    a[31] |= 64
    a = crypto_core_ed25519_scalar_reduce(bytes(a) + bytes(32))
    public = crypto_scalarmult_ed25519_base_noclamp(a)
    r = crypto_core_ed25519_scalar_reduce(hashlib.sha512(h[32:] + message).digest())
    big_r = crypto_scalarmult_ed25519_base_noclamp(r)
    k = crypto_core_ed25519_scalar_reduce(hashlib.sha512(big_r + public + message).digest())
    return big_r + crypto_core_ed25519_scalar_add(r, crypto_core_ed25519_scalar_mul(k, a))


# sha256_password and caching_sha2_password send a password without TLS encrypted with the server's
# RSA public key, with OAEP padding (SHA-1 and MGF1-SHA-1: OpenSSL's RSA_PKCS1_OAEP_PADDING), done
# by the cryptography package; what is encrypted is the protocol's rule below.

_PEM_KEY = re.compile(rb"-----BEGIN (RSA )?PUBLIC KEY-----.*?-----END (RSA )?PUBLIC KEY-----", re.S)


def rsa_public_key(pem: bytes):
    """The RSA public key in `pem` (SubjectPublicKeyInfo or PKCS #1 RSAPublicKey; a server may
    send it with a trailing NUL), as a cryptography RSAPublicKey."""
    from cryptography.exceptions import UnsupportedAlgorithm
    from cryptography.hazmat.primitives.asymmetric import rsa
    from cryptography.hazmat.primitives.serialization import load_pem_public_key

    m = _PEM_KEY.search(bytes(pem))
    if not m:
        raise ValueError("not a PEM public key")
    try:
        key = load_pem_public_key(m.group(0))
    except (ValueError, UnsupportedAlgorithm) as e:
        raise ValueError(f"unreadable public key: {_first_line(e, 120)}") from None
    if not isinstance(key, rsa.RSAPublicKey):
        raise ValueError("not an RSA public key")
    return key


def rsa_oaep_encrypt(message: bytes, pem: bytes) -> bytes:
    from cryptography.hazmat.primitives import hashes
    from cryptography.hazmat.primitives.asymmetric import padding

    key = rsa_public_key(pem)
    if len(message) > key.key_size // 8 - 2 * 20 - 2:  # OAEP with SHA-1 (RFC 8017, 7.1.1)
        raise ValueError("the password is too long for the server's RSA key")
    return key.encrypt(message, padding.OAEP(mgf=padding.MGF1(algorithm=hashes.SHA1()),
                                             algorithm=hashes.SHA1(), label=None))


def rsa_password_plaintext(password: bytes, nonce: bytes) -> bytes:
    """What the RSA key encrypts: the password and its terminating NUL XOR the 20-byte nonce,
    repeated as often as needed (MySQL's client_authentication.cc: xor_string over the password's
    length + 1 bytes with the scramble)."""
    plain = password + b"\x00"
    mask = (nonce[:20] * (len(plain) // 20 + 1))[:len(plain)]
    return _xor(plain, mask)


def _rsa_password(password: bytes, nonce: bytes, pem: bytes) -> bytes:
    return rsa_oaep_encrypt(rsa_password_plaintext(password, nonce), pem)


# ---------------------------------------------------------------------------------------------
# TLS

TLS_MODES = ("disabled", "preferred", "required", "verify-ca", "verify-identity")


@dataclass
class TLSOptions:
    """TLS for the connection, as the mysql client's --ssl-mode: disabled; preferred (TLS when the
    server offers it, certificate not checked); required (TLS or fail, certificate not checked);
    verify-ca (the certificate must chain to `ca`, or the system's CAs); verify-identity (and name
    the host). `cert`/`key`: a client certificate."""

    mode: str = "preferred"
    ca: Optional[str] = None
    cert: Optional[str] = None
    key: Optional[str] = None

    def __post_init__(self):
        if self.mode not in TLS_MODES:
            raise ValueError(f"TLS mode {self.mode!r}: one of {', '.join(TLS_MODES)}")

    def context(self) -> ssl.SSLContext:
        ctx = ssl.SSLContext(ssl.PROTOCOL_TLS_CLIENT)
        ctx.minimum_version = ssl.TLSVersion.TLSv1_2
        if self.mode in ("verify-ca", "verify-identity"):
            ctx.check_hostname = self.mode == "verify-identity"
            ctx.verify_mode = ssl.CERT_REQUIRED
            if self.ca:
                ctx.load_verify_locations(cafile=self.ca)
            else:
                ctx.load_default_certs()
        else:
            ctx.check_hostname = False
            ctx.verify_mode = ssl.CERT_NONE
        if self.cert:
            ctx.load_cert_chain(self.cert, self.key)
        return ctx


# ---------------------------------------------------------------------------------------------
# packets on a socket

def _spec_parse(con, payload: bytes, what: str, server: str, secret: Optional[Secret] = None):
    """Parse a payload with a spec struct; bytes it refuses are a one-line ProtocolError."""
    try:
        return con.parse(payload)
    except (ConstructError, ValueError, TypeError, IndexError, KeyError, OverflowError) as e:
        why = _first_line(e, 160)
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

    def _timeout(self) -> float:
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
            t = self._timeout()
            try:
                self.sock.settimeout(t)
                chunk = self.sock.recv(min(n - len(buf), 1 << 20))
            except (socket.timeout, TimeoutError):
                raise ConnectionLost(f"the server sent nothing for {t:.1f} s", self.server) from None
            except ssl.SSLError as e:
                raise ConnectionLost(f"TLS error: {_first_line(e.reason or e)}", self.server) from None
            except OSError as e:
                raise ConnectionLost(f"connection lost: {_first_line(e.strerror or e)}",
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
            head = _spec_parse(T.packet_header, self.recv_exact(4), "packet header", self.server)
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
            self.sock.settimeout(self._timeout())
            self.sock.sendall(b"".join(out))
        except (socket.timeout, TimeoutError):
            raise ConnectionLost("the server did not take what was sent in time", self.server) from None
        except ssl.SSLError as e:
            raise ConnectionLost(f"TLS error: {_first_line(e.reason or e)}", self.server) from None
        except OSError as e:
            raise ConnectionLost(f"connection lost: {_first_line(e.strerror or e)}", self.server) from None

    def command(self, payload: bytes):
        """Start a new exchange (sequence 0) with this command payload."""
        self.seq = 0
        self.write(payload)


def _kind(payload: bytes) -> int:
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


# ---------------------------------------------------------------------------------------------
# a connection: handshake, authentication, queries

class Connection:
    """One authenticated connection to a MySQL or MariaDB server (command phase)."""

    def __init__(self, host="127.0.0.1", port=3306, user="root", password=None, *,
                 tls: Optional[TLSOptions] = None, connect_timeout=10.0, read_timeout=30.0,
                 server_public_key: Optional[str] = None, get_server_public_key=False,
                 secret: Optional[Secret] = None):
        self.host = host
        self.port = int(port)
        self.user = user
        self._secret = secret if secret is not None else Secret(password)
        self.tls = tls or TLSOptions()
        self.connect_timeout = connect_timeout
        self.read_timeout = read_timeout
        self.server_public_key = server_public_key
        self.get_server_public_key = get_server_public_key
        self.server = f"{host}:{self.port}"
        self.io: Optional[PacketIO] = None
        self.sock = None
        self.handshake = None
        self.server_version = ""
        self.connection_id = None
        self.capabilities = 0
        self.mariadb = False
        self.encrypted = False
        self.auth_plugin = None

    def __repr__(self):
        return f"Connection({self.server}, user={self.user!r}, tls={self.encrypted})"

    def _server_error(self, payload: bytes) -> ServerError:
        con = T.err_packet if payload[3:4] == b"#" else T.err_packet_pre41
        err = _spec_parse(con, payload, "ERR", self.server, self._secret)
        return ServerError(self._secret.scrub(err.error_message), self.server, code=int(err.error_code),
                           sql_state=err.get("sql_state"))

    # -- connecting ---------------------------------------------------------------------
    def connect(self) -> "Connection":
        deadline = time.monotonic() + self.connect_timeout
        try:
            sock = socket.create_connection((self.host, self.port), timeout=self.connect_timeout)
        except (socket.timeout, TimeoutError):
            raise ConnectionLost(f"cannot connect: no answer in {self.connect_timeout:g} s",
                                 self.server) from None
        except OSError as e:
            raise ConnectionLost(f"cannot connect: {_first_line(e.strerror or e)}", self.server) from None
        self.sock = sock
        try:
            sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
            sock.setsockopt(socket.SOL_SOCKET, socket.SO_KEEPALIVE, 1)
            self.io = PacketIO(sock, self.server, self.read_timeout)
            self.io.deadline = deadline
            self._handshake()
            self.io.deadline = None
        except BaseException:
            self.close()
            raise
        return self

    def _read_greeting(self) -> bytes:
        """The server's first packet (a HandshakeV10, or an ERR), read so that whatever else
        listens on the port is named by what it sent: the bytes are kept and shown when they are
        not a greeting, when the peer closes, or when it stops sending."""
        io = self.io
        got = bytearray()
        head = None

        def not_mysql(why):
            return ProtocolError(f"not a MySQL or MariaDB server: received {printable(got)} "
                                 f"({len(got)} bytes){why}", self.server)

        while True:
            if head is None and len(got) >= 4:
                head = _spec_parse(T.packet_header, bytes(got[:4]), "packet header", self.server)
                if head.sequence_id != 0 or not 0 < head.payload_length <= MAX_GREETING:
                    raise not_mysql("")
            if len(got) > 4 and got[4] not in (10, 0xFF):  # a HandshakeV10 or an ERR
                raise not_mysql("")
            if head is not None and len(got) >= 4 + head.payload_length:
                break
            # the greeting may take the whole connect timeout (the deadline), not only read_timeout
            t = io.deadline - time.monotonic() if io.deadline is not None else io.timeout
            if t <= 0:
                if got:
                    raise not_mysql(", then nothing more in time")
                raise ConnectionLost("no greeting: the server sent nothing in time", self.server)
            try:
                self.sock.settimeout(t)
                chunk = self.sock.recv(4096)  # a server sends its greeting and waits for the reply
            except (socket.timeout, TimeoutError):
                if got:
                    raise not_mysql(f", then nothing more in {self.connect_timeout:g} s") from None
                raise ConnectionLost(f"no greeting: the server sent nothing in {self.connect_timeout:g} s (is "
                                     f"{self.server} a MySQL or MariaDB server?)", self.server) from None
            except OSError as e:
                raise ConnectionLost(f"connection lost before the greeting: "
                                     f"{_first_line(e.strerror or e)}", self.server) from None
            if not chunk:
                if got:
                    raise not_mysql(", then it closed the connection")
                raise ConnectionLost(f"the server closed the connection without a greeting "
                                     f"(received nothing; is {self.server} a MySQL or MariaDB "
                                     f"server?)", self.server)
            got += chunk
        if len(got) > 4 + head.payload_length:
            raise not_mysql(", more than a greeting before any reply")
        io.seq = 1
        return bytes(got[4:])

    def _handshake(self):
        io = self.io
        first = self._read_greeting()
        if _kind(first) == 0xFF:
            raise self._server_error(first)
        hs = _spec_parse(T.handshake_v10, first, "handshake", self.server, self._secret)
        self.handshake = hs
        caps = int(hs.capability_flags_lower) | int(hs.capability_flags_upper) << 16
        self.capabilities = caps
        self.server_version = hs.server_version
        self.connection_id = int(hs.connection_id)
        self.mariadb = "mariadb" in hs.server_version.lower()
        need = CAPS["CLIENT_PROTOCOL_41"] | CAPS["CLIENT_SECURE_CONNECTION"]
        if caps & need != need:
            raise ProtocolError(f"server {hs.server_version!r} is older than MySQL 4.1 (no "
                                f"CLIENT_PROTOCOL_41 / CLIENT_SECURE_CONNECTION)", self.server)
        client = caps & CLIENT_WANTS
        nonce = bytes(hs.auth_plugin_data_part_1) + bytes(hs.auth_plugin_data_part_2 or b"")
        if len(nonce) > 20 and nonce.endswith(b"\x00"):
            nonce = nonce[:-1]
        use_tls = self.tls.mode != "disabled" and caps & CAPS["CLIENT_SSL"]
        if self.tls.mode not in ("disabled", "preferred") and not use_tls:
            raise ReplicationError(f"the server does not offer TLS (TLS mode {self.tls.mode})",
                                   self.server)
        if use_tls:
            client |= CAPS["CLIENT_SSL"]
            io.write(T.ssl_request.build(dict(client_flag=client, max_packet_size=MAX_JOINED,
                                              character_set=UTF8MB4_GENERAL_CI, filler=bytes(19),
                                              mariadb_capabilities=0)))
            self._start_tls()
        self.client_flags = client
        plugin = hs.auth_plugin_name or "mysql_native_password"
        if plugin not in AUTH_FIRST:
            plugin = "mysql_native_password"  # answer something; the server will switch methods
        self.auth_plugin = plugin
        data = self._auth_first(plugin, nonce)
        attrs = None
        if client & CAPS["CLIENT_CONNECT_ATTRS"]:
            attrs = dict(entries=[dict(key="_client_name", value="binlog-grammar"),
                                  dict(key="_client_version", value=__version__),
                                  dict(key="program_name", value="binlog-grammar")])
        io.write(T.handshake_response41.build(dict(
            client_flag=client, max_packet_size=MAX_JOINED, character_set=UTF8MB4_GENERAL_CI,
            filler=bytes(19), mariadb_capabilities=0, username=self.user, auth_response=data,
            database=None, client_plugin_name=plugin, connect_attributes=attrs,
            zstd_compression_level=None)))
        self._auth_exchange(plugin, nonce)

    def _start_tls(self):
        ctx = self.tls.context()
        try:
            self.sock.settimeout(self.io._timeout())
            tls_sock = ctx.wrap_socket(self.sock, server_hostname=self.host if ctx.check_hostname
                                       else None)
        except ssl.SSLCertVerificationError as e:
            raise ReplicationError(f"TLS: the server's certificate is not trusted: "
                                   f"{_first_line(e.verify_message or e.reason or e)}", self.server) from None
        except (ssl.SSLError, ValueError) as e:
            raise ReplicationError(f"TLS handshake failed: {_first_line(getattr(e, 'reason', None) or e)}",
                                   self.server) from None
        except (socket.timeout, TimeoutError):
            raise ConnectionLost("TLS handshake: no answer in time", self.server) from None
        except OSError as e:
            raise ConnectionLost(f"TLS handshake: {_first_line(e.strerror or e)}", self.server) from None
        self.sock = tls_sock
        self.io.sock = tls_sock
        self.encrypted = True

    # -- authentication -------------------------------------------------------------------
    def _public_key(self) -> Optional[bytes]:
        if not self.server_public_key:
            return None
        try:
            with open(self.server_public_key, "rb") as fh:
                return fh.read()
        except OSError as e:
            raise ReplicationError(f"cannot read the server's public key {self.server_public_key}: "
                                   f"{e.strerror}", self.server) from None

    def _auth_first(self, plugin: str, nonce: bytes) -> bytes:
        """The first reply of `plugin` to the server's nonce."""
        pw = self._secret.reveal()
        if plugin == "mysql_native_password":
            return native_password_scramble(pw, nonce)
        if plugin == "caching_sha2_password":
            return caching_sha2_scramble(pw, nonce)
        if plugin == "client_ed25519":
            if len(nonce) != 32:
                raise ProtocolError(f"client_ed25519: a {len(nonce)}-byte nonce (32 expected)",
                                    self.server)
            return ed25519_sign(nonce, pw)
        if plugin == "mysql_clear_password":
            if not self.encrypted:
                raise ReplicationError("the server asks for the password in clear text "
                                       "(mysql_clear_password); use TLS", self.server)
            return pw + b"\x00"
        if plugin == "sha256_password":
            if not pw:
                return b"\x00"
            if self.encrypted:
                return pw + b"\x00"
            key = self._public_key()
            if key is not None:
                return self._rsa(pw, nonce, key)
            if self.get_server_public_key:
                return b"\x01"  # ask for the key
            raise self._full_auth_needs("sha256_password")
        raise ReplicationError(f"the server asks for the authentication method {plugin!r}, which "
                               f"this client does not speak (it speaks {', '.join(sorted(AUTH_FIRST))})",
                               self.server)

    def _full_auth_needs(self, plugin):
        return ReplicationError(f"{plugin} needs the password sent over TLS or encrypted with the "
                                f"server's RSA key: use TLS, give the key (server_public_key / "
                                f"--server-public-key) or allow asking for it "
                                f"(get_server_public_key / --get-server-public-key)", self.server)

    def _rsa(self, pw, nonce, pem) -> bytes:
        try:
            return _rsa_password(pw, nonce, pem)
        except ValueError as e:
            raise ReplicationError(f"RSA: {e}", self.server) from None

    def _auth_exchange(self, plugin: str, nonce: bytes):
        io = self.io
        pw = self._secret.reveal()
        for _ in range(16):
            p = io.read()
            k = _kind(p)
            if k == 0x00:
                _spec_parse(T.ok_packet, p, "OK", self.server, self._secret)
                return
            if k == 0xFF:
                raise self._server_error(p)
            if k == 0xFE:
                if len(p) == 1:
                    raise ReplicationError("the server asks for the pre-4.1 password scheme "
                                           "(mysql_old_password), which is not supported", self.server)
                sw = _spec_parse(T.auth_switch_request, p, "AuthSwitchRequest", self.server, self._secret)
                plugin = sw.plugin_name
                nonce = bytes(sw.plugin_data)
                if plugin in ("mysql_native_password", "caching_sha2_password", "sha256_password") \
                        and len(nonce) == 21 and nonce.endswith(b"\x00"):
                    nonce = nonce[:20]
                self.auth_plugin = plugin
                io.write(T.auth_switch_response.build(dict(data=self._auth_first(plugin, nonce))))
                continue
            if k == 0x01:
                more = bytes(_spec_parse(T.auth_more_data, p, "AuthMoreData", self.server, self._secret).data)
                if plugin == "caching_sha2_password" and more == b"\x03":
                    continue  # fast authentication succeeded; the OK follows
                if plugin == "caching_sha2_password" and more == b"\x04":
                    if self.encrypted:
                        io.write(T.auth_switch_response.build(dict(data=pw + b"\x00")))
                        continue
                    key = self._public_key()
                    if key is None and self.get_server_public_key:
                        io.write(T.caching_sha2_public_key_request.build({}))
                        key = bytes(_spec_parse(T.auth_more_data, self._expect_more(), "AuthMoreData",
                                                self.server, self._secret).data)
                    if key is None:
                        raise self._full_auth_needs("caching_sha2_password")
                    io.write(T.auth_switch_response.build(dict(data=self._rsa(pw, nonce, key))))
                    continue
                if plugin == "sha256_password" and b"PUBLIC KEY" in more:
                    io.write(T.auth_switch_response.build(dict(data=self._rsa(pw, nonce, more))))
                    continue
                raise ProtocolError(f"{plugin}: unexpected AuthMoreData ({len(more)} bytes)", self.server)
            raise ProtocolError(f"unexpected packet during authentication (first byte "
                                f"{'none' if k < 0 else hex(k)})", self.server)
        raise ProtocolError("authentication did not end after 16 rounds", self.server)

    def _expect_more(self) -> bytes:
        p = self.io.read()
        if _kind(p) == 0xFF:
            raise self._server_error(p)
        if _kind(p) != 0x01:
            raise ProtocolError("expected the server's public key (AuthMoreData)", self.server)
        return p

    # -- commands --------------------------------------------------------------------------
    @property
    def deprecate_eof(self) -> bool:
        return bool(getattr(self, "client_flags", 0) & CAPS["CLIENT_DEPRECATE_EOF"])

    def _is_end(self, p: bytes) -> bool:
        return _kind(p) == 0xFE and len(p) < (MAX_PAYLOAD if self.deprecate_eof else 9)

    def query(self, sql: str):
        """Run one statement; (column names, rows of bytes-or-None values). OK: ([], [])."""
        io = self.io
        io.deadline = time.monotonic() + self.read_timeout
        try:
            io.command(T.com_query.build(dict(query=sql)))
            p = io.read()
            k = _kind(p)
            if k == 0xFF:
                raise self._server_error(p)
            if k == 0x00:
                _spec_parse(T.ok_packet, p, "OK", self.server, self._secret)
                return [], []
            if k == 0xFB:
                raise ProtocolError("the server asks for a local file (LOAD DATA LOCAL)", self.server)
            ncols = int(_spec_parse(T.column_count_packet, p, "column count", self.server,
                                    self._secret).column_count)
            if not 0 < ncols <= 4096:
                raise ProtocolError(f"a result set of {ncols} columns", self.server)
            cols = [_spec_parse(T.column_definition41, io.read(), "column definition", self.server,
                                self._secret) for _ in range(ncols)]
            if not self.deprecate_eof:
                p = io.read()
                if not self._is_end(p):
                    raise ProtocolError("no EOF after the column definitions", self.server)
                _spec_parse(T.eof_packet, p, "EOF", self.server, self._secret)
            rows = []
            while True:
                p = io.read()
                if self._is_end(p):
                    _spec_parse(T.eof_ok_packet if self.deprecate_eof else T.eof_packet, p, "EOF",
                                self.server, self._secret)
                    break
                if _kind(p) == 0xFF:
                    raise self._server_error(p)
                row = _spec_parse(T.text_row, p, "row", self.server, self._secret)
                values = [None if v.value is None else bytes(v.value) for v in row.column_values]
                if len(values) != ncols:
                    raise ProtocolError(f"a row of {len(values)} values in a result set of {ncols} "
                                        f"columns", self.server)
                rows.append(values)
            return [c.name for c in cols], rows
        finally:
            if io is not None:
                io.deadline = None

    def query_dicts(self, sql: str) -> list:
        names, rows = self.query(sql)
        return [{n: (None if v is None else v.decode("utf-8", "replace")) for n, v in zip(names, r)}
                for r in rows]

    def simple_command(self, payload: bytes):
        """Send a command that is answered by OK or ERR."""
        io = self.io
        io.deadline = time.monotonic() + self.read_timeout
        try:
            io.command(payload)
            p = io.read()
            if _kind(p) == 0xFF:
                raise self._server_error(p)
            if _kind(p) != 0x00:
                raise ProtocolError("expected OK", self.server)
            return _spec_parse(T.ok_packet, p, "OK", self.server, self._secret)
        finally:
            io.deadline = None

    def close(self):
        sock, self.sock = self.sock, None
        if sock is None:
            return
        try:
            sock.close()
        except OSError:
            pass

    def quit(self):
        """COM_QUIT, then close (best effort)."""
        if self.io is not None and self.sock is not None:
            try:
                self.io.deadline = time.monotonic() + 1.0
                self.io.command(T.com_quit.build({}))
            except ReplicationError:
                pass
        self.close()


AUTH_FIRST = {"mysql_native_password", "caching_sha2_password", "sha256_password", "client_ed25519",
              "mysql_clear_password"}


# ---------------------------------------------------------------------------------------------
# binlog positions and GTID states

def _file_key(name: str):
    """Binlog files in server order: by the number after the last dot."""
    stem, _, num = (name or "").rpartition(".")
    return (int(num), stem) if num.isdigit() else (-1, name or "")


def position_key(file: str, pos: int):
    return (_file_key(file), pos)


_MARIADB_GTID = re.compile(r"^\s*(\d+)-(\d+)-(\d+)\s*$")
_MYSQL_GTID_PART = re.compile(r"^\s*([0-9a-fA-F]{8}-?[0-9a-fA-F]{4}-?[0-9a-fA-F]{4}-?[0-9a-fA-F]{4}-?"
                              r"[0-9a-fA-F]{12})((?::[A-Za-z_][A-Za-z0-9_]*)?)((?::\d+(?:-\d+)?)+)\s*$")


class MariaDBGtidState:
    """The MariaDB GTID position of a replica: the last GTID of each replication domain."""

    def __init__(self, text: str = ""):
        self.domains = {}
        for part in (p for p in text.replace("\n", ",").split(",") if p.strip()):
            m = _MARIADB_GTID.match(part)
            if not m:
                raise ValueError(f"not a MariaDB GTID (domain-server-sequence): {part.strip()!r}")
            self.domains[int(m[1])] = (int(m[2]), int(m[3]))

    def add(self, gtid: str):
        m = _MARIADB_GTID.match(gtid or "")
        if m:
            self.domains[int(m[1])] = (int(m[2]), int(m[3]))

    def __str__(self):
        return ",".join(f"{d}-{s}-{n}" for d, (s, n) in sorted(self.domains.items()))

    def __repr__(self):
        return f"MariaDBGtidState({str(self)!r})"


class MySQLGtidSet:
    """A MySQL GTID set (uuid[:tag]:1-5:7,...) that grows as transactions complete, and its
    binary encoding (spec mysql_gtid_set) for COM_BINLOG_DUMP_GTID."""

    def __init__(self, text: str = ""):
        self.sids = {}  # (uuid hex without dashes, tag) -> sorted list of [lo, hi]
        for part in (p for p in text.replace("\n", ",").split(",") if p.strip()):
            m = _MYSQL_GTID_PART.match(part)
            if not m:
                raise ValueError(f"not a MySQL GTID set element (uuid[:tag]:1-5:7): {part.strip()!r}")
            key = (m[1].replace("-", "").lower(), m[2][1:].lower() if m[2] else "")
            for iv in m[3].split(":")[1:]:
                lo, _, hi = iv.partition("-")
                self._add(key, int(lo), int(hi or lo))

    def _add(self, key, lo, hi):
        ivs = self.sids.setdefault(key, [])
        ivs.append([lo, hi])
        ivs.sort()
        merged = []
        for a, b in ivs:
            if merged and a <= merged[-1][1] + 1:
                merged[-1][1] = max(merged[-1][1], b)
            else:
                merged.append([a, b])
        self.sids[key] = merged

    def add(self, gtid: str):
        parts = (gtid or "").split(":")
        if len(parts) < 2 or not parts[-1].isdigit():
            return
        uuid = parts[0].replace("-", "").lower()
        tag = parts[1].lower() if len(parts) == 3 else ""
        n = int(parts[-1])
        self._add((uuid, tag), n, n)

    def __str__(self):
        out = []
        for (u, tag), ivs in sorted(self.sids.items()):
            uu = f"{u[:8]}-{u[8:12]}-{u[12:16]}-{u[16:20]}-{u[20:]}"
            out.append(uu + (f":{tag}" if tag else "") + "".join(
                f":{a}" if a == b else f":{a}-{b}" for a, b in ivs))
        return ",".join(out)

    def encoded(self) -> dict:
        """The value for spec mysql_gtid_set (untagged format unless a tag is present)."""
        tagged = any(tag for _u, tag in self.sids)
        sids = []
        for (u, tag), ivs in sorted(self.sids.items()):
            sids.append(dict(uuid=bytes.fromhex(u), tag=tag if tagged else None,
                             intervals=[dict(start=a, end=b + 1) for a, b in ivs]))
        return dict(gtid_format=1 if tagged else 0, sids=sids)


# ---------------------------------------------------------------------------------------------
# the replication source

def _query_kind(ev) -> str:
    from .stream import _query_kind as kind

    return kind(ev)


class ReplicationSource:
    """Events of a server's binlog, read over the replication protocol; iterate it for
    reader.Event objects (see the module doc).

    Where to start: `file` and `pos` (default: the first binlog file, position 4), or `gtid`: a
    MariaDB GTID position ('0-1-100,1-2-7', the last transaction already had per domain) or a
    MySQL GTID set ('uuid:1-100', transactions already had). Where to stop: `until_now` (the end
    of the binlog when the source first connects: SHOW MASTER STATUS / SHOW BINARY LOG STATUS),
    `until=(file, pos)`, `stop()` from another thread, or never (new events are followed;
    `blocking=False` ends at the current end instead, the server deciding).

    Bounded waits: `connect_timeout` for connecting and authenticating, `read_timeout` for each
    query, three heartbeat periods (plus `read_timeout`) of silence in the stream; after a drop,
    reconnection with backoff from `backoff[0]` s doubling up to `backoff[1]` s between attempts
    (0.1 s to 5 s by default), for at most `reconnect_timeout` s (`reconnect=False`: no
    reconnection). The default `reconnect_timeout=None` never gives up while the source follows
    the binlog (no end: nothing but stop(), or an error a retry cannot mend, ends it); with an end
    (`until_now`, `until`, `blocking=False`) it gives up after BOUNDED_RECONNECT_TIMEOUT s.
    The loss of a connection, each reconnection (with where it resumes) and, while the server stays
    down, a line a minute are logged as warnings on the "binlog_grammar.replication" logger.
    """

    def __init__(self, host="127.0.0.1", port=3306, user="root", password=None, *,
                 server_id: Optional[int] = None, file: Optional[str] = None, pos: int = 4,
                 gtid: Optional[str] = None, until_now=False, until=None, blocking=True,
                 heartbeat=5.0, connect_timeout=10.0, read_timeout=30.0, reconnect=True,
                 reconnect_timeout=None, backoff=(0.1, 5.0), tls: Optional[TLSOptions] = None,
                 server_public_key: Optional[str] = None, get_server_public_key=False,
                 verify_checksum=True, require_row_format=True):
        self.host = host
        self.port = int(port)
        self.user = user
        self._secret = Secret(password)
        self.server = f"{host}:{self.port}"
        self.server_id = int(server_id) if server_id else random.randint(1 << 16, (1 << 31) - 1)
        if gtid is not None and file is not None:
            raise ValueError("give either a file and position or a GTID position, not both")
        self.start_file = file or ""
        self.start_pos = int(pos)
        self.until_now = until_now
        self.until = tuple(until) if until else None
        self.blocking = blocking
        self.heartbeat = float(heartbeat)
        if self.heartbeat <= 0:
            raise ValueError("heartbeat must be a positive number of seconds")
        self.connect_timeout = connect_timeout
        self.read_timeout = read_timeout
        self.reconnect = reconnect
        self.reconnect_timeout = reconnect_timeout
        self.backoff = backoff
        self.tls = tls or TLSOptions()
        self.server_public_key = server_public_key
        self.get_server_public_key = get_server_public_key
        self.verify_checksum = verify_checksum
        self.require_row_format = require_row_format
        # what is known of the server and the stream
        self.server_version = ""
        self.mariadb: Optional[bool] = None
        self.state = FormatState()
        self.file: Optional[str] = None  # binlog file being read
        self.pos = self.start_pos
        self.delivered: Optional[tuple] = None  # (file, end) of the last event yielded
        self.resume: Optional[tuple] = None  # (file, pos) after the last complete transaction
        self.gtid_state = None  # MariaDBGtidState / MySQLGtidSet in GTID mode
        self.target: Optional[tuple] = self.until
        self.reconnects = 0  # successful reconnections
        self.reconnect_attempts = 0
        self.heartbeats = 0
        self.connections = 0
        self._conn: Optional[Connection] = None
        self._stop = threading.Event()
        self._finished = False
        self._iterating = False
        self._tx_mode = None  # None, gtid, begin, mariadb, standalone: how the open transaction began
        self._tx_gtid = None
        self._reconnected = False
        self._fde_files = set()
        if gtid is not None:
            self._gtid_mode_from_text(gtid)

    def __repr__(self):
        return (f"ReplicationSource({self.server}, user={self.user!r}, server_id={self.server_id}, "
                f"at={self.file}:{self.pos})")

    def _gtid_mode_from_text(self, text):
        if _MARIADB_GTID.match(text.split(",")[0] or ""):
            self.gtid_state = MariaDBGtidState(text)
        else:
            self.gtid_state = MySQLGtidSet(text)

    @property
    def password(self):
        return self._secret

    @property
    def position(self):
        """(file, pos): where the stream stands (the end of the last event read)."""
        return (self.file, self.pos)

    def stop(self):
        """End the iteration from another thread (the current wait is cut short)."""
        self._stop.set()
        conn = self._conn
        if conn is not None and conn.sock is not None:
            try:
                conn.sock.shutdown(socket.SHUT_RDWR)
            except OSError:
                pass

    def close(self):
        self.stop()

    def stop_at(self, file: str, pos: int):
        """Stop once the stream reaches (file, pos) (settable from another thread)."""
        self.target = (file, int(pos))

    # -- iteration ---------------------------------------------------------------------------
    def __iter__(self):
        if self._iterating:
            raise RuntimeError("this ReplicationSource is already being iterated")
        self._iterating = True
        try:
            yield from self._run()
        finally:
            self._iterating = False

    def follows(self) -> bool:
        """Does this source follow the binlog with no end (blocking, no until, no until_now)?"""
        return self.blocking and not self.until_now and self.target is None

    def _give_up_after(self) -> Optional[float]:
        if self.reconnect_timeout is not None:
            return self.reconnect_timeout
        return None if self.follows() else BOUNDED_RECONNECT_TIMEOUT

    def _run(self):
        started = False
        lost_since = None
        last_report = 0.0
        delay = self.backoff[0]
        while not self._stop.is_set() and not self._finished:
            conn = None
            try:
                conn = self._open(first=not started)
                if started:
                    self.reconnects += 1
                    log.warning("%s: reconnected%s; resuming at %s", self.server,
                                f" after {time.monotonic() - lost_since:.1f} s" if lost_since else "",
                                self._resume_text())
                started = True
                lost_since = None
                for ev in self._read(conn):
                    delay = self.backoff[0]
                    yield ev
                    if self._stop.is_set() or self._finished:
                        return
                return  # the server ended the stream (non-blocking dump) or the target was reached
            except ReplicationError as e:
                if self._stop.is_set():
                    return
                if not started or not self.reconnect or not _retryable(e):
                    raise
                now = time.monotonic()
                limit = self._give_up_after()
                if lost_since is None:  # the connection was just lost: one line
                    lost_since = last_report = now
                    log.warning("%s: %s; reconnecting (resuming at %s)", self.server, e.message,
                                self._resume_text())
                elif now - last_report >= RECONNECT_REPORT_EVERY:  # down for long: a line a minute
                    last_report = now
                    log.warning("%s: still reconnecting after %.0f s (retrying every %.1f s); last "
                                "error: %s", self.server, now - lost_since, delay, e.message)
                if limit is not None and now - lost_since > limit:
                    raise ReplicationError(f"gave up reconnecting after {now - lost_since:.0f} s; "
                                           f"last error: {e.message}", self.server) from None
                if self._stop.wait(delay):
                    return
                delay = min(delay * 2, self.backoff[1])
                self.reconnect_attempts += 1
            finally:
                self._conn = None
                if conn is not None:
                    conn.close()

    def _resume_text(self):
        if self.gtid_state is not None:
            return f"GTID {self.gtid_state}"
        if self.resume:
            return f"{self.resume[0]}:{self.resume[1]}"
        return f"{self.start_file or '(first file)'}:{self.start_pos}"

    # -- one connection ----------------------------------------------------------------------
    def _open(self, first: bool) -> Connection:
        conn = Connection(self.host, self.port, self.user, tls=self.tls,
                          connect_timeout=self.connect_timeout, read_timeout=self.read_timeout,
                          server_public_key=self.server_public_key,
                          get_server_public_key=self.get_server_public_key, secret=self._secret)
        self._conn = conn
        conn.connect()
        self.connections += 1
        try:
            self._setup(conn, first)
        except BaseException:
            conn.close()
            raise
        return conn

    def _setup(self, conn: Connection, first: bool):
        self.server_version = conn.server_version
        self.mariadb = conn.mariadb
        row = conn.query_dicts("SELECT @@global.log_bin AS log_bin, @@global.binlog_format AS fmt")
        if not row or row[0]["log_bin"] not in ("1", "ON"):
            raise ReplicationError("binary logging is off on the server (log_bin=OFF): there is no "
                                   "binlog to read", self.server)
        fmt = (row[0]["fmt"] or "").upper()
        if self.require_row_format and fmt != "ROW":
            raise ReplicationError(f"the server logs with binlog_format={fmt}, not ROW: row changes "
                                   f"would be missing (set binlog_format=ROW on the server, or "
                                   f"accept any format)", self.server)
        if first and self.until_now and self.target is None:
            self.target = self._master_status(conn)
        conn.query("SET @master_binlog_checksum='CRC32', @source_binlog_checksum='CRC32'")
        period = int(self.heartbeat * 1e9)
        conn.query(f"SET @master_heartbeat_period={period}, @source_heartbeat_period={period}")
        gtid_mode = self.gtid_state is not None
        if conn.mariadb:
            conn.query(f"SET @mariadb_slave_capability={MARIA_SLAVE_CAPABILITY_GTID}")
            if gtid_mode:
                if not isinstance(self.gtid_state, MariaDBGtidState):
                    raise ReplicationError("a MySQL GTID set was given but the server is MariaDB "
                                           "(give domain-server-sequence)", self.server)
                conn.query(f"SET @slave_connect_state='{self.gtid_state}'")
                conn.query("SET @slave_gtid_strict_mode=0, @slave_gtid_ignore_duplicates=0")
        elif gtid_mode and not isinstance(self.gtid_state, MySQLGtidSet):
            raise ReplicationError("a MariaDB GTID position was given but the server is MySQL "
                                   "(give uuid:1-100)", self.server)
        conn.simple_command(T.com_register_slave.build(dict(
            server_id=self.server_id, hostname="", user="", password="", port=0,
            replication_rank=0, master_id=0)))
        # where this connection starts
        self._tx_mode = None
        self._tx_gtid = None
        self._reconnected = self.delivered is not None
        if self.resume is not None and not gtid_mode:
            file, pos = self.resume
        else:
            file, pos = self.start_file, self.start_pos
        if self._reconnected:
            self.file = file or self.file
        self.pos = pos
        flags = 0 if self.blocking else DUMP_FLAGS["BINLOG_DUMP_NON_BLOCK"]
        conn.io.deadline = None
        conn.io.timeout = self.heartbeat * 3 + self.read_timeout
        if gtid_mode and not conn.mariadb:
            gflags = DUMP_GTID_FLAGS["BINLOG_THROUGH_GTID"] | (0 if self.blocking else
                                                               DUMP_GTID_FLAGS["BINLOG_DUMP_NON_BLOCK"])
            conn.io.command(T.com_binlog_dump_gtid.build(dict(
                flags=gflags, server_id=self.server_id, binlog_name="", binlog_pos=4,
                gtid_data=dict(gtid_set=self.gtid_state.encoded()))))
        else:
            if conn.mariadb:
                flags |= DUMP_FLAGS["BINLOG_SEND_ANNOTATE_ROWS_EVENT"]
            conn.io.command(T.com_binlog_dump.build(dict(
                binlog_pos=pos if not gtid_mode else 4, flags=flags, server_id=self.server_id,
                binlog_filename=(file or "") if not gtid_mode else "")))

    def _master_status(self, conn: Connection):
        row = binlog_status(conn)
        return (row["File"], int(row["Position"]))

    # -- the stream ----------------------------------------------------------------------------
    def _read(self, conn: Connection):
        io = conn.io
        while True:
            if self._reached():
                self._finished = True
                return
            if self._stop.is_set():
                return
            p = io.read()
            k = _kind(p)
            if k == 0xFF:
                raise conn._server_error(p)
            if k == 0xFE and len(p) < 9:
                _spec_parse(T.eof_packet, p, "EOF", self.server, self._secret)
                if not self.blocking:
                    self._finished = True  # a non-blocking dump reached the end
                    return
                # a blocking dump never ends by itself: the server ended the dump thread (a
                # shutdown or restart, or KILL): reconnect, do not take it for the end
                raise ConnectionLost("the server ended the binlog dump (shutting down or "
                                     "restarting?)", self.server)
            if k != 0x00:
                raise ProtocolError(f"unexpected packet in the binlog stream (first byte "
                                    f"{'none' if k < 0 else hex(k)}, {len(p)} bytes)", self.server)
            raw = bytes(_spec_parse(T.binlog_stream_packet, p, "binlog stream", self.server,
                                    self._secret).event)
            ev = self._event(raw)
            if ev is not None:
                yield ev

    def _reached(self) -> bool:
        t = self.target
        return t is not None and self.file is not None and \
            position_key(self.file, self.pos) >= position_key(t[0], t[1])

    def _event(self, raw: bytes) -> Optional[Event]:
        """Parse one streamed event, follow the stream's position, and say whether to yield it."""
        state = self.state
        if len(raw) < state.header_len:
            raise ProtocolError(f"a {len(raw)}-byte event is shorter than an event header", self.server)
        try:
            head = T.common_header.parse(raw[:state.header_len], **state.context(0))
        except ConstructError as e:
            raise ProtocolError(f"malformed event header: {_first_line(e, 160)}", self.server) from None
        name = event_name(head.type_code, state)
        log_pos = int(head.log_pos)
        artificial = bool(int(head.flags) & ARTIFICIAL) or log_pos == 0
        where = self.file or "(stream)"
        if name == "ROTATE_EVENT" and artificial:
            st = replace(state, checksum_alg=1 if _has_crc(raw) else 0)
            ev = parse_event(raw, st, file=where, offset=self.pos, verify_checksum=self.verify_checksum)
            new = ev.data.new_log_ident
            pos = int(ev.data.position) if ev.data.get("position") is not None else 4
            changed = new != self.file
            self.file, self.pos = new, pos
            ev.file = new
            ev.offset = pos
            ev.extra["artificial"] = True
            return ev if changed and not self._already_past(new, pos) else None
        if log_pos:
            offset = log_pos - len(raw)
        else:  # made up by the server; an FDE it repeats is the one at the start of the file
            offset = 4 if name == "FORMAT_DESCRIPTION_EVENT" else self.pos
        ev = parse_event(raw, state, file=where, offset=offset, verify_checksum=self.verify_checksum)
        if name in HEARTBEATS:
            self.heartbeats += 1
            ident = ev.data.get("log_ident") if hasattr(ev.data, "get") else None
            if ident and log_pos:
                self.file, self.pos = ident, log_pos
            return None
        update_state(state, ev)
        state.encrypted = False  # the server sends decrypted events (START_ENCRYPTION as ignorable)
        if artificial:
            ev.extra["artificial"] = True
            if name == "FORMAT_DESCRIPTION_EVENT":
                fresh = self.file not in self._fde_files
                self._fde_files.add(self.file)
                return ev if fresh else None
            return None if self._reconnected else ev
        end = log_pos
        dup = self.delivered is not None and \
            position_key(self.file, end) <= position_key(*self.delivered)
        self.pos = end
        self._track(ev, end)
        if name == "ROTATE_EVENT":
            self.file = ev.data.new_log_ident
            self.pos = int(ev.data.position) if ev.data.get("position") is not None else 4
            if self._tx_mode is None:
                self.resume = (self.file, self.pos)
        if name == "FORMAT_DESCRIPTION_EVENT":
            self._fde_files.add(ev.file)
        if dup:
            return None
        self.delivered = (ev.file, end)
        return ev

    def _already_past(self, file, pos) -> bool:
        return self.delivered is not None and position_key(file, pos) < position_key(*self.delivered)

    def _track(self, ev: Event, end: int):
        """Follow transaction boundaries: the resume point is the end of the last complete
        transaction (or of the last event outside transactions)."""
        from .stream import _in_tx, gtid_of

        name = ev.name
        mode = self._tx_mode
        complete = False
        if name in GTID_EVENTS:
            self._tx_gtid = gtid_of(ev)
            if name == "GTID_EVENT":  # MariaDB: stands for BEGIN, unless the group is standalone
                standalone = bool(int(ev.data.flags2) & MARIADB_FL_STANDALONE)
                self._tx_mode = "standalone" if standalone else "mariadb"
            else:
                self._tx_mode = "gtid"
        elif name in ("QUERY_EVENT", "QUERY_COMPRESSED_EVENT"):
            kind = _query_kind(ev)
            if kind == "begin":
                self._tx_mode = "begin"
            elif kind in ("commit", "rollback"):
                complete = True
            elif kind == "statement":
                complete = mode in (None, "gtid", "standalone")
        elif name in ("XID_EVENT", "XA_PREPARE_LOG_EVENT"):
            complete = True
        elif name == "TRANSACTION_PAYLOAD_EVENT" and mode == "gtid":
            complete = True
        elif mode is None and not _in_tx(name):
            complete = True
        if complete:
            if self._tx_gtid and self.gtid_state is not None:
                self.gtid_state.add(self._tx_gtid)
            self._tx_mode = None
            self._tx_gtid = None
            self.resume = (ev.file, end)


def _has_crc(raw: bytes) -> bool:
    """Does the event end with a CRC32 of its other bytes (a fake ROTATE's footer depends on what
    the replica announced, not on the file)."""
    return len(raw) >= 19 + 8 + 4 and zlib.crc32(raw[:-4]) == int.from_bytes(raw[-4:], "little")


def _version_at_least(text: str, wanted: tuple) -> bool:
    m = re.match(r"(\d+)\.(\d+)", text or "")
    return bool(m) and (int(m[1]), int(m[2])) >= wanted


# ---------------------------------------------------------------------------------------------
# the reading API over a source: stream.Stream with events from the server instead of files

def binlog_status(conn: Connection) -> dict:
    """Where the server's binlog ends now: the row of SHOW BINARY LOG STATUS (MySQL 8.2+, where
    SHOW MASTER STATUS is gone in 8.4), SHOW MASTER STATUS, or MariaDB's SHOW BINLOG STATUS
    (File, Position, and on MySQL Executed_Gtid_Set)."""
    stmts = ["SHOW MASTER STATUS"]
    if not conn.mariadb and _version_at_least(conn.server_version, (8, 2)):
        stmts.insert(0, "SHOW BINARY LOG STATUS")
    elif conn.mariadb:
        stmts.append("SHOW BINLOG STATUS")
    last = None
    for sql in stmts:
        try:
            rows = conn.query_dicts(sql)
        except ServerError as e:
            last = e
            continue
        if not rows:
            raise ReplicationError("the server reports no binlog (SHOW MASTER STATUS is empty): "
                                   "is binary logging on?", conn.server)
        return rows[0]
    raise last


def open_replication_stream(source: ReplicationSource, filters=None, schemas=None):
    """A stream.Stream whose events come from `source`: `.events()` and `.transactions()` work as
    for files (StreamEvents with tables and GTIDs attached, rows decoded on demand) and give the
    events the server's binlog files hold, no more: the ROTATE and FORMAT_DESCRIPTION events the
    server makes up for the dump (marked artificial by the source) are left out. Position
    filters do not apply (start with the source's file and pos instead)."""
    from .stream import Stream

    class ReplicationStream(Stream):
        def __init__(self):
            super().__init__([], filters, source.verify_checksum, schemas)
            self.source = source

        def _all_events(self):
            from .rows import RowDecoder
            from .stream import StreamEvent, _with_inner, gtid_of

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
                for e in _with_inner(ev, self.source.state, self.verify_checksum):
                    table = None
                    if e.type is not None and e.type.name == "TABLE_MAP_EVENT":
                        table = decoder.table_map(e)
                    elif e.type is not None and e.type.row_op:
                        table = decoder.tables.get(int(e.data.table_id))
                    yield 0, StreamEvent(e, table, gtid, decoder, seq)

    return ReplicationStream()


# ---------------------------------------------------------------------------------------------
# the `stream` command

def cmd_stream(args) -> int:
    """binlog-grammar stream: print a server's binlog live, as `dump` prints files."""
    import sys

    from . import dump
    from .rows import load_schemas
    from .stream import Filters

    password = None
    if args.password_env:
        password = os.environ.get(args.password_env)
        if password is None:
            print(f"binlog-grammar: stream: the environment variable {args.password_env} "
                  f"(--password-env) is not set", file=sys.stderr)
            return 2
    schemas = None
    if args.schema:
        try:
            schemas = load_schemas(args.schema)
        except (OSError, ValueError) as e:
            print(f"binlog-grammar: --schema: {e}", file=sys.stderr)
            return 2
    handler = logging.StreamHandler(sys.stderr)
    handler.setFormatter(logging.Formatter("binlog-grammar: %(message)s"))
    log.addHandler(handler)
    log.setLevel(logging.WARNING)
    try:
        src = ReplicationSource(
            args.host, args.port, args.user, password, server_id=args.server_id, file=args.file,
            pos=args.pos if args.pos is not None else 4, gtid=args.gtid, until_now=args.until_now,
            heartbeat=args.heartbeat, connect_timeout=args.connect_timeout,
            read_timeout=args.read_timeout, reconnect=not args.no_reconnect,
            reconnect_timeout=args.reconnect_timeout,
            tls=TLSOptions(args.ssl_mode, args.ssl_ca, args.ssl_cert, args.ssl_key),
            server_public_key=args.server_public_key,
            get_server_public_key=args.get_server_public_key,
            verify_checksum=not args.no_checksum, require_row_format=not args.any_binlog_format)
    except ValueError as e:
        print(f"binlog-grammar: stream: {e}", file=sys.stderr)
        return 2
    flt = Filters(databases=args.database, tables=args.table, exclude_tables=args.exclude_table)
    stream = open_replication_stream(src, flt, schemas)
    out = sys.stdout
    try:
        out.reconfigure(errors="surrogateescape")
    except (AttributeError, ValueError):
        pass
    try:
        for se in stream.events():
            if args.format == "jsonl":
                if args.rows_only and not (se.event.type is not None and se.event.type.row_op):
                    continue
                lines = dump.jsonl_lines(se)
            else:
                lines = dump.text_lines(se)
            for line in lines:
                out.write(line + "\n")
            out.flush()
    finally:
        src.stop()
        log.removeHandler(handler)
        out.flush()
    return 0


__all__ = ["ReplicationSource", "Connection", "TLSOptions", "Secret", "ConnectionLost", "ServerError",
           "ProtocolError", "ReplicationError", "open_replication_stream", "MariaDBGtidState",
           "MySQLGtidSet", "PacketIO", "native_password_scramble", "caching_sha2_scramble",
           "ed25519_sign", "rsa_oaep_encrypt", "rsa_password_plaintext", "cmd_stream", "BinlogError"]
