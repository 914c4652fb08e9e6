"""Lookups by primary key on PostgreSQL, straight through asyncpg.

A get by id through SQLAlchemy's asyncio engine costs ~200 µs in the process (a greenlet
for the pool checkout, the execution context, the adaptation of asyncpg, the return);
asyncpg alone on an open connection ~40-60 µs (``docs/benchmarks.md``). So
:class:`PgPointReader` keeps a few asyncpg connections of its own per process (never
more than :data:`CONNECTIONS`), opened on first use, each running the lookup as a
statement asyncpg prepares once per connection. They run nothing else (read-only
statements in autocommit), so a connection goes back to the idle list without a reset.
When every connection is busy, or anything fails (the connection is then dropped), the
lookup answers :data:`UNANSWERED` and the caller asks the usual way.

The engine module registers how to connect (:func:`register`) for the engines it makes;
an engine handed in by a caller has no reader.
"""

from __future__ import annotations

import asyncio
import weakref
from collections.abc import Awaitable, Callable
from typing import Any, Final

from docbase.adapters.sql import schema

UNANSWERED: Final = None
CONNECTIONS = 4
"""The most asyncpg connections one reader opens (besides SQLAlchemy's pool)."""

Connect = Callable[[], Awaitable[Any]]
_connectors: weakref.WeakKeyDictionary[Any, Connect] = weakref.WeakKeyDictionary()


def register(engine: Any, connect: Connect) -> None:
    """Say how to open an asyncpg connection to the database of ``engine``."""
    _connectors[engine] = connect


def reader_for(engine: Any) -> PgPointReader | None:
    """Return a reader for ``engine``, or ``None`` when it was not registered."""
    connect = _connectors.get(engine)
    return None if connect is None else PgPointReader(connect)


class PgPointReader:
    """Primary-key lookups over up to :data:`CONNECTIONS` asyncpg connections."""

    def __init__(self, connect: Connect) -> None:
        self._connect = connect
        self._idle: list[Any] = []
        self._open = 0
        self._loop: asyncio.AbstractEventLoop | None = None
        self._closed = False

    async def body(self, number: int, document_id: str) -> list[tuple[str]] | None:
        """Return the body row of ``document_id`` in table ``number`` (``[]``: no such row).

        Returns :data:`UNANSWERED` when every connection is busy, on another event loop
        than the first one, or when the lookup failed.
        """
        loop = asyncio.get_running_loop()
        if self._closed:
            return UNANSWERED
        if self._loop is None:
            self._loop = loop
        elif loop is not self._loop:
            return UNANSWERED
        connection = self._idle.pop() if self._idle else await self._opened()
        if connection is None:
            return UNANSWERED
        try:
            rows = await connection.fetch(schema.lookup_sql(number, "body::text", "$1"),
                                          document_id)
        except BaseException as exc:  # lost, table dropped, cancelled: drop the connection
            self._open -= 1
            connection.terminate()
            if not isinstance(exc, Exception):
                raise
            return UNANSWERED  # the usual way decides what the failure means
        if self._closed:
            self._open -= 1
            await connection.close()
        else:
            self._idle.append(connection)
        return [(row[0],) for row in rows]

    async def _opened(self) -> Any:
        if self._open >= CONNECTIONS:
            return None
        self._open += 1
        try:
            return await self._connect()
        except Exception:  # unreachable now: the usual way reports it
            self._open -= 1
            return None

    async def close(self) -> None:
        """Close the idle connections (busy ones close when their lookup ends)."""
        self._closed = True
        idle, self._idle = self._idle, []
        for connection in idle:
            self._open -= 1
            await connection.close()
