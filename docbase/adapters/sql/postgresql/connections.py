"""A few asyncpg connections of a process's own, besides SQLAlchemy's pool.

The short ways around SQLAlchemy on PostgreSQL (:mod:`.point_reads`: gets, plain
lists and counts; :mod:`.inserts`: creates and updates) share one pool per engine
(:func:`pool_for`): up to :data:`CONNECTIONS` asyncpg connections, opened on first use,
running only single statements in autocommit, so that a connection goes back to the idle
list without a reset, and each statement is prepared once per connection (asyncpg's
statement cache). A caller finding every connection busy waits for one: going the usual
way instead costs several times the CPU of the wait (``docs/benchmarks.md``, run 7 and
pgspeed). When the process is on another event loop than the first one, the pool was
closed, or a connection cannot be opened (then for :data:`RETRY_CONNECT_SECONDS`),
:meth:`DirectConnections.take` answers ``None`` and the caller goes the usual way, which
decides what an unreachable server means.

The engine module registers how to connect (:func:`register`) for the engines it makes;
an engine handed in by a caller has no short way.
"""

from __future__ import annotations

import asyncio
import time
import weakref
from collections.abc import Awaitable, Callable
from typing import Any

Connect = Callable[[], Awaitable[Any]]
_connectors: weakref.WeakKeyDictionary[Any, Connect] = weakref.WeakKeyDictionary()
_pools: weakref.WeakKeyDictionary[Any, DirectConnections] = weakref.WeakKeyDictionary()

CONNECTIONS = 8
"""The most asyncpg connections one process opens per engine, besides SQLAlchemy's pool.

Two workers on two cores are busy with 8 statements in flight each (more commits in
flight share a WAL flush, run 7); two workers then hold 16 such connections."""

RETRY_CONNECT_SECONDS = 5.0
"""How long after a failed connect the short way is not tried (the usual way answers)."""


def register(engine: Any, connect: Connect) -> None:
    """Say how to open an asyncpg connection to the database of ``engine``."""
    _connectors[engine] = connect


def connector_for(engine: Any) -> Connect | None:
    """How to connect to ``engine``'s database, or ``None`` when it was not registered."""
    return _connectors.get(engine)


def pool_for(engine: Any) -> DirectConnections | None:
    """The process's queued connections to ``engine``'s database (``None``: not registered).

    One pool per engine, shared by its point reads, lists and single-statement writes;
    a pool that was closed is replaced by a new one (an engine opened again).
    """
    pool = _pools.get(engine)
    if pool is None or pool.closed:
        connect = connector_for(engine)
        if connect is None:
            return None
        pool = _pools[engine] = DirectConnections(connect, CONNECTIONS, queue=True)
    return pool


class DirectConnections:
    """Up to ``limit`` asyncpg connections, each used by one caller at a time.

    With ``queue``, a caller finding every connection busy waits for one rather than
    going the usual way (every statement is bounded by ``statement_timeout``).
    """

    def __init__(self, connect: Connect, limit: int, *, queue: bool = False) -> None:
        self._connect = connect
        self._limit = limit
        self._queue = queue
        self._turns: asyncio.Semaphore | None = None
        self._idle: list[Any] = []
        self._open = 0
        self._loop: asyncio.AbstractEventLoop | None = None
        self._closed = False
        self._retry_at = 0.0

    @property
    def closed(self) -> bool:
        """Whether :meth:`close` was called (then :meth:`take` answers ``None``)."""
        return self._closed

    async def take(self) -> Any:
        """An idle or new connection, or ``None``: go the usual way."""
        loop = asyncio.get_running_loop()
        if self._closed:
            return None
        if self._loop is None:
            self._loop = loop
        elif loop is not self._loop:
            return None
        if not self._queue:
            return await self._take_now()
        if self._turns is None:
            self._turns = asyncio.Semaphore(self._limit)
        await self._turns.acquire()  # then a connection is idle, or one more may open
        connection = None
        try:
            connection = await self._take_now()
        finally:
            if connection is None:
                self._turns.release()
        return connection

    async def _take_now(self) -> Any:
        while self._idle:
            connection = self._idle.pop()
            if not connection.is_closed():
                return connection
            self._open -= 1  # the server closed it while idle (a restart): never used
        if self._open >= self._limit or time.monotonic() < self._retry_at:
            return None
        self._open += 1
        try:
            return await self._connect()
        except BaseException as exc:
            self._open -= 1
            if not isinstance(exc, Exception):  # cancelled while connecting
                raise
            self._retry_at = time.monotonic() + RETRY_CONNECT_SECONDS
            return None  # unreachable now: the usual way reports it

    async def give_back(self, connection: Any) -> None:
        """Return a connection whose statement ended (closed if this pool was closed)."""
        if self._closed:
            self._open -= 1
            await connection.close()
        else:
            self._idle.append(connection)
        self._next_turn()

    def drop(self, connection: Any) -> None:
        """Terminate a connection that failed or whose statement was interrupted."""
        self._open -= 1
        connection.terminate()
        self._next_turn()

    def _next_turn(self) -> None:
        if self._turns is not None:
            self._turns.release()

    async def close(self) -> None:
        """Close the idle connections (busy ones close when their statement ends)."""
        self._closed = True
        idle, self._idle = self._idle, []
        for connection in idle:
            self._open -= 1
            await connection.close()
