"""Single-statement writes on PostgreSQL, straight through asyncpg: inserts and updates.

A create through SQLAlchemy's asyncio engine is a pool checkout in a greenlet, ``BEGIN``,
the ``INSERT``, ``COMMIT``: three round trips and SQLAlchemy's execution layers for one
row (``docs/benchmarks.md``, run 7). :class:`PgInserter` runs the one ``INSERT ...
VALUES`` in autocommit on one of the process's queued asyncpg connections
(:func:`.connections.pool_for`, shared with the point reads), prepared once per
connection and table: one round trip. A
statement in autocommit is its own transaction, atomic, and acknowledged only once
committed (the server's ``synchronous_commit`` as for every other write); the
connections carry the engine's ``statement_timeout`` and ``lock_timeout``.

It answers ``False`` (go the usual way) for anything else: several documents, a
collection whose table number is not cached yet (the usual way creates the table), no
connection to be had (callers queue for a busy one), a table dropped meanwhile (42P01:
nothing was written). Once the statement was sent, a failure is final: a database error is
translated as :mod:`.errors` does (a unique violation is ``Conflict``), and a lost
connection is ``BackendError`` (503): the row may or may not be stored, as with a
``COMMIT`` whose answer was lost, so it is never sent again.

An insert of several documents is one prepared ``INSERT ... SELECT FROM unnest(...)``
of one array per column, all rows in one statement: atomic, one round trip.
:meth:`PgInserter.swap` writes an updated row only if it is still at the version read
(``UPDATE ... WHERE id = $1 AND version = $8``, see ``store.py``), on the same
connections and with the same rules.
"""

from __future__ import annotations

import functools
import importlib
from collections.abc import Callable, Sequence
from typing import Any

from docbase.adapters.sql import schema
from docbase.adapters.sql.dialects import COLUMNS, Row, swap_sql
from docbase.adapters.sql.engine_operations import HeldWay
from docbase.adapters.sql.errors import MissingTable, translated
from docbase.adapters.sql.held import AsyncHeld
from docbase.adapters.sql.postgresql.connections import DirectConnections, pool_for
from docbase.core.errors import BackendError


def insert_sql(number: int) -> str:
    """The one-row ``INSERT`` into collection table ``number`` (``$1`` .. ``$7``)."""
    return (f"INSERT INTO {schema.table_name(number)} ({', '.join(COLUMNS)}) "
            "VALUES ($1, $2::json, $3, $4, $5, $6, $7::jsonb)")


def insert_unless_taken_sql(number: int) -> str:
    """:func:`insert_sql` that skips a row taking a unique value (``INSERT 0 0``)."""
    return insert_sql(number) + " ON CONFLICT DO NOTHING"


def insert_many_sql(number: int) -> str:
    """The many-row ``INSERT`` into table ``number``: one array per column (``$1`` .. ``$7``)."""
    return (f"INSERT INTO {schema.table_name(number)} ({', '.join(COLUMNS)}) "
            "SELECT id, body::json, parent_id, version, created, changed, search::jsonb "
            "FROM unnest($1::text[], $2::text[], $3::text[], $4::bigint[], $5::text[], "
            "$6::text[], $7::text[]) AS r(id, body, parent_id, version, created, changed, "
            "search)")


_NOT_HELD: HeldWay = (lambda: None, lambda collection: None)
_SAVEPOINT = "SAVEPOINT docbase_operation"  # the names of .held, on the same connection
_ROLLBACK = "ROLLBACK TO SAVEPOINT docbase_operation"


def inserter_for(engine: Any, number: Callable[[str], int | None],
                 forget: Callable[[str], None], *, held: HeldWay = _NOT_HELD) -> PgInserter | None:
    """Return an inserter for ``engine``, or ``None`` when it has no short way.

    ``held`` gives the connection of a transaction the task holds (:mod:`.held`): the
    statements then run on it, each in a savepoint, instead of in autocommit.
    """
    pool = pool_for(engine)
    return None if pool is None else PgInserter(pool, number, forget, held)


