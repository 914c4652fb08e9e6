"""Hooks: functions the pipelines run before and after a collection's operations.

A hook is an async callable receiving the event of its point: a
:class:`~docbase.core.events.WriteEvent` for the write points, a
:class:`~docbase.core.events.ReadEvent` for :attr:`HookPoint.BEFORE_READ`.
``BEFORE_*`` hooks may change the event (the documents, the body, the query) or raise
a :class:`~docbase.core.errors.DocbaseError` to refuse the operation (nothing is
written then); ``AFTER_*`` hooks see what was stored.
"""

from __future__ import annotations

import enum
from collections import defaultdict
from collections.abc import Awaitable, Callable
from typing import Any, TypeAlias

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


Hook: TypeAlias = Callable[[Any], Awaitable[None]]
"""An async callable taking the event of its hook point."""


class HookRegistry:
    """Hooks by point, optionally limited to one collection, run in registration order."""

    def __init__(self) -> None:
        self._hooks: defaultdict[HookPoint, list[tuple[str | None, Hook]]] = defaultdict(list)

    def on(self, point: HookPoint, hook: Hook, *, collection: str | None = None) -> None:
        """Register ``hook`` at ``point`` (for every collection unless one is given).

        Raises:
            ValueError: ``point`` is not a :class:`HookPoint`.

        """
        self._hooks[HookPoint(point)].append((collection, hook))

    def registered(self, point: HookPoint, collection: str) -> list[Hook]:
        """The hooks that run at ``point`` for ``collection``, in order."""
        return [hook for only, hook in self._hooks.get(point, ())
                if only is None or only == collection]

    async def run(self, point: HookPoint, event: Any) -> None:
        """Run the hooks of ``point`` for the event's collection, in order."""
        for hook in self.registered(point, event.collection):
            await hook(event)
