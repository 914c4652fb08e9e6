"""Scheduled jobs in the library: leases make a tick run once, outcomes go to the hook log."""

from __future__ import annotations

import asyncio
from datetime import UTC, datetime
from typing import Any

import pytest

from docbase import ConfigurationError, Database, JobContext, JobScheduler, Limits
from docbase.adapters.memory import MemoryBlobStore, MemoryDocumentStore
from docbase.core.hooks.calling import HOOK_LOG

TICK = datetime(2030, 1, 1, 12, 0, tzinfo=UTC)


def database(**limits: Any) -> Database:
    return Database(MemoryDocumentStore(), MemoryBlobStore(), limits=Limits(**limits))


async def hook_log(db: Database) -> list[dict[str, Any]]:
    return await db.system_collection(HOOK_LOG).find()


async def test_two_schedulers_on_one_store_run_a_tick_once(stores: Any) -> None:
    db = Database(*stores)
    runs: list[datetime] = []

    @db.job("*/5 * * * *", name="report")
    async def report(ctx: JobContext) -> None:
        runs.append(ctx.tick)
        await ctx.db.collection("reports").insert({"at": ctx.tick.isoformat()})

    [job] = list(db.jobs)
    first, second = JobScheduler(db), JobScheduler(db)
    outcomes = await asyncio.gather(first.run_tick(job, TICK), second.run_tick(job, TICK))
    assert sorted(outcomes) == [False, True]
    assert await second.run_tick(job, TICK) is False
    assert runs == [TICK]
    [entry] = await hook_log(db)
    assert (entry["kind"], entry["name"], entry["status"], entry["tick"]) == (
        "job", "report", "ok", "2030-01-01T12:00:00.000Z")
    assert await db.collection("reports").count() == 1


async def test_failing_and_overrunning_jobs_are_logged() -> None:
    db = database(job_timeout=0.2)

    @db.job("* * * * *", name="broken")
    def broken(ctx: JobContext) -> None:
        raise ValueError("no")

    @db.job("* * * * *", name="slow")
    async def slow(ctx: JobContext) -> None:
        await asyncio.sleep(60)

    scheduler = JobScheduler(db)
    for job in db.jobs:
        assert await scheduler.run_tick(job, TICK)
    statuses = {e["name"]: (e["status"], e["error"]) for e in await hook_log(db)}
    assert statuses == {"broken": ("failed", "job broken failed: ValueError"),
                        "slow": ("timeout", "job slow did not finish within 0.2 s")}


async def test_an_open_scheduler_runs_a_job_every_second() -> None:
    db = database()
    ticks: list[datetime] = []

    @db.job("* * * * * *")
    async def every_second(ctx: JobContext) -> None:
        ticks.append(ctx.tick)

    async with JobScheduler(db):
        await asyncio.sleep(2.2)
    assert len(ticks) >= 2
    assert all(t.microsecond == 0 for t in ticks)
    assert len(set(ticks)) == len(ticks)


@pytest.mark.parametrize("schedule", ["not cron", "61 * * * *", ""])
def test_a_bad_schedule_is_refused_by_name(schedule: str) -> None:
    db = database()
    with pytest.raises(ConfigurationError, match="job schedule"):
        db.job(schedule)(print)


def test_a_job_name_is_taken_once() -> None:
    db = database()
    db.job("* * * * *", name="x")(print)
    with pytest.raises(ConfigurationError, match="'x' is registered already"):
        db.job("0 * * * *", name="x")(print)
