"""How a SQL backend runs its work: one executor per kind of engine, chosen once.

Every store operation is a plain function of a synchronous SQLAlchemy ``Connection``
(its *work*), run in one transaction. Which way it runs depends only on the engine,
so :func:`executor_for` picks the way once, when the backend is built, and nothing
else asks what the engine is:

- :class:`AsyncEngineExecutor`, an :class:`~sqlalchemy.ext.asyncio.AsyncEngine`
  (PostgreSQL with asyncpg, or any engine a caller hands in): the work runs on its
  synchronous facade in one greenlet (checkout, work and return together, as
  ``AsyncConnection.run_sync`` runs the work alone); point reads and lists without
  filter or sort go by the engine object's point reader where it has one (PostgreSQL:
  straight through asyncpg), their statements compiled once
  (:class:`~.driver_rows.DriverStatements`).
- :class:`ThreadExecutor`, a synchronous :class:`~sqlalchemy.Engine` (what
  ``from_url`` builds for SQLite): the work runs in a worker thread (one hop per
  operation, not per statement); rows are read on the driver (:mod:`.driver_rows`).
- :class:`SqliteFileExecutor`, a SQLite file: as :class:`ThreadExecutor`, with writes
  committed in groups by one writer thread (:mod:`.group_commit`) and short reads
  answered on the event loop's thread when SQLite can at once (:mod:`.loop_reads`).

An in-memory SQLite database is one connection, so its operations take turns.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import AsyncIterator, Callable, Iterator
from concurrent.futures import ThreadPoolExecutor
from typing import TYPE_CHECKING, Any

import sqlalchemy as sa
from sqlalchemy.pool import StaticPool
from sqlalchemy.util import greenlet_spawn

from docbase.adapters.sql.connection_settings import (
    begin_locked,
    begin_write,
    interrupted,
    lock_wait,
)
from docbase.adapters.sql.dialects import Dialect
from docbase.adapters.sql.driver_rows import DriverStatements
from docbase.adapters.sql.engine_operations import PointReader
from docbase.adapters.sql.executor_port import Executor, Params, Rows, T, Work
from docbase.adapters.sql.group_commit import GroupCommitWriter, take_write_lock
from docbase.adapters.sql.held import AsyncHeld, Held
from docbase.adapters.sql.loop_reads import UNANSWERED, LoopReader
from docbase.adapters.sql.thread_transactions import ThreadTransactions
from docbase.core.query.deadline import within

if TYPE_CHECKING:  # imported where used: it brings SQLAlchemy's ORM (~7 MiB per process)
    from sqlalchemy.ext.asyncio import AsyncEngine


_THREADS = 16  # at least the connection pool's size (15, see engine.py)


class _Bounds:
    """Runs work on a synchronous engine, each operation within ``query_timeout``."""

    def __init__(self, dialect: Dialect, query_timeout: Callable[[], float],
                 engine: AsyncEngine | sa.Engine,
                 savepoint_rolled_back: Callable[[sa.Connection], None]) -> None:
        self.dialect = dialect
        self.query_timeout = query_timeout
        self.savepoint_rolled_back = savepoint_rolled_back
        self._serial = asyncio.Lock() if isinstance(
            _sync(engine).pool, StaticPool) else None

    def run_sync(self, engine: sa.Engine, work: Work[T], write: bool) -> T:
        with engine.connect() as conn, self.bounded(conn):
            if not write:
                return work(conn.execution_options(**self.dialect.read_options))
            with begin_write(conn):
                return work(conn)

    @contextlib.contextmanager
    def bounded(self, conn: sa.Connection) -> Iterator[None]:
        """Run the block as one operation limited to ``query_timeout`` seconds."""
        timeout = self.query_timeout()
        with within(timeout), interrupted(conn, timeout):
            yield

    @contextlib.asynccontextmanager
    async def turn(self) -> AsyncIterator[None]:
        """Take turns on an engine of one connection (in-memory SQLite)."""
        if self._serial is None:
            yield
        else:
            async with self._serial:
                yield

    def scalars(self, conn: sa.Connection, statement: sa.Select[Any],
                params: Params | None = None) -> list[Any]:
        """See :meth:`Executor.scalars`."""
        return list(conn.execute(statement, dict(params or {})).scalars())

    def scalars_now(self, number: int, statement: sa.Select[Any],
                    params: Params | None = None) -> list[Any] | None:
        """See :meth:`Executor.scalars_now`."""
        return UNANSWERED

    def body_now(self, number: int, document_id: str) -> Rows | None:
        """See :meth:`Executor.body_now`."""
        return UNANSWERED

    def number_now(self, collection: str) -> int | None:
        """See :meth:`Executor.number_now`."""
        return UNANSWERED

    async def scalars_soon(self, statement: sa.Select[Any], params: Params | None,
                           forget: Callable[[], None]) -> list[Any] | None:
        """See :meth:`Executor.scalars_soon`."""
        return UNANSWERED


class AsyncEngineExecutor(_Bounds):
    """An :class:`AsyncEngine`: work in one greenlet; asyncpg point reads."""

    def __init__(self, engine: AsyncEngine, dialect: Dialect,
                 query_timeout: Callable[[], float],
                 savepoint_rolled_back: Callable[[sa.Connection], None]) -> None:
        super().__init__(dialect, query_timeout, engine, savepoint_rolled_back)
        self.engine = engine
        self.points: PointReader | None = dialect.point_reader(engine)
        self._statements = DriverStatements(engine.sync_engine)

    async def run(self, work: Work[T], *, write: bool) -> T:
        """Run ``work`` (see :meth:`Executor.run`)."""
        async with self.turn():
            # checkout, work and return in one greenlet, not one per step
            return await greenlet_spawn(self.run_sync, self.engine.sync_engine, work, write)

    async def hold(self) -> Held:
        """See :meth:`Executor.hold`."""
        return await AsyncHeld(self.engine, self.bounded,
                               self.savepoint_rolled_back).start()

    async def body_soon(self, number: int, document_id: str) -> Rows | None:
        """See :meth:`Executor.body_soon`."""
        if self.points is None:
            return UNANSWERED
        return await self.points.body(number, document_id)

    async def scalars_soon(self, statement: sa.Select[Any], params: Params | None,
                           forget: Callable[[], None]) -> list[Any] | None:
        """See :meth:`Executor.scalars_soon`."""
        if self.points is None:
            return UNANSWERED
        compiled = self._statements.compiled(statement, params)
        return UNANSWERED if compiled is None else await self.points.scalars(*compiled, forget)

    async def close(self) -> None:
        """See :meth:`Executor.close`."""
        if self.points is not None:
            await self.points.close()
        await self.engine.dispose()


class ThreadExecutor(_Bounds):
    """A synchronous engine: work in a worker thread, rows read on the driver."""

    threads = _THREADS
    """Threads running work at once, each on a connection of the engine's pool."""

    def __init__(self, engine: sa.Engine, dialect: Dialect,
                 query_timeout: Callable[[], float], driver: DriverStatements | None,
                 savepoint_rolled_back: Callable[[sa.Connection], None]) -> None:
        """``driver`` reads rows on the driver (SQLite), else SQLAlchemy reads them."""
        super().__init__(dialect, query_timeout, engine, savepoint_rolled_back)
        self.engine = engine
        # its own threads: writers waiting for SQLite's lock never starve other work
        self._threads: ThreadPoolExecutor | None = None
        self.transactions = ThreadTransactions(engine, self.bounded, savepoint_rolled_back)
        self.driver = driver

    async def run(self, work: Work[T], *, write: bool) -> T:
        """Run ``work`` (see :meth:`Executor.run`)."""
        async with self.turn():
            if self._threads is None:
                self._threads = ThreadPoolExecutor(self.threads,
                                                   thread_name_prefix="docbase-sql")
            return await asyncio.get_running_loop().run_in_executor(
                self._threads, self.run_sync, self.engine, work, write)

    def scalars(self, conn: sa.Connection, statement: sa.Select[Any],
                params: Params | None = None) -> list[Any]:
        """See :meth:`Executor.scalars`."""
        if self.driver is None:
            return super().scalars(conn, statement, params)
        return self.driver.scalars(conn, statement, params)

    async def body_soon(self, number: int, document_id: str) -> Rows | None:
        """See :meth:`Executor.body_soon`."""
        return self.body_now(number, document_id)

    async def hold(self) -> Held:
        """See :meth:`Executor.hold` (an engine of one connection: its turn, held)."""
        if self._serial is None:
            return await self.transactions.begin(begin_write)
        await self._serial.acquire()
        return await self.transactions.begin(begin_write, self._serial.release)

    async def close(self) -> None:
        """See :meth:`Executor.close`."""
        await self._stop_threads()
        self.engine.dispose()

    async def _stop_threads(self) -> None:
        # joined off the loop: a thread that handed back its answer still holds the work
        threads, self._threads = self._threads, None  # (and the store) till its call returns
        self.transactions.close()
        if threads is not None:
            await asyncio.to_thread(threads.shutdown, wait=True)


