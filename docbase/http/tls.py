"""The certificate the bundled server uses when the operator configures none.

On first start ``docbase serve`` writes a self-signed certificate and its private key
into the data directory; later starts reuse them. Clients then trust that certificate
(``curl --cacert DIR/cert.pem``) or are told to skip verification (``curl -k``).
"""

from __future__ import annotations

import datetime
import ipaddress
import os
import socket
from pathlib import Path
from typing import TYPE_CHECKING

from docbase.core.errors import ConfigurationError
from docbase.core.plugins import lazy_module

if TYPE_CHECKING:
    from cryptography import x509
    from cryptography.hazmat.primitives import hashes, serialization
    from cryptography.hazmat.primitives.asymmetric import ec
    from cryptography.x509 import oid
else:  # imported when a certificate is made: the workers, which import this, never do
    x509 = lazy_module("cryptography.x509")
    oid = lazy_module("cryptography.x509.oid")
    hashes = lazy_module("cryptography.hazmat.primitives.hashes")
    serialization = lazy_module("cryptography.hazmat.primitives.serialization")
    ec = lazy_module("cryptography.hazmat.primitives.asymmetric.ec")

CERT_FILE = "cert.pem"
KEY_FILE = "key.pem"
VALIDITY = datetime.timedelta(days=825)
"""The longest lifetime that common TLS clients still accept for a server certificate."""


def certificate_names(host: str) -> list[str]:
    """List the names the self-signed certificate is valid for when serving on ``host``.

    Always ``localhost``, ``127.0.0.1``, ``::1`` and this machine's host name, plus
    ``host`` itself unless it is a wildcard address.
    """
    names = ["localhost", "127.0.0.1", "::1", socket.gethostname().lower()]
    if host not in ("", "0.0.0.0", "::") and host.lower() not in names:
        names.append(host.lower())
    return names


def ensure_self_signed(data_dir: Path, host: str) -> tuple[Path, Path, bool]:
    """Return ``(certfile, keyfile, created)`` in ``data_dir``, creating them if absent.

    The private key file is written with mode 0600.

    Raises:
        ConfigurationError: only one of the two files exists.

    """
    certfile, keyfile = data_dir / CERT_FILE, data_dir / KEY_FILE
    if certfile.exists() and keyfile.exists():
        return certfile, keyfile, False
    if certfile.exists() or keyfile.exists():
        present, missing = (certfile, keyfile) if certfile.exists() else (keyfile, certfile)
        raise ConfigurationError(
            f"{present} exists but {missing} does not: remove {present} to have a new "
            "self-signed certificate made, or pass --certfile and --keyfile"
        )
    cert_pem, key_pem = self_signed_certificate(certificate_names(host))
    _write_private(keyfile, key_pem)
    certfile.write_bytes(cert_pem)
    return certfile, keyfile, True


def self_signed_certificate(names: list[str]) -> tuple[bytes, bytes]:
    """Make a self-signed certificate for ``names`` (DNS names or IP addresses), as PEM.

    Returns ``(certificate, private key)``; the key is an unencrypted PKCS#8 EC P-256
    key, which every TLS stack the server may run on accepts.
    """
    key = ec.generate_private_key(ec.SECP256R1())
    subject = x509.Name([
        x509.NameAttribute(oid.NameOID.COMMON_NAME, names[0]),
        x509.NameAttribute(oid.NameOID.ORGANIZATION_NAME, "docbase self-signed"),
    ])
    alt_names: list[x509.GeneralName] = []
    for name in names:
        try:
            alt_names.append(x509.IPAddress(ipaddress.ip_address(name)))
        except ValueError:
            alt_names.append(x509.DNSName(name))
    now = datetime.datetime.now(datetime.UTC)
    certificate = (
        x509.CertificateBuilder()
        .subject_name(subject)
        .issuer_name(subject)
        .public_key(key.public_key())
        .serial_number(x509.random_serial_number())
        .not_valid_before(now - datetime.timedelta(minutes=5))
        .not_valid_after(now + VALIDITY)
        .add_extension(x509.SubjectAlternativeName(alt_names), critical=False)
        .add_extension(x509.BasicConstraints(ca=False, path_length=None), critical=True)
        .add_extension(
            x509.KeyUsage(
                digital_signature=True, content_commitment=False, key_encipherment=False,
                data_encipherment=False, key_agreement=False, key_cert_sign=False,
                crl_sign=False, encipher_only=False, decipher_only=False,
            ),
            critical=True,
        )
        .add_extension(x509.ExtendedKeyUsage([oid.ExtendedKeyUsageOID.SERVER_AUTH]), critical=False)
        .sign(key, hashes.SHA256())
    )
    cert_pem = certificate.public_bytes(serialization.Encoding.PEM)
    key_pem = key.private_bytes(
        serialization.Encoding.PEM,
        serialization.PrivateFormat.PKCS8,
        serialization.NoEncryption(),
    )
    return cert_pem, key_pem


def _write_private(path: Path, content: bytes) -> None:
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
    with os.fdopen(fd, "wb") as file:
        file.write(content)
