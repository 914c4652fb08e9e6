"""One writer per SQLite file and process, committing the writes that wait in one go.

SQLite lets one transaction write at a time. With a transaction per write, concurrent
writers of one process each took a worker thread and raced for the lock (``BEGIN
IMMEDIATE``), sleeping in SQLite's busy handler between tries: under 32 concurrent
creates most of the time went to waiting, and the slowest waited for seconds.
:class:`GroupCommitWriter` gives each process one writer thread instead. A write is
queued; the writer takes every write queued so far, runs them in one transaction, each
in a savepoint of its own (a write that fails is rolled back alone and raises to its own
caller), commits once, and only then answers the callers: a write is acknowledged once
it is committed. A batch is first tried without savepoints, all or nothing (two
statements fewer per write, each a hand-over of the GIL while the file's lock is held);
if a write fails, that transaction is rolled back and a batch of several runs again
with a savepoint per write. Writes queued meanwhile form the next batch. Other
processes serving the same file still take turns on SQLite's lock, one batch each.

Durability is SQLite's, in WAL mode with ``synchronous = NORMAL``: a committed
transaction is in the WAL file before the caller hears of it, so it survives the process
being killed (``kill -9``); a power loss or an operating-system crash may lose the last
transactions before a checkpoint, never the database's consistency.
"""

from __future__ import annotations

import asyncio
import contextlib
import sqlite3
import threading
import time
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from contextlib import AbstractContextManager
from typing import Any, TypeVar

import sqlalchemy as sa

from docbase.core.errors import BackendError

T = TypeVar("T")
_LOCK_TIMEOUT = 30.0  # seconds a batch waits for the file's write lock
_FIRST_PAUSE = 0.0002
_LAST_PAUSE = 0.002
Work = Callable[[sa.Connection], T]
_Pending = tuple[Work[Any], asyncio.Future[Any]]


