"""The delivery ports: the interfaces through which docbase sends mail and webhooks.

A mail transport implements :class:`Mailer`, an HTTP client :class:`WebhookSender`.
Like the storage ports of :mod:`docbase.core.ports` (which offers these too), every
method is async and the contract is written in the docstrings.
"""

from __future__ import annotations

from typing import Protocol

import msgspec


class MailMessage(msgspec.Struct, frozen=True):
    """One outbound message of ``POST /mail``, as a transport receives it.

    ``sender`` is the bare address of ``mail.from``; ``sendername`` and ``company`` make
    the display name of ``From``. ``text`` is derived from ``html`` when ``None``.
    ``message_id`` is the ``Message-ID`` header to send (``<...@domain>``), stable over
    retries of one outbound record; a new one is made when empty.
    :func:`docbase.core.mail.compose` builds the standard-library message from it.
    """

    to: tuple[str, ...]
    subject: str
    html: str
    sender: str
    company: str = ""
    sendername: str = ""
    text: str | None = None
    message_id: str = ""


class Mailer(Protocol):
    """Sends mail through one transport (SMTP, or a capture-only outbox)."""

    async def send(self, message: MailMessage) -> str:
        """Send one message and return the transport's id for it.

        A transport may keep its connection open between sends, until :meth:`close`.

        Raises:
            MailDeliveryError: the transport refused or failed to deliver it;
                ``MailTransportDown`` when the transport cannot be reached at all, so
                later messages would fail alike.

        """

    async def close(self) -> None:
        """Release a connection kept between sends (sending again reconnects)."""


class WebhookRequest(msgspec.Struct, frozen=True):
    """One webhook delivery as a transport sends it.

    ``address`` is the IP address ``url``'s host was resolved to and checked against
    the private-address rule (``docbase/core/webhooks/targets.py``); the transport
    connects to it and nowhere else, sending the URL's host in ``Host`` and as the TLS
    server name, so a second resolution cannot lead elsewhere.
    """

    url: str
    address: str
    headers: tuple[tuple[str, str], ...]
    body: bytes
    timeout: float


class WebhookSender(Protocol):
    """POSTs webhook deliveries (an HTTP client; redirects are never followed)."""

    async def post(self, request: WebhookRequest) -> int:
        """Send one delivery and return the receiver's HTTP status.

        Raises:
            WebhookDeliveryError: no answer within ``request.timeout`` (connection
                refused, TLS failure, timeout).

        """

    async def close(self) -> None:
        """Release kept connections (sending again reconnects)."""
