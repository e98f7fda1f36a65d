"""The replication client against small fake servers on loopback (no MariaDB needed): servers that
write malformed packets, go silent, drop the connection, or speak authentication methods the real
test server does not (caching_sha2_password fast and full, RSA, TLS, a method switch), a MySQL
flavored server for COM_BINLOG_DUMP_GTID, and a fake dump of the sample binlog that drops the
connection mid-transaction to check resumption.

Every failure must end in one clean line (ReplicationError, or BinlogError for a damaged event)
within a bounded time, never a hang or a traceback, and never show the password."""
from __future__ import annotations

import hashlib
import logging
import os
import re
import socket
import ssl
import subprocess
import sys
import threading
import time
import zlib

import pytest

from binlog_grammar.errors import BinlogError, ReplicationError
from binlog_grammar.generated import enums
from binlog_grammar.generated import types as T
from binlog_grammar.binlog.reader import BinlogFile
from binlog_grammar.replication import Connection, ReplicationSource, TLSOptions

from helpers.certs import make_certs
from helpers.paths import ROOT

PASSWORD = "Pw-7q!x"
SAMPLE = ROOT / "samples" / "mariadb-10.11-sample.000001"
CAPS = {n: b for b, n in enums.CAPABILITY_FLAGS.items()}
SERVER_CAPS = sum(CAPS[n] for n in (
    "CLIENT_LONG_FLAG", "CLIENT_PROTOCOL_41", "CLIENT_TRANSACTIONS", "CLIENT_SECURE_CONNECTION",
    "CLIENT_MULTI_RESULTS", "CLIENT_PLUGIN_AUTH", "CLIENT_PLUGIN_AUTH_LENENC_CLIENT_DATA",
    "CLIENT_CONNECT_ATTRS", "CLIENT_DEPRECATE_EOF"))
FAST = dict(connect_timeout=1.5, read_timeout=1.0)


# -- a fake server -----------------------------------------------------------------------------

class Peer:
    """One accepted connection: packets written and read by hand (3-byte length, sequence id)."""

    def __init__(self, sock):
        self.sock = sock
        self.seq = 0
        sock.settimeout(10)

    def send(self, payload: bytes):
        self.sock.sendall(len(payload).to_bytes(3, "little") + bytes([self.seq & 0xFF]) + payload)
        self.seq += 1

    def raw(self, data: bytes):
        self.sock.sendall(data)

    def recv(self) -> bytes:
        head = self._exact(4)
        n = int.from_bytes(head[:3], "little")
        self.seq = head[3] + 1
        return self._exact(n)

    def _exact(self, n):
        buf = b""
        while len(buf) < n:
            chunk = self.sock.recv(n - len(buf))
            if not chunk:
                raise EOFError
            buf += chunk
        return buf


class FakeServer:
    """A loopback server running `handler(peer, index)` for each connection, in threads."""

    def __init__(self, handler):
        self.handler = handler
        self.listener = socket.create_server(("127.0.0.1", 0))
        self.listener.settimeout(0.1)
        self.port = self.listener.getsockname()[1]
        self.closed = threading.Event()
        self.seen = []  # what handlers recorded
        self.count = 0
        self.thread = threading.Thread(target=self._serve, daemon=True)
        self.thread.start()

    def _serve(self):
        while not self.closed.is_set():
            try:
                sock, _ = self.listener.accept()
            except (socket.timeout, OSError):
                continue
            index = self.count
            self.count += 1
            threading.Thread(target=self._run, args=(sock, index), daemon=True).start()

    def _run(self, sock, index):
        peer = Peer(sock)
        try:
            self.handler(peer, index)
        except (EOFError, OSError, ssl.SSLError):
            pass
        finally:
            try:
                peer.sock.close()
            except OSError:
                pass

    def close(self):
        self.closed.set()
        self.listener.close()

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()


def greeting(version="10.11.99-MariaDB", caps=SERVER_CAPS, plugin="mysql_native_password",
             nonce=b"abcdefghijklmnopqrst"):
    return (b"\x0a" + version.encode() + b"\x00" + (7).to_bytes(4, "little") + nonce[:8] + b"\x00"
            + (caps & 0xFFFF).to_bytes(2, "little") + b"\x2d" + (2).to_bytes(2, "little")
            + (caps >> 16).to_bytes(2, "little") + bytes([len(nonce) + 1]) + bytes(10)
            + nonce[8:] + b"\x00" + plugin.encode() + b"\x00")


OK = b"\x00\x00\x00\x02\x00\x00\x00"


def lenenc(b: bytes) -> bytes:
    if len(b) < 251:
        return bytes([len(b)]) + b
    return b"\xfc" + len(b).to_bytes(2, "little") + b


def result_set(peer, names, rows, deprecate_eof=True):
    peer.send(bytes([len(names)]))
    for n in names:
        peer.send(lenenc(b"def") + b"\x00\x00\x00" + lenenc(n.encode()) + b"\x00" + b"\x0c"
                  + (33).to_bytes(2, "little") + (255).to_bytes(4, "little") + b"\xfd" + b"\x00\x00"
                  + b"\x00" + b"\x00\x00")
    if not deprecate_eof:
        peer.send(b"\xfe\x00\x00\x02\x00")
    for r in rows:
        peer.send(b"".join(b"\xfb" if v is None else lenenc(v.encode()) for v in r))
    peer.send(b"\xfe\x00\x00\x02\x00\x00\x00" if deprecate_eof else b"\xfe\x00\x00\x02\x00")


