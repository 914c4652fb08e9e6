"""Hooks: functions the pipelines run before and after a collection's operations.

A hook is an async callable receiving the event of its point: a
:class:`~docbase.core.events.WriteEvent` for the write points, a
:class:`~docbase.core.events.ReadEvent` for :attr:`HookPoint.BEFORE_READ`.
``BEFORE_*`` hooks may change the event (the documents, the body, the query) or raise
a :class:`~docbase.core.errors.DocbaseError` to refuse the operation (nothing is
written then); ``AFTER_*`` hooks see what was stored. A hook may be limited to one
collection and to some HTTP verbs (``PUT`` but not ``PATCH``): that is how the
user-facing :class:`~docbase.core.hooks.points.Hook` names map onto these points.
"""

from __future__ import annotations

import enum
from collections import defaultdict
from collections.abc import Awaitable, Callable, Iterable
from typing import Any, NamedTuple, TypeAlias

from docbase.core.events import Operation


class HookPoint(enum.StrEnum):
    """Where in the pipelines a hook runs."""

    BEFORE_READ = "before_read"
    BEFORE_INSERT = "before_insert"
    AFTER_INSERT = "after_insert"
    BEFORE_UPDATE = "before_update"
    AFTER_UPDATE = "after_update"
    BEFORE_DELETE = "before_delete"
    AFTER_DELETE = "after_delete"

    @classmethod
    def before(cls, operation: Operation) -> HookPoint:
        """The point that runs before ``operation``."""
        return cls(f"before_{operation}")

    @classmethod
    def after(cls, operation: Operation) -> HookPoint:
        """The point that runs after ``operation``."""
        return cls(f"after_{operation}")


HookFunction: TypeAlias = Callable[[Any], Awaitable[None]]
"""An async callable taking the event of its hook point."""


class _Registered(NamedTuple):
    collection: str | None
    methods: frozenset[str] | None
    hook: HookFunction


class HookRegistry:
    """Hooks by point, optionally limited to one collection, run in registration order."""

    def __init__(self) -> None:
        self._hooks: defaultdict[HookPoint, list[_Registered]] = defaultdict(list)

    def on(self, point: HookPoint, hook: HookFunction, *, collection: str | None = None,
           methods: Iterable[str] | None = None) -> None:
        """Register ``hook`` at ``point`` (for every collection unless one is given).

        ``methods`` limits it to writes standing for these HTTP verbs (a read is
        ``GET``); ``None`` runs it for all.

        Raises:
            ValueError: ``point`` is not a :class:`HookPoint`.

        """
        verbs = None if methods is None else frozenset(m.upper() for m in methods)
        self._hooks[HookPoint(point)].append(_Registered(collection, verbs, hook))

    def registered(self, point: HookPoint, collection: str,
                   method: str | None = None) -> list[HookFunction]:
        """The hooks that run at ``point`` for ``collection`` (and ``method``), in order."""
        return [entry.hook for entry in self._hooks.get(point, ())
                if entry.collection in (None, collection)
                and (entry.methods is None or method is None or method in entry.methods)]

    async def run(self, point: HookPoint, event: Any) -> None:
        """Run the hooks of ``point`` for the event's collection and verb, in order."""
        method = getattr(event, "method", "GET")
        for hook in self.registered(point, event.collection, method):
            await hook(event)
