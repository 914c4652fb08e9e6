"""A capture-only :class:`~docbase.core.ports.Mailer`.

The outbox used when no SMTP transport is configured, and in tests.
"""

from __future__ import annotations

from collections import deque
from email.message import EmailMessage

from docbase.core.errors import MailDeliveryError
from docbase.core.mail.compose import compose
from docbase.core.ports import MailMessage


class OutboxMailer:
    """Keeps every sent message in :attr:`sent`, in order, under its ``Message-ID``.

    The message is built as a transport would build it (:attr:`built` keeps it), so a
    message the outbox accepts is one SMTP would be handed; nothing leaves the process.
    Only the newest ``kept`` are kept (a server's outbox runs for long; the outbound
    log in ``email_outbound`` keeps every message).
    """

    def __init__(self, kept: int = 1000) -> None:
        self.sent: deque[tuple[str, MailMessage]] = deque(maxlen=kept)
        self.built: deque[EmailMessage] = deque(maxlen=kept)

    async def send(self, message: MailMessage) -> str:
        """Keep the contract of :meth:`~docbase.core.ports.Mailer.send`."""
        if not message.to or not all("@" in address for address in message.to):
            raise MailDeliveryError(f"refusing to send to {list(message.to)!r}")
        email = compose(message)
        transport_id = str(email["Message-ID"])
        self.sent.append((transport_id, message))
        self.built.append(email)
        return transport_id

    async def close(self) -> None:
        """Nothing to release: the outbox keeps no connection."""
