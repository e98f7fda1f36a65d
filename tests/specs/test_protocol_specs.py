"""The client/server protocol specs (specs/protocol/) against byte vectors from the protocol
documentation (the examples of the MySQL server's protocol pages, page_protocol_*), and the
pieces of the replication client that are arithmetic rather than layout: packet splitting and
joining at 16 MiB, and the authentication methods (RFC 8032 vectors for Ed25519 and public keys
MariaDB derived from passwords, RSA-OAEP decrypted with a private key made by `cryptography`, the
password-XOR-nonce rule against fixed vectors).

Each documented packet is parsed by its generated struct, the fields are checked, and the parsed
value builds the same bytes again."""
import hashlib
import socket
import threading

import pytest

from binlog_grammar.generated import enums
from binlog_grammar.generated import types as T
from binlog_grammar.binlog.reader import BinlogFile
from binlog_grammar.replication import (
    MAX_PAYLOAD, PacketIO, ProtocolError, caching_sha2_scramble, ed25519_sign, native_password_scramble, rsa_oaep_encrypt, rsa_password_plaintext, rsa_public_key)

from helpers.paths import ROOT


def hexb(text: str) -> bytes:
    return bytes.fromhex("".join(text.split()))


def packets(data: bytes):
    """Split wire bytes into (sequence id, payload) pairs by hand (3-byte length, 1-byte seq)."""
    out = []
    pos = 0
    while pos < len(data):
        n = int.from_bytes(data[pos:pos + 3], "little")
        out.append((data[pos + 3], data[pos + 4:pos + 4 + n]))
        pos += 4 + n
    assert pos == len(data)
    return out


def roundtrip(con, payload: bytes):
    value = con.parse(payload)
    assert con.build(value) == payload
    return value


# -- the connection phase ----------------------------------------------------------------------

# page_protocol_connection_phase_packets_protocol_handshake_v10: a 5.6.4 server with
# CLIENT_PLUGIN_AUTH announcing mysql_native_password
HANDSHAKE_564 = hexb("""
50 00 00 00 0a 35 2e 36 2e 34 2d 6d 37 2d 6c 6f
67 00 56 0a 00 00 52 42 33 76 7a 26 47 72 00 ff
ff 08 02 00 0f c0 15 00 00 00 00 00 00 00 00 00
00 2b 79 44 26 2f 5a 5a 33 30 35 5a 47 00 6d 79
73 71 6c 5f 6e 61 74 69 76 65 5f 70 61 73 73 77
6f 72 64 00""")

# page_protocol_basic_tls: a 5.5.2 server without CLIENT_PLUGIN_AUTH, the client's response, and
# the SSLRequest a client sends instead when it wants TLS
HANDSHAKE_552 = hexb("""
36 00 00 00 0a 35 2e 35 2e 32 2d 6d 32 00 52 00
00 00 22 3d 4e 50 29 75 39 56 00 ff ff 08 02 00
00 00 00 00 00 00 00 00 00 00 00 00 00 29 64 40
52 5c 55 78 7a 7c 21 29 4b 00""")
RESPONSE_552 = hexb("""
3a 00 00 01 05 a6 03 00 00 00 00 01 08 00 00 00
00 00 00 00 00 00 00 00 00 00 00 00 00 00 00 00
00 00 00 00 72 6f 6f 74 00 14 14 63 6b 70 99 8a
b6 9e 96 87 a2 30 9a 40 67 2b 83 38 85 4b""")
SSL_REQUEST = hexb("20 00 00 01 05 ae 03 00 00 00 00 01 08") + bytes(23)

# page_protocol_connection_phase_packets_protocol_auth_switch_request
AUTH_SWITCH = hexb("""
2c 00 00 02 fe 6d 79 73 71 6c 5f 6e 61 74 69 76
65 5f 70 61 73 73 77 6f 72 64 00 7a 51 67 34 69
36 6f 4e 79 36 3d 72 48 4e 2f 3e 2d 62 29 41 00""")


def test_packet_header_vectors():
    [(seq, payload)] = packets(HANDSHAKE_564)
    head = roundtrip(T.packet_header, HANDSHAKE_564[:4])
    assert head.payload_length == 0x50 == len(payload) and head.sequence_id == seq == 0
    pkt = roundtrip(T.packet, HANDSHAKE_564)
    assert pkt.payload == payload


