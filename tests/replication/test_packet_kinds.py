"""The replication client tells packets apart by the names of the protocol spec (packet_kind, the
EOF rule, the sql_state_marker, the scramble): the rules read from the specs are the protocol's
as MySQL's and MariaDB's clients apply them, byte for byte (no server needed)."""
from __future__ import annotations

import pytest

from binlog_grammar.generated import enums
from binlog_grammar.generated import types as T
from binlog_grammar.replication import auth, connection, packets


def test_packet_kinds_are_the_first_bytes_of_the_protocol():
    assert enums.PACKET_KIND == {0x00: "OK", 0x01: "AUTH_MORE_DATA", 0x0A: "HANDSHAKE_V10",
                                 0xFB: "LOCAL_INFILE", 0xFE: "EOF", 0xFF: "ERR"}
    assert (packets.OK, packets.AUTH_MORE_DATA, packets.HANDSHAKE_V10, packets.LOCAL_INFILE,
            packets.EOF, packets.AUTH_SWITCH_REQUEST, packets.ERR) == (0, 1, 10, 0xFB, 0xFE, 0xFE, 0xFF)
    # each kind is the header byte of the struct it names
    for con, kind in ((T.ok_packet, packets.OK), (T.eof_packet, packets.EOF),
                      (T.eof_ok_packet, packets.EOF), (T.err_packet, packets.ERR),
                      (T.err_packet_pre41, packets.ERR), (T.auth_more_data, packets.AUTH_MORE_DATA),
                      (T.auth_switch_request, packets.AUTH_SWITCH_REQUEST),
                      (T.binlog_stream_packet, packets.OK)):
        assert con.subcons[0].subcon.value == kind, con
    assert T.handshake_v10.subcons[0].subcon.value == packets.HANDSHAKE_V10


def test_lengths_from_the_specs():
    assert packets.HEADER_LEN == 4
    assert packets.EOF_BELOW == 9  # 0xFE and a u64le: the longest packed integer
    assert auth.SCRAMBLE_LEN == connection.SCRAMBLE_LEN == 20
    assert connection.ED25519_NONCE_LEN == 32
    assert packets.SQL_STATE_MARKER == "#"


@pytest.mark.parametrize("deprecate_eof", [False, True])
def test_eof_rule(deprecate_eof):
    for first in (0x00, 0xFB, 0xFE, 0xFF):
        for n in list(range(0, 12)) + [packets.MAX_PAYLOAD - 1, packets.MAX_PAYLOAD]:
            p = bytes([first]) + bytes(max(n - 1, 0)) if n else b""
            old = p[:1] == b"\xfe" and len(p) < (packets.MAX_PAYLOAD if deprecate_eof else 9)
            assert packets.is_eof(p, deprecate_eof) == old, (first, n)


@pytest.mark.parametrize("payload", [
    b"", b"\xff", b"\xff\x10", b"\xff\x10\x04", b"\xff\x10\x04#", b"\xff\x10\x04#28000",
    b"\xff\x15\x04#28000Access denied", b"\xff\x10\x04Too many connections",
    b"\xff\x10\x04\xff#", b"\xff\x10\x04\xc3\xa9t\xc3\xa9"])
def test_err_struct_by_the_sql_state_marker(payload):
    old = T.err_packet if payload[3:4] == b"#" else T.err_packet_pre41
    assert packets.err_struct(payload) is old


def test_caching_sha2_statuses():
    assert (connection.FAST_AUTH_SUCCESS, connection.FULL_AUTHENTICATION) == (b"\x03", b"\x04")
    assert T.caching_sha2_public_key_request.build({}) == \
        bytes([{n: c for c, n in enums.CACHING_SHA2_STATUS.items()}["REQUEST_PUBLIC_KEY"]])
