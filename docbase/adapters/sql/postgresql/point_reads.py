"""Lookups by primary key and short lists on PostgreSQL, straight through asyncpg.

A get by id through SQLAlchemy's asyncio engine costs ~200 µs in the process (a greenlet
for the pool checkout, the execution context, the adaptation of asyncpg, the return);
asyncpg alone on an open connection ~40-60 µs (``docs/benchmarks.md``). So
:class:`PgPointReader` runs the lookup, and the pages of a list without filter or sort,
on the process's queued asyncpg connections (:func:`.connections.pool_for`), each as
a statement asyncpg prepares once per connection. When no connection can be had, or the
connection fails (it is then dropped), the read answers :data:`UNANSWERED` and the caller
asks the usual way; a statement the server refused (a list past ``statement_timeout``)
is reported as the usual way reports it (:mod:`.errors`).
"""

from __future__ import annotations

import importlib
from collections.abc import Callable, Sequence
from typing import Any, Final

from docbase.adapters.sql import schema
from docbase.adapters.sql.errors import MissingTable, translated
from docbase.adapters.sql.postgresql.connections import DirectConnections, pool_for
from docbase.core.errors import BackendError

UNANSWERED: Final = None


def reader_for(engine: Any) -> PgPointReader | None:
    """Return a reader for ``engine``, or ``None`` when it was not registered."""
    pool = pool_for(engine)
    return None if pool is None else PgPointReader(pool)


class PgPointReader:
    """Primary-key lookups and short lists over the process's queued asyncpg connections."""

    def __init__(self, pool: DirectConnections) -> None:
        self.pool = pool
        asyncpg = importlib.import_module("asyncpg")  # registered only where installed
        self._server_error: type[Exception] = asyncpg.PostgresError

    async def body(self, number: int, document_id: str) -> list[tuple[str]] | None:
        """Return the body row of ``document_id`` in table ``number`` (``[]``: no such row).

        Returns :data:`UNANSWERED` when no connection can be had, or when the lookup
        failed.
        """
        connection = await self.pool.take()
        if connection is None:
            return UNANSWERED
        try:
            rows = await connection.fetch(schema.lookup_sql(number, "body::text", "$1"),
                                          document_id)
        except BaseException as exc:  # lost, table dropped, cancelled: drop the connection
            self.pool.drop(connection)
            if not isinstance(exc, Exception):
                raise
            return UNANSWERED  # the usual way decides what the failure means
        await self.pool.give_back(connection)
        return [(row[0],) for row in rows]

    async def scalars(self, sql: str, arguments: Sequence[Any],
                      forget: Callable[[], None]) -> list[Any] | None:
        """The first column of the rows of ``sql`` (its ``$n`` bound to ``arguments``).

        :data:`UNANSWERED` when no connection can be had, the connection or the server
        failed, or the table is gone (then ``forget`` is called: the usual way finds the
        new one).

        Raises:
            DocbaseError: the server refused the statement (a timeout, a bad value), as
                the usual way would report it.

        """
        connection = await self.pool.take()
        if connection is None:
            return UNANSWERED
        try:
            rows = await connection.fetch(sql, *arguments)
        except self._server_error as exc:
            error = translated(str(getattr(exc, "sqlstate", "") or ""), str(exc))
            if not isinstance(error, BackendError):  # refused; the connection is sound
                await self.pool.give_back(connection)
                raise error from exc
            if isinstance(error, MissingTable):  # dropped elsewhere
                forget()
            self.pool.drop(connection)  # or the server ends the session: the usual way
            return UNANSWERED
        except BaseException as exc:  # lost or cancelled: the usual way decides
            self.pool.drop(connection)
            if not isinstance(exc, Exception):
                raise
            return UNANSWERED
        await self.pool.give_back(connection)
        return [row[0] for row in rows]

    async def close(self) -> None:
        """Close the pool's idle connections."""
        await self.pool.close()