def test_handshake_v10_with_plugin_auth():
    [(_seq, payload)] = packets(HANDSHAKE_564)
    hs = roundtrip(T.handshake_v10, payload)
    assert hs.protocol_version == 10
    assert hs.server_version == "5.6.4-m7-log"
    assert hs.connection_id == 0x0a56
    assert hs.auth_plugin_data_part_1 == b"RB3vz&Gr"
    assert hs.capability_flags_lower == 0xffff and hs.capability_flags_upper == 0xc00f
    assert hs.capabilities == 0xc00fffff
    assert "CLIENT_PROTOCOL_41" in hs.capability_flags_lower.names
    assert hs.character_set == 8 and hs.status_flags.names == ["SERVER_STATUS_AUTOCOMMIT"]
    assert hs.auth_plugin_data_len == 21
    assert hs.auth_plugin_data_part_2 == b"+yD&/ZZ305ZG\x00"
    assert hs.auth_plugin_name == "mysql_native_password"


def test_handshake_v10_without_plugin_auth():
    [(_seq, payload)] = packets(HANDSHAKE_552)
    hs = roundtrip(T.handshake_v10, payload)
    assert hs.server_version == "5.5.2-m2" and hs.connection_id == 0x52
    assert hs.capability_flags_upper == 0 and hs.auth_plugin_data_len == 0
    assert hs.auth_plugin_data_part_2 == b")d@R\\Uxz|!)K\x00"  # CLIENT_SECURE_CONNECTION: 13 bytes
    assert hs.auth_plugin_name is None  # no CLIENT_PLUGIN_AUTH


def test_handshake_response41_and_ssl_request():
    [(seq, payload)] = packets(RESPONSE_552)
    assert seq == 1
    r = roundtrip(T.handshake_response41, payload)
    assert r.client_flag == 0x0003a605
    assert {"CLIENT_PROTOCOL_41", "CLIENT_SECURE_CONNECTION", "CLIENT_MULTI_RESULTS"} <= set(r.client_flag.names)
    assert "CLIENT_PLUGIN_AUTH" not in r.client_flag.names
    assert r.max_packet_size == 16 << 20 and r.character_set == 8
    assert r.username == "root"
    assert r.auth_response == hexb("14 63 6b 70 99 8a b6 9e 96 87 a2 30 9a 40 67 2b 83 38 85 4b")
    assert r.database is None and r.client_plugin_name is None and r.connect_attributes is None
    [(seq, payload)] = packets(SSL_REQUEST)
    s = roundtrip(T.ssl_request, payload)
    assert "CLIENT_SSL" in s.client_flag.names and s.character_set == 8 and s.mariadb_capabilities == 0


def test_handshake_response41_plugin_auth_and_attributes():
    # CLIENT_PLUGIN_AUTH_LENENC_CLIENT_DATA, CLIENT_CONNECT_WITH_DB, CLIENT_PLUGIN_AUTH and
    # CLIENT_CONNECT_ATTRS, laid out by the documented field order
    flags = 0x00200000 | 0x8 | 0x80000 | 0x100000 | 0x200 | 0x8000
    attrs = b"\x03_os\x05Linux" + b"\x04_pid\x0242"
    payload = (flags.to_bytes(4, "little") + (1 << 24).to_bytes(4, "little") + b"\x2d" + bytes(19)
               + (0x8).to_bytes(4, "little") + b"repl\x00" + b"\x14" + bytes(range(20)) + b"shop\x00"
               + b"caching_sha2_password\x00" + bytes([len(attrs)]) + attrs)
    r = roundtrip(T.handshake_response41, payload)
    assert r.mariadb_capabilities.names == ["MARIADB_CLIENT_EXTENDED_METADATA"]
    assert r.auth_response == bytes(range(20)) and r.database == "shop"
    assert r.client_plugin_name == "caching_sha2_password"
    assert [(a.key, a.value) for a in r.connect_attributes.entries] == [("_os", "Linux"), ("_pid", "42")]


def test_auth_switch_request_and_more_data():
    [(seq, payload)] = packets(AUTH_SWITCH)
    assert seq == 2
    sw = roundtrip(T.auth_switch_request, payload)
    assert sw.plugin_name == "mysql_native_password"
    assert sw.plugin_data == b"zQg4i6oNy6=rHN/>-b)A\x00"
    # page_caching_sha2_authentication_exchanges: 0x01 then 0x03 fast auth ok / 0x04 full auth
    assert roundtrip(T.auth_more_data, b"\x01\x03").data == b"\x03"
    assert roundtrip(T.auth_more_data, b"\x01\x04").data == b"\x04"
    assert roundtrip(T.caching_sha2_public_key_request, b"\x02").request == 2
    assert roundtrip(T.auth_switch_response, b"secret\x00").data == b"secret\x00"


