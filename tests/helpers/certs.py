"""Certificates for the TLS tests (made with `cryptography`)."""


def make_certs(d):
    """Made with `cryptography`: a CA (ca.pem) and a server certificate it signs for localhost and
    127.0.0.1 (server.pem, server.key), and an unrelated self-signed certificate (other.pem,
    other.key), which a server may present too."""
    import datetime
    import ipaddress

    from cryptography import x509
    from cryptography.hazmat.primitives import hashes
    from cryptography.hazmat.primitives import serialization as ser
    from cryptography.hazmat.primitives.asymmetric import ec
    from cryptography.x509.oid import NameOID

    now = datetime.datetime.now(datetime.timezone.utc)

    def name(cn):
        return x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, cn)])

    def cert(subject, key, issuer, issuer_key, ca, sans=()):
        b = (x509.CertificateBuilder().subject_name(name(subject)).issuer_name(name(issuer))
             .public_key(key.public_key()).serial_number(x509.random_serial_number())
             .not_valid_before(now - datetime.timedelta(hours=1))
             .not_valid_after(now + datetime.timedelta(days=2))
             .add_extension(x509.BasicConstraints(ca=ca, path_length=None), critical=True))
        if ca:
            b = b.add_extension(x509.KeyUsage(digital_signature=True, key_cert_sign=True, crl_sign=True,
                                              content_commitment=False, key_encipherment=False,
                                              data_encipherment=False, key_agreement=False,
                                              encipher_only=False, decipher_only=False), critical=True)
            b = b.add_extension(x509.SubjectKeyIdentifier.from_public_key(key.public_key()), critical=False)
        else:
            b = b.add_extension(x509.SubjectAlternativeName(list(sans)), critical=False)
            b = b.add_extension(x509.AuthorityKeyIdentifier.from_issuer_public_key(issuer_key.public_key()),
                                critical=False)
        return b.sign(issuer_key, hashes.SHA256())

    def write(fname, obj):
        if isinstance(obj, x509.Certificate):
            (d / fname).write_bytes(obj.public_bytes(ser.Encoding.PEM))
        else:
            (d / fname).write_bytes(obj.private_bytes(ser.Encoding.PEM, ser.PrivateFormat.PKCS8,
                                                      ser.NoEncryption()))

    ca_key, other_key, server_key = (ec.generate_private_key(ec.SECP256R1()) for _ in range(3))
    write("ca.pem", cert("binlog-grammar test CA", ca_key, "binlog-grammar test CA", ca_key, True))
    write("ca.key", ca_key)
    write("other.pem", cert("someone else", other_key, "someone else", other_key, True))
    write("other.key", other_key)
    write("server.pem", cert("localhost", server_key, "binlog-grammar test CA", ca_key, False,
                             [x509.DNSName("localhost"), x509.IPAddress(ipaddress.ip_address("127.0.0.1"))]))
    write("server.key", server_key)
    return d
