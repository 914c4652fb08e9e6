"""Held transactions of a synchronous engine (SQLite), each on a thread kept for the next.

Starting a thread for every transaction cost about 0.5 ms of CPU, and up to 2 ms under
load: a tenth of what a keyed write (``Idempotency-Key``) itself costs. Idle threads are
kept, :attr:`ThreadTransactions.keep` of them, and stopped when the store closes
(``docs/sql-adapter.md``).
"""

from __future__ import annotations

from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from typing import Any

import sqlalchemy as sa

from docbase.adapters.sql.held import Bounded, RolledBack, ThreadHeld


class ThreadTransactions:
    """Starts a synchronous engine's held transactions, each on a thread, kept when idle."""

    keep = 4
    """Idle threads kept; more transactions at once start more, stopped once idle."""

    def __init__(self, engine: sa.Engine, bounded: Bounded, rolled_back: RolledBack) -> None:
        """Transactions on ``engine``'s connections (see :class:`ThreadHeld`)."""
        self.engine, self._bounded, self._rolled_back = engine, bounded, rolled_back
        self._idle: list[ThreadPoolExecutor] = []

    async def begin(self, begin: Callable[[sa.Connection], Any],
                    release: Callable[[], None] = lambda: None) -> ThreadHeld:
        """Start a transaction (see :class:`ThreadHeld`) on a thread of its own."""
        thread = self._idle.pop() if self._idle else ThreadPoolExecutor(
            1, thread_name_prefix="docbase-sql-transaction")

        def finished() -> None:
            if len(self._idle) < self.keep:
                self._idle.append(thread)
            else:
                thread.shutdown(wait=False)
            release()

        return await ThreadHeld(self.engine, begin, self._bounded, self._rolled_back,
                                thread=thread, release=finished).start()

    def close(self) -> None:
        """Stop the idle threads."""
        idle, self._idle = self._idle, []
        for thread in idle:
            thread.shutdown(wait=False)
