"""How a SQL store inserts rows: one way per engine, chosen once per store.

Each way is an :data:`InsertRows` (collection, rows, the table their rows may be held
back into -> nothing), and the store picks one when it is built (:func:`insert_way`):

- **through the inserter** (an engine object with one: PostgreSQL on asyncpg,
  :class:`InserterInserts`): the rows go in one prepared statement in autocommit, or are
  held back by the inserter inside a transaction the task holds (``postgresql/inserts.py``).
  When it answers that it did not insert them (several batches, a table number not
  cached yet, no connection now), they are inserted the plain way's usual way;
- **plain** (every other engine: :class:`PlainInserts`): rows that may be held back are
  (:mod:`.held_back`); the others are inserted in one write transaction of the backend,
  :data:`BATCH` rows a statement, creating the collection's table if needed.

``tests/test_sql_row_inserts.py`` takes each way.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Protocol

import sqlalchemy as sa

from docbase.adapters.sql.backend import SqlBackend
from docbase.adapters.sql.dialects import Row
from docbase.adapters.sql.engine_operations import Inserter
from docbase.adapters.sql.held_back import held_back_insert

BATCH = 10_000
"""Rows per ``INSERT`` statement; one transaction holds them all."""
SHORT_ROWS = 64
"""An insert of at most this many rows is a short work (:mod:`.held`)."""


class InsertRows(Protocol):
    """Insert ``rows`` into ``collection``, all or none (``Conflict`` on a duplicate).

    ``held_back_into`` is the table number the rows may be held back into, when
    ``held_back.hold_back_table`` allowed it (else ``None``).
    """

    async def __call__(self, collection: str, rows: list[Row],
                       held_back_into: int | None, /) -> None:
        """See the class."""


class PlainInserts:
    """Held back when allowed, else one write transaction of the backend."""

    def __init__(self, backend: SqlBackend) -> None:
        self.backend = backend

    async def insert(self, collection: str, rows: list[Row],
                     held_back_into: int | None) -> None:
        """See :class:`InsertRows`."""
        if held_back_into is not None:
            held_back_insert(self.backend, held_back_into, rows)
            return
        await self.usual(collection, rows)

    async def usual(self, collection: str, rows: Sequence[Row]) -> None:
        """Insert in one write transaction, creating the table if needed."""
        dialect = self.backend.dialect

        def work(conn: sa.Connection) -> None:
            table = self.backend.table(conn, collection, create=True)
            assert table is not None
            for start in range(0, len(rows), BATCH):
                dialect.insert(conn, table, rows[start:start + BATCH])

        await self.backend.run(work, write=True, short=len(rows) <= SHORT_ROWS)


class InserterInserts(PlainInserts):
    """Through the engine's inserter; the usual way where it did not insert."""

    def __init__(self, backend: SqlBackend, inserter: Inserter) -> None:
        super().__init__(backend)
        self.inserter = inserter

    async def insert(self, collection: str, rows: list[Row],
                     held_back_into: int | None) -> None:
        """See :class:`InsertRows`."""
        if not await self.inserter.insert(collection, rows, held_back_into=held_back_into):
            await self.usual(collection, rows)


def insert_way(backend: SqlBackend, inserter: Inserter | None) -> InsertRows:
    """The one way ``backend``'s engine inserts rows (see the module)."""
    if inserter is None:
        return PlainInserts(backend).insert
    return InserterInserts(backend, inserter).insert
