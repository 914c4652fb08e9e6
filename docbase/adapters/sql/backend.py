"""One engine shared by the document and blob stores: how work runs, layout, table names.

Every store operation is a plain function of a synchronous SQLAlchemy ``Connection``
(its *work*), run in one transaction by :meth:`SqlBackend.run`:

- on an :class:`~sqlalchemy.ext.asyncio.AsyncEngine` (PostgreSQL with asyncpg, or any
  engine a caller hands in) on its synchronous facade in one greenlet (checkout, work
  and return together, as ``AsyncConnection.run_sync`` runs the work alone);
- on a synchronous :class:`~sqlalchemy.Engine` (what ``from_url`` builds for SQLite) in
  a worker thread, so that a whole operation costs one hop between the event loop and a
  thread rather than several per statement.

A write transaction holds the write lock from its first statement (SQLite ``BEGIN
IMMEDIATE``; PostgreSQL rows are locked with ``SELECT ... FOR UPDATE``), so a
read-modify-write never loses a concurrent change. Reads run without ``BEGIN``/``COMMIT``.
An in-memory SQLite database is one connection, so its operations take turns. What each
connection is set up with, and the bounds of its waits, are in :mod:`.connection_settings`.
"""

from __future__ import annotations

import asyncio
import contextlib
import weakref
from collections.abc import AsyncIterator, Callable, Iterator
from concurrent.futures import ThreadPoolExecutor
from typing import TYPE_CHECKING, Any, TypeAlias, TypeVar

import sqlalchemy as sa
from sqlalchemy.dialects import postgresql, sqlite
from sqlalchemy.pool import StaticPool
from sqlalchemy.util import greenlet_spawn

from docbase.adapters.sql import pg_point_reads, schema
from docbase.adapters.sql.connection_settings import (
    begin_locked,
    begin_write,
    interrupted,
    lock_wait,
    prepare_postgresql,
    prepare_sqlite,
)
from docbase.adapters.sql.dialects import Dialect
from docbase.adapters.sql.driver_rows import DriverStatements
from docbase.adapters.sql.errors import MissingTable, translate_errors
from docbase.adapters.sql.group_commit import GroupCommitWriter
from docbase.adapters.sql.loop_reads import UNANSWERED, LoopReader
from docbase.adapters.sql.postgresql_dialect import PostgresDialect
from docbase.adapters.sql.sqlite_dialect import SqliteDialect
from docbase.core.errors import ConfigurationError
from docbase.core.query.deadline import within
from docbase.core.settings.limits import DEFAULT_QUERY_TIMEOUT

if TYPE_CHECKING:
    from sqlalchemy.ext.asyncio import AsyncEngine

T = TypeVar("T")
Work = Callable[[sa.Connection], T]
AnyEngine: TypeAlias = "AsyncEngine | sa.Engine"
"""A synchronous engine (SQLite) or an asyncio one (``sqlalchemy.ext.asyncio``, imported
only where used: it brings SQLAlchemy's ORM, ~7 MiB per process)."""

_THREADS = 16  # at least the connection pool's size (15, see engine.py)
_backends: weakref.WeakKeyDictionary[Any, SqlBackend] = weakref.WeakKeyDictionary()


def dialect_for(name: str) -> Dialect:
    """Return the :class:`Dialect` for an SQLAlchemy dialect name.

    Raises:
        ConfigurationError: the adapter does not support that database.

    """
    if name == "sqlite":
        return SqliteDialect()
    if name == "postgresql":
        return PostgresDialect()
    raise ConfigurationError(f"the SQL adapter does not support the {name!r} database")


