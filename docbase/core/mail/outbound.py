"""The outbound log: one record of the collection ``email_outbound`` per message.

A record moves ``queued`` → ``sending`` → ``sent`` or ``failed``::

    queued   written before anything is handed to a transport
    sending  claimed by one process: a PATCH at the record's expected ``_version``, so
             of several processes (server workers, a restart, ``docbase mail retry``)
             exactly one wins and the others leave the record alone
    sent     with ``transport``, ``transport_id`` and ``sent`` (the time)
    failed   with ``error`` and ``failed`` (the time); ``docbase mail retry`` takes it
             again

A record found ``queued`` at start-up was left by a process that stopped before
claiming it and is sent then. One left ``sending`` stopped while the transport had it,
and may or may not have been delivered: it is never retried by itself (at most once),
and ``docbase mail retry --sending`` takes it when the operator decides so.

Every record is written through the write pipeline of the database (hooks and the
change feed see it), as :data:`MAIL_PRINCIPAL` on behalf of the requester.
"""

from __future__ import annotations

from enum import StrEnum
from typing import Any

from docbase.core.auth.principal import Principal, on_behalf_of
from docbase.core.documents import Document
from docbase.core.errors import ValidationFailed
from docbase.core.ids import utc_now
from docbase.core.mail.compose import message_id
from docbase.core.mail.requests import MailRequest, parse_mail_body
from docbase.core.ports import MailMessage

OUTBOUND_COLLECTION = "email_outbound"
"""The collection of the outbound log (readable with a full-access key only)."""


class Status(StrEnum):
    """Where a message of the outbound log stands."""

    QUEUED = "queued"
    SENDING = "sending"
    SENT = "sent"
    FAILED = "failed"


def writer_for(requester: Principal) -> Principal:
    """The principal that writes the log for ``requester``: full access, its author.

    A key allowed ``/mail`` only may send mail, and the log is written for it, but it
    may not write (or read) ``/rest/email_outbound`` itself.
    """
    return on_behalf_of(requester)


def queued_record(request: MailRequest, sender: str) -> dict[str, Any]:
    """The body of the record of one requested message, before any attempt."""
    return {
        "to": list(request.to), "subject": request.subject, "html": request.html,
        "text": request.text, "sendername": request.sendername,
        "company": request.company, "from": sender,
        "status": Status.QUEUED.value, "attempts": 0,
    }


def claim(record: Document) -> dict[str, Any]:
    """The PATCH that takes a record to ``sending`` (at its current ``_version``)."""
    return {"status": Status.SENDING.value, "attempts": int(record.get("attempts") or 0) + 1}


def sent(transport: str, transport_id: str) -> dict[str, Any]:
    """The PATCH of a delivered record."""
    return {"status": Status.SENT.value, "transport": transport,
            "transport_id": transport_id, "sent": utc_now(), "error": None}


def failed(transport: str, error: str) -> dict[str, Any]:
    """The PATCH of a record its transport refused."""
    return {"status": Status.FAILED.value, "transport": transport, "error": error,
            "failed": utc_now()}


def message_of(record: Document) -> MailMessage:
    """The message a record holds, checked again as a request would be.

    Raises:
        ValidationFailed: the record was changed into something that cannot be sent.

    """
    fields = {name: record.get(name) for name in ("to", "subject", "html", "text",
                                                   "sendername", "company")}
    request = parse_mail_body({k: v for k, v in fields.items() if v is not None},
                              limit=1)[0]
    sender = record.get("from")
    if not isinstance(sender, str):
        raise ValidationFailed("the record has no sender address", ())
    return MailMessage(
        to=request.to, subject=request.subject, html=request.html, sender=sender,
        company=request.company, sendername=request.sendername, text=request.text,
        message_id=message_id(str(record["_id"]), sender),
    )
