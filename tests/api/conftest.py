"""Fixtures of the service client's tests: the sandbox served over TLS, with a throwaway certificate."""

from __future__ import annotations

import datetime
import ipaddress
import ssl
from pathlib import Path

import pytest

from tests.conftest import TEST_API_KEY


def make_certificate(directory: Path) -> tuple[Path, Path]:
    """A throwaway self-signed certificate for localhost and 127.0.0.1: (certificate, key) PEM files."""
    from cryptography import x509
    from cryptography.hazmat.primitives import hashes, serialization
    from cryptography.hazmat.primitives.asymmetric import ec
    from cryptography.x509.oid import NameOID

    key = ec.generate_private_key(ec.SECP256R1())
    name = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, "yield test sandbox")])
    now = datetime.datetime.now(datetime.UTC)
    certificate = (
        x509.CertificateBuilder()
        .subject_name(name)
        .issuer_name(name)
        .public_key(key.public_key())
        .serial_number(x509.random_serial_number())
        .not_valid_before(now - datetime.timedelta(minutes=5))
        .not_valid_after(now + datetime.timedelta(days=1))
        .add_extension(
            x509.SubjectAlternativeName([x509.DNSName("localhost"), x509.IPAddress(ipaddress.ip_address("127.0.0.1"))]),
            critical=False,
        )
        .add_extension(x509.BasicConstraints(ca=True, path_length=None), critical=True)
        .sign(key, hashes.SHA256())
    )
    cert_path, key_path = directory / "sandbox-cert.pem", directory / "sandbox-key.pem"
    cert_path.write_bytes(certificate.public_bytes(serialization.Encoding.PEM))
    key_path.write_bytes(
        key.private_bytes(serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8, serialization.NoEncryption())
    )
    return cert_path, key_path


@pytest.fixture
def tls_sandbox(tmp_path):
    """The sandbox served over TLS on localhost: (server, https URL, certificate file)."""
    from yieldcli.sandbox.server import SandboxServer

    cert, key = make_certificate(tmp_path)
    server = SandboxServer(tmp_path / "tls-sandbox" / "state.json", api_key=TEST_API_KEY)
    context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    context.load_cert_chain(cert, key)
    # The handshake happens in the connection's thread, on its first read, not in the accept loop.
    server._httpd.socket = context.wrap_socket(server._httpd.socket, server_side=True, do_handshake_on_connect=False)
    server.start()
    yield server, f"https://localhost:{server.port}", cert
    server.stop()
