"""A :class:`~docbase.core.ports.ChangeSignal` within one process.

The memory adapter uses it as its signal (everything sharing its storage is in this
process); an adapter with a push mechanism across processes (PostgreSQL ``LISTEN``)
bumps one from its listener, so the waiting side is written once.
"""

from __future__ import annotations

import asyncio
import contextlib


class LocalChangeSignal:
    """A generation counter that waiters sleep on; :meth:`bump` wakes them all."""

    def __init__(self) -> None:
        self.generation = 0
        self._event: asyncio.Event | None = None

    def bump(self) -> None:
        """Start a new generation and wake every waiter."""
        self.generation += 1
        if self._event is not None:
            self._event.set()
            self._event = None

    async def notify(self) -> None:
        """Wake the waiters of this process (there are no others)."""
        self.bump()

    async def wait(self, seen: int, within: float) -> int:
        """Wait until the generation differs from ``seen`` or ``within`` seconds pass."""
        if self.generation != seen:
            return self.generation
        if self._event is None:
            self._event = asyncio.Event()
        with contextlib.suppress(TimeoutError):
            async with asyncio.timeout(within):
                await self._event.wait()
        return self.generation