class SqliteFileExecutor(ThreadExecutor):
    """A SQLite file: writes committed in groups, short reads on the loop's thread."""

    threads = 8
    """Reads run at once (writes have their own thread). SQLite reads are CPU work, under
    the GIL but for ``sqlite3_step``; each thread's connection and malloc arena held
    ~0.6 MiB after a load, so 16 cost a worker ~5 MiB more than 8 for no throughput on
    two cores (``docs/benchmarks.md``, branch ``memory``)."""

    def __init__(self, engine: sa.Engine, dialect: Dialect,
                 query_timeout: Callable[[], float],
                 savepoint_rolled_back: Callable[[sa.Connection], None], path: str) -> None:
        statements = DriverStatements(engine)
        super().__init__(engine, dialect, query_timeout, statements, savepoint_rolled_back)
        self._statements = statements
        self.loop_reader = LoopReader(path)
        self._writer = GroupCommitWriter(engine, begin_locked, self.bounded,
                                         lambda: lock_wait(self.query_timeout()),
                                         savepoint_rolled_back)

    async def run(self, work: Work[T], *, write: bool) -> T:
        """Run ``work`` (see :meth:`Executor.run`)."""
        if write:
            return await self._writer.write(work)
        return await super().run(work, write=write)

    async def hold(self) -> Held:
        """See :meth:`Executor.hold`: the file's write lock, taken as the writer takes it."""
        def begin(conn: sa.Connection) -> sa.RootTransaction:
            driver = conn.connection.driver_connection
            take_write_lock(driver, lock_wait(self.query_timeout()))  # type: ignore[arg-type]
            return begin_locked(conn)

        return await self.transactions.begin(begin)

    def scalars_now(self, number: int, statement: sa.Select[Any],
                    params: Params | None = None) -> list[Any] | None:
        """See :meth:`Executor.scalars_now`."""
        compiled = self._statements.compiled(statement, params)
        rows = None if compiled is None else self.loop_reader.rows(*compiled)
        return None if rows is None else [row[0] for row in rows]

    def body_now(self, number: int, document_id: str) -> Rows | None:
        """See :meth:`Executor.body_now`."""
        return self.loop_reader.body(number, document_id)

    def number_now(self, collection: str) -> int | None:
        """See :meth:`Executor.number_now`."""
        return self.loop_reader.number(collection)

    async def close(self) -> None:
        """See :meth:`Executor.close` (in the order the parts were stopped before)."""
        await self._stop_threads()
        self.loop_reader.close()
        self._writer.close()
        self.engine.dispose()