def login_native(peer, nonce=b"abcdefghijklmnopqrst", **kw):
    """Greet, check a mysql_native_password reply the way a server does, answer OK or ERR."""
    peer.send(greeting(nonce=nonce, **kw))
    r = T.handshake_response41.parse(peer.recv())
    stored = hashlib.sha1(hashlib.sha1(PASSWORD.encode()).digest()).digest()
    h1 = bytes(x ^ y for x, y in zip(r.auth_response, hashlib.sha1(nonce + stored).digest()))
    if hashlib.sha1(h1).digest() != stored:
        peer.send(b"\xff" + (1045).to_bytes(2, "little") + b"#28000Access denied for user 'repl'")
        return False
    peer.send(OK)
    return True


def serve_commands(peer, dump=None, status=("mariadb-10.11-sample.000001", 5395), deprecate_eof=True,
                   log=None):
    """Answer the replication client's queries and commands; `dump(peer, payload)` streams."""
    while True:
        payload = peer.recv()
        if log is not None:
            log.append(payload)
        cmd = payload[0]
        if cmd == 0x03:
            q = payload[1:].decode()
            if q.startswith("SELECT @@global.log_bin"):
                result_set(peer, ["log_bin", "fmt"], [["1", "ROW"]], deprecate_eof)
            elif q.startswith("SHOW MASTER STATUS"):
                result_set(peer, ["File", "Position", "Binlog_Do_DB", "Binlog_Ignore_DB"],
                           [[status[0], str(status[1]), "", ""]], deprecate_eof)
            else:
                peer.send(OK)
        elif cmd == 0x15:
            peer.send(OK)
        elif cmd in (0x12, 0x1e):
            if dump is None:
                return
            dump(peer, payload)
            return
        else:
            return


def fake_rotate(name: str, pos: int) -> bytes:
    body = pos.to_bytes(8, "little") + name.encode()
    length = 19 + len(body) + 4
    head = (0).to_bytes(4, "little") + b"\x04" + (1).to_bytes(4, "little") + length.to_bytes(4, "little") + \
        (0).to_bytes(4, "little") + (0x20).to_bytes(2, "little")
    ev = head + body
    return ev + zlib.crc32(ev).to_bytes(4, "little")


def heartbeat(name: str, pos: int) -> bytes:
    head = (0).to_bytes(4, "little") + bytes([27]) + (1).to_bytes(4, "little") + \
        (19 + len(name) + 4).to_bytes(4, "little") + pos.to_bytes(4, "little") + (0).to_bytes(2, "little")
    ev = head + name.encode()
    return ev + zlib.crc32(ev).to_bytes(4, "little")


SAMPLE_EVENTS = [(e.offset, e.raw, e.name) for e in BinlogFile(SAMPLE)]


def check_clean(excinfo, started, limit=6.0):
    e = excinfo.value
    text = str(e)
    assert "\n" not in text and text.strip() == text and text
    assert PASSWORD not in text and PASSWORD not in repr(e)
    assert time.monotonic() - started < limit
    return text


# -- malformed servers -------------------------------------------------------------------------

def h_garbage(peer, i):
    peer.raw(b"HTTP/1.1 400 Bad Request\r\nContent-Length: 0\r\n\r\n")


def h_silent(peer, i):
    time.sleep(4)


def h_huge_then_silent(peer, i):
    peer.raw(b"\xff\xff\xff\x00" + b"\x0a" * 10)
    time.sleep(4)


def h_truncated_handshake(peer, i):
    peer.send(b"\x0a5.5.5\x00\x01\x02")


def h_not_mysql(peer, i):
    peer.send(b"\x16\x03\x01\x02\x00\x01\x00\x01\xfc\x03\x03")


def h_closes_at_once(peer, i):
    pass  # the connection is closed as soon as it is accepted


def h_few_bytes_then_closed(peer, i):
    peer.raw(b"J\x00\x00")


def h_ssh(peer, i):
    peer.raw(b"SSH-2.0-OpenSSH_9.2p1 Debian-2\r\n")
    time.sleep(2)


def h_error_greeting(peer, i):
    peer.send(b"\xff" + (1040).to_bytes(2, "little") + b"Too many connections")


def h_closed_after_greeting(peer, i):
    peer.send(greeting())


def h_bad_auth_reply(peer, i):
    peer.send(greeting())
    peer.recv()
    peer.send(b"\x07\x01\x02garbage")


def h_bad_column_definition(peer, i):
    login_native(peer)
    peer.recv()
    peer.seq = 1
    peer.send(b"\x01")
    peer.send(b"\x03def\xfd\xff\xff")


def h_row_too_wide(peer, i):
    login_native(peer)
    peer.recv()
    result_set(peer, ["log_bin"], [["1", "ROW", "extra"]])


def h_bad_event(peer, i):
    login_native(peer)

    def dump(p, payload):
        p.send(b"\x00" + fake_rotate("mariadb-10.11-sample.000001", 4))
        p.send(b"\x00" + SAMPLE_EVENTS[0][1])  # the FDE
        p.send(b"\x00" + b"\x01" * 40)  # an event whose length field says 0x01010101
    serve_commands(peer, dump)


def h_bad_stream_byte(peer, i):
    login_native(peer)

    def dump(p, payload):
        p.send(b"\x00" + fake_rotate("mariadb-10.11-sample.000001", 4))
        p.send(b"\x42hello")
    serve_commands(peer, dump)


def h_out_of_step(peer, i):
    login_native(peer)

    def dump(p, payload):
        p.send(b"\x00" + fake_rotate("mariadb-10.11-sample.000001", 4))
        p.seq += 3
        p.send(b"\x00" + SAMPLE_EVENTS[0][1])
    serve_commands(peer, dump)


def h_drops_forever(peer, i):
    if i == 0:
        login_native(peer)

        def dump(p, payload):
            p.send(b"\x00" + fake_rotate("mariadb-10.11-sample.000001", 4))
            for _off, raw, _n in SAMPLE_EVENTS[:3]:
                p.send(b"\x00" + raw)
            p.raw(b"\x50\x00\x00")  # cut inside the next packet header
        serve_commands(peer, dump)
    # every later connection is dropped at once


