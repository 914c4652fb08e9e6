"""A database's stored ``limits.*`` and ``backups.*``: lower than the server's, live.

The server's limits come from its config; a database may store lower ones, which rule
its next operation in this process and, in another process sharing the storage, once
that process reads the settings again (a second at most). A value above the server's
is refused and stores nothing. The stored backup schedule takes over from the
server's while the job scheduler runs (``docs/portability.md``).
"""

from __future__ import annotations

import asyncio
import time
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest

import docbase
from docbase.core.database import Database
from docbase.core.errors import ConfigurationError, InvalidQuery, PayloadTooLarge
from docbase.core.hooks.calling import HOOK_LOG
from docbase.core.hooks.scheduling import JobScheduler
from docbase.core.portability.backups import BACKUP_JOB, backup_job
from docbase.core.query import Query
from docbase.core.settings import Limits
from docbase.core.settings.limits import DATABASE_LIMITS, check_lowered, lowered
from docbase.core.settings.store import SETTINGS_COLLECTION
from docbase.core.update import SetOp, Update

SERVER = Limits(max_page=50, max_bulk=10, rate_per_key=0, export_max=100, image_timeout=5.0)


def test_a_lower_stored_limit_replaces_the_server_s_and_a_higher_one_is_refused() -> None:
    assert lowered(SERVER, {"max_page": 20}).max_page == 20
    assert lowered(SERVER, {"max_page": 20}).max_bulk == 10
    assert lowered(SERVER, {"image_timeout": 2.5}).image_timeout == 2.5
    # 0 turns rate_per_key and export_max off: any stored number is lower than "none"
    assert lowered(SERVER, {"rate_per_key": 7}).rate_per_key == 7
    assert lowered(SERVER, {"export_max": 0}).export_max == 100  # "none" lifts nothing
    assert lowered(SERVER, {}) is SERVER
    check_lowered(SERVER, {"max_page": 50, "rate_per_key": 3, "export_max": 99})
    for stored, shown in (({"max_page": 51}, "51"), ({"export_max": 0}, "0 (none)"),
                          ({"image_timeout": 5.5}, "5.5")):
        with pytest.raises(ConfigurationError) as refused:
            check_lowered(SERVER, stored)
        name = next(iter(stored))
        assert refused.value.message == (
            f"setting 'limits.{name}': {shown} is above this server's limit "
            f"({getattr(SERVER, name):g}); a database may only lower its limits")


def test_every_database_limit_is_a_limit_of_the_server() -> None:
    assert set(DATABASE_LIMITS) <= set(Limits.__struct_fields__)
    # those set when a store opens or shared by the process stay the server's alone
    assert not {"query_timeout", "auto_index", "change_poll_interval", "rate_window",
                "webhook_private_targets"} & set(DATABASE_LIMITS)


async def test_a_stored_limit_rules_the_next_operation_and_unset_gives_it_back(
        tmp_path: Path) -> None:
    async with await docbase.connect(f"sqlite:///{tmp_path}/a.db", limits=SERVER) as db:
        birds = db.collection("birds")
        await birds.insert_many([{"n": n} for n in range(3)])
        assert len(await birds.find({}, {"$max": 30})) == 3
        await db.settings.set("limits.max_page", 20)
        assert db.limits.max_page == 20
        with pytest.raises(InvalidQuery, match="max may be at most 20"):
            await birds.find({}, {"$max": 30})
        await db.settings.set("limits.max_bulk", 2)
        with pytest.raises(PayloadTooLarge):
            await birds.insert_many([{"n": n} for n in range(3)])
        await db.settings.set("limits.max_body_depth", 3)  # the write pipeline's stage
        with pytest.raises(InvalidQuery):
            await birds.insert({"a": {"b": {"c": {"d": 1}}}})
        with pytest.raises(ConfigurationError, match="above this server's limit"):
            await db.settings.set("limits.max_page", 51)
        with pytest.raises(ConfigurationError, match="must be a positive integer"):
            await db.settings.set("limits.max_bulk", 0)
        assert (await db.settings.tree())["limits"] == {
            "max_page": 20, "max_bulk": 2, "max_body_depth": 3}
        assert db.limits.max_page == 20
        assert await db.settings.unset("limits.max_page")
        assert db.limits.max_page == 50
        assert len(await birds.find({}, {"$max": 30})) == 3


