"""Showing stored settings to an operator: plain values as they are, secrets as ``***``.

Used by ``docbase settings list`` and the console's settings page, so both hide the
same values: every setting not named in :data:`SHOWN` (passwords, signing secrets,
API tokens of mail providers) is shown as ``***``.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import msgspec

from docbase.core.settings.limits import DATABASE_LIMITS

SHOWN = frozenset({
    "mail.transport", "mail.from", "mail.smtp.host", "mail.smtp.port", "mail.smtp.starttls",
    "mail.smtp.tls", "mail.smtp.username", "mail.smtp.timeout", "auth.jwt.issuer",
    "auth.jwt.audience", "auth.jwt.roles_claim", "auth.login.lifetime",
    "auth.login.max_failures", "auth.login.lockout", "auth.users.paths", "auth.users.methods",
    "realtime.global",
    "schema.mode", "media.orphan_grace", "backups.schedule", "backups.keep",
    *(f"limits.{name}" for name in DATABASE_LIMITS),
})
"""Settings whose values may be shown; every other value is a secret."""
MASK = "***"


def leaves(tree: dict[str, Any], prefix: str = "") -> Iterator[tuple[str, Any]]:
    """Every ``(dotted path, value)`` of a settings tree (an empty object is a value)."""
    for key, value in tree.items():
        path = f"{prefix}{key}"
        if isinstance(value, dict) and value:
            yield from leaves(value, path + ".")
        else:
            yield path, value


def shown_settings(tree: dict[str, Any]) -> list[tuple[str, str]]:
    """``(path, value as JSON or *** for a secret)`` of every stored setting, sorted."""
    return [(path, msgspec.json.encode(value).decode() if path in SHOWN else MASK)
            for path, value in sorted(leaves(tree))]


def parse_value(text: str) -> Any:
    """A value typed by an operator: JSON when it is valid JSON, else the text itself."""
    try:
        return msgspec.json.decode(text)
    except msgspec.DecodeError:
        return text