NOT_MYSQL = "not a MySQL or MariaDB server: received "
MALFORMED = {
    "garbage instead of a greeting": (h_garbage, ReplicationError,
                                      re.escape(NOT_MYSQL + r"'HTTP/1.1 400 Bad Request\r\nContent-Length: 0\r\n\r\n' (47 bytes)")),
    "silent server": (h_silent, ReplicationError, "no greeting: the server sent nothing in 1.5 s"),
    "huge packet then silence": (h_huge_then_silent, ReplicationError,
                                 re.escape(NOT_MYSQL + r"'\xff\xff\xff\x00\n\n\n\n\n\n\n\n\n\n' (14 bytes)")),
    "truncated handshake": (h_truncated_handshake, ReplicationError, "malformed handshake"),
    "not a MySQL server": (h_not_mysql, ReplicationError, re.escape(NOT_MYSQL + r"'\x0b\x00\x00\x00\x16\x03")),
    "closes at once": (h_closes_at_once, ReplicationError,
                       "closed the connection without a greeting \\(received nothing"),
    "a few bytes then closed": (h_few_bytes_then_closed, ReplicationError,
                                re.escape(NOT_MYSQL + r"'J\x00\x00' (3 bytes), then it closed the connection")),
    "an SSH server": (h_ssh, ReplicationError, re.escape(NOT_MYSQL + "'SSH-2.0-OpenSSH_9.2p1 Debian-2\\r\\n'")),
    "ERR instead of a greeting": (h_error_greeting, ReplicationError, "Too many connections"),
    "closed after the greeting": (h_closed_after_greeting, ReplicationError, "closed the connection|connection lost"),
    "garbage during authentication": (h_bad_auth_reply, ReplicationError, "during authentication"),
    "bad column definition": (h_bad_column_definition, ReplicationError, "malformed column definition"),
    "row wider than its result set": (h_row_too_wide, ReplicationError, "a row of 3 values"),
    "damaged event": (h_bad_event, BinlogError, "event_length"),
    "unknown stream packet": (h_bad_stream_byte, ReplicationError, "unexpected packet in the binlog stream"),
    "packets out of step": (h_out_of_step, ReplicationError, "sequence number"),
    "drops and never comes back": (h_drops_forever, ReplicationError, "gave up reconnecting"),
}


@pytest.mark.parametrize("case", list(MALFORMED))
def test_malformed_server_ends_in_one_clean_line(case, caplog):
    handler, exc, words = MALFORMED[case]
    caplog.set_level(logging.DEBUG, logger="binlog_grammar")
    with FakeServer(handler) as srv:
        src = ReplicationSource("127.0.0.1", srv.port, "repl", PASSWORD, heartbeat=0.2,
                                reconnect_timeout=1.0, backoff=(0.05, 0.2), **FAST)
        started = time.monotonic()
        with pytest.raises(exc) as ei:
            for _ in src:
                pass
        text = check_clean(ei, started)
    assert re.search(words, text), text
    assert PASSWORD not in caplog.text and PASSWORD not in repr(src)


def test_cli_on_a_malformed_server_prints_one_line():
    with FakeServer(h_bad_column_definition) as srv:
        env = dict(os.environ, FAKE_PW=PASSWORD)
        started = time.monotonic()
        r = subprocess.run([sys.executable, "-m", "binlog_grammar", "stream", "--port", str(srv.port),
                            "--user", "repl", "--password-env", "FAKE_PW", "--connect-timeout", "2",
                            "--read-timeout", "1", "--until-now"], capture_output=True, text=True,
                           env=env, timeout=30)
    assert time.monotonic() - started < 15
    assert r.returncode == 1
    lines = r.stderr.splitlines()
    assert len(lines) == 1 and lines[0].startswith("binlog-grammar: 127.0.0.1:"), r.stderr
    assert "Traceback" not in r.stderr and PASSWORD not in r.stderr + r.stdout


def test_missing_password_variable_is_a_usage_error():
    env = {k: v for k, v in os.environ.items() if k != "NO_SUCH_PW"}
    r = subprocess.run([sys.executable, "-m", "binlog_grammar", "stream", "--port", "1",
                        "--password-env", "NO_SUCH_PW"], capture_output=True, text=True, env=env,
                       timeout=30)
    assert r.returncode == 2 and "NO_SUCH_PW" in r.stderr and "Traceback" not in r.stderr


def test_unreachable_port_fails_fast():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]  # bound but not listening: connection refused
        started = time.monotonic()
        with pytest.raises(ReplicationError) as ei:
            list(ReplicationSource("127.0.0.1", port, "repl", PASSWORD, **FAST))
        assert "cannot connect" in check_clean(ei, started, 3.0)


def test_wrong_password_is_refused_cleanly():
    def handler(peer, i):
        login_native(peer)
    with FakeServer(handler) as srv:
        started = time.monotonic()
        with pytest.raises(ReplicationError) as ei:
            Connection("127.0.0.1", srv.port, "repl", "not-the-password", **FAST).connect()
        text = check_clean(ei, started)
    assert "Access denied" in text and "1045" in text and "not-the-password" not in text


# -- authentication methods --------------------------------------------------------------------

def sha2_fast_check(reply, nonce):
    stored = hashlib.sha256(hashlib.sha256(PASSWORD.encode()).digest()).digest()
    h1 = bytes(x ^ y for x, y in zip(reply, hashlib.sha256(stored + nonce).digest()))
    return hashlib.sha256(h1).digest() == stored


