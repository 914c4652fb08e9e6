"""The in-process change bus: where the write pipeline publishes committed writes.

Subscribers are async callables receiving a :class:`~docbase.core.events.ChangeEvent`,
called in subscription order after the write is stored. The write is committed by
then, so a failing subscriber is logged and never undoes it or fails the caller.
A durable, cross-process change log will subscribe here.
"""

from __future__ import annotations

import logging
from collections.abc import Awaitable, Callable, Sequence
from typing import TypeAlias

from docbase.core.events import ChangeEvent

logger = logging.getLogger("docbase.changes")

Subscriber: TypeAlias = Callable[[ChangeEvent], Awaitable[None]]


class ChangeBus:
    """Delivers each published :class:`ChangeEvent` to every subscriber."""

    def __init__(self) -> None:
        self._subscribers: list[Subscriber] = []

    def subscribe(self, subscriber: Subscriber) -> Callable[[], None]:
        """Add ``subscriber``; return a function that removes it again."""
        self._subscribers.append(subscriber)
        return lambda: self._subscribers.remove(subscriber)

    async def publish(self, event: ChangeEvent) -> None:
        """Hand ``event`` to every subscriber; a subscriber's failure is logged only."""
        for subscriber in list(self._subscribers):
            try:
                await subscriber(event)
            except Exception:
                logger.exception("change subscriber %r failed on %s of %s",
                                 subscriber, event.operation, event.collection)

    async def publish_all(self, events: Sequence[ChangeEvent]) -> None:
        """Hand each of ``events``, in order, to every subscriber (see :meth:`publish`)."""
        for event in events:
            await self.publish(event)
