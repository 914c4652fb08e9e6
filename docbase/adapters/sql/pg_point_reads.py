"""Lookups by primary key on PostgreSQL, straight through asyncpg.

A get by id through SQLAlchemy's asyncio engine costs ~200 µs in the process (a greenlet
for the pool checkout, the execution context, the adaptation of asyncpg, the return);
asyncpg alone on an open connection ~40-60 µs (``docs/benchmarks.md``). So
:class:`PgPointReader` keeps a few asyncpg connections of its own per process (never
more than :data:`CONNECTIONS`, see :mod:`.pg_connections`), each running the lookup as a
statement asyncpg prepares once per connection. When every connection is busy, or
anything fails (the connection is then dropped), the lookup answers :data:`UNANSWERED`
and the caller asks the usual way.
"""

from __future__ import annotations

from typing import Any, Final

from docbase.adapters.sql import schema
from docbase.adapters.sql.pg_connections import DirectConnections, connector_for

UNANSWERED: Final = None
CONNECTIONS = 4
"""The most asyncpg connections one reader opens (besides SQLAlchemy's pool)."""


def reader_for(engine: Any) -> PgPointReader | None:
    """Return a reader for ``engine``, or ``None`` when it was not registered."""
    connect = connector_for(engine)
    return None if connect is None else PgPointReader(connect)


class PgPointReader(DirectConnections):
    """Primary-key lookups over up to :data:`CONNECTIONS` asyncpg connections."""

    def __init__(self, connect: Any) -> None:
        super().__init__(connect, CONNECTIONS)

    async def body(self, number: int, document_id: str) -> list[tuple[str]] | None:
        """Return the body row of ``document_id`` in table ``number`` (``[]``: no such row).

        Returns :data:`UNANSWERED` when every connection is busy, on another event loop
        than the first one, or when the lookup failed.
        """
        connection = await self.take()
        if connection is None:
            return UNANSWERED
        try:
            rows = await connection.fetch(schema.lookup_sql(number, "body::text", "$1"),
                                          document_id)
        except BaseException as exc:  # lost, table dropped, cancelled: drop the connection
            self.drop(connection)
            if not isinstance(exc, Exception):
                raise
            return UNANSWERED  # the usual way decides what the failure means
        await self.give_back(connection)
        return [(row[0],) for row in rows]
