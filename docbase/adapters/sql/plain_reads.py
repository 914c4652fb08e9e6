"""Reads that need nothing of a connection but a table number: one operation each.

A body by key (:meth:`PlainReads.get_body`) and the rows of a statement that needs no
index look-up (:meth:`PlainReads.scalars`: a page of a list without filter or sort, a
count) are what every console, feed and rate limiter asks most. Each is one operation
here, whatever the engine: it takes the engine's short way when there is one and it can
answer now (a SQLite file: on the event loop's thread, :mod:`.loop_reads`; PostgreSQL:
through the engine object's point reader, asyncpg), and the usual way (the backend's
executor, a worker thread or a greenlet) otherwise. Callers get the answer, never a
"not here".

No short way is taken inside a transaction the task holds (:mod:`.held`), so the block
reads what it wrote, nor for a collection whose table number this process does not know
yet (the usual way finds it), except a get, which asks the short way for the number too
(``SqlBackend.committed_number``).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import TYPE_CHECKING, Any

import sqlalchemy as sa

from docbase.adapters.sql.executor_port import Rows
from docbase.adapters.sql.loop_reads import NO_TABLE, UNANSWERED

if TYPE_CHECKING:
    from docbase.adapters.sql.backend import SqlBackend

Statement = Callable[[int], sa.Select[Any]]
"""A statement of collection table ``number`` (built, or taken from a cache, per number)."""


class PlainReads:
    """The get by key and the plain statements of one backend (see the module)."""

    def __init__(self, backend: SqlBackend) -> None:
        self.backend = backend

    async def get_body(self, collection: str, document_id: str,
                       statement: Statement) -> str | None:
        """The stored text of ``document_id`` (``None``: no such document).

        ``statement`` selects the body of the row whose ``id`` is bound as ``id``.
        """
        found = await self.body_short(collection, document_id)
        if found is not None:
            return found[0][0] if found else None

        def work(conn: sa.Connection) -> str | None:
            number = self.backend.number(conn, collection)
            if number is None:
                return None
            body: str | None = conn.execute(statement(number), {"id": document_id}).scalar()
            return body

        return await self.backend.run(work, write=False, short=True)  # one row by key

    async def scalars(self, collection: str, statement: Statement,
                      params: Mapping[str, Any] | None = None, *,
                      on_loop: bool = False) -> list[Any]:
        """The first column of ``statement``'s rows (``[]``: the collection has no table).

        ``params`` binds what the statement leaves open (keyset paging); ``on_loop`` says
        the read is bounded by its page (``loop_reads.PAGE_ROWS``), so a SQLite file may
        answer it on this thread: never for scans.
        """
        found = self.scalars_now(collection, statement, params) if on_loop else UNANSWERED
        if found is None:
            found = await self.scalars_soon(collection, statement, params)
        if found is not None:
            return found

        def work(conn: sa.Connection) -> list[Any]:
            number = self.backend.number(conn, collection)
            return [] if number is None else self.backend.scalars(conn, statement(number),
                                                                  params)

        return await self.backend.run(work, write=False)

    def scalars_now(self, collection: str, statement: Statement,
                    params: Mapping[str, Any] | None = None) -> list[Any] | None:
        """The short way of :meth:`scalars` on this thread (``None``: not here)."""
        number = self.backend.short_way_number(collection)
        if number is None:
            return UNANSWERED
        return self.backend.executor.scalars_now(number, statement(number), params)

    async def scalars_soon(self, collection: str, statement: Statement,
                           params: Mapping[str, Any] | None = None) -> list[Any] | None:
        """The engine's short way of :meth:`scalars` (``None``: it has none, or not now)."""
        number = self.backend.short_way_number(collection)
        if number is None:
            return UNANSWERED
        return await self.backend.executor.scalars_soon(
            statement(number), params, lambda: self.backend.forget(collection))

    def body_now(self, collection: str, document_id: str) -> Rows | None:
        """The short way of :meth:`get_body` on this thread: the body row (``[]``: none).

        ``None``: not here (not a SQLite file, number not cached, SQLite cannot answer
        at once).
        """
        number = self.backend.short_way_number(collection)
        return (UNANSWERED if number is None
                else self.backend.executor.body_now(number, document_id))

    async def body_short(self, collection: str, document_id: str) -> Rows | None:
        """The short way of :meth:`get_body`: on this thread or the engine's own."""
        number = self.backend.committed_number(collection)
        if number is None:
            return UNANSWERED
        if number == NO_TABLE:
            return []
        return await self.backend.executor.body_soon(number, document_id)