# -- generic responses -------------------------------------------------------------------------

def test_ok_err_eof_vectors():
    # page_protocol_basic_ok_packet / _err_packet / _eof_packet
    [(seq, ok)] = packets(hexb("07 00 00 02 00 00 00 02 00 00 00"))
    o = roundtrip(T.ok_packet, ok)
    assert seq == 2 and o.affected_rows == 0 and o.last_insert_id == 0 and o.warnings == 0
    assert o.status_flags.names == ["SERVER_STATUS_AUTOCOMMIT"] and o.info == ""
    [(seq, err)] = packets(hexb("17 00 00 01 ff 48 04 23 48 59 30 30 30 4e 6f 20 74 61 62 6c 65 73 "
                                "20 75 73 65 64"))
    e = roundtrip(T.err_packet, err)
    assert e.error_code == 1096 and e.sql_state == "HY000" and e.error_message == "No tables used"
    [(seq, eof)] = packets(hexb("05 00 00 05 fe 00 00 02 00"))
    f = roundtrip(T.eof_packet, eof)
    assert f.warnings == 0 and f.status_flags == 2
    # the CLIENT_DEPRECATE_EOF form: an OK with header 0xFE
    g = roundtrip(T.eof_ok_packet, b"\xfe\x00\x00\x22\x00\x01\x00")
    assert g.status_flags.names == ["SERVER_STATUS_AUTOCOMMIT", "SERVER_QUERY_NO_INDEX_USED"]
    assert g.warnings == 1
    # an ERR sent before capabilities are agreed carries no SQL state
    p = roundtrip(T.err_packet_pre41, b"\xff\x10\x04Too many connections")
    assert p.error_code == 1040 and p.error_message == "Too many connections"
    # wrong headers are refused, not misread
    for con, bad in ((T.ok_packet, b"\xfe" + ok[1:]), (T.err_packet, b"\xfe" + err[1:]),
                     (T.eof_packet, b"\x00" + eof[1:])):
        with pytest.raises(Exception):
            con.parse(bad)


# -- COM_QUERY and the text result set ---------------------------------------------------------

# page_protocol_com_query and page_protocol_com_query_response_text_resultset
QUERY = hexb("21 00 00 00 03 73 65 6c 65 63 74 20 40 40 76 65 72 73 69 6f 6e 5f 63 6f 6d 6d 65 6e "
             "74 20 6c 69 6d 69 74 20 31")
RESULT = hexb("""
01 00 00 01 01 27 00 00 02 03 64 65 66 00 00 00
11 40 40 76 65 72 73 69 6f 6e 5f 63 6f 6d 6d 65
6e 74 00 0c 08 00 1c 00 00 00 fd 00 00 1f 00 00
05 00 00 03 fe 00 00 02 00 1d 00 00 04 1c 4d 79
53 51 4c 20 43 6f 6d 6d 75 6e 69 74 79 20 53 65
72 76 65 72 20 28 47 50 4c 29 05 00 00 05 fe 00
00 02 00""")


def test_com_query_and_text_resultset():
    [(seq, q)] = packets(QUERY)
    cq = roundtrip(T.com_query, q)
    assert seq == 0 and cq.command.name == "COM_QUERY" and cq.query == "select @@version_comment limit 1"
    (s1, count), (s2, coldef), (s3, eof1), (s4, row), (s5, eof2) = packets(RESULT)
    assert [s1, s2, s3, s4, s5] == [1, 2, 3, 4, 5]
    assert roundtrip(T.column_count_packet, count).column_count == 1
    c = roundtrip(T.column_definition41, coldef)
    assert (c.catalog, c.schema, c.table, c.org_table, c.name, c.org_name) == \
        ("def", "", "", "", "@@version_comment", "")
    assert c.fixed_fields_length == 0x0C and c.character_set == 8 and c.column_length == 0x1c
    assert c.type.name == "VAR_STRING" and c.flags == 0 and c.decimals == 0x1f
    roundtrip(T.eof_packet, eof1)
    r = roundtrip(T.text_row, row)
    assert [v.value for v in r.column_values] == [b"MySQL Community Server (GPL)"]
    roundtrip(T.eof_packet, eof2)


