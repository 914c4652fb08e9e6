"""Reading and changing a database's stored settings.

The settings are one document of the system collection :data:`SETTINGS_COLLECTION`,
reached through the database's :class:`~docbase.core.ports.DocumentStore`, so every
process serving the database reads the same ones. A process trusts what it read for
at most the auth cache's time-to-live (one second, ``docbase/core/auth/cache.py``);
a change made through this process is seen by it at once. System collections are not
reachable through ``/rest``, so no endpoint ever returns a setting.
"""

from __future__ import annotations

import contextlib
import copy
import hashlib
from typing import Any

from docbase.core.auth.cache import Namespace, SystemCache
from docbase.core.changes.demand import until_every_process_logs
from docbase.core.errors import ConfigurationError, Conflict, InvalidQuery, NotFound
from docbase.core.ports import DocumentStore
from docbase.core.query import split_path
from docbase.core.settings.in_force import LimitsInForce
from docbase.core.settings.limits import Limits
from docbase.core.settings.stored import DatabaseSettings
from docbase.core.update import SetOp, UnsetOp, Update

SETTINGS_COLLECTION = "_settings"
"""The system collection holding a database's settings document."""
_SETTINGS_ID = hashlib.sha1(b"docbase database settings").hexdigest()[:24]
_LOADED: Namespace[DatabaseSettings] = Namespace("settings")


def _steps(path: str) -> tuple[str, ...]:
    try:
        steps = split_path(path, "setting")
    except InvalidQuery as exc:
        raise ConfigurationError(exc.message) from None
    if steps[0].startswith("_"):
        raise ConfigurationError(f"setting {path!r}: a name may not start with '_'")
    return steps


class SettingsStore:
    """The settings of one database, typed on every read and every change."""

    def __init__(self, store: DocumentStore, cache: SystemCache,
                 limits: LimitsInForce) -> None:
        self.store = store
        self.cache = cache
        self.limits = limits
        """The database's limits in force, which follow every read of the settings."""

    async def tree(self) -> dict[str, Any]:
        """The stored settings object as it is now (no cache)."""
        try:
            document = await self.store.get(SETTINGS_COLLECTION, _SETTINGS_ID)
        except NotFound:
            return {}
        return {k: v for k, v in document.items() if not k.startswith("_")}

    @property
    def cached_as(self) -> Namespace[DatabaseSettings]:
        """The system-cache namespace of the settings (invalidated by every change here)."""
        return _LOADED

    async def read_now(self) -> DatabaseSettings:
        """The typed settings as stored now (no cache).

        Raises:
            ConfigurationError: the stored settings do not fit their types.

        """
        settings = DatabaseSettings.from_tree(await self.tree())
        self.limits.follow(settings)
        return settings

    async def load(self) -> DatabaseSettings:
        """The typed settings, read at most once per cache lifetime.

        Raises:
            ConfigurationError: the stored settings do not fit their types.

        """
        return await self.cache.fetch(_LOADED, None, self.read_now)

    async def follow_limits(self) -> Limits:
        """The limits in force, after a read of the settings if the cached one is stale.

        Each request asks this once, so another process's change of ``limits.*`` rules
        here within the cache's lifetime. Settings that do not fit their types (stored
        by an import, say) leave the limits as they were: they are named by whatever
        reads them for itself (``docbase settings list``, the console).
        """
        with contextlib.suppress(ConfigurationError):
            await self.load()
        return self.limits.current

    async def set(self, path: str, value: Any) -> DatabaseSettings:
        """Store ``value`` at the dotted ``path``, creating the objects on the way.

        Raises:
            ConfigurationError: the path is malformed, or the result does not fit the
                typed settings (the message names the path).

        """
        steps = _steps(path)
        tree = await self.tree()
        node = changed = copy.deepcopy(tree)
        for step in steps[:-1]:
            node = node.setdefault(step, {})
            if not isinstance(node, dict):
                raise ConfigurationError(f"setting {path!r}: {step!r} holds a value, "
                                         "not an object")
        node[steps[-1]] = value
        settings = DatabaseSettings.from_tree(changed)
        self.limits.check(settings)
        await self._write(Update((SetOp(steps, value),)), {"_id": _SETTINGS_ID, **changed})
        if steps[0] == "realtime" and settings.realtime.enabled:
            await until_every_process_logs()  # realtime consumes the change log
        self.limits.follow(settings)
        return settings

    async def unset(self, path: str) -> bool:
        """Remove the setting at ``path``; return whether there was one.

        Raises:
            ConfigurationError: the path is malformed.

        """
        steps = _steps(path)
        try:
            DatabaseSettings.from_tree(await self.tree()).lookup(".".join(steps))
        except KeyError:
            return False
        await self._write(Update((UnsetOp(steps),)), None)
        await self.read_now()  # the limits it may have lowered are the server's again
        return True

    async def _write(self, update: Update, whole: dict[str, Any] | None) -> None:
        try:
            await self.store.update(SETTINGS_COLLECTION, _SETTINGS_ID, update, stamp={})
        except NotFound:
            if whole is None:
                return
            try:
                await self.store.insert(SETTINGS_COLLECTION, [whole])
            except Conflict:  # another process stored the first setting meanwhile
                await self.store.update(SETTINGS_COLLECTION, _SETTINGS_ID, update, stamp={})
        finally:
            self.cache.invalidate(_LOADED)
