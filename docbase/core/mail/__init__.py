"""Mail: ``POST /mail`` messages, the outbound log, and the transports behind the port.

``docs/mail.md`` describes the feature and its settings; the modules: ``requests``
(reading a body), ``compose`` (building the message), ``plaintext`` (the text part),
``outbound`` (the log's records and states) and ``service`` (``db.mail``).
"""

from __future__ import annotations

from docbase.core.mail.compose import compose
from docbase.core.mail.outbound import OUTBOUND_COLLECTION, Status
from docbase.core.mail.plaintext import html_to_text
from docbase.core.mail.requests import MailRequest, parse_mail_body
from docbase.core.mail.service import MailOutcome, MailService, SmtpMailerFactory

__all__ = [
    "OUTBOUND_COLLECTION",
    "MailOutcome",
    "MailRequest",
    "MailService",
    "SmtpMailerFactory",
    "Status",
    "compose",
    "html_to_text",
    "parse_mail_body",
]
