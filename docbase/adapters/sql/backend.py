"""One engine shared by the document and blob stores: how work runs, layout, table names.

Every store operation is a plain function of a synchronous SQLAlchemy ``Connection``
(its *work*), run in one transaction by :meth:`SqlBackend.run` through the executor
picked once for the engine (:mod:`.executors`: a greenlet on an async engine, a worker
thread on a synchronous one, group commit and loop-thread reads on a SQLite file).

A write transaction holds the write lock from its first statement (SQLite ``BEGIN
IMMEDIATE``; PostgreSQL rows are locked with ``SELECT ... FOR UPDATE``), so a
read-modify-write never loses a concurrent change. Reads run without ``BEGIN``/``COMMIT``.
What each connection is set up with, and the bounds of its waits, are in
:mod:`.connection_settings`.
"""

from __future__ import annotations

import contextlib
import importlib
import weakref
from collections.abc import AsyncIterator, Callable, Mapping
from contextvars import ContextVar
from typing import TYPE_CHECKING, Any, TypeAlias, TypeVar

import sqlalchemy as sa

from docbase.adapters.sql import schema
from docbase.adapters.sql.dialects import Dialect
from docbase.adapters.sql.errors import MissingTable, translate_errors
from docbase.adapters.sql.executor_port import Executor
from docbase.adapters.sql.executors import executor_for
from docbase.adapters.sql.held import Held, inner_block
from docbase.adapters.sql.loop_reads import NO_TABLE
from docbase.adapters.sql.table_numbers import TableNumbers
from docbase.core.errors import ConfigurationError
from docbase.core.settings.limits import DEFAULT_QUERY_TIMEOUT

if TYPE_CHECKING:
    from sqlalchemy.ext.asyncio import AsyncEngine

T = TypeVar("T")
Work = Callable[[sa.Connection], T]
AnyEngine: TypeAlias = "AsyncEngine | sa.Engine"
"""A synchronous engine (SQLite) or an asyncio one (``sqlalchemy.ext.asyncio``, imported
only where used: it brings SQLAlchemy's ORM, ~7 MiB per process)."""

_backends: weakref.WeakKeyDictionary[Any, SqlBackend] = weakref.WeakKeyDictionary()
_holding: ContextVar[tuple[SqlBackend, Held] | None] = ContextVar("docbase_sql_transaction",
                                                                   default=None)


ENGINES = {"sqlite": "docbase.adapters.sql.sqlite.engine:SqliteEngine",
           "postgresql": "docbase.adapters.sql.postgresql.engine:PostgresEngine"}
"""Each database's engine object, by SQLAlchemy's name of it: the one place naming the
engine packages, imported on first use (a SQLite store never loads PostgreSQL's)."""


def dialect_for(name: str) -> Dialect:
    """Return a new engine object (a :class:`Dialect`) for an SQLAlchemy dialect name.

    Raises:
        ConfigurationError: the adapter does not support that database.

    """
    where = ENGINES.get(name)
    if where is None:
        raise ConfigurationError(f"the SQL adapter does not support the {name!r} database")
    module, _, name = where.partition(":")
    engine: Dialect = getattr(importlib.import_module(module), name)()
    return engine


