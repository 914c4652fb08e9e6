"""A capture-only :class:`~docbase.core.ports.Mailer`.

The outbox used when no SMTP transport is configured, and in tests.
"""

from __future__ import annotations

from docbase.core.errors import MailDeliveryError
from docbase.core.ids import new_object_id
from docbase.core.ports import MailMessage


class OutboxMailer:
    """Keeps every sent message in :attr:`sent`, in order, under a new transport id."""

    def __init__(self) -> None:
        self.sent: list[tuple[str, MailMessage]] = []

    async def send(self, message: MailMessage) -> str:
        """Keep the contract of :meth:`~docbase.core.ports.Mailer.send`."""
        if not message.to or not all("@" in address for address in message.to):
            raise MailDeliveryError(f"refusing to send to {list(message.to)!r}")
        transport_id = new_object_id()
        self.sent.append((transport_id, message))
        return transport_id
