"""One connection to a MySQL or MariaDB server: TCP, the handshake, optional TLS, the login
(the methods of auth.py, with the server's AuthSwitchRequest and AuthMoreData rounds), and
commands in the command phase (COM_QUERY with its text result set, commands answered by OK).
Every packet is a spec struct of specs/protocol/, read and written through packets.PacketIO."""
from __future__ import annotations

import re
import socket
import ssl
import time
from dataclasses import dataclass
from typing import Optional

from .. import __version__
from ..errors import ReplicationError
from ..generated import enums
from ..generated import types as T
from .auth import (
    AUTH_FIRST, SCRAMBLE_LEN, Secret, caching_sha2_scramble, ed25519_sign, native_password_scramble,
    rsa_password)
from .errors import ConnectionLost, ProtocolError, ServerError, first_line
from .packets import (
    AUTH_MORE_DATA, AUTH_SWITCH_REQUEST, ERR, HANDSHAKE_V10, HEADER_LEN, LOCAL_INFILE, MAX_JOINED, OK,
    PacketIO, err_struct, is_eof, packet_kind, printable, spec_parse)

MAX_GREETING = 1 << 16  # a server's greeting is a few hundred bytes; more is something else

CAPS = {name: bit for bit, name in enums.CAPABILITY_FLAGS.items()}
# what this client can use, when the server offers it
CLIENT_WANTS = (CAPS["CLIENT_LONG_PASSWORD"] | CAPS["CLIENT_LONG_FLAG"] | CAPS["CLIENT_PROTOCOL_41"]
                | CAPS["CLIENT_TRANSACTIONS"] | CAPS["CLIENT_SECURE_CONNECTION"]
                | CAPS["CLIENT_MULTI_RESULTS"] | CAPS["CLIENT_PLUGIN_AUTH"]
                | CAPS["CLIENT_PLUGIN_AUTH_LENENC_CLIENT_DATA"] | CAPS["CLIENT_CONNECT_ATTRS"]
                | CAPS["CLIENT_DEPRECATE_EOF"])
UTF8MB4_GENERAL_CI = 45
ED25519_NONCE_LEN = T.ed25519_nonce.sizeof()
SCRAMBLE_METHODS = ("mysql_native_password", "caching_sha2_password", "sha256_password")
SHA2_STATUS = {name: bytes([code]) for code, name in enums.CACHING_SHA2_STATUS.items()}
FAST_AUTH_SUCCESS = SHA2_STATUS["FAST_AUTH_SUCCESS"]  # caching_sha2_password's verdicts
FULL_AUTHENTICATION = SHA2_STATUS["PERFORM_FULL_AUTHENTICATION"]


# ---------------------------------------------------------------------------------------------
# TLS

TLS_MODES = ("disabled", "preferred", "required", "verify-ca", "verify-identity")


VERIFIED_MODES = ("verify-ca", "verify-identity")


@dataclass
class TLSOptions:
    """TLS for the connection, as the mysql client's --ssl-mode: disabled; preferred (TLS when the
    server offers it, certificate not checked); required (TLS or fail, certificate not checked);
    verify-ca (the certificate must chain to `ca`, or the system's CAs); verify-identity (and name
    the host). `cert`/`key`: a client certificate.

    `allow_cleartext` (the mysql client's --enable-cleartext-plugin): send the password itself
    when the server asks for it (mysql_clear_password; sha256_password and caching_sha2_password's
    full authentication over TLS) over a connection whose server was not verified. Without it the
    password itself goes only over TLS in a verifying mode, since with any other mode whoever
    answers in the server's place (a self-signed certificate is enough) could read it."""

    mode: str = "preferred"
    ca: Optional[str] = None
    cert: Optional[str] = None
    key: Optional[str] = None
    allow_cleartext: bool = False

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
# a connection: handshake, authentication, queries

