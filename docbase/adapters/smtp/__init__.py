"""The SMTP adapter: the ``smtp`` mail transport, with ``aiosmtplib``.

Chosen by the database setting ``mail.transport = "smtp"``; the composition root
(``docbase/core/composition.py``) builds a :class:`SmtpMailer` from ``mail.smtp.*``
for each batch of messages. Install it with ``pip install 'docbase[mail]'``.
"""

from __future__ import annotations

from docbase.core.errors import MissingDependencyError

try:
    import aiosmtplib  # noqa: F401
except ImportError as exc:  # pragma: no cover - exercised only without the extra
    raise MissingDependencyError("aiosmtplib", extra="mail") from exc

from docbase.adapters.smtp.mailer import SmtpMailer

__all__ = ["SmtpMailer"]