async def _limits_seen_by(db: Database, name: str, value: Any, seconds: float = 10.0) -> None:
    deadline = time.monotonic() + seconds
    while getattr(await db.settings.follow_limits(), name) != value:
        assert time.monotonic() < deadline, f"{name} is still {getattr(db.limits, name)}"
        await asyncio.sleep(0.05)


async def test_another_process_lowers_a_limit_and_this_one_follows(tmp_path: Path) -> None:
    url = f"sqlite:///{tmp_path}/shared.db"
    # two databases on one file, each with its own cache: two processes as far as the
    # settings go (served processes are in test_console_settings.py)
    async with await docbase.connect(url, limits=SERVER) as here, \
            await docbase.connect(url, limits=SERVER) as there:
        assert (await there.settings.follow_limits()).max_page == 50
        await here.settings.set("limits.max_page", 7)
        started = time.monotonic()
        await _limits_seen_by(there, "max_page", 7)
        assert time.monotonic() - started < 5  # the cache's lifetime, not a restart
        with pytest.raises(InvalidQuery, match="at most 7"):
            await there.collection("birds").find({}, {"$max": 8})
        await here.settings.unset("limits.max_page")
        await _limits_seen_by(there, "max_page", 50)


async def test_settings_that_do_not_fit_leave_the_limits_in_force(tmp_path: Path) -> None:
    async with await docbase.connect(f"sqlite:///{tmp_path}/a.db", limits=SERVER) as db:
        await db.settings.set("limits.max_page", 20)
        # what an import of a foreign archive could store: not typed on its way in
        [stored] = await db.store.find(SETTINGS_COLLECTION, Query())
        await db.store.update(SETTINGS_COLLECTION, stored["_id"],
                              Update((SetOp(("limits", "max_page"), "many"),)), stamp={})
        db.auth_cache.invalidate(db.settings.cached_as)
        assert (await db.settings.follow_limits()).max_page == 20
        with pytest.raises(ConfigurationError, match=r"limits\.max_page"):
            await db.settings.load()


async def test_a_stored_backup_schedule_and_count_take_over_while_it_runs(
        tmp_path: Path) -> None:
    directory = tmp_path / "backups"
    async with await docbase.connect(f"sqlite:///{tmp_path}/a.db") as db:
        await db.collection("birds").insert({"name": "wren"})
        yearly = "0 0 1 1 *"  # the server's: not within this test
        job = backup_job(db, directory, 5, yearly, db.settings)
        assert job.name == BACKUP_JOB
        assert await job.schedule_now() == yearly
        async with JobScheduler(db, [job], recheck=0.1):
            await asyncio.sleep(0.3)
            assert list(directory.glob("*.tar.gz")) == []
            await db.settings.set("backups.keep", 2)
            await db.settings.set("backups.schedule", "* * * * * */1")  # every second
            deadline = time.monotonic() + 20
            while len(await db.store.find(HOOK_LOG, Query())) < 3:
                assert time.monotonic() < deadline, "the stored schedule did not take over"
                await asyncio.sleep(0.05)
            await db.settings.unset("backups.schedule")
            await asyncio.sleep(0.5)  # the next look at the schedule; a backup under way ends
            runs = len(await db.store.find(HOOK_LOG, Query()))
            await asyncio.sleep(1.2)  # a second, and more, with no backup
            assert len(await db.store.find(HOOK_LOG, Query())) == runs  # yearly again
        assert len(list(directory.glob("*.tar.gz"))) == 2  # the stored keep
        logged = await db.store.find(HOOK_LOG, Query())
        assert {entry["schedule"] for entry in logged} == {"* * * * * */1"}
        assert {entry["status"] for entry in logged} == {"ok"}
        with pytest.raises(ConfigurationError, match=r"backups\.schedule"):
            await db.settings.set("backups.schedule", "every day")
        with pytest.raises(ConfigurationError, match=r"backups\.keep"):
            await db.settings.set("backups.keep", 0)
        assert await job.schedule_now() == yearly
        started = datetime.now(UTC)
        assert job.next_tick(started) > started
