"""PostgreSQL ``LISTEN/NOTIFY`` as the change log's :class:`~docbase.core.ports.ChangeSignal`.

``notify`` has ``pg_notify`` sent on a channel named after the store's schema (several
docbase databases may share one PostgreSQL database in different schemas), outside any
transaction so it is delivered at once, by a background task so no writer waits for it.
The first ``wait`` takes one connection of the pool for good and ``LISTEN``s on it;
each notification starts a new generation of a
:class:`~docbase.core.changes.signal.LocalChangeSignal`, on which the readers of this
process sleep. When that connection is lost, readers fall back to their poll and the
next ``wait`` (at most every :data:`RELISTEN_SECONDS`) listens again.
"""

from __future__ import annotations

import asyncio
import hashlib
import logging
import time
from collections.abc import Callable
from typing import TYPE_CHECKING

import sqlalchemy as sa

from docbase.adapters.sql.backend import SqlBackend
from docbase.core.changes.signal import LocalChangeSignal
from docbase.core.errors import DocbaseError

if TYPE_CHECKING:
    from sqlalchemy.ext.asyncio import AsyncConnection, AsyncEngine

logger = logging.getLogger("docbase.changes")

RELISTEN_SECONDS = 5.0
"""How long after a failed or lost ``LISTEN`` connection the next attempt waits."""


def _notification(channel: str) -> Callable[[sa.Connection], object]:
    statement = sa.select(sa.func.pg_notify(channel, ""))
    return lambda conn: conn.execute(statement)


class PostgresChangeSignal:
    """Notifications between every process using the same PostgreSQL schema."""

    def __init__(self, backend: SqlBackend) -> None:
        assert not isinstance(backend.engine, sa.Engine), "PostgreSQL runs on asyncpg"
        self.backend = backend
        self.engine: AsyncEngine = backend.engine
        self._local = LocalChangeSignal()
        self._channel: str | None = None
        self._listener: AsyncConnection | None = None
        self._lost_listener: AsyncConnection | None = None
        self._starting: asyncio.Task[None] | None = None
        self._sender: asyncio.Task[None] | None = None
        self._pending = False
        self._next_attempt = 0.0

    async def channel(self) -> str:
        """The channel of this schema: ``docbase_`` and a digest of the schema's name."""
        if self._channel is None:
            schema = await self.backend.run(
                lambda conn: conn.execute(sa.text("SELECT current_schema()")).scalar(),
                write=False)
            digest = hashlib.sha256(str(schema).encode()).hexdigest()[:24]
            self._channel = f"docbase_{digest}"
        return self._channel

    async def notify(self) -> None:
        """Have ``pg_notify`` sent on this schema's channel, without waiting for it.

        One task sends them, one after the other: a writer does not wait a round trip,
        and notifications asked for while one is on its way are sent as one.
        """
        self._pending = True
        if self._sender is None or self._sender.done():
            self._sender = asyncio.create_task(self._send(), name="docbase NOTIFY")

    async def _send(self) -> None:
        while self._pending:
            self._pending = False
            try:
                await self.backend.run(_notification(await self.channel()), write=False)
            except DocbaseError as exc:  # readers still find the entry at their next poll
                logger.warning("NOTIFY failed (readers poll): %s", exc.message)

    async def wait(self, seen: int, within: float) -> int:
        """Listen (once per process) and wait for a notification newer than ``seen``."""
        if (self._listener is None and self._starting is None
                and time.monotonic() >= self._next_attempt):
            # its own task: a waiter cancelled half-way must not leak the connection
            self._starting = asyncio.create_task(self._listen(), name="docbase LISTEN")
        return await self._local.wait(seen, within)

    async def _listen(self) -> None:
        await self._discard(self._lost_listener)
        self._lost_listener = connection = None
        try:
            channel = await self.channel()
            connection = await self.engine.connect()
            raw = await connection.get_raw_connection()
            driver = raw.driver_connection
            assert driver is not None
            await driver.add_listener(channel, self._notified)
            driver.add_termination_listener(self._lost)
        # asyncpg's own errors as well as SQLAlchemy's: listening is best effort, the
        # readers poll meanwhile
        except Exception as exc:
            self._next_attempt = time.monotonic() + RELISTEN_SECONDS
            logger.warning("cannot LISTEN for changes (readers poll): %s", exc)
            await self._discard(connection)
            return
        finally:
            self._starting = None
        self._listener = connection
        self._local.bump()  # readers read once more: a change may have come before LISTEN

    def _notified(self, *_args: object) -> None:
        self._local.bump()

    def _lost(self, *_args: object) -> None:
        self._listener, self._lost_listener = None, self._listener
        self._next_attempt = time.monotonic() + RELISTEN_SECONDS
        self._local.bump()  # readers poll now rather than trusting a dead listener

    async def close(self) -> None:
        """Stop listening: the connection is discarded, never handed to another user."""
        for task in (self._starting, self._sender):
            if task is not None:
                await asyncio.gather(task, return_exceptions=True)
        listener, lost = self._listener, self._lost_listener
        self._listener = self._lost_listener = None
        await self._discard(listener)
        await self._discard(lost)

    @staticmethod
    async def _discard(connection: AsyncConnection | None) -> None:
        if connection is not None:
            await connection.invalidate()
            await connection.close()
