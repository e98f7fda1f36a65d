"""Logging in: the password (`Secret`, which never prints) and the authentication methods'
arithmetic. The packets that carry them are spec structs (connection.py sends them); the
cryptography is not written here: RSA-OAEP and PEM keys come from the `cryptography` package,
Ed25519's curve arithmetic from libsodium through PyNaCl."""
from __future__ import annotations

import hashlib
import re

from ..generated import types as T
from .errors import first_line

SCRAMBLE_LEN = T.scramble.sizeof()  # the challenge of the native and SHA-256 methods (spec scramble)
SHA1_LEN = hashlib.sha1().digest_size
# the methods this client speaks (the first reply of each: connection.Connection._auth_first)
AUTH_FIRST = {"mysql_native_password", "caching_sha2_password", "sha256_password", "client_ed25519",
              "mysql_clear_password"}


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
    return _xor(h1, hashlib.sha1(nonce[:SCRAMBLE_LEN] + h2).digest())


def caching_sha2_scramble(password: bytes, nonce: bytes) -> bytes:
    """caching_sha2_password fast path: SHA256(password) XOR SHA256(SHA256(SHA256(password)) + nonce)."""
    if not password:
        return b""
    h1 = hashlib.sha256(password).digest()
    h2 = hashlib.sha256(h1).digest()
    return _xor(h1, hashlib.sha256(h2 + nonce[:SCRAMBLE_LEN]).digest())


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
        raise ValueError(f"unreadable public key: {first_line(e, 120)}") from None
    if not isinstance(key, rsa.RSAPublicKey):
        raise ValueError("not an RSA public key")
    return key


def rsa_oaep_encrypt(message: bytes, pem: bytes) -> bytes:
    from cryptography.hazmat.primitives import hashes
    from cryptography.hazmat.primitives.asymmetric import padding

    key = rsa_public_key(pem)
    if len(message) > key.key_size // 8 - 2 * SHA1_LEN - 2:  # OAEP with SHA-1 (RFC 8017, 7.1.1)
        raise ValueError("the password is too long for the server's RSA key")
    return key.encrypt(message, padding.OAEP(mgf=padding.MGF1(algorithm=hashes.SHA1()),
                                             algorithm=hashes.SHA1(), label=None))


def rsa_password_plaintext(password: bytes, nonce: bytes) -> bytes:
    """What the RSA key encrypts: the password and its terminating NUL XOR the 20-byte scramble,
    repeated as often as needed (MySQL's client_authentication.cc: xor_string over the password's
    length + 1 bytes with the scramble)."""
    plain = password + b"\x00"
    mask = (nonce[:SCRAMBLE_LEN] * (len(plain) // SCRAMBLE_LEN + 1))[:len(plain)]
    return _xor(plain, mask)


def rsa_password(password: bytes, nonce: bytes, pem: bytes) -> bytes:
    return rsa_oaep_encrypt(rsa_password_plaintext(password, nonce), pem)