class Connection:
    """One authenticated connection to a MySQL or MariaDB server (command phase)."""

    def __init__(self, host="127.0.0.1", port=3306, user="root", password=None, *,
                 tls: Optional[TLSOptions] = None, connect_timeout=10.0, read_timeout=30.0,
                 server_public_key: Optional[str] = None, get_server_public_key=False,
                 secret: Optional[Secret] = None, unix_socket: Optional[str] = None):
        self.host = host
        self.unix_socket = unix_socket  # a local server's socket file, used instead of host:port
        self.port = int(port)
        self.user = user
        self._secret = secret if secret is not None else Secret(password)
        self.tls = tls or TLSOptions()
        self.connect_timeout = connect_timeout
        self.read_timeout = read_timeout
        self.server_public_key = server_public_key
        self.get_server_public_key = get_server_public_key
        self.server = unix_socket if unix_socket else f"{host}:{self.port}"
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

    def server_error(self, payload: bytes) -> ServerError:
        """The ServerError of an ERR payload (its message scrubbed of the password)."""
        err = spec_parse(err_struct(payload), payload, "ERR", self.server, self._secret)
        return ServerError(self._secret.scrub(err.error_message), self.server, code=int(err.error_code),
                           sql_state=err.get("sql_state"))

    # -- connecting ---------------------------------------------------------------------
    def connect(self) -> "Connection":
        deadline = time.monotonic() + self.connect_timeout
        try:
            sock = self._open_socket()
        except (socket.timeout, TimeoutError):
            raise ConnectionLost(f"cannot connect: no answer in {self.connect_timeout:g} s",
                                 self.server) from None
        except OSError as e:
            raise ConnectionLost(f"cannot connect: {first_line(e.strerror or e)}", self.server) from None
        self.sock = sock
        try:
            if sock.family != socket.AF_UNIX:
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

    def _open_socket(self):
        if not self.unix_socket:
            return socket.create_connection((self.host, self.port), timeout=self.connect_timeout)
        sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        try:
            sock.settimeout(self.connect_timeout)
            sock.connect(self.unix_socket)
        except BaseException:
            sock.close()
            raise
        return sock

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
            if head is None and len(got) >= HEADER_LEN:
                head = spec_parse(T.packet_header, bytes(got[:HEADER_LEN]), "packet header", self.server)
                if head.sequence_id != 0 or not 0 < head.payload_length <= MAX_GREETING:
                    raise not_mysql("")
            if len(got) > HEADER_LEN and got[HEADER_LEN] not in (HANDSHAKE_V10, ERR):
                raise not_mysql("")
            if head is not None and len(got) >= HEADER_LEN + head.payload_length:
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
                                     f"{first_line(e.strerror or e)}", self.server) from None
            if not chunk:
                if got:
                    raise not_mysql(", then it closed the connection")
                raise ConnectionLost(f"the server closed the connection without a greeting "
                                     f"(received nothing; is {self.server} a MySQL or MariaDB "
                                     f"server?)", self.server)
            got += chunk
        if len(got) > HEADER_LEN + head.payload_length:
            raise not_mysql(", more than a greeting before any reply")
        io.seq = 1
        return bytes(got[HEADER_LEN:])

    def _handshake(self):
        io = self.io
        first = self._read_greeting()
        if packet_kind(first) == ERR:
            raise self.server_error(first)
        hs = spec_parse(T.handshake_v10, first, "handshake", self.server, self._secret)
        self.handshake = hs
        caps = int(hs.capabilities)
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
        if len(nonce) > SCRAMBLE_LEN and nonce.endswith(b"\x00"):
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
            self.sock.settimeout(self.io.next_timeout())
            tls_sock = ctx.wrap_socket(self.sock, server_hostname=self.host if ctx.check_hostname
                                       else None)
        except ssl.SSLCertVerificationError as e:
            raise ReplicationError(f"TLS: the server's certificate is not trusted: "
                                   f"{first_line(e.verify_message or e.reason or e)}", self.server) from None
        except (ssl.SSLError, ValueError) as e:
            raise ReplicationError(f"TLS handshake failed: {first_line(getattr(e, 'reason', None) or e)}",
                                   self.server) from None
        except (socket.timeout, TimeoutError):
            raise ConnectionLost("TLS handshake: no answer in time", self.server) from None
        except OSError as e:
            raise ConnectionLost(f"TLS handshake: {first_line(e.strerror or e)}", self.server) from None
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
            if len(nonce) != ED25519_NONCE_LEN:
                raise ProtocolError(f"client_ed25519: a {len(nonce)}-byte nonce "
                                    f"({ED25519_NONCE_LEN} expected)", self.server)
            return ed25519_sign(nonce, pw)
        if plugin == "mysql_clear_password":
            self._may_send_the_password("mysql_clear_password")
            return pw + b"\x00"
        if plugin == "sha256_password":
            if not pw:
                return b"\x00"
            if self.encrypted:  # the server reads it as it comes: no RSA inside TLS
                self._may_send_the_password("sha256_password over TLS")
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

    def _may_send_the_password(self, how: str):
        """Refuse to send the password itself (ReplicationError) unless the connection is TLS with
        a verified certificate or the user allows it (TLSOptions.allow_cleartext)."""
        if self.tls.allow_cleartext or (self.encrypted and self.tls.mode in VERIFIED_MODES):
            return
        if self.encrypted:
            why = (f"the server's TLS certificate was not verified (TLS mode {self.tls.mode}), so "
                   f"whoever answered in its place could read it")
        else:
            why = "the connection is not encrypted (no TLS)"
        raise ReplicationError(f"the server asks for the password itself ({how}) and {why}: not "
                               f"sent. Verify the server (--ssl-mode verify-ca or verify-identity, "
                               f"with --ssl-ca) or allow it (allow_cleartext / "
                               f"--enable-cleartext-plugin)", self.server)

    def _full_auth_needs(self, plugin):
        return ReplicationError(f"{plugin} needs the password sent over TLS or encrypted with the "
                                f"server's RSA key: use TLS, give the key (server_public_key / "
                                f"--server-public-key) or allow asking for it "
                                f"(get_server_public_key / --get-server-public-key)", self.server)

    def _rsa(self, pw, nonce, pem) -> bytes:
        try:
            return rsa_password(pw, nonce, pem)
        except ValueError as e:
            raise ReplicationError(f"RSA: {e}", self.server) from None

    def _auth_exchange(self, plugin: str, nonce: bytes):
        io = self.io
        pw = self._secret.reveal()
        for _ in range(16):
            p = io.read()
            k = packet_kind(p)
            if k == OK:
                spec_parse(T.ok_packet, p, "OK", self.server, self._secret)
                return
            if k == ERR:
                raise self.server_error(p)
            if k == AUTH_SWITCH_REQUEST:
                if len(p) == 1:
                    raise ReplicationError("the server asks for the pre-4.1 password scheme "
                                           "(mysql_old_password), which is not supported", self.server)
                sw = spec_parse(T.auth_switch_request, p, "AuthSwitchRequest", self.server, self._secret)
                plugin = sw.plugin_name
                nonce = bytes(sw.plugin_data)
                if plugin in SCRAMBLE_METHODS and len(nonce) == SCRAMBLE_LEN + 1 \
                        and nonce.endswith(b"\x00"):
                    nonce = nonce[:SCRAMBLE_LEN]  # the scramble and its 0x00
                self.auth_plugin = plugin
                io.write(T.auth_switch_response.build(dict(data=self._auth_first(plugin, nonce))))
                continue
            if k == AUTH_MORE_DATA:
                more = bytes(spec_parse(T.auth_more_data, p, "AuthMoreData", self.server, self._secret).data)
                if plugin == "caching_sha2_password" and more == FAST_AUTH_SUCCESS:
                    continue  # fast authentication succeeded; the OK follows
                if plugin == "caching_sha2_password" and more == FULL_AUTHENTICATION:
                    if self.encrypted:  # the server reads it as it comes: no RSA inside TLS
                        self._may_send_the_password("caching_sha2_password full authentication "
                                                    "over TLS")
                        io.write(T.auth_switch_response.build(dict(data=pw + b"\x00")))
                        continue
                    key = self._public_key()
                    if key is None and self.get_server_public_key:
                        io.write(T.caching_sha2_public_key_request.build({}))
                        key = bytes(spec_parse(T.auth_more_data, self._expect_more(), "AuthMoreData",
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
        if packet_kind(p) == ERR:
            raise self.server_error(p)
        if packet_kind(p) != AUTH_MORE_DATA:
            raise ProtocolError("expected the server's public key (AuthMoreData)", self.server)
        return p

    # -- commands --------------------------------------------------------------------------
    @property
    def deprecate_eof(self) -> bool:
        return bool(getattr(self, "client_flags", 0) & CAPS["CLIENT_DEPRECATE_EOF"])

    def _is_end(self, p: bytes) -> bool:
        return is_eof(p, self.deprecate_eof)

    def query(self, sql: str):
        """Run one statement; (column names, rows of bytes-or-None values). OK: ([], [])."""
        io = self.io
        io.deadline = time.monotonic() + self.read_timeout
        try:
            io.command(T.com_query.build(dict(query=sql)))
            p = io.read()
            k = packet_kind(p)
            if k == ERR:
                raise self.server_error(p)
            if k == OK:
                spec_parse(T.ok_packet, p, "OK", self.server, self._secret)
                return [], []
            if k == LOCAL_INFILE:
                raise ProtocolError("the server asks for a local file (LOAD DATA LOCAL)", self.server)
            ncols = int(spec_parse(T.column_count_packet, p, "column count", self.server,
                                    self._secret).column_count)
            if not 0 < ncols <= 4096:
                raise ProtocolError(f"a result set of {ncols} columns", self.server)
            cols = [spec_parse(T.column_definition41, io.read(), "column definition", self.server,
                                self._secret) for _ in range(ncols)]
            if not self.deprecate_eof:
                p = io.read()
                if not self._is_end(p):
                    raise ProtocolError("no EOF after the column definitions", self.server)
                spec_parse(T.eof_packet, p, "EOF", self.server, self._secret)
            rows = []
            while True:
                p = io.read()
                if self._is_end(p):
                    spec_parse(T.eof_ok_packet if self.deprecate_eof else T.eof_packet, p, "EOF",
                                self.server, self._secret)
                    break
                if packet_kind(p) == ERR:
                    raise self.server_error(p)
                row = spec_parse(T.text_row, p, "row", self.server, self._secret)
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
            if packet_kind(p) == ERR:
                raise self.server_error(p)
            if packet_kind(p) != OK:
                raise ProtocolError("expected OK", self.server)
            return spec_parse(T.ok_packet, p, "OK", self.server, self._secret)
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



def _version_at_least(text: str, wanted: tuple) -> bool:
    m = re.match(r"(\d+)\.(\d+)", text or "")
    return bool(m) and (int(m[1]), int(m[2])) >= wanted



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