class GroupCommitWriter:
    """Runs the writes of one SQLite engine in batches, one transaction per batch.

    ``begin`` makes SQLAlchemy's transaction of a batch on a connection of ``engine``
    whose driver connection already holds the write lock (:func:`take_write_lock`);
    ``bounded`` gives each write of the batch its own time limit (the store's
    ``query_timeout``), as every other store operation has; ``lock_wait`` says how long
    a batch waits for the write lock another process holds (then every write of the
    batch fails with ``BackendError``, "database is locked": 503, retry);
    ``savepoint_rolled_back`` is told when a write's savepoint was rolled back on the
    driver, which SQLAlchemy does not see, so that what the batch created (a collection
    table) is not taken for committed (:mod:`.table_numbers`; a whole transaction's
    rollback goes through SQLAlchemy, whose events say so).
    """

    def __init__(self, engine: sa.Engine, begin: Callable[[sa.Connection], Any],
                 bounded: Callable[[sa.Connection], AbstractContextManager[Any]],
                 lock_wait: Callable[[], float] = lambda: _LOCK_TIMEOUT,
                 savepoint_rolled_back: Callable[[sa.Connection], None] = lambda conn: None,
                 ) -> None:
        self.engine = engine
        self._savepoint_rolled_back = savepoint_rolled_back
        self._begin = begin
        self._bounded = bounded
        self._lock_wait = lock_wait
        self._lock = threading.Lock()
        self._pending: list[_Pending] = []
        self._active = False
        self._thread = ThreadPoolExecutor(1, thread_name_prefix="docbase-sqlite-writer")

    async def write(self, work: Work[T]) -> T:
        """Run ``work`` in the next batch; return its result once the batch is committed.

        Raises:
            Exception: what ``work`` raised (only its own savepoint was rolled back), or
                what beginning or committing its batch raised.

        """
        future: asyncio.Future[T] = asyncio.get_running_loop().create_future()
        with self._lock:
            self._pending.append((work, future))
            start, self._active = not self._active, True
        if start:
            self._thread.submit(self._drain)
        return await future

    def close(self) -> None:
        """Stop the writer thread once the queued batches are done."""
        self._thread.shutdown(wait=True)

    def _drain(self) -> None:
        while True:
            with self._lock:
                batch, self._pending = self._pending, []
                if not batch:
                    self._active = False
                    return
            self._commit(batch)

    def _commit(self, batch: list[_Pending]) -> None:
        outcomes: list[tuple[bool, Any]] = []
        try:
            with self.engine.connect() as conn:
                driver = conn.connection.driver_connection
                assert driver is not None
                failure = self._all_or_nothing(conn, driver, batch, outcomes)
                if failure is None:
                    outcomes = [(True, value) for value in outcomes]
                elif len(batch) == 1:  # rolled back alone, as its savepoint would have been
                    outcomes = [(False, failure)]
                else:  # again, each write in its savepoint: only the failing ones fail
                    outcomes = []
                    take_write_lock(driver, self._lock_wait())
                    with self._begin(conn):
                        for work, _future in batch:
                            with self._bounded(conn):
                                outcomes.append(self._one(conn, driver, work))
        except BaseException as exc:  # the batch's transaction failed: nothing was stored
            failed: tuple[bool, Any] = (False, _translated(exc))
            outcomes = [outcome if not outcome[0] else failed for outcome in outcomes]
            outcomes += [failed] * (len(batch) - len(outcomes))
        for (_work, future), (ok, value) in zip(batch, outcomes, strict=True):
            with contextlib.suppress(RuntimeError):  # its event loop is closed: nobody waits
                future.get_loop().call_soon_threadsafe(_settle, future, ok, value)

    def _all_or_nothing(self, conn: sa.Connection, driver: Any, batch: list[_Pending],
                        results: list[Any]) -> Exception | None:
        """Run the batch in one transaction without savepoints, into ``results``.

        Returns the first write's error after rolling everything back, or ``None``
        once committed.
        """
        take_write_lock(driver, self._lock_wait())
        transaction = self._begin(conn)
        try:
            for work, _future in batch:
                with self._bounded(conn):
                    results.append(work(conn))
        except Exception as exc:
            results.clear()
            transaction.rollback()
            return exc
        except BaseException:
            transaction.rollback()
            raise
        transaction.commit()
        return None

    def _one(self, conn: sa.Connection, driver: Any, work: Work[Any]) -> tuple[bool, Any]:
        driver.execute("SAVEPOINT docbase_write")
        try:
            result = work(conn)
        except Exception as exc:
            if not driver.in_transaction:
                # SQLite rolled the whole transaction back itself (SQLITE_FULL, for one):
                # the batch's earlier writes are gone too, so the batch fails with this
                raise
            driver.execute("ROLLBACK TO docbase_write")
            driver.execute("RELEASE docbase_write")
            self._savepoint_rolled_back(conn)
            return False, exc
        driver.execute("RELEASE docbase_write")
        return True, result


def take_write_lock(driver: sqlite3.Connection, timeout: float = _LOCK_TIMEOUT) -> None:
    """``BEGIN IMMEDIATE`` on ``driver``, trying again every millisecond or so while busy.

    SQLite's own busy handler sleeps longer and longer between tries (up to 100 ms), so
    a writer of one process often slept long after the other process's batch was done:
    creates' p99 was 170-190 ms with two workers. Short, steady tries hand the lock over
    within a millisecond or two.

    Raises:
        sqlite3.OperationalError: still locked after ``timeout`` seconds.

    """
    deadline = time.monotonic() + timeout
    pause = _FIRST_PAUSE
    driver.execute("PRAGMA busy_timeout = 0")
    try:
        while True:
            try:
                driver.execute("BEGIN IMMEDIATE")
                return
            except sqlite3.OperationalError as exc:
                if "locked" not in str(exc) or time.monotonic() >= deadline:
                    raise
            time.sleep(pause)
            pause = min(pause * 2, _LAST_PAUSE)
    finally:
        driver.execute(f"PRAGMA busy_timeout = {int(timeout * 1000)}")


def _translated(exc: BaseException) -> BaseException:
    if isinstance(exc, sqlite3.Error):  # the lock, or a savepoint, sent to the driver directly
        hint = "; another process holds it: try again" if "locked" in str(exc) else ""
        error = BackendError(f"database error: {exc}{hint}")
        error.__cause__ = exc
        return error
    return exc


def _settle(future: asyncio.Future[Any], ok: bool, value: Any) -> None:
    if future.cancelled():
        return
    if ok:
        future.set_result(value)
    else:
        future.set_exception(value)