def test_caching_sha2_fast_path():
    nonce = os.urandom(20).replace(b"\x00", b"\x01")

    def handler(peer, i):
        peer.send(greeting(version="8.4.3", plugin="caching_sha2_password", nonce=nonce))
        r = T.handshake_response41.parse(peer.recv())
        assert r.client_plugin_name == "caching_sha2_password"
        if not sha2_fast_check(r.auth_response, nonce):
            peer.send(b"\xff" + (1045).to_bytes(2, "little") + b"#28000denied")
            return
        peer.send(b"\x01\x03")
        peer.send(OK)
        serve_commands(peer)
    with FakeServer(handler) as srv:
        c = Connection("127.0.0.1", srv.port, "repl", PASSWORD, **FAST).connect()
        assert c.auth_plugin == "caching_sha2_password" and not c.mariadb
        assert c.query("SELECT @@global.log_bin, 1")[1] == [[b"1", b"ROW"]]
        c.quit()


@pytest.fixture(scope="module")
def rsa_key(tmp_path_factory):
    """A 2048-bit RSA key made with `cryptography`: key.pem (private), pub.pem (public, as a
    server shows it)."""
    from cryptography.hazmat.primitives import serialization as ser
    from cryptography.hazmat.primitives.asymmetric import rsa

    d = tmp_path_factory.mktemp("rsa")
    key = rsa.generate_private_key(public_exponent=65537, key_size=2048)
    (d / "key.pem").write_bytes(key.private_bytes(ser.Encoding.PEM, ser.PrivateFormat.PKCS8,
                                                  ser.NoEncryption()))
    (d / "pub.pem").write_bytes(key.public_key().public_bytes(ser.Encoding.PEM,
                                                              ser.PublicFormat.SubjectPublicKeyInfo))
    return d


def rsa_decrypt(d, data: bytes) -> bytes:
    """What a server does with the client's RSA reply: OAEP (SHA-1, MGF1-SHA-1) with its private key."""
    from cryptography.hazmat.primitives import hashes
    from cryptography.hazmat.primitives import serialization as ser
    from cryptography.hazmat.primitives.asymmetric import padding

    key = ser.load_pem_private_key((d / "key.pem").read_bytes(), None)
    return key.decrypt(data, padding.OAEP(mgf=padding.MGF1(algorithm=hashes.SHA1()),
                                          algorithm=hashes.SHA1(), label=None))


def full_auth_server(nonce, check, tls_context=None, caps=SERVER_CAPS):
    def handler(peer, i):
        peer.send(greeting(version="8.4.3", plugin="caching_sha2_password", nonce=nonce, caps=caps))
        first = peer.recv()
        if len(first) == 32 and tls_context is not None:  # SSLRequest
            peer.sock = tls_context.wrap_socket(peer.sock, server_side=True)
            first = peer.recv()
        T.handshake_response41.parse(first)
        peer.send(b"\x01\x04")  # perform full authentication
        if check(peer):
            peer.send(OK)
            serve_commands(peer)
        else:
            peer.send(b"\xff" + (1045).to_bytes(2, "little") + b"#28000denied")
    return handler


def unmask(data, nonce):
    return bytes(b ^ nonce[i % 20] for i, b in enumerate(data))


def test_caching_sha2_full_auth_with_the_servers_rsa_key(rsa_key):
    nonce = os.urandom(20).replace(b"\x00", b"\x01")
    pem = (rsa_key / "pub.pem").read_bytes()

    def check(peer):
        return unmask(rsa_decrypt(rsa_key, peer.recv()), nonce) == PASSWORD.encode() + b"\x00"

    with FakeServer(full_auth_server(nonce, check)) as srv:
        c = Connection("127.0.0.1", srv.port, "repl", PASSWORD, tls=TLSOptions("disabled"),
                       server_public_key=str(rsa_key / "pub.pem"), **FAST).connect()
        c.quit()

        def ask_for_key(peer):
            assert peer.recv() == b"\x02"  # the public key request
            peer.send(b"\x01" + pem)
            return check(peer)
        srv.handler = full_auth_server(nonce, ask_for_key)
        c = Connection("127.0.0.1", srv.port, "repl", PASSWORD, tls=TLSOptions("disabled"),
                       get_server_public_key=True, **FAST).connect()
        c.quit()
        # neither TLS nor a key: a clear refusal, never the password in clear text
        srv.handler = full_auth_server(nonce, lambda peer: False)
        started = time.monotonic()
        with pytest.raises(ReplicationError) as ei:
            Connection("127.0.0.1", srv.port, "repl", PASSWORD, tls=TLSOptions("disabled"), **FAST).connect()
        assert "--server-public-key" in check_clean(ei, started)


@pytest.fixture(scope="module")
def certs(tmp_path_factory):
    return make_certs(tmp_path_factory.mktemp("certs"))


def test_caching_sha2_full_auth_over_tls(certs):
    nonce = os.urandom(20).replace(b"\x00", b"\x01")
    ctx = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    ctx.load_cert_chain(certs / "server.pem", certs / "server.key")

    def check(peer):
        return peer.recv() == PASSWORD.encode() + b"\x00"

    with FakeServer(full_auth_server(nonce, check, ctx, SERVER_CAPS | CAPS["CLIENT_SSL"])) as srv:
        c = Connection("127.0.0.1", srv.port, "repl", PASSWORD,
                       tls=TLSOptions("verify-identity", ca=str(certs / "ca.pem")), **FAST).connect()
        assert c.encrypted
        c.quit()
        # a certificate from another CA is refused before anything secret is sent
        got = []
        srv.handler = full_auth_server(nonce, lambda peer: got.append(peer.recv()), ctx,
                                       SERVER_CAPS | CAPS["CLIENT_SSL"])
        started = time.monotonic()
        with pytest.raises(ReplicationError) as ei:
            Connection("127.0.0.1", srv.port, "repl", PASSWORD,
                       tls=TLSOptions("verify-ca", ca=str(certs / "other.pem")), **FAST).connect()
        assert "certificate" in check_clean(ei, started) and not got