class SqlBackend:
    """The engine, its dialect, the layout check and the collection-name cache."""

    def __init__(self, engine: AnyEngine) -> None:
        self.engine = engine
        sync_engine = engine if isinstance(engine, sa.Engine) else engine.sync_engine
        self.dialect = dialect_for(sync_engine.dialect.name)
        self._serial = asyncio.Lock() if isinstance(sync_engine.pool, StaticPool) else None
        self._tables: dict[str, int] = {}
        # collections whose table a write created: cached before its transaction ended
        self._created: set[str] = set()
        self._clauses: dict[int, sa.TableClause] = {}
        self._ready = False
        self.query_timeout = DEFAULT_QUERY_TIMEOUT
        """Seconds one operation may run: SQLite statements and ``REGEXP`` matching."""
        # its own threads: writers waiting for SQLite's lock never starve other work
        self._threads: ThreadPoolExecutor | None = None
        self._loop_reader: LoopReader | None = None
        self._writer: GroupCommitWriter | None = None
        self._driver_statements: DriverStatements | None = None
        self._pg_reader = pg_point_reads.reader_for(engine)
        if self.dialect.name == "sqlite":
            prepare_sqlite(sync_engine, in_memory=self._serial is not None)
            if isinstance(engine, sa.Engine):
                self._driver_statements = DriverStatements(engine)
            path = sync_engine.url.database
            if isinstance(engine, sa.Engine) and self._serial is None and path:
                self._loop_reader = LoopReader(path)
                self._writer = GroupCommitWriter(engine, begin_locked, self._bounded,
                                                 lambda: lock_wait(self.query_timeout),
                                                 self._forget_created)
        else:
            prepare_postgresql(sync_engine)

    @classmethod
    def for_engine(cls, engine: AnyEngine) -> SqlBackend:
        """Return the backend of ``engine``, shared by every store built on it."""
        backend = _backends.get(engine)
        if backend is None:
            backend = _backends[engine] = cls(engine)
        return backend

    async def open(self) -> None:
        """Create or migrate the layout (once per backend)."""
        if not self._ready:
            await self._run(lambda conn: schema.migrate(conn, self.dialect), write=True)
            self._ready = True

    async def close(self) -> None:
        """Release the engine's connections."""
        if not isinstance(self.engine, sa.Engine):
            if self._pg_reader is not None:
                await self._pg_reader.close()
            await self.engine.dispose()
            return
        if self._threads is not None:
            self._threads.shutdown(wait=False)
            self._threads = None
        if self._loop_reader is not None:
            self._loop_reader.close()
        if self._writer is not None:
            self._writer.close()
        self.engine.dispose()

    async def run(self, work: Work[T], *, write: bool) -> T:
        """Run ``work`` in one transaction; retry once if a cached table was dropped.

        A write transaction commits on success and rolls back on error; a read
        autocommits each statement. Driver errors come out as docbase errors.
        """
        await self.open()
        try:
            return await self._run(work, write=write)
        except MissingTable:
            self._tables.clear()
        return await self._run(work, write=write)

    def scalars(self, conn: sa.Connection, statement: sa.Select[Any]) -> list[Any]:
        """The first column of ``statement``'s rows (SQLite: on the driver, :mod:`.driver_rows`)."""
        if self._driver_statements is None:
            return list(conn.execute(statement).scalars())
        return self._driver_statements.scalars(conn, statement)

    def scalars_now(self, collection: str,
                    statement: Callable[[int], sa.Select[Any]]) -> list[Any] | None:
        """As :meth:`scalars`, on this thread (:mod:`.loop_reads`); ``None``: not here.

        For reads bounded by their page (``loop_reads.PAGE_ROWS``), never for scans.
        """
        number = self.cached_number(collection)
        if self._loop_reader is None or self._driver_statements is None or number is None:
            return UNANSWERED
        compiled = self._driver_statements.compiled(statement(number))
        rows = None if compiled is None else self._loop_reader.rows(*compiled)
        return None if rows is None else [row[0] for row in rows]

    def cached_number(self, collection: str) -> int | None:
        """The table number of ``collection`` if this process knows it (no query)."""
        return self._tables.get(collection) if self._ready else None

    def read_body_now(self, collection: str, document_id: str) -> list[tuple[str]] | None:
        """Look ``document_id`` up on this thread (SQLite files; see :mod:`.loop_reads`).

        Its body row (``[]``: none), or ``None``: ask the usual way (not a SQLite file,
        collection number not cached, SQLite cannot answer at once).
        """
        number = self.cached_number(collection)
        if self._loop_reader is None or number is None:
            return UNANSWERED
        return self._loop_reader.body(number, document_id)

    async def read_body_soon(self, collection: str, document_id: str) -> list[tuple[str]] | None:
        """As :meth:`read_body_now`, or on PostgreSQL through asyncpg (:mod:`.pg_point_reads`)."""
        if self._pg_reader is None:
            return self.read_body_now(collection, document_id)
        number = self.cached_number(collection)
        return UNANSWERED if number is None else await self._pg_reader.body(number, document_id)

    async def _run(self, work: Work[T], *, write: bool) -> T:
        async with self._turn():
            with translate_errors():
                if write and self._writer is not None:
                    return await self._writer.write(work)
                if not isinstance(self.engine, sa.Engine):
                    # checkout, work and return in one greenlet, not one per step
                    return await greenlet_spawn(
                        self._run_sync, self.engine.sync_engine, work, write)
                if self._threads is None:
                    self._threads = ThreadPoolExecutor(_THREADS, thread_name_prefix="docbase-sql")
                return await asyncio.get_running_loop().run_in_executor(
                    self._threads, self._run_sync, self.engine, work, write)

    def _run_sync(self, engine: sa.Engine, work: Work[T], write: bool) -> T:
        with engine.connect() as conn, self._bounded(conn):
            if not write:
                return work(conn.execution_options(**self.dialect.read_options))
            with begin_write(conn):
                return work(conn)

    @contextlib.contextmanager
    def _bounded(self, conn: sa.Connection) -> Iterator[None]:
        """Run the block as one operation limited to ``query_timeout`` seconds."""
        with within(self.query_timeout), interrupted(conn, self.query_timeout):
            yield

    @contextlib.asynccontextmanager
    async def _turn(self) -> AsyncIterator[None]:
        if self._serial is None:
            yield
        else:
            async with self._serial:
                yield

    def table(self, conn: sa.Connection, collection: str,
              *, create: bool = False) -> sa.TableClause | None:
        """Return the table of ``collection`` (created with ``create``), or None."""
        number = self.number(conn, collection, create=create)
        return None if number is None else self.table_clause(number)

    def number(self, conn: sa.Connection, collection: str,
               *, create: bool = False, cached: bool = True) -> int | None:
        """Return the number of ``collection``'s table (created with ``create``), or None."""
        number = self._tables.get(collection) if cached else None
        if number is None:
            number = self._lookup(conn, collection)
            if number is None:
                if not create:
                    return None
                number = self._create(conn, collection)
                self._created.add(collection)
            self._tables[collection] = number
        return number

    def table_clause(self, number: int) -> sa.TableClause:
        """Return the query view of collection table ``number`` (built once: immutable)."""
        clause = self._clauses.get(number)
        if clause is None:
            clause = self._clauses[number] = schema.collection_table(number, self.dialect)
        return clause

    def forget(self, collection: str) -> None:
        """Drop ``collection`` from the name cache (it was dropped)."""
        self._tables.pop(collection, None)

    def _forget_created(self) -> None:
        """Forget the tables writes created: a rolled-back write may have created them."""
        for collection in self._created:
            self._tables.pop(collection, None)
        self._created.clear()

    def _lookup(self, conn: sa.Connection, collection: str) -> int | None:
        registry = schema.collections
        number = conn.execute(sa.select(registry.c.id)
                              .where(registry.c.name == collection)).scalar()
        return None if number is None else int(number)

    def _create(self, conn: sa.Connection, collection: str) -> int:
        insert = postgresql.insert if self.dialect.name == "postgresql" else sqlite.insert
        conn.execute(insert(schema.collections).values(name=collection)
                     .on_conflict_do_nothing(index_elements=["name"]))
        number = self._lookup(conn, collection)
        assert number is not None
        schema.collection_ddl(number, self.dialect).create(conn, checkfirst=True)
        return number

    def collection_numbers(self, conn: sa.Connection) -> dict[str, int]:
        """Return every registered collection name with its table number."""
        registry = schema.collections
        rows = conn.execute(sa.select(registry.c.name, registry.c.id))
        return {name: int(number) for name, number in rows}
