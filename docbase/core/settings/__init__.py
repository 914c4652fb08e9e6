"""Settings of one database: its limits, and the stored settings (mail, auth, secrets).

:class:`~docbase.core.settings.store.SettingsStore` reads and changes the stored ones;
it is imported from its module (it needs the query package, which needs ``Limits``).
"""

from __future__ import annotations

from docbase.core.settings.limits import AutoIndexing, Limits
from docbase.core.settings.stored import (
    AuthSettings,
    DatabaseSettings,
    JwtSettings,
    LoginSettings,
    MailSettings,
    MediaSettings,
    RealtimeSettings,
    SchemaSettings,
    SmtpSettings,
    UserAccessSettings,
)

__all__ = [
    "AuthSettings",
    "AutoIndexing",
    "DatabaseSettings",
    "JwtSettings",
    "Limits",
    "LoginSettings",
    "MailSettings",
    "MediaSettings",
    "RealtimeSettings",
    "SchemaSettings",
    "SmtpSettings",
    "UserAccessSettings",
]