def sha256_server(nonce, rsa_dir=None, tls_context=None, seen=None):
    """A MySQL server whose account uses sha256_password: the password comes encrypted with its RSA
    key (given to the client, or asked for with 0x01), or in clear text inside TLS."""
    caps = SERVER_CAPS | (CAPS["CLIENT_SSL"] if tls_context is not None else 0)

    def handler(peer, i):
        peer.send(greeting(version="8.0.36", plugin="sha256_password", nonce=nonce, caps=caps))
        first = peer.recv()
        if len(first) == 32 and tls_context is not None:  # SSLRequest
            peer.sock = tls_context.wrap_socket(peer.sock, server_side=True)
            first = peer.recv()
        data = bytes(T.handshake_response41.parse(first).auth_response)
        if data == b"\x01":  # the client asks for the public key
            peer.send(b"\x01" + (rsa_dir / "pub.pem").read_bytes())
            data = peer.recv()
        if seen is not None:
            seen.append(data)
        if tls_context is not None:
            ok = data == PASSWORD.encode() + b"\x00"
        else:
            ok = unmask(rsa_decrypt(rsa_dir, data), nonce) == PASSWORD.encode() + b"\x00"
        peer.send(OK if ok else b"\xff" + (1045).to_bytes(2, "little") + b"#28000denied")
        if ok:
            serve_commands(peer)
    return handler


def test_sha256_password_with_the_servers_rsa_key_or_over_tls(rsa_key, certs):
    nonce = os.urandom(20).replace(b"\x00", b"\x01")
    with FakeServer(sha256_server(nonce, rsa_key)) as srv:
        c = Connection("127.0.0.1", srv.port, "repl", PASSWORD, tls=TLSOptions("disabled"),
                       server_public_key=str(rsa_key / "pub.pem"), **FAST).connect()
        assert c.auth_plugin == "sha256_password"
        c.quit()
        c = Connection("127.0.0.1", srv.port, "repl", PASSWORD, tls=TLSOptions("disabled"),
                       get_server_public_key=True, **FAST).connect()
        c.quit()
        # neither TLS nor a key: refused before anything is sent
        seen = []
        srv.handler = sha256_server(nonce, rsa_key, seen=seen)
        started = time.monotonic()
        with pytest.raises(ReplicationError) as ei:
            Connection("127.0.0.1", srv.port, "repl", PASSWORD, tls=TLSOptions("disabled"), **FAST).connect()
        assert "--server-public-key" in check_clean(ei, started) and not seen
    ctx = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    ctx.load_cert_chain(certs / "server.pem", certs / "server.key")
    with FakeServer(sha256_server(nonce, tls_context=ctx)) as srv:
        c = Connection("127.0.0.1", srv.port, "repl", PASSWORD,
                       tls=TLSOptions("verify-identity", ca=str(certs / "ca.pem")), **FAST).connect()
        assert c.encrypted and c.auth_plugin == "sha256_password"
        c.quit()


def test_auth_switch_to_native_password_and_eof_result_sets():
    """The server greets with caching_sha2 but the account uses mysql_native_password (an
    AuthSwitchRequest with a fresh nonce); no CLIENT_DEPRECATE_EOF, so result sets end in EOF."""
    nonce2 = b"ZYXWVUTSRQPONMLKJIHG"
    caps = SERVER_CAPS & ~CAPS["CLIENT_DEPRECATE_EOF"]

    def handler(peer, i):
        peer.send(greeting(plugin="caching_sha2_password", caps=caps))
        T.handshake_response41.parse(peer.recv())
        peer.send(b"\xfe" + b"mysql_native_password\x00" + nonce2 + b"\x00")
        reply = peer.recv()
        stored = hashlib.sha1(hashlib.sha1(PASSWORD.encode()).digest()).digest()
        h1 = bytes(x ^ y for x, y in zip(reply, hashlib.sha1(nonce2 + stored).digest()))
        peer.send(OK if hashlib.sha1(h1).digest() == stored else b"\xff\x15\x04#28000denied")
        peer.recv()
        result_set(peer, ["a", "b", "c"], [["1", None, "x" * 300], ["2", "", "y"]], deprecate_eof=False)
        serve_commands(peer, deprecate_eof=False)
    with FakeServer(handler) as srv:
        c = Connection("127.0.0.1", srv.port, "repl", PASSWORD, **FAST).connect()
        assert c.auth_plugin == "mysql_native_password" and not c.deprecate_eof
        names, rows = c.query("SELECT a, b, c FROM t")
        assert names == ["a", "b", "c"]
        assert rows == [[b"1", None, b"x" * 300], [b"2", b"", b"y"]]
        assert c.query_dicts("SELECT @@global.log_bin")[0] == {"log_bin": "1", "fmt": "ROW"}
        c.quit()


# -- the password itself on the wire ----------------------------------------------------------
# A server (or whoever answers in its place) may ask for the password itself: mysql_clear_password,
# or sha256_password and caching_sha2_password's full authentication over TLS. It goes only over
# TLS whose certificate was verified (verify-ca, verify-identity), or when the user allows it
# (TLSOptions.allow_cleartext, --enable-cleartext-plugin). Before, the default TLS mode (preferred)
# sent it to a server presenting any certificate.

def tls_server_context(certs, name="other"):
    """A server side TLS context presenting `name`.pem (other: a self-signed certificate)."""
    ctx = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    ctx.load_cert_chain(certs / f"{name}.pem", certs / f"{name}.key")
    return ctx


