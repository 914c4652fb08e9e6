"""Running scheduled jobs exactly once per tick, however many processes share the storage.

Every docbase process serving a database runs a :class:`JobScheduler`. At each tick of
a job, each of them tries to insert the tick's lease: a document of the system
collection :data:`LEASES` whose ``_id`` is derived from the job's name and the tick.
The store refuses a second document with that ``_id`` (``Conflict``), so exactly one
process wins and runs the job; the others go back to sleep. The outcome (ok, failed,
timeout) goes to the hook log (:mod:`docbase.core.hooks.calling`). A tick missed
while no process was running is not made up for.
"""

from __future__ import annotations

import asyncio
import contextlib
import hashlib
from collections.abc import Iterable
from datetime import UTC, datetime, timedelta
from typing import TYPE_CHECKING, Protocol

from docbase.core.documents import new_document
from docbase.core.errors import Conflict, DocbaseError
from docbase.core.hooks.calling import call_within, describe, logger, record
from docbase.core.hooks.context import HookHost, JobContext, PrivilegedDatabase
from docbase.core.hooks.jobs import Job
from docbase.core.ids import format_timestamp, utc_now
from docbase.core.lifecycle import AsyncResource
from docbase.core.metrics import instruments
from docbase.core.query import Lt

if TYPE_CHECKING:
    from docbase.core.hooks.jobs import JobRegistry

LEASES = "_jobleases"
"""The system collection of job leases, one document per job and tick."""
RECHECK_SECONDS = 60.0
"""How often the scheduler looks again at a schedule that follows a setting."""
LEASE_RETENTION = timedelta(days=1)
"""How long a lease is kept after its tick (long after any process could still claim it)."""


def lease_id(database: str, job: str, tick: datetime) -> str:
    """The ``_id`` of the lease of ``job`` at ``tick``: 24 hex digits, the same everywhere."""
    key = f"{database}\n{job}\n{format_timestamp(tick)}"
    return hashlib.sha256(key.encode()).hexdigest()[:24]


class JobHost(HookHost, Protocol):
    """What running a database's jobs needs: a hook's needs and the registered jobs."""

    @property
    def jobs(self) -> JobRegistry:
        """The jobs registered with ``@db.job``."""


class JobScheduler(AsyncResource):
    """Runs the jobs of one database while open (``async with JobScheduler(db):``).

    ``jobs`` defaults to the database's registered jobs (``@db.job``); ``docbase serve``
    adds docbase's own (the media orphan sweep).
    """

    def __init__(self, database: JobHost, jobs: Iterable[Job] | None = None, *,
                 recheck: float = RECHECK_SECONDS) -> None:
        self.database = database
        self.jobs = list(database.jobs if jobs is None else jobs)
        self.recheck = recheck
        """Seconds between two looks at the schedule of a job that follows a setting."""
        self._tasks: list[asyncio.Task[None]] = []

    async def open(self) -> None:
        """Start one timer per job."""
        for job in self.jobs:
            self._tasks.append(asyncio.create_task(self._loop(job), name=f"job {job.name}"))

    async def close(self) -> None:
        """Stop the timers; a job running now is cancelled."""
        for task in self._tasks:
            task.cancel()
        for task in self._tasks:
            with contextlib.suppress(asyncio.CancelledError):
                await task
        self._tasks.clear()

    async def _loop(self, job: Job) -> None:
        schedule = await self._schedule(job, job.schedule)
        tick = job.next_tick(datetime.now(UTC), schedule)
        while True:
            wait = (tick - datetime.now(UTC)).total_seconds()
            if job.follow is not None and wait > self.recheck:  # the setting may change
                await asyncio.sleep(self.recheck)
                now = await self._schedule(job, schedule)
                if now != schedule:
                    schedule, tick = now, job.next_tick(datetime.now(UTC), now)
                continue
            await asyncio.sleep(max(0.0, wait))
            try:
                await self.run_tick(job, tick, schedule)
            except DocbaseError as exc:  # the storage failed: try again next tick
                logger.error("job %s at %s: %s", job.name, format_timestamp(tick), exc.message)
            schedule = await self._schedule(job, schedule)
            tick = job.next_tick(max(tick, datetime.now(UTC)), schedule)

    @staticmethod
    async def _schedule(job: Job, before: str) -> str:
        """The schedule of ``job`` in force now; ``before`` when it cannot be read."""
        try:
            return await job.schedule_now()
        except DocbaseError as exc:
            logger.error("job %s: its schedule could not be read (%s); keeping %r",
                         job.name, exc.message, before)
            return before

    async def claim(self, job: Job, tick: datetime) -> bool:
        """Take the lease of ``job`` at ``tick``; tell whether this process got it.

        Raises:
            BackendError: the store failed.

        """
        lease = new_document({"job": job.name, "tick": format_timestamp(tick)}, "scheduler")
        lease["_id"] = lease_id(self.database.name, job.name, tick)
        try:
            await self.database.store.insert(LEASES, [lease])
        except Conflict:
            return False
        expired = format_timestamp(tick - LEASE_RETENTION)
        await self.database.store.delete_where(LEASES, Lt(("tick",), expired))
        return True

    async def run_tick(self, job: Job, tick: datetime, schedule: str | None = None) -> bool:
        """Run ``job`` for ``tick`` if this process wins its lease; tell whether it ran.

        Raises:
            BackendError: the store failed.

        """
        if not await self.claim(job, tick):
            return False
        started = utc_now()
        status, error = "ok", None
        context = JobContext(job=job.name, tick=tick, db=PrivilegedDatabase(self.database))
        try:
            await call_within(job.function, context, name=f"job {job.name}",
                              seconds=self.database.limits.job_timeout)
        except DocbaseError as exc:
            status, error = describe(exc)
            logger.error("job %s at %s: %s", job.name, format_timestamp(tick), error,
                         exc_info=exc.__cause__ or exc)
        instruments().job_run(job.name, failed=status != "ok")
        await record(self.database.store, {
            "kind": "job", "name": job.name, "schedule": schedule or job.schedule,
            "tick": format_timestamp(tick), "status": status, "error": error,
            "started": started, "finished": utc_now(),
        })
        return True