def test_text_row_null_and_long_values():
    long_value = b"x" * 300
    row = b"\xfb" + b"\x00" + b"\x03abc" + b"\xfc" + (300).to_bytes(2, "little") + long_value
    r = roundtrip(T.text_row, row)
    assert [v.value for v in r.column_values] == [None, b"", b"abc", long_value]
    assert r.column_values[0].lead == 0xFB and r.column_values[3].long_value == long_value
    with pytest.raises(Exception):  # 0xFF starts no value
        T.text_row.parse(b"\xff")


# -- replication commands ----------------------------------------------------------------------

def test_com_register_slave_layout():
    payload = (b"\x15" + (4242).to_bytes(4, "little") + b"\x04host" + b"\x04repl" + b"\x00"
               + (3306).to_bytes(2, "little") + bytes(4) + bytes(4))
    r = roundtrip(T.com_register_slave, payload)
    assert r.command.name == "COM_REGISTER_SLAVE" and r.server_id == 4242
    assert (r.hostname, r.user, r.password, r.port) == ("host", "repl", "", 3306)


def test_com_binlog_dump_layout():
    payload = b"\x12" + (1234).to_bytes(4, "little") + b"\x02\x00" + (7).to_bytes(4, "little") + \
        b"mariadb-bin.000003"
    d = roundtrip(T.com_binlog_dump, payload)
    assert d.command.name == "COM_BINLOG_DUMP" and d.binlog_pos == 1234 and d.server_id == 7
    assert d.flags.names == ["BINLOG_SEND_ANNOTATE_ROWS_EVENT"]
    assert d.binlog_filename == "mariadb-bin.000003"


def test_com_binlog_dump_gtid_layout():
    uuid = bytes.fromhex("3e11fa4771ca11e19e33c80aa9429562")
    gtid_set = (1).to_bytes(8, "little") + uuid + (1).to_bytes(8, "little") + \
        (1).to_bytes(8, "little") + (6).to_bytes(8, "little")  # 3E11FA47-...:1-5
    payload = (b"\x1e" + b"\x04\x00" + (9).to_bytes(4, "little") + (0).to_bytes(4, "little")
               + (4).to_bytes(8, "little") + len(gtid_set).to_bytes(4, "little") + gtid_set)
    d = roundtrip(T.com_binlog_dump_gtid, payload)
    assert d.flags.names == ["BINLOG_THROUGH_GTID"] and d.binlog_name == "" and d.binlog_pos == 4
    g = d.gtid_data.gtid_set
    assert len(g.sids) == 1 and g.sids[0].uuid == uuid
    assert [(i.start, i.end) for i in g.sids[0].intervals] == [(1, 6)]
    # without BINLOG_THROUGH_GTID the set is absent
    short = b"\x1e\x02\x00" + (9).to_bytes(4, "little") + (3).to_bytes(4, "little") + b"b.1" + \
        (4).to_bytes(8, "little")
    assert roundtrip(T.com_binlog_dump_gtid, short).gtid_data is None


def test_binlog_stream_packet_carries_a_whole_event():
    ev = next(iter(BinlogFile(ROOT / "samples" / "mariadb-10.11-sample.000001")))
    p = roundtrip(T.binlog_stream_packet, b"\x00" + ev.raw)
    assert p.status == 0 and p.event == ev.raw
    assert roundtrip(T.com_quit, b"\x01").command.name == "COM_QUIT"


def test_flag_sets_and_commands_are_named():
    caps = {n: b for b, n in enums.CAPABILITY_FLAGS.items()}
    assert caps["CLIENT_PROTOCOL_41"] == 0x200 and caps["CLIENT_PLUGIN_AUTH"] == 0x80000
    assert caps["CLIENT_DEPRECATE_EOF"] == 0x1000000 and caps["CLIENT_SSL"] == 0x800
    cmds = {n: b for b, n in enums.COMMAND.items()}
    assert (cmds["COM_QUERY"], cmds["COM_BINLOG_DUMP"], cmds["COM_REGISTER_SLAVE"],
            cmds["COM_BINLOG_DUMP_GTID"]) == (3, 0x12, 0x15, 0x1e)


# -- packets of 16 MiB and more ----------------------------------------------------------------

def _pair():
    a, b = socket.socketpair()
    return PacketIO(a, "test", 5.0), b


