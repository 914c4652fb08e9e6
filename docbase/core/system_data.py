"""What a feature that keeps records in system collections is handed, as protocols.

API keys, users, revoked tokens, login throttling and stored settings live in system
collections and are read and written straight through the
:class:`~docbase.core.ports.DocumentStore`: that is system code, not a principal's
read (``docs/architecture.md``, "Floors"). These functions depend on the few things
they use, declared here, never on :class:`~docbase.core.database.Database`; a
``Database`` has them all, so callers that hold one pass it as it is.
"""

from __future__ import annotations

from typing import Any, Protocol

from docbase.core.auth.cache import SystemCache
from docbase.core.ports import DocumentStore
from docbase.core.settings.stored import DatabaseSettings


class SettingsSource(Protocol):
    """The stored settings of one database (``_settings``), cached for a second."""

    async def load(self) -> DatabaseSettings:
        """The settings, defaults filled in."""

    async def tree(self) -> dict[str, Any]:
        """The settings as stored, as nested mappings."""

    async def set(self, path: str, value: Any) -> DatabaseSettings:
        """Store ``value`` at the dotted ``path``; return the settings now in force."""


class SystemData(Protocol):
    """The raw store of one database, its system cache and its name."""

    @property
    def name(self) -> str:
        """The database's name (it scopes tokens and leases)."""

    @property
    def store(self) -> DocumentStore:
        """The unscoped document store: system code only, never a principal's read."""

    @property
    def auth_cache(self) -> SystemCache:
        """The bounded, short-lived cache of system-collection lookups."""


class SettledSystemData(SystemData, Protocol):
    """:class:`SystemData` and the stored settings."""

    @property
    def settings(self) -> SettingsSource:
        """The stored per-database settings."""