def password_taker(plugin, seen, tls_context=None, greet_with=None, nonce=b"abcdefghijklmnopqrst"):
    """A server that greets (with `greet_with`, default mysql_native_password), switches to
    `plugin` and asks for the password itself, recording every byte the client sends after its
    login request: caching_sha2_password's full authentication, sha256_password and
    mysql_clear_password."""
    caps = SERVER_CAPS | (CAPS["CLIENT_SSL"] if tls_context is not None else 0)

    def handler(peer, i):
        first_plugin = greet_with or "mysql_native_password"
        peer.send(greeting(version="8.4.3", plugin=first_plugin, nonce=nonce, caps=caps))
        first = peer.recv()
        if len(first) == 32 and tls_context is not None:  # SSLRequest
            peer.sock = tls_context.wrap_socket(peer.sock, server_side=True)
            first = peer.recv()
        seen.append(bytes(T.handshake_response41.parse(first).auth_response))
        if first_plugin != plugin:
            peer.send(b"\xfe" + plugin.encode() + b"\x00" + nonce + b"\x00")
            seen.append(peer.recv())
        if plugin == "caching_sha2_password":
            peer.send(b"\x01\x04")  # perform full authentication
            seen.append(peer.recv())
        ok = seen[-1] == PASSWORD.encode() + b"\x00"
        peer.send(OK if ok else b"\xff" + (1045).to_bytes(2, "little") + b"#28000denied")
        if ok:
            serve_commands(peer)
    return handler


def took_the_password(seen):
    return any(PASSWORD.encode() in s for s in seen)


CLEAR_CASES = {  # how the server gets to ask for the password itself
    "switch to mysql_clear_password": ("mysql_clear_password", None),
    "greet with mysql_clear_password": ("mysql_clear_password", "mysql_clear_password"),
    "caching_sha2_password full authentication": ("caching_sha2_password", "caching_sha2_password"),
    "sha256_password": ("sha256_password", "sha256_password"),
    "switch to sha256_password": ("sha256_password", None),
}


@pytest.mark.parametrize("case", list(CLEAR_CASES))
def test_the_password_is_not_sent_to_an_unverified_server(case, certs):
    """The issue's case: default TLS mode (preferred), a self-signed certificate, a server asking
    for the password in clear text. Refused before the password leaves, with why and the option."""
    plugin, greet_with = CLEAR_CASES[case]
    for tls in (TLSOptions(), TLSOptions("required")):
        seen = []
        with FakeServer(password_taker(plugin, seen, tls_server_context(certs), greet_with)) as srv:
            started = time.monotonic()
            with pytest.raises(ReplicationError) as ei:
                Connection("127.0.0.1", srv.port, "repl", PASSWORD, tls=tls, **FAST).connect()
            text = check_clean(ei, started)
        assert not took_the_password(seen), (case, tls.mode)
        assert "not verified" in text and "--enable-cleartext-plugin" in text and "verify-ca" in text, text
        assert plugin in text, text


def test_clear_text_password_without_tls_is_refused(certs):
    seen = []
    with FakeServer(password_taker("mysql_clear_password", seen)) as srv:
        started = time.monotonic()
        with pytest.raises(ReplicationError) as ei:
            Connection("127.0.0.1", srv.port, "repl", PASSWORD, **FAST).connect()
        text = check_clean(ei, started)
    assert not took_the_password(seen)
    assert "not encrypted" in text and "--enable-cleartext-plugin" in text, text


@pytest.mark.parametrize("case", list(CLEAR_CASES))
def test_the_password_goes_to_a_verified_server_or_when_allowed(case, certs):
    plugin, greet_with = CLEAR_CASES[case]
    allowed = [TLSOptions("verify-ca", ca=str(certs / "other.pem")),  # the self-signed one, trusted
               TLSOptions(allow_cleartext=True), TLSOptions("required", allow_cleartext=True)]
    for tls in allowed:
        seen = []
        with FakeServer(password_taker(plugin, seen, tls_server_context(certs), greet_with)) as srv:
            c = Connection("127.0.0.1", srv.port, "repl", PASSWORD, tls=tls, **FAST).connect()
            assert c.encrypted and c.auth_plugin == plugin
            c.quit()
        assert took_the_password(seen)
    seen = []  # without TLS at all, the option allows mysql_clear_password (as the mysql client's)
    with FakeServer(password_taker("mysql_clear_password", seen)) as srv:
        Connection("127.0.0.1", srv.port, "repl", PASSWORD, tls=TLSOptions(allow_cleartext=True),
                   **FAST).connect().quit()
    assert took_the_password(seen)


def test_cli_refuses_the_clear_text_password_and_names_the_option(certs):
    """stream and repair: one line, exit 1, the password nowhere; with
    --enable-cleartext-plugin the server gets it."""
    env = dict(os.environ, FAKE_PW=PASSWORD)
    base = ["--port", None, "--user", "repl", "--password-env", "FAKE_PW", "--connect-timeout", "2",
            "--read-timeout", "1"]
    for command, extra in (("stream", ["--until-now", "--no-reconnect"]), ("repair", [])):
        for allow in (False, True):
            seen = []
            with FakeServer(password_taker("mysql_clear_password", seen, tls_server_context(certs))) as srv:
                argv = [command, *base, *extra] + (["--enable-cleartext-plugin"] if allow else [])
                argv[2] = str(srv.port)
                r = subprocess.run([sys.executable, "-m", "binlog_grammar", *argv], capture_output=True,
                                   text=True, env=env, timeout=60)
            assert PASSWORD not in r.stdout + r.stderr and "Traceback" not in r.stderr, r.stderr
            assert took_the_password(seen) == allow, (command, allow, r.stderr)
            if not allow:
                assert r.returncode == 1, r.stderr
                assert len(r.stderr.splitlines()) == 1 and "--enable-cleartext-plugin" in r.stderr, r.stderr


