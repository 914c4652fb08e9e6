"""The seam for server-side hooks: functions run before and after writes.

A hook is an async callable receiving a :class:`WriteEvent`. ``before_*`` hooks may
change ``event.documents`` in place or raise a :class:`~docbase.core.errors.DocbaseError`
to refuse the write (nothing is written then); ``after_*`` hooks see what was stored.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Awaitable, Callable
from typing import Any, Literal, TypeAlias

import msgspec

from docbase.core.auth.principal import Principal

HookName: TypeAlias = Literal[
    "before_insert", "after_insert", "before_update", "after_update",
    "before_delete", "after_delete",
]


class WriteEvent(msgspec.Struct):
    """One write as a hook sees it."""

    collection: str
    principal: Principal
    documents: list[dict[str, Any]] = msgspec.field(default_factory=list)
    ids: list[str] = msgspec.field(default_factory=list)
    body: dict[str, Any] | None = None


Hook: TypeAlias = Callable[[WriteEvent], Awaitable[None]]


class HookRegistry:
    """Hooks by event name, optionally limited to one collection."""

    def __init__(self) -> None:
        self._hooks: defaultdict[str, list[tuple[str | None, Hook]]] = defaultdict(list)

    def on(self, name: HookName, hook: Hook, *, collection: str | None = None) -> None:
        """Register ``hook`` for ``name`` (for every collection unless one is given)."""
        self._hooks[name].append((collection, hook))

    async def run(self, name: HookName, event: WriteEvent) -> None:
        """Run the hooks registered for ``name`` in registration order."""
        for collection, hook in self._hooks.get(name, ()):
            if collection is None or collection == event.collection:
                await hook(event)
