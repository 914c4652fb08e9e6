"""Rows held back in a transaction the task holds (:mod:`.held`), written together later.

An insert whose ids were made for it (``DocumentStore.insert(..., new_ids=True)``, the
pipeline's creates) cannot find its ``_id`` taken, so inside a held transaction its
rows need not be written at once: :class:`HoldsBack` keeps them, by table, and writes
them, one statement per table, right before anything else runs on the connection
(:meth:`HoldsBack.write_held_back`, called by the held transaction's ``run``) and
before the commit. A batch of 100 creates then costs a statement per table, not one
per request (PostgreSQL: a round trip each). Should writing them fail all the same,
the transaction is marked broken and refuses to commit, so nothing of it is stored.

PostgreSQL's inserter holds its rows back on the asyncpg connection of the transaction
(:mod:`.postgresql.inserts`); :func:`held_back_insert` does it for the other engines (SQLite).
"""

from __future__ import annotations

import functools
from collections.abc import Awaitable, Callable, Sequence
from typing import Any, Protocol, TypeVar

import sqlalchemy as sa

from docbase.adapters.sql import schema
from docbase.adapters.sql.errors import translate_errors
from docbase.core.errors import BackendError

HeldBack = dict[Any, list[Any]]
"""Rows held back, by table."""
WriteHeldBack = Callable[[HeldBack], Awaitable[None]]
"""Writes rows held back."""
T = TypeVar("T")


class _Held(Protocol):
    """What :func:`held_back_insert` asks of a held transaction (:class:`.held.Held`)."""

    free_of_unique: dict[int, bool]

    def hold_back(self, table: Any, rows: list[Any], write: WriteHeldBack) -> None: ...

    async def run(self, work: Callable[[sa.Connection], T], *, short: bool = False) -> T: ...


class _Dialect(Protocol):
    def insert(self, conn: sa.Connection, table: sa.TableClause,
               rows: Sequence[Any]) -> None: ...


class _Backend(Protocol):
    """What :func:`held_back_insert` asks of the backend (:class:`.backend.SqlBackend`)."""

    @property
    def dialect(self) -> _Dialect: ...

    def held(self) -> _Held | None: ...

    def cached_number(self, collection: str) -> int | None: ...

    def table_clause(self, number: int) -> sa.TableClause: ...


class HoldsBack:
    """Rows held back until anything else runs in the transaction (see the module)."""

    _held_back: HeldBack
    _write: WriteHeldBack | None
    _broken: bool

    def hold_back(self, table: Any, rows: list[Any], write: WriteHeldBack) -> None:
        """Keep ``rows`` for ``table`` until :meth:`write_held_back` (``write`` writes them).

        For inserts that nothing but the database itself can refuse (new ids).
        """
        self._held_back.setdefault(table, []).extend(rows)
        self._write = write

    async def write_held_back(self) -> None:
        """See :meth:`Held.write_held_back`."""
        if not self._held_back or self._write is None:
            return
        held_back, self._held_back = self._held_back, {}
        try:
            await self._write(held_back)
        except BaseException:
            self._broken = True  # a row answered as stored is not: never commit
            raise

    async def _write_before_commit(self) -> None:
        """Write what is held back; raise if that failed now or before (see the module)."""
        await self.write_held_back()
        if self._broken:
            raise BackendError("the transaction failed to write rows it had answered as "
                               "stored; nothing of it was committed")


async def hold_back_table(backend: _Backend, collection: str) -> int | None:
    """The table number of ``collection`` if its new rows may be held back now, else ``None``.

    Only when the task holds a transaction, this process knows the table's number, and
    the table has no unique index: a row held back must have nothing to fail on but the
    database itself, and a unique index would refuse it where it is written, not at the
    write that asked for it (a batch would name the wrong request). Asked once a table
    and transaction. An index made unique by another process between that question and
    the write still stores nothing (the transaction refuses to commit); only the request
    named differs.
    """
    held = backend.held()
    number = None if held is None else backend.cached_number(collection)
    if held is None or number is None:
        return None
    free = held.free_of_unique.get(number)
    if free is None:
        def work(conn: sa.Connection) -> bool:
            registry = schema.indexes
            return conn.execute(sa.select(registry.c.id).where(
                registry.c.collection_id == number, registry.c.is_unique).limit(1)).first() is None

        free = held.free_of_unique[number] = await held.run(work, short=True)
    return number if free else None


def held_back_insert(backend: _Backend, number: int, rows: list[Any]) -> None:
    """Hold new ``rows`` of table ``number`` back in the task's transaction.

    :func:`hold_back_table` allowed it; SQLAlchemy's connection writes them.
    """
    held = backend.held()
    assert held is not None, "hold_back_table said the task holds a transaction"
    held.hold_back(number, rows, functools.partial(_write, backend, held))


async def _write(backend: _Backend, held: _Held, held_back: HeldBack) -> None:
    def work(conn: sa.Connection) -> None:
        for number, rows in held_back.items():
            backend.dialect.insert(conn, backend.table_clause(number), rows)

    with translate_errors():  # on ``held`` itself: the commit may be under way
        await held.run(work, short=True)
