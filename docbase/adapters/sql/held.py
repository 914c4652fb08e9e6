"""A transaction held open across several store operations (``DocumentStore.transaction``).

A store operation is *work*, a function of a synchronous ``Connection`` (see
:mod:`.executor_port`); outside a transaction each runs in a transaction of its own.
Inside :meth:`SqlBackend.transaction <.backend.SqlBackend.transaction>` every work of
the task runs on one connection, in one transaction, held here until the block ends:

- :class:`ThreadHeld`, a synchronous engine (SQLite): the connection lives on a thread of
  its own, which runs each work; on a SQLite file it first takes the file's write lock
  the way the group-commit writer does (:func:`.group_commit.take_write_lock`), so the
  process's other writes wait for the commit, and nothing else writes meanwhile. The
  thread is kept for the next transaction after the commit
  (:mod:`.thread_transactions`);
- :class:`AsyncHeld`, an :class:`~sqlalchemy.ext.asyncio.AsyncEngine` (PostgreSQL): an
  ``AsyncConnection`` whose ``run_sync`` runs each work; rows it writes stay locked
  until the commit.

A *short* work (``run(work, short=True)``: a few rows written or read by key, bounded by
its own size) runs on the calling thread when the held connection is free there
(:class:`ThreadHeld`): handing it to the connection's thread and back cost more than
the statement (two hand-overs of the GIL, an executor future, waking the loop up), and
a batch runs one work per request. Scans and deletes by query keep to the thread.

The rows of an insert whose ids are new (``insert(..., new_ids=True)``, the pipeline's
creates) are *held back* (:mod:`.held_back`, by :mod:`.postgresql.inserts` on
PostgreSQL, by the store on SQLite) and written together, one statement per table,
right before anything else runs on the connection and before the commit: a batch of
creates costs a round trip (PostgreSQL) or a savepoint and a statement (SQLite) per
table, not per request. No document can hold a new ``_id``, so such an insert has
nothing to fail on but the database itself; should writing them fail all the same,
the transaction is broken and no longer commits (``finish`` raises), so nothing of it
is stored.

Each work keeps the bound of one operation (``limits.query_timeout``) and runs in a
savepoint of its own, so that a work that fails (a unique claim taken, a version
mismatch) is undone alone, as it would be outside, and the block may go on. A block
inside the block is a savepoint too (:func:`inner_block`).
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import AsyncIterator, Callable
from concurrent.futures import ThreadPoolExecutor
from contextlib import AbstractContextManager
from typing import TYPE_CHECKING, Any, Protocol, TypeVar

import sqlalchemy as sa

from docbase.adapters.sql.errors import translate_errors
from docbase.adapters.sql.held_back import HeldBack, HoldsBack, WriteHeldBack

if TYPE_CHECKING:
    from sqlalchemy.ext.asyncio import AsyncConnection, AsyncEngine

T = TypeVar("T")
Work = Callable[[sa.Connection], T]
Bounded = Callable[[sa.Connection], AbstractContextManager[Any]]
RolledBack = Callable[[sa.Connection], None]
_SAVEPOINT = "SAVEPOINT docbase_operation"
_ROLLBACK = "ROLLBACK TO SAVEPOINT docbase_operation"


def _in_savepoint(conn: sa.Connection, bounded: Bounded, work: Work[T],
                  rolled_back: RolledBack) -> T:
    """Run ``work`` in a savepoint: a failing one is undone alone, the block goes on.

    Without it PostgreSQL would refuse every later statement of the transaction. The
    savepoint has one name, sent to the driver as it is, so that PostgreSQL prepares its
    statements once per connection (SQLAlchemy's numbered savepoints were prepared anew
    each time), and is not released: the next one of the same name hides it, and
    ``ROLLBACK TO`` goes back to the latest, so a work costs one round trip more, not
    two. It goes to the driver's cursor, past SQLAlchemy's execution context (which
    cost more than the statement on SQLite). ``rolled_back`` is told, as SQLAlchemy does
    not see it.
    """
    with bounded(conn):
        conn.connection.dbapi_connection.cursor().execute(_SAVEPOINT)  # type: ignore[union-attr]
        try:
            result = work(conn)
        except BaseException:
            conn.exec_driver_sql(_ROLLBACK)
            rolled_back(conn)
            raise
        return result  # left unreleased: a later one of the same name hides it


class Held(Protocol):
    """A transaction held open: run work in it, then commit or roll it back."""

    depth: int
    """How many blocks run inside the outermost one now (:func:`inner_block`)."""
    done: bool
    """Set once it finished: a task started inside the block and still running after
    it runs its work the usual way."""
    direct: Any
    """The asyncpg connection under the transaction (PostgreSQL), else ``None``: the
    short writes of :mod:`.postgresql.inserts` run on it, in the transaction."""
    free_of_unique: dict[int, bool]
    """Tables known, in this transaction, to have no unique index (:mod:`.held_back`)."""

    async def run(self, work: Work[T], *, short: bool = False) -> T:
        """Run ``work`` in the held transaction (``short``: see the module)."""

    def hold_back(self, table: Any, rows: list[Any], write: WriteHeldBack) -> None:
        """Keep ``rows`` of ``table`` back; ``write`` writes them (see the module)."""

    async def write_held_back(self) -> None:
        """Write the rows held back (if any) now: before anything else on the connection."""

    async def finish(self, *, commit: bool) -> None:
        """Commit (or roll back) and release the connection."""


class ThreadHeld(HoldsBack):
    """A synchronous engine's connection in a transaction, on a thread of its own."""

    def __init__(self, engine: sa.Engine, begin: Callable[[sa.Connection], Any],
                 bounded: Bounded, rolled_back: RolledBack, *, thread: ThreadPoolExecutor,
                 release: Callable[[], None]) -> None:
        """``begin`` starts the transaction on ``thread``; ``release`` runs at the end."""
        self.engine, self._begin, self._bounded, self._release = engine, begin, bounded, release
        self._rolled_back = rolled_back
        self._thread = thread
        self._conn: sa.Connection | None = None
        self._transaction: Any = None
        self.done = False
        self.direct: Any = None
        self.depth = 0
        self._on_thread = 0  # works on the connection's thread now: a short one waits
        self._held_back: HeldBack = {}
        self.free_of_unique: dict[int, bool] = {}
        self._write: WriteHeldBack | None = None
        self._broken = False

    async def start(self) -> ThreadHeld:
        """Connect and begin (on SQLite files, once the write lock is had)."""
        try:
            await self._call(self._open)
        except BaseException:
            self._release()
            raise
        return self

    def _open(self) -> None:
        self._conn = self.engine.connect()
        try:
            self._transaction = self._begin(self._conn)
        except BaseException:
            self._conn.close()
            raise

    async def _call(self, function: Callable[..., T], *args: Any) -> T:
        return await asyncio.get_running_loop().run_in_executor(self._thread, function, *args)

    def _work(self, work: Work[T]) -> T:
        assert self._conn is not None
        return _in_savepoint(self._conn, self._bounded, work, self._rolled_back)

    async def run(self, work: Work[T], *, short: bool = False) -> T:
        """See :meth:`Held.run`."""
        if self.done:  # its thread may run another transaction now
            raise RuntimeError("the transaction is finished")
        await self.write_held_back()
        if short and not self._on_thread:  # nothing else can use the connection meanwhile
            return self._work(work)
        self._on_thread += 1
        try:
            return await self._call(self._work, work)
        finally:
            self._on_thread -= 1

    def _end(self, commit: bool) -> None:
        assert self._conn is not None
        try:
            if commit:
                self._transaction.commit()
            else:
                self._transaction.rollback()
        finally:
            self._conn.close()

    async def finish(self, *, commit: bool) -> None:
        """See :meth:`Held.finish`."""
        try:
            if commit:
                try:
                    await self._write_before_commit()
                except BaseException:
                    self.done = True
                    await self._call(self._end, False)
                    raise
            self.done = True
            await self._call(self._end, commit)
        finally:
            self._release()