class SqlBackend:
    """The engine, its dialect, the layout check and the collection-name cache."""

    def __init__(self, engine: AnyEngine) -> None:
        self.engine = engine
        sync_engine = engine if isinstance(engine, sa.Engine) else engine.sync_engine
        self.dialect = dialect_for(sync_engine.dialect.name)
        self._tables = TableNumbers(sync_engine)
        self._clauses: dict[int, sa.TableClause] = {}
        self._ready = False
        self.query_timeout = DEFAULT_QUERY_TIMEOUT
        """Seconds one operation may run: SQLite statements and ``REGEXP`` matching."""
        self.executor: Executor = executor_for(
            engine, self.dialect, query_timeout=lambda: self.query_timeout,
            savepoint_rolled_back=self._tables.savepoint_rolled_back)
        """How this engine's work runs, picked once (:mod:`.executors`)."""

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
        """Release the engine's connections, and forget this backend of the engine.

        ``_backends`` is keyed weakly by the engine, but its value (this backend) holds
        the engine: left in, every engine a process ever opened stayed alive with its
        statement cache (30-80 MB a closed store in the differential tests).
        """
        await self.executor.close()
        if _backends.get(self.engine) is self:
            del _backends[self.engine]

    def held(self) -> Held | None:
        """The transaction this task holds on this backend (:meth:`transaction`), if any."""
        running = _holding.get()
        if running is None or running[0] is not self or running[1].done:
            return None
        return running[1]

    @contextlib.asynccontextmanager
    async def transaction(self) -> AsyncIterator[None]:
        """Run every work of this task inside the block in one transaction (:mod:`.held`).

        The short ways around the usual one (loop-thread and asyncpg reads, asyncpg
        writes) step aside meanwhile, so the block reads what it wrote.
        """
        running = self.held()
        if running is not None:  # a savepoint: undone alone when it raises
            async with inner_block(running, self._tables.savepoint_rolled_back):
                yield
            return
        await self.open()
        with translate_errors():
            held = await self.executor.hold()
        token = _holding.set((self, held))
        try:
            yield
        except BaseException as failure:
            _holding.reset(token)
            if isinstance(failure, MissingTable):  # the block runs once: no retry, but
                self._tables.clear()  # the next transaction looks the tables up again
            with translate_errors():
                await held.finish(commit=False)
            raise
        _holding.reset(token)
        with translate_errors():
            await held.finish(commit=True)

    async def run(self, work: Work[T], *, write: bool, short: bool = False) -> T:
        """Run ``work`` in one transaction; retry once if a cached table was dropped.

        A write transaction commits on success and rolls back on error; a read
        autocommits each statement. Driver errors come out as docbase errors. Inside
        :meth:`transaction`, the work runs in the transaction held; ``short`` says it
        touches a few rows by key (:mod:`.held`).
        """
        held = self.held()
        if held is not None:
            with translate_errors():
                return await held.run(work, short=short)
        await self.open()
        try:
            return await self._run(work, write=write)
        except MissingTable:
            self._tables.clear()
        return await self._run(work, write=write)

    def scalars(self, conn: sa.Connection, statement: sa.Select[Any],
                params: Mapping[str, Any] | None = None) -> list[Any]:
        """The first column of ``statement``'s rows (SQLite: on the driver, :mod:`.driver_rows`).

        ``params`` binds the values the statement leaves open (keyset paging).
        """
        return self.executor.scalars(conn, statement, params)

    def cached_number(self, collection: str) -> int | None:
        """The table number of ``collection`` if this process knows it (no query)."""
        return self._tables.get(collection) if self._ready else None

    def short_way_number(self, collection: str) -> int | None:
        """As :meth:`cached_number`, but ``None`` inside a transaction (no short ways)."""
        return None if self.held() is not None else self.cached_number(collection)

    def committed_number(self, collection: str) -> int | None:
        """As :meth:`short_way_number`, else asked of the executor's short way.

        ``loop_reads.NO_TABLE``: the collection has no table; ``None``: ask the usual
        way (inside a transaction, before the layout check, or no short way now).
        """
        if self.held() is not None:
            return None
        number = self.cached_number(collection)
        if number is None and self._ready:
            number = self.executor.number_now(collection)
            if number is not None and number != NO_TABLE:
                self._tables.found_committed(collection, number)
        return number

    async def _run(self, work: Work[T], *, write: bool) -> T:
        with translate_errors():
            return await self.executor.run(work, write=write)

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
            if number is not None:
                self._tables.found(conn, collection, number)
            elif create:
                number = self._create(conn, collection)
                self._tables.created(conn, collection, number)
        return number

    def table_clause(self, number: int) -> sa.TableClause:
        """Return the query view of collection table ``number`` (built once: immutable)."""
        clause = self._clauses.get(number)
        if clause is None:
            clause = self._clauses[number] = schema.collection_table(number, self.dialect)
        return clause

    def forget(self, collection: str) -> None:
        """Drop ``collection`` from the name cache (it was dropped)."""
        self._tables.forget(collection)

    def _lookup(self, conn: sa.Connection, collection: str) -> int | None:
        registry = schema.collections
        number = conn.execute(sa.select(registry.c.id)
                              .where(registry.c.name == collection)).scalar()
        return None if number is None else int(number)

    def _create(self, conn: sa.Connection, collection: str) -> int:
        conn.execute(self.dialect.traits.upsert(schema.collections).values(name=collection)
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
