"""A real SMTP server on loopback for the mail tests (aiosmtpd), no tests here.

:func:`smtp_server` runs aiosmtpd in its own thread and records every message it
accepts, parsed with the standard library, with the envelope and the login used. It
can require STARTTLS, speak implicit TLS, require a login (offering only the
mechanisms asked for), and hold the answer to every message (which it keeps) until
:attr:`SmtpCapture.gate` opens, as a server that stored a message before the sender
learned so.
"""

from __future__ import annotations

import contextlib
import email
import email.policy
import ssl
import threading
import time
from collections.abc import Iterator
from email.message import EmailMessage
from pathlib import Path
from typing import Any

import msgspec
from aiosmtpd.controller import Controller
from aiosmtpd.smtp import AuthResult, LoginPassword

from docbase.http.tls import self_signed_certificate
from docbase.testing.loopback import free_port

REFUSED_DOMAIN = "@refused.example.com"
"""The server refuses every recipient at this domain."""


class Received(msgspec.Struct):
    """One message the server accepted."""

    mail_from: str
    rcpt_tos: list[str]
    message: Any
    login: str | None

    @property
    def email(self) -> EmailMessage:
        parsed: EmailMessage = self.message
        return parsed

    def parts(self) -> dict[str, str]:
        """The content of each part of the message, by content type."""
        return {part.get_content_type(): part.get_content().replace("\r\n", "\n").strip()
                for part in self.email.walk() if not part.is_multipart()}


class SmtpCapture:
    """The handler of the server: it records, and may hold, every message."""

    def __init__(self) -> None:
        self.received: list[Received] = []
        self.gate = threading.Event()
        self.gate.set()
        self.arrived = threading.Event()
        self.users: dict[str, str] = {}
        self.logins: list[tuple[str, str, bool]] = []
        """``(mechanism, login, accepted)`` of every login attempt."""

    def authenticate(self, server: Any, session: Any, envelope: Any, mechanism: str,
                     auth_data: Any) -> AuthResult:
        login = auth_data.login.decode() if isinstance(auth_data, LoginPassword) else ""
        ok = isinstance(auth_data, LoginPassword) and \
            self.users.get(login) == auth_data.password.decode()
        self.logins.append((mechanism, login, ok))
        return AuthResult(success=ok, handled=False, auth_data=auth_data)

    async def handle_RCPT(self, server: Any, session: Any, envelope: Any,
                          address: str, options: list[str]) -> str:
        if address.endswith(REFUSED_DOMAIN):
            return "550 5.1.1 no such mailbox here"
        envelope.rcpt_tos.append(address)
        return "250 OK"

    async def handle_DATA(self, server: Any, session: Any, envelope: Any) -> str:
        login = session.auth_data.login.decode() if session.authenticated else None
        message = email.message_from_bytes(envelope.original_content,
                                           policy=email.policy.default)
        self.received.append(Received(envelope.mail_from, list(envelope.rcpt_tos),
                                      message, login))
        self.arrived.set()
        while not self.gate.is_set():  # held: kept, but the client waits for the answer
            await _sleep()
        return "250 Message accepted for delivery"

    def subjects(self) -> list[str]:
        return [str(r.email["Subject"]) for r in self.received]


async def _sleep() -> None:
    import asyncio

    await asyncio.sleep(0.01)


class SmtpServer(msgspec.Struct):
    """A running test SMTP server."""

    host: str
    port: int
    capture: SmtpCapture
    cacert: str | None
    controller: Any

    @property
    def received(self) -> list[Received]:
        return self.capture.received

    def settings(self, **extra: Any) -> dict[str, Any]:
        """The ``mail`` settings of a database sending through this server."""
        smtp: dict[str, Any] = {"host": self.host, "port": self.port,
                                "starttls": self.cacert is not None, "timeout": 5}
        if self.cacert is not None:
            smtp["cacert"] = self.cacert
        smtp.update(extra)
        return {"transport": "smtp", "from": "noreply@example.com", "smtp": smtp}


def tls_files(directory: Path) -> tuple[Path, Path, str]:
    """A self-signed certificate for 127.0.0.1: ``(certfile, keyfile, certificate PEM)``."""
    cert_pem, key_pem = self_signed_certificate(["localhost", "127.0.0.1"])
    certfile, keyfile = directory / "smtp-cert.pem", directory / "smtp-key.pem"
    certfile.write_bytes(cert_pem)
    keyfile.write_bytes(key_pem)
    return certfile, keyfile, cert_pem.decode()


@contextlib.contextmanager
def smtp_server(
    directory: Path | None = None,
    *,
    mode: str = "plain",
    users: dict[str, str] | None = None,
    mechanisms: tuple[str, ...] = ("LOGIN", "PLAIN"),
    port: int | None = None,
) -> Iterator[SmtpServer]:
    """Run an SMTP server on loopback: ``mode`` is ``plain``, ``starttls`` or ``tls``.

    ``starttls`` and ``tls`` need a ``directory`` for the self-signed certificate;
    ``users`` (name to password) makes a login required, with only ``mechanisms``.
    """
    capture = SmtpCapture()
    options: dict[str, Any] = {}
    cacert = None
    if mode != "plain":
        assert directory is not None
        certfile, keyfile, cacert = tls_files(directory)
        context = ssl.create_default_context(ssl.Purpose.CLIENT_AUTH)
        context.load_cert_chain(certfile, keyfile)
        if mode == "starttls":
            options.update(tls_context=context, require_starttls=True)
        else:
            options.update(ssl_context=context)
    if users is not None:
        capture.users = users
        excluded = [m for m in ("LOGIN", "PLAIN") if m not in mechanisms]
        options.update(authenticator=capture.authenticate, auth_required=True,
                       auth_require_tls=mode != "plain", auth_exclude_mechanism=excluded)
    for _attempt in range(3):
        chosen = port or free_port()
        controller = Controller(capture, hostname="127.0.0.1", port=chosen,
                                server_hostname="localhost", **options)
        try:
            controller.start()
        except (OSError, RuntimeError):
            if port is not None:
                raise
            time.sleep(0.05)
            continue
        break
    try:
        yield SmtpServer("127.0.0.1", chosen, capture,
                         cacert if mode != "plain" else None, controller)
    finally:
        capture.gate.set()
        controller.stop()