class AsyncHeld(HoldsBack):
    """An :class:`AsyncEngine`'s connection in a transaction."""

    def __init__(self, engine: AsyncEngine, bounded: Bounded, rolled_back: RolledBack) -> None:
        self.engine, self._bounded, self._rolled_back = engine, bounded, rolled_back
        self._conn: AsyncConnection | None = None
        self.done = False
        self.direct: Any = None
        self.depth = 0
        self._held_back: HeldBack = {}
        self.free_of_unique: dict[int, bool] = {}
        self._write: WriteHeldBack | None = None
        self._broken = False

    async def start(self) -> AsyncHeld:
        """Connect and begin."""
        self._conn = await self.engine.connect()
        try:
            await self._conn.begin()
            await self._conn.exec_driver_sql("SELECT 1")  # the driver's BEGIN, sent now
            raw = await self._conn.get_raw_connection()
            self.direct = raw.driver_connection
        except BaseException:
            await self._conn.close()
            raise
        return self

    def _work(self, conn: sa.Connection, work: Work[T]) -> T:
        return _in_savepoint(conn, self._bounded, work, self._rolled_back)

    async def run(self, work: Work[T], *, short: bool = False) -> T:
        """See :meth:`Held.run` (every work runs in the loop's greenlet: ``short`` or not)."""
        assert self._conn is not None
        await self.write_held_back()
        return await self._conn.run_sync(self._work, work)

    async def finish(self, *, commit: bool) -> None:
        """See :meth:`Held.finish`."""
        assert self._conn is not None
        self.done = True
        try:
            if commit:
                try:
                    await self._write_before_commit()
                except BaseException:
                    with contextlib.suppress(Exception):
                        await self._conn.rollback()
                    raise
                await self._conn.commit()
            else:
                self._held_back.clear()
                with contextlib.suppress(Exception):  # a broken connection rolled back
                    await self._conn.rollback()
        finally:
            await self._conn.close()


@contextlib.asynccontextmanager
async def inner_block(held: Held, rolled_back: RolledBack) -> AsyncIterator[None]:
    """A block inside ``held``'s: raising out of it undoes its writes alone (a savepoint).

    The outer block goes on (and may commit): the ``Idempotency-Key`` of a batch keeps
    its claim and answer in a block around the batch's, which must undo the batch's
    requests without losing the answer to keep. If the savepoint cannot be rolled back,
    that error is raised, so the outer block does not commit half a batch.
    """
    held.depth += 1
    name = f"docbase_block_{held.depth}"
    try:
        with translate_errors():
            await held.run(lambda conn: conn.exec_driver_sql(f"SAVEPOINT {name}"))
        try:
            yield
        except BaseException:
            def undo(conn: sa.Connection) -> None:
                conn.exec_driver_sql(f"ROLLBACK TO SAVEPOINT {name}")
                rolled_back(conn)

            with translate_errors():
                await held.run(undo)
            raise
    finally:
        held.depth -= 1
