"""Scheduled jobs: a cron schedule and a function, run once per tick across processes.

``@db.job("*/5 * * * *")`` adds a :class:`Job` to the database's :class:`JobRegistry`.
Schedules are cron expressions read by ``croniter``: five fields, or six with seconds
last (``"* * * * * */10"``: every ten seconds). The :class:`JobScheduler` of
:mod:`docbase.core.hooks.scheduling` runs them.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Iterator
from datetime import UTC, datetime
from typing import TYPE_CHECKING

from docbase.core.errors import ConfigurationError
from docbase.core.hooks.calling import UserFunction, function_name
from docbase.core.plugins import lazy_module

if TYPE_CHECKING:
    import croniter
else:  # imported with the first job: a worker without jobs never needs it (or dateutil)
    croniter = lazy_module("croniter")


class Job:
    """One scheduled function; its ``name`` is the same in every process."""

    def __init__(self, schedule: str, function: UserFunction, name: str | None = None, *,
                 follow: Callable[[], Awaitable[str | None]] | None = None) -> None:
        """Describe a job.

        ``follow`` returns the schedule in force now when it may change while the
        server runs (a stored setting: ``backups.schedule``), ``None`` for ``schedule``;
        the scheduler asks it before each tick and at least once a minute meanwhile.

        Raises:
            ConfigurationError: ``schedule`` is not a cron expression.

        """
        try:
            croniter.croniter(schedule)
        except (croniter.CroniterError, ValueError) as exc:
            raise ConfigurationError(f"job schedule {schedule!r}: {exc}") from None
        self.schedule = schedule
        self.function = function
        self.name = name or function_name(function)
        self.follow = follow

    async def schedule_now(self) -> str:
        """The schedule in force: what ``follow`` says, else the one the job was made with.

        Raises:
            DocbaseError: ``follow`` failed (a store error, settings that do not fit).

        """
        return (await self.follow() if self.follow is not None else None) or self.schedule

    def next_tick(self, after: datetime, schedule: str | None = None) -> datetime:
        """The first tick of ``schedule`` (the job's own) strictly after ``after`` (UTC)."""
        tick: datetime = croniter.croniter(schedule or self.schedule,
                                           after.astimezone(UTC)).get_next(datetime)
        return tick.astimezone(UTC)


class JobRegistry:
    """The jobs of one database, by name."""

    def __init__(self) -> None:
        self._jobs: dict[str, Job] = {}

    def add(self, schedule: str, function: UserFunction, *, name: str | None = None) -> Job:
        """Register ``function`` to run on ``schedule``; return the :class:`Job`.

        Raises:
            ConfigurationError: the schedule is invalid or the name already taken.

        """
        job = Job(schedule, function, name)
        if job.name in self._jobs:
            raise ConfigurationError(f"a job called {job.name!r} is registered already")
        self._jobs[job.name] = job
        return job

    def decorator(self, schedule: str, *, name: str | None = None,
                  ) -> Callable[[UserFunction], UserFunction]:
        """A decorator registering the function it decorates (``@db.job(...)``).

        Raises:
            ConfigurationError: the schedule is invalid (when decorating).

        """
        def register(function: UserFunction) -> UserFunction:
            self.add(schedule, function, name=name)
            return function
        return register

    def __iter__(self) -> Iterator[Job]:
        """The jobs in registration order."""
        return iter(list(self._jobs.values()))

    def __len__(self) -> int:
        """How many jobs are registered."""
        return len(self._jobs)