# -- the replication session -------------------------------------------------------------------

def test_mysql_gtid_dump_request():
    """Against a MySQL server a GTID set goes in COM_BINLOG_DUMP_GTID (spec com_binlog_dump_gtid)."""
    log = []

    def handler(peer, i):
        login_native(peer, version="8.0.36-log", caps=SERVER_CAPS | CAPS["CLIENT_LONG_PASSWORD"])

        def dump(p, payload):
            p.send(b"\xfe\x00\x00\x02\x00")  # EOF: nothing to send (a non-blocking dump)
        serve_commands(peer, dump, log=log)
    gtid = "3E11FA47-71CA-11E1-9E33-C80AA9429562:1-5:7,3e11fa47-71ca-11e1-9e33-c80aa9429562:6"
    with FakeServer(handler) as srv:
        src = ReplicationSource("127.0.0.1", srv.port, "repl", PASSWORD, gtid=gtid, blocking=False,
                                server_id=99, **FAST)
        assert list(src) == []
    d = T.com_binlog_dump_gtid.parse(log[-1])
    assert d.server_id == 99 and "BINLOG_THROUGH_GTID" in d.flags.names and "BINLOG_DUMP_NON_BLOCK" in d.flags.names
    sid = d.gtid_data.gtid_set.sids
    assert len(sid) == 1 and sid[0].uuid.hex() == "3e11fa4771ca11e19e33c80aa9429562"
    assert [(iv.start, iv.end) for iv in sid[0].intervals] == [(1, 8)]
    sets = [q[1:].decode() for q in log if q[0] == 3 and q[1:4] == b"SET"]
    assert any("@master_binlog_checksum='CRC32'" in s for s in sets)
    assert not any("mariadb_slave_capability" in s for s in sets)  # MySQL is not told MariaDB things
    reg = T.com_register_slave.parse(next(q for q in log if q[0] == 0x15))
    assert reg.server_id == 99 and reg.password == ""


def test_fake_dump_resumes_after_a_drop_without_loss_or_duplicates():
    """A fake dump of the sample binlog drops the connection in the middle of a transaction; the
    client asks again from the end of the last complete transaction (the server then sends the
    FORMAT_DESCRIPTION_EVENT with log_pos 0, as real servers do), skips what it delivered, and
    stops at the target position."""
    name = "mariadb-10.11-sample.000001"
    requests = []
    cut = 11  # events sent by the first connection after the FDE (the 11th, a TABLE_MAP, is inside a transaction)

    def handler(peer, i):
        login_native(peer)

        def dump(p, payload):
            req = T.com_binlog_dump.parse(payload)
            requests.append((req.binlog_filename, req.binlog_pos))
            p.send(b"\x00" + fake_rotate(name, req.binlog_pos))
            fde = bytearray(SAMPLE_EVENTS[0][1])
            fde[17] &= 0xFE  # LOG_EVENT_BINLOG_IN_USE_F cleared, as a dump thread sends it
            if req.binlog_pos > 4:  # log_pos and created 0 (not to be counted), CRC32 fixed
                fde[13:17] = bytes(4)
                fde[19 + 2 + 50:19 + 2 + 54] = bytes(4)
                fde[-4:] = zlib.crc32(bytes(fde[:-4])).to_bytes(4, "little")
            p.send(b"\x00" + bytes(fde))
            sent = 0
            for off, raw, _n in SAMPLE_EVENTS[1:]:
                if off < req.binlog_pos:
                    continue
                p.send(b"\x00" + raw)
                sent += 1
                if i == 0 and sent == cut:
                    p.raw(b"\x30\x00")  # cut in the middle of a packet header
                    return
            time.sleep(3)
        serve_commands(peer, dump)

    end = SAMPLE_EVENTS[-1][0] + len(SAMPLE_EVENTS[-1][1])
    with FakeServer(handler) as srv:
        src = ReplicationSource("127.0.0.1", srv.port, "repl", PASSWORD, until=(name, end),
                                heartbeat=0.2, backoff=(0.05, 0.1), **FAST)
        started = time.monotonic()
        events = list(src)
        assert time.monotonic() - started < 6
    assert src.reconnects == 1
    assert requests[0] == ("", 4) and requests[1][0] == name and requests[1][1] > 4
    delivered = [e for e in events if not e.extra.get("artificial")]
    assert [(e.offset, e.raw) for e in delivered] == [(off, raw) for off, raw, _n in SAMPLE_EVENTS]
    assert [e.name for e in events if e.extra.get("artificial")] == ["ROTATE_EVENT"]
    assert src.resume == src.position == ("mariadb-bin.000002", 4)  # the sample ends with a ROTATE
    # the first connection ended inside a transaction: the second asked from its GTID_EVENT
    open_tx = max(i for i in range(cut + 1) if SAMPLE_EVENTS[i][2] == "GTID_EVENT")
    assert requests[1][1] == SAMPLE_EVENTS[open_tx][0] < SAMPLE_EVENTS[cut][0]