def executor_for(engine: AsyncEngine | sa.Engine, dialect: Dialect, *,
                 query_timeout: Callable[[], float],
                 savepoint_rolled_back: Callable[[sa.Connection], None]) -> Executor:
    """Prepare ``engine``'s connections and pick the one way its work runs.

    ``query_timeout`` says the current bound of one operation; ``savepoint_rolled_back``
    is told when one write of a group was rolled back on the driver (:mod:`.group_commit`).
    """
    sync_engine = _sync(engine)
    in_memory = isinstance(sync_engine.pool, StaticPool)
    traits = dialect.traits
    dialect.prepare(sync_engine, in_memory=in_memory)
    if not isinstance(engine, sa.Engine):
        return AsyncEngineExecutor(engine, dialect, query_timeout, savepoint_rolled_back)
    path = engine.url.database
    if traits.one_writer and not in_memory and path:
        return SqliteFileExecutor(engine, dialect, query_timeout, savepoint_rolled_back,
                                  path)
    driver = DriverStatements(engine) if traits.rows_on_driver else None
    return ThreadExecutor(engine, dialect, query_timeout, driver, savepoint_rolled_back)


def _sync(engine: AsyncEngine | sa.Engine) -> sa.Engine:
    return engine if isinstance(engine, sa.Engine) else engine.sync_engine
