"""Building the message a transport sends, with the standard library's ``email`` package.

:func:`compose` turns a :class:`~docbase.core.ports.MailMessage` into an
:class:`email.message.EmailMessage`: ``multipart/alternative`` with a text part (the
message's ``text``, else derived from its HTML) and the HTML part. ``From`` shows
``sendername`` and ``company`` (``"Support (Acme Inc)" <mail.from>``, the company
alone when there is no sender name, the bare address when neither is given). The
addresses are ASCII (the domain in IDNA form) unless a mailbox name is not, which then
needs a server offering SMTPUTF8. The ``email`` package itself refuses a header value
with a line break, a second guard behind the checks of :mod:`docbase.core.mail.requests`.
"""

from __future__ import annotations

import datetime
from email.headerregistry import Address
from email.message import EmailMessage
from email.policy import SMTP, SMTPUTF8
from email.utils import format_datetime, make_msgid

from docbase.core.errors import MailDeliveryError
from docbase.core.mail.plaintext import html_to_text
from docbase.core.ports import MailMessage


def display_name(sendername: str, company: str) -> str:
    """The display name of ``From``: the sender's name, with the company in brackets."""
    if sendername and company:
        return f"{sendername} ({company})"
    return sendername or company


def sender_address(sender: str, name: str = "") -> Address:
    """Parse the ``mail.from`` address (``user@host``), with an optional display name.

    Raises:
        ValueError: ``sender`` is not one bare address.

    """
    if "".join(sender.splitlines()) != sender or "<" in sender:
        raise ValueError(f"{sender!r} is not a bare address (user@host)")
    address = Address(display_name=name, addr_spec=sender)
    if not address.username or not address.domain:
        raise ValueError(f"{sender!r} is not an address (user@host)")
    return address


def message_id(key: str, sender: str) -> str:
    """A ``Message-ID`` made of ``key`` (an outbound record's id) and the sender's domain."""
    return f"<{key}.docbase@{sender.rpartition('@')[2] or 'localhost'}>"


def compose(message: MailMessage) -> EmailMessage:
    """Build the message to send: headers, a text part and an HTML part.

    Raises:
        MailDeliveryError: an address or header value cannot be put in a message.

    """
    ascii_only = all(a.isascii() for a in (message.sender, *message.to))
    email = EmailMessage(policy=SMTP if ascii_only else SMTPUTF8)
    try:
        email["From"] = sender_address(message.sender,
                                       display_name(message.sendername, message.company))
        email["To"] = tuple(Address(addr_spec=address) for address in message.to)
        email["Subject"] = message.subject
        email["Date"] = format_datetime(datetime.datetime.now(datetime.UTC))
        email["Message-ID"] = message.message_id or make_msgid(
            domain=message.sender.rpartition("@")[2] or None)
    except (ValueError, TypeError, IndexError) as exc:
        raise MailDeliveryError(f"cannot build the message: {exc}") from None
    if not message.to:
        raise MailDeliveryError("cannot build the message: it has no recipient")
    email.set_content(message.text if message.text is not None
                      else html_to_text(message.html))
    email.add_alternative(message.html, subtype="html")
    return email