def _read_all(sock, n):
    buf = bytearray()
    while len(buf) < n:
        chunk = sock.recv(1 << 20)
        assert chunk
        buf += chunk
    return bytes(buf)


@pytest.mark.parametrize("size", [0, 10, MAX_PAYLOAD - 1, MAX_PAYLOAD, MAX_PAYLOAD + 5, 2 * MAX_PAYLOAD])
def test_payloads_split_and_join(size):
    io, peer = _pair()
    payload = bytes(range(256)) * (size // 256) + bytes(size % 256)
    expect = [MAX_PAYLOAD] * (size // MAX_PAYLOAD) + [size % MAX_PAYLOAD]
    wire_len = 4 * len(expect) + size
    t = threading.Thread(target=io.write, args=(payload,))
    t.start()
    wire = _read_all(peer, wire_len)
    t.join()
    got = packets(wire)
    assert [len(p) for _s, p in got] == expect
    assert [s for s, _p in got] == list(range(len(expect)))
    assert b"".join(p for _s, p in got) == payload
    # and back: the same wire bytes read as one payload
    io2, peer2 = _pair()
    t = threading.Thread(target=peer2.sendall, args=(wire,))
    t.start()
    assert io2.read() == payload
    t.join()
    for s in (io.sock, peer, io2.sock, peer2):
        s.close()


def test_packet_reader_refuses_out_of_step_and_oversized_packets():
    io, peer = _pair()
    peer.sendall(b"\x01\x00\x00\x05\x00")
    with pytest.raises(ProtocolError, match="sequence number 5, expected 0"):
        io.read()
    io, peer = _pair()
    io.max_packet = 100
    peer.sendall(b"\xff\xff\xff\x00")
    with pytest.raises(ProtocolError, match="more than 100 bytes"):
        io.read()


# -- authentication arithmetic -----------------------------------------------------------------

def test_native_password_scramble_is_what_the_server_checks():
    # the server keeps SHA1(SHA1(password)) and recovers SHA1(password) from the reply
    nonce = bytes(range(1, 21))
    reply = native_password_scramble(b"s3cret", nonce)
    stored = hashlib.sha1(hashlib.sha1(b"s3cret").digest()).digest()
    h1 = bytes(x ^ y for x, y in zip(reply, hashlib.sha1(nonce + stored).digest()))
    assert hashlib.sha1(h1).digest() == stored
    assert native_password_scramble(b"", nonce) == b""


def test_caching_sha2_scramble_is_what_the_server_checks():
    nonce = bytes(range(40, 60))
    reply = caching_sha2_scramble(b"s3cret", nonce)
    stored = hashlib.sha256(hashlib.sha256(b"s3cret").digest()).digest()
    h1 = bytes(x ^ y for x, y in zip(reply, hashlib.sha256(stored + nonce).digest()))
    assert hashlib.sha256(h1).digest() == stored


@pytest.mark.parametrize("secret, message, signature", [
    # RFC 8032 section 7.1, TEST 1 and TEST 2
    ("9d61b19deffd5a60ba844af492ec2cc44449c5697b326919703bac031cae7f60", "",
     "e5564300c360ac729086e2cc806e828a84877f1eb8e5d974d873e065224901555fb8821590a33bacc61e39701cf9b46bd25bf5f0595bbe24655141438e7a100b"),
    ("4ccd089b28ff96da9db6c346ec114e0f5b8a319f35aba624da8cf6ed4fb8a6fb", "72",
     "92a009a9f0d4cab8720e820b5f642540a2b27b5416503f8fb3762223ebdb69da085ac1e43e15996e458f3613d0f11d8c387b2eaeb4302aeeb00d291612bb0c00"),
])
def test_ed25519_rfc8032_vectors(secret, message, signature):
    assert ed25519_sign(bytes.fromhex(message), bytes.fromhex(secret)).hex() == signature


# public keys MariaDB 10.11 derived from these passwords (SHOW CREATE USER of an account made
# with IDENTIFIED VIA ed25519 USING PASSWORD('...')): the server's own rule, not ours
MARIADB_ED25519_KEYS = {
    b"Ed-pw_41z": "NthBNUeULJbEszEjtT5YwOblUXj6TqzbM7DnSRyHkU4",
    b"0123456789abcdef0123456789abcdef": "I7xUkSwebpLEqGglyGfif/3FVb/71CRPF6Jqv//ull0",
}


@pytest.mark.parametrize("password", list(MARIADB_ED25519_KEYS))
def test_ed25519_signs_as_mariadb_client_ed25519(password):
    """The signature of a nonce verifies (cryptography's Ed25519) under the public key MariaDB made
    from the password. Where the password is 32 bytes it is also cryptography's own signature with
    the password as the seed; other lengths are no seed cryptography takes (MariaDB hashes a
    password of any length), which is why the signing is libsodium's."""
    import base64

    from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey, Ed25519PublicKey

    key = Ed25519PublicKey.from_public_bytes(base64.b64decode(MARIADB_ED25519_KEYS[password] + "="))
    for nonce in (bytes(32), bytes(range(32)), hashlib.sha256(password).digest()):
        sig = ed25519_sign(nonce, password)
        key.verify(sig, nonce)  # raises InvalidSignature otherwise
        if len(password) == 32:
            assert sig == Ed25519PrivateKey.from_private_bytes(password).sign(nonce)
        else:
            with pytest.raises(ValueError):
                Ed25519PrivateKey.from_private_bytes(password)


@pytest.fixture(scope="module")
def rsa_private_key():
    from cryptography.hazmat.primitives.asymmetric import rsa

    return rsa.generate_private_key(public_exponent=65537, key_size=2048)


def _oaep():
    from cryptography.hazmat.primitives import hashes
    from cryptography.hazmat.primitives.asymmetric import padding

    return padding.OAEP(mgf=padding.MGF1(algorithm=hashes.SHA1()), algorithm=hashes.SHA1(), label=None)


def test_rsa_oaep_decrypts_with_the_private_key(rsa_private_key):
    """What the client encrypts with a server's public key (as a server sends it: SubjectPublicKeyInfo
    PEM, PKCS #1 PEM, with a trailing NUL) decrypts with the private key, RSA-OAEP with SHA-1 and
    MGF1-SHA-1 (OpenSSL's RSA_PKCS1_OAEP_PADDING, what the server decrypts with)."""
    from cryptography.hazmat.primitives import serialization as ser

    pub = rsa_private_key.public_key()
    spki = pub.public_bytes(ser.Encoding.PEM, ser.PublicFormat.SubjectPublicKeyInfo)
    pkcs1 = pub.public_bytes(ser.Encoding.PEM, ser.PublicFormat.PKCS1)
    assert spki.startswith(b"-----BEGIN PUBLIC KEY") and pkcs1.startswith(b"-----BEGIN RSA PUBLIC KEY")
    secret = b"a password\x00"
    for pem in (spki, pkcs1, spki + b"\x00"):
        assert rsa_public_key(pem).public_numbers() == pub.public_numbers()
        c1, c2 = rsa_oaep_encrypt(secret, pem), rsa_oaep_encrypt(secret, pem)
        assert len(c1) == 256 and c1 != c2  # random padding
        assert rsa_private_key.decrypt(c1, _oaep()) == rsa_private_key.decrypt(c2, _oaep()) == secret
    # the longest message OAEP-SHA1 takes with a 2048-bit key is 256 - 42 bytes
    assert rsa_private_key.decrypt(rsa_oaep_encrypt(b"x" * 214, spki), _oaep()) == b"x" * 214
    with pytest.raises(ValueError, match="too long"):
        rsa_oaep_encrypt(b"x" * 215, spki)
    with pytest.raises(ValueError, match="not a PEM public key"):
        rsa_public_key(b"no key here")
    with pytest.raises(ValueError, match="unreadable public key"):
        rsa_public_key(b"-----BEGIN PUBLIC KEY-----\nAAAA\n-----END PUBLIC KEY-----\n")


@pytest.mark.parametrize("password, nonce, plaintext", [
    # (password + NUL) XOR the nonce: s^01 3^02 c^03 r^04 e^05 t^06 NUL^07
    (b"s3cret", bytes(range(1, 21)), "72316076607207"),
    # longer than the nonce: the 20 nonce bytes again from the 21st password byte on
    (b"A" * 25, bytes(range(1, 21)), "4043424544474649484b 4a4d4c4f4e5150535255 4043424544 06"),
    (b"", b"\xff" * 20, "ff"),
])
def test_rsa_password_plaintext_is_the_password_xor_the_nonce(password, nonce, plaintext):
    assert rsa_password_plaintext(password, nonce) == hexb(plaintext)
