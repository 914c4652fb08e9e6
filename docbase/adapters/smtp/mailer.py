"""A :class:`~docbase.core.ports.Mailer` that hands messages to an SMTP server.

One connection serves a batch of messages (``POST /mail`` with an array, a retry):
it is opened at the first send (implicit TLS, or STARTTLS, then login when a user
name is set) and kept until :meth:`SmtpMailer.close`. Errors of ``aiosmtplib`` and of
the network are translated in one place, :func:`delivery_errors`.
"""

from __future__ import annotations

import asyncio
import contextlib
import ssl
from collections.abc import Iterator

import aiosmtplib

from docbase.core.errors import MailDeliveryError, MailTransportDown
from docbase.core.mail.compose import compose
from docbase.core.ports import MailMessage
from docbase.core.settings.stored import SmtpSettings

_UNREACHABLE = (aiosmtplib.SMTPConnectError, aiosmtplib.SMTPServerDisconnected,
                aiosmtplib.SMTPTimeoutError, aiosmtplib.SMTPAuthenticationError,
                aiosmtplib.SMTPHeloError, aiosmtplib.SMTPNotSupported, OSError)
"""Failures after which no message of the batch would get through either."""


@contextlib.contextmanager
def delivery_errors(settings: SmtpSettings) -> Iterator[None]:
    """Translate SMTP and network failures into :class:`MailDeliveryError`.

    Raises:
        MailTransportDown: the server cannot be reached, or refuses TLS or the login.
        MailDeliveryError: the server refused this message (sender, recipients, data).

    """
    where = f"{settings.host}:{settings.port}"
    try:
        yield
    except _UNREACHABLE as exc:
        raise MailTransportDown(f"SMTP server {where}: {_describe(exc)}") from exc
    except aiosmtplib.SMTPException as exc:
        raise MailDeliveryError(f"SMTP server {where} refused the message: "
                                f"{_describe(exc)}") from exc


def _describe(exc: BaseException) -> str:
    return str(exc).strip() or type(exc).__name__


def tls_context(settings: SmtpSettings) -> ssl.SSLContext:
    """The TLS client context: the system's authorities, or only ``mail.smtp.cacert``."""
    if settings.cacert:
        return ssl.create_default_context(cadata=settings.cacert)
    return ssl.create_default_context()


class SmtpMailer:
    """Sends through the SMTP server of ``mail.smtp.*``; returns each ``Message-ID``."""

    def __init__(self, settings: SmtpSettings) -> None:
        self.settings = settings
        self._client: aiosmtplib.SMTP | None = None

    async def _connection(self) -> aiosmtplib.SMTP:
        if self._client is not None and self._client.is_connected:
            return self._client
        settings = self.settings
        client = aiosmtplib.SMTP(
            hostname=settings.host, port=settings.port, timeout=settings.timeout,
            use_tls=settings.tls, start_tls=settings.starttls and not settings.tls,
            username=settings.username, password=settings.password,
            tls_context=tls_context(settings) if settings.tls or settings.starttls else None,
        )
        try:
            await client.connect()
        except BaseException:
            client.close()  # a failed STARTTLS or login leaves the socket open otherwise
            await asyncio.sleep(0)  # and let the transport's close callback run
            raise
        self._client = client
        return client

    async def send(self, message: MailMessage) -> str:
        """Keep the contract of :meth:`~docbase.core.ports.Mailer.send`."""
        email = compose(message)
        try:
            with delivery_errors(self.settings):
                client = await self._connection()
                await client.send_message(email)
        except MailTransportDown:
            await self.close()
            raise
        return str(email["Message-ID"])

    async def close(self) -> None:
        """Say QUIT and close the connection, if one is open."""
        client, self._client = self._client, None
        if client is None or not client.is_connected:
            return
        try:
            await client.quit()
        except (aiosmtplib.SMTPException, OSError):
            client.close()