class PgInserter:
    """Single-statement writes over the process's queued asyncpg connections."""

    def __init__(self, pool: DirectConnections, number: Callable[[str], int | None],
                 forget: Callable[[str], None], held: HeldWay = _NOT_HELD) -> None:
        self.pool = pool
        self._number = number
        self._held, self._held_number = held
        self._forget = forget
        self._statements: dict[tuple[Callable[[int], str], int], str] = {}
        asyncpg = importlib.import_module("asyncpg")  # registered only where installed
        self._server_error: type[Exception] = asyncpg.PostgresError

    async def insert(self, collection: str, rows: Sequence[Row], *,
                     held_back_into: int | None = None) -> bool:
        """Insert ``rows`` into ``collection`` in one statement; ``False``: go the usual way.

        Raises:
            DocbaseError: the database refused the rows, or the connection was lost once
                the statement was on its way.

        """
        if held_back_into is not None and self._held_back(held_back_into, rows):
            return True
        if len(rows) == 1:
            return await self._run(collection, insert_sql, tuple(rows[0])) is not None
        columns = tuple(list(column) for column in zip(*rows, strict=True))
        return await self._run(collection, insert_many_sql, columns) is not None

    async def swap(self, collection: str, row: Row, version: int) -> bool | None:
        """Write ``row`` if its stored row is at ``version``; ``None``: go the usual way.

        ``False``: no row of that id is at that version (changed or deleted meanwhile).

        Raises:
            DocbaseError: as :meth:`insert`.

        """
        status = await self._run(collection, _swap_sql, (*row, version))
        return None if status is None else status == "UPDATE 1"

    async def read(self, collection: str, document_id: str) -> list[tuple[str]] | None:
        """The body row an update starts from (``[]``: none); ``None``: go the usual way.

        Unlike a get, a connection lost here is reported (``BackendError``), as the
        write that follows it would be.
        """
        rows = await self._run(collection, _read_sql, (document_id,), fetch=True)
        return None if rows is None else [(row[0],) for row in rows]

    def _held_back(self, number: int, rows: Sequence[Row]) -> bool:
        """Hold new ``rows`` of table ``number`` back in the task's transaction.

        :func:`.held_back.hold_back_table` allowed it; ``False``: not on asyncpg here.
        """
        holder = self._held()
        if not isinstance(holder, AsyncHeld):
            return False
        holder.hold_back(number, [tuple(row) for row in rows],
                         functools.partial(self._write_held_back, holder.direct))
        return True

    async def _write_held_back(self, connection: Any, held_back: dict[int, list[Any]]) -> None:
        """Insert the rows held back, one statement per table, in the transaction."""
        for number, rows in held_back.items():
            columns = tuple(list(column) for column in zip(*rows, strict=True))
            try:
                await connection.execute(self._statement(insert_many_sql, number), *columns)
            except self._server_error as exc:
                raise translated(str(getattr(exc, "sqlstate", "") or ""), str(exc)) from exc
            except Exception as exc:
                raise BackendError(f"database unavailable: {exc}") from exc

    async def _run(self, collection: str, sql: Callable[[int], str],
                   arguments: tuple[Any, ...], *, fetch: bool = False) -> Any:
        """Run ``sql`` on ``collection``'s table: its status, or rows; ``None``: not here."""
        holder = self._held()
        held = None if holder is None else holder.direct
        number = self._number(collection) if held is None else self._held_number(collection)
        if number is None:
            return None
        statement = self._statement(sql, number)
        if held is not None:
            await holder.write_held_back()  # what was held back first, in order
            if sql is insert_sql:
                return await self._insert_held(held, collection, number, arguments)
            return await self._in_savepoint(held, statement, arguments, fetch=fetch)
        connection = await self.pool.take()
        if connection is None:
            return None
        try:
            run = connection.fetch if fetch else connection.execute
            result = await run(statement, *arguments)
        except self._server_error as exc:  # the statement failed; the connection is sound
            await self.pool.give_back(connection)
            error = translated(str(getattr(exc, "sqlstate", "") or ""), str(exc))
            if isinstance(error, MissingTable):  # dropped elsewhere: nothing was written
                self._forget(collection)
                return None
            raise error from exc
        except BaseException as exc:  # lost, or cancelled half-way: the answer is unknown
            self.pool.drop(connection)
            if isinstance(exc, Exception):
                raise BackendError(f"database unavailable: {exc}") from exc
            raise
        await self.pool.give_back(connection)
        return result

    async def _insert_held(self, connection: Any, collection: str, number: int,
                           arguments: tuple[Any, ...]) -> Any:
        """One row into the task's transaction, without a savepoint's round trip.

        ``ON CONFLICT DO NOTHING`` turns the one error a caller goes on after (a unique
        value or ``_id`` taken) into an ``INSERT 0 0``, which leaves the transaction
        usable; the insert is then sent again in a savepoint for the error to raise.
        """
        try:
            status = await connection.execute(
                self._statement(insert_unless_taken_sql, number), *arguments)
        except self._server_error as exc:  # the transaction is failed: the caller stops
            raise translated(str(getattr(exc, "sqlstate", "") or ""), str(exc)) from exc
        except Exception as exc:
            raise BackendError(f"database unavailable: {exc}") from exc
        if status != "INSERT 0 0":
            return status
        return await self._in_savepoint(connection, self._statement(insert_sql, number),
                                        arguments, fetch=False)

    def _statement(self, sql: Callable[[int], str], number: int) -> str:
        """The text of ``sql`` for table ``number``, written once."""
        key = (sql, number)
        statement = self._statements.get(key)
        if statement is None:
            statement = self._statements[key] = sql(number)
        return statement

    async def _in_savepoint(self, connection: Any, statement: str, arguments: tuple[Any, ...],
                            *, fetch: bool) -> Any:
        """Run ``statement`` in the task's transaction, undone alone if it fails."""
        await connection.execute(_SAVEPOINT)
        try:
            run = connection.fetch if fetch else connection.execute
            return await run(statement, *arguments)
        except self._server_error as exc:
            await connection.execute(_ROLLBACK)
            raise translated(str(getattr(exc, "sqlstate", "") or ""), str(exc)) from exc
        except Exception as exc:
            raise BackendError(f"database unavailable: {exc}") from exc

    async def close(self) -> None:
        """Close the pool's idle connections."""
        await self.pool.close()


def _read_sql(number: int) -> str:
    return schema.lookup_sql(number, "body::text", "$1")


def _swap_sql(number: int) -> str:
    return swap_sql(schema.table_name(number), "$", "::json", "::jsonb")