def test_heartbeats_keep_an_idle_stream_alive_and_stop_ends_it():
    name = "mariadb-10.11-sample.000001"
    end = SAMPLE_EVENTS[-1][0] + len(SAMPLE_EVENTS[-1][1])

    def handler(peer, i):
        login_native(peer)

        def dump(p, payload):
            p.send(b"\x00" + fake_rotate(name, 4))
            for _off, raw, _n in SAMPLE_EVENTS:
                p.send(b"\x00" + raw)
            for _ in range(100):  # idle: a heartbeat every 0.1 s, each naming the position
                time.sleep(0.1)
                p.send(b"\x00" + heartbeat(name, end))
        serve_commands(peer, dump)

    with FakeServer(handler) as srv:
        src = ReplicationSource("127.0.0.1", srv.port, "repl", PASSWORD, heartbeat=0.1,
                                connect_timeout=1.5, read_timeout=0.5)
        threading.Timer(1.5, src.stop).start()  # longer than the silence timeout (0.8 s)
        started = time.monotonic()
        events = list(src)
        assert 1.4 < time.monotonic() - started < 8
    assert len(events) == len(SAMPLE_EVENTS) + 1
    assert src.heartbeats >= 5 and src.reconnects == 0 and src.position == (name, end)


def test_eof_in_a_blocking_dump_is_a_restart_not_the_end(caplog):
    """A server shutting down cleanly ends the dump thread with an EOF packet; in a blocking dump
    that is not the end of the binlog: the source reconnects, resumes after the last complete
    transaction and delivers every event once (only a non-blocking dump ends at an EOF)."""
    name = "mariadb-10.11-sample.000001"
    end = SAMPLE_EVENTS[-1][0] + len(SAMPLE_EVENTS[-1][1])
    cut = 11
    requests = []

    def handler(peer, i):
        login_native(peer)

        def dump(p, payload):
            req = T.com_binlog_dump.parse(payload)
            requests.append(req.binlog_pos)
            p.send(b"\x00" + fake_rotate(name, req.binlog_pos))
            if req.binlog_pos > 4:
                fde = bytearray(SAMPLE_EVENTS[0][1])
                fde[13:17] = bytes(4)
                fde[-4:] = zlib.crc32(bytes(fde[:-4])).to_bytes(4, "little")
                p.send(b"\x00" + bytes(fde))
            sent = 0
            for off, raw, _n in SAMPLE_EVENTS:
                if off < req.binlog_pos and off != 4:
                    continue
                p.send(b"\x00" + raw)
                sent += 1
                if i == 0 and sent == cut:
                    p.send(b"\xfe\x00\x00\x02\x00")  # the dump thread ends: a clean shutdown
                    return
            time.sleep(3)
        serve_commands(peer, dump)

    caplog.set_level(logging.WARNING, logger="binlog_grammar")
    with FakeServer(handler) as srv:
        src = ReplicationSource("127.0.0.1", srv.port, "repl", PASSWORD, until=(name, end),
                                heartbeat=0.2, backoff=(0.05, 0.1), **FAST)
        events = [e for e in src if not e.extra.get("artificial")]
    assert src.reconnects == 1 and len(requests) == 2 and requests[1] > 4
    assert [(e.offset, e.raw) for e in events] == [(off, raw) for off, raw, _n in SAMPLE_EVENTS]
    lines = [r.getMessage() for r in caplog.records]
    assert any("ended the binlog dump" in ln and f"resuming at {name}:{requests[1]}" in ln
               for ln in lines), lines
    assert any(f"reconnected after" in ln and f"resuming at {name}:{requests[1]}" in ln
               for ln in lines), lines


def test_follow_mode_never_gives_up_reconnecting_by_default(caplog):
    """Following (no end), a source keeps trying while the server stays down, backing off up to
    backoff[1]; only stop() ends it. With an end it gives up after BOUNDED_RECONNECT_TIMEOUT."""
    from binlog_grammar import replication

    caplog.set_level(logging.WARNING, logger="binlog_grammar")
    with FakeServer(h_drops_forever) as srv:
        src = ReplicationSource("127.0.0.1", srv.port, "repl", PASSWORD, heartbeat=0.2,
                                backoff=(0.05, 0.2), **FAST)
        assert src.follows() and src._give_up_after() is None
        threading.Timer(2.5, src.stop).start()
        started = time.monotonic()
        events = list(src)  # no exception: stop() ended it
        assert 2.4 < time.monotonic() - started < 5
    assert len(events) == 4 and src.reconnect_attempts >= 8
    # one line when the connection was lost, not one per attempt
    assert sum("reconnecting (resuming at" in r.getMessage() for r in caplog.records) == 1
    bounded = ReplicationSource("127.0.0.1", srv.port, "repl", PASSWORD, until_now=True)
    assert not bounded.follows() and bounded._give_up_after() == replication.BOUNDED_RECONNECT_TIMEOUT
    assert ReplicationSource("127.0.0.1", 1, "r", reconnect_timeout=7)._give_up_after() == 7


@pytest.mark.parametrize("handler,words", [
    (h_garbage, "not a MySQL or MariaDB server: received 'HTTP/1.1 400 Bad Request\\r\\n"),
    (h_closes_at_once, "the server closed the connection without a greeting (received nothing"),
    (h_silent, "no greeting: the server sent nothing in 1.5 s"),
], ids=["speaks HTTP", "closes at once", "sends nothing"])
def test_cli_names_what_a_port_that_is_not_a_mysql_server_sent(handler, words):
    """`stream` pointed at something else than a MySQL server says what it received (printable),
    that the peer closed without a word, or that it sent nothing before the connect timeout."""
    with FakeServer(handler) as srv:
        env = dict(os.environ, FAKE_PW=PASSWORD)
        started = time.monotonic()
        r = subprocess.run([sys.executable, "-m", "binlog_grammar", "stream", "--port", str(srv.port),
                            "--user", "repl", "--password-env", "FAKE_PW", "--connect-timeout", "1.5",
                            "--read-timeout", "1"], capture_output=True, text=True, env=env, timeout=30)
    assert time.monotonic() - started < 15
    assert r.returncode == 1 and r.stdout == ""
    lines = r.stderr.splitlines()
    assert len(lines) == 1 and words in lines[0], r.stderr
    assert "Traceback" not in r.stderr and PASSWORD not in r.stderr
