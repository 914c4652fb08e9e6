"""The media orphan sweep on every adapter: bytes no ``_media`` record owns are deleted
after the grace, referenced bytes and derivatives never are, an upload racing the sweep
fails cleanly, the job runs once per tick, and ``docbase media sweep`` prints what it
removed. Orphans are made as crashes make them: bytes stored without their metadata, a
record deleted without its bytes, a put that stops half way and never finishes."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import pytest

from docbase import cli
from docbase.adapters.memory import MemoryBlobStore, MemoryDocumentStore
from docbase.core.database import Database
from docbase.core.errors import Conflict, InvalidQuery, NotFound
from docbase.core.hooks import HookPoint
from docbase.core.hooks.scheduling import JobScheduler
from docbase.core.ids import new_object_id
from docbase.core.media import MEDIA_COLLECTION, Upload
from docbase.core.media.sweeping import SWEEP_JOB, orphan_grace, sweep_job
from docbase.core.query import Query
from tests import media_samples as samples

BIG = 3 * 1024 * 1024  # more than one write batch of every adapter (SQL 1 MiB, GridFS 2 MiB)


async def _stored(db: Database, key: str) -> bool:
    try:
        await db.media.blobs.stat(key)
    except NotFound:
        return False
    return True


class HungPut:
    """A put whose client stops sending after ``BIG`` bytes, as a killed process stops.

    Once ``stalled``, its full write batches are in the store (a put asks for more only
    after writing) and no blob points to them; ``finish`` sends the rest.
    """

    def __init__(self, db: Database, key: str) -> None:
        self.more = asyncio.Event()
        self.stalled = asyncio.Event()
        self.task = asyncio.create_task(db.media.blobs.put(key, self._chunks(), "text/plain"))

    async def _chunks(self) -> AsyncIterator[bytes]:
        for _ in range(BIG // 65536):
            yield b"h" * 65536
        self.stalled.set()
        await self.more.wait()
        yield b"end"

    async def finish(self) -> Any:
        self.more.set()
        return await self.task


async def test_the_sweep_deletes_orphans_and_keeps_every_referenced_blob(stores: Any) -> None:
    store, blobs = stores
    db = Database(store, blobs)
    png, text = samples.png(300, 200), b"keep me\n"
    kept_png, kept_text, lost = (await db.media.upload([
        Upload("kept.png", png), Upload("kept.txt", text), Upload("lost.png", png)])).ids
    kept_thumb = await (await db.media.open(kept_png, "t")).read()
    await (await db.media.open(lost, "t")).read()
    # a crash in the middle of a delete: the record went, its bytes and thumbnail stayed
    await store.delete(MEDIA_COLLECTION, [lost])
    # a crash between storing the bytes and writing their record
    orphan = new_object_id()
    await db.media.blobs.put(orphan, _once(b"orphan bytes"), "text/plain")
    await db.media.blobs.put("not-media", _once(b"someone else's"), "text/plain")
    hung_key = new_object_id()
    hung = HungPut(db, hung_key)
    await hung.stalled.wait()

    assert await db.media.sweep(timedelta(hours=1)) == _swept([], 0)  # all too young
    await asyncio.sleep(1.1)  # blob ids count whole seconds
    swept = await db.media.sweep(timedelta(0))

    memory = isinstance(blobs, MemoryBlobStore)  # keeps nothing of a put until it ends
    assert sorted(swept.blobs) == sorted([orphan, lost, f"{lost}/t"])
    assert swept.unfinished == (0 if memory else 1)
    for key in (orphan, lost, f"{lost}/t"):
        assert not await _stored(db, key)
    assert await _stored(db, "not-media")
    assert await (await db.media.open(kept_png)).read() == png
    assert await db.media.blobs.stat(f"{kept_png}/t")
    assert await (await db.media.open(kept_png, "t")).read() == kept_thumb
    assert await (await db.media.open(kept_text)).read() == text
    records = await store.find(MEDIA_COLLECTION, Query())
    assert sorted(r["_id"] for r in records) == sorted([kept_png, kept_text])  # no tombstone
    if memory:  # its bytes arrive whole, and no record ever owns them
        assert (await hung.finish()).size == BIG + 3
        assert await db.media.sweep(timedelta(0)) == _swept([hung_key], 0)
    else:  # its chunks were swept: the put fails rather than publish a blob with holes
        with pytest.raises(Conflict, match="lost chunks"):
            await hung.finish()
        assert not await _stored(db, hung_key)
    assert await db.media.sweep(timedelta(0)) == _swept([], 0)


def _swept(blobs: list[str], unfinished: int) -> Any:
    from docbase.core.media.sweeping import Swept

    return Swept(blobs, unfinished)


async def _once(data: bytes) -> AsyncIterator[bytes]:
    yield data


def _memory_db() -> Database:
    return Database(MemoryDocumentStore(), MemoryBlobStore())


async def test_an_upload_whose_id_the_sweep_claimed_fails_and_leaves_nothing() -> None:
    db = _memory_db()

    async def sweep_claims_it(write: Any) -> None:  # a sweep holding the id while it deletes
        tombstone = {"_id": write.documents[1]["_id"], "_version": 0, "sweeping": "x"}
        await db.store.insert(MEDIA_COLLECTION, [tombstone])

    db.hooks.on(HookPoint.BEFORE_INSERT, sweep_claims_it, collection=MEDIA_COLLECTION)
    with pytest.raises(Conflict, match=r"file 'b\.txt' was removed by the orphan sweep"):
        await db.media.upload([Upload("a.txt", b"a\n"), Upload("b.txt", b"b\n")])
    [tombstone] = await db.store.find(MEDIA_COLLECTION, Query())
    assert [k async for k in db.media.blobs.keys(datetime.now(UTC) + timedelta(1))] == []
    assert await db.media.find() == []  # a tombstone is no file
    with pytest.raises(NotFound):
        await db.media.meta(tombstone["_id"])
    with pytest.raises(NotFound):
        await db.media.open(tombstone["_id"])


async def test_an_upload_whose_bytes_were_swept_before_its_commit_takes_it_back() -> None:
    db = _memory_db()

    async def slow_upload_meets_the_sweep(write: Any) -> None:
        swept = await db.media.sweep(timedelta(0))
        assert sorted(swept.blobs) == sorted(d["_id"] for d in write.documents)

    db.hooks.on(HookPoint.BEFORE_INSERT, slow_upload_meets_the_sweep,
                collection=MEDIA_COLLECTION)
    with pytest.raises(Conflict, match=r"file 'a\.txt' was removed by the orphan sweep"):
        await db.media.upload([Upload("a.txt", b"a\n"), Upload("b.txt", b"b\n")])
    assert await db.store.find(MEDIA_COLLECTION, Query()) == []


async def test_the_sweep_job_runs_once_per_tick_among_processes() -> None:
    store, blobs = MemoryDocumentStore(), MemoryBlobStore()
    first, second = Database(store, blobs), Database(store, blobs)
    orphan = new_object_id()
    await blobs.put(orphan, _once(b"x"), "text/plain")
    await first.settings.set("media.orphan_grace", 1)
    await asyncio.sleep(1.05)
    tick = datetime(2030, 1, 1, 0, 7, tzinfo=UTC)
    jobs = [sweep_job(first), sweep_job(second)]
    ran = await asyncio.gather(*(JobScheduler(db, [job]).run_tick(job, tick)
                                 for db, job in zip((first, second), jobs, strict=True)))
    assert sorted(ran) == [False, True]
    assert not await _stored(first, orphan)
    [entry] = await first.system_collection("_hooklog").find()
    assert (entry["name"], entry["status"]) == (SWEEP_JOB, "ok")


async def test_the_grace_is_a_stored_setting() -> None:
    db = _memory_db()
    assert await orphan_grace(db.settings) == timedelta(hours=1)
    await db.settings.set("media.orphan_grace", "2h")
    assert await orphan_grace(db.settings) == timedelta(hours=2)
    await db.settings.set("media.orphan_grace", "soon")
    with pytest.raises(InvalidQuery, match=r"media\.orphan_grace"):
        await db.media.sweep()


def test_docbase_media_sweep_prints_what_it_removed(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    storage = f"sqlite:///{tmp_path}/media.db"

    async def prepare() -> tuple[str, str]:
        async with await _connect(storage) as db:
            [kept] = (await db.media.upload([Upload("kept.txt", b"kept\n")])).ids
            orphan = new_object_id()
            await db.media.blobs.put(orphan, _once(b"orphan"), "text/plain")
            return kept, orphan

    kept, orphan = asyncio.run(prepare())
    argv = ["media", "sweep", "--storage", storage, "--data-dir", str(tmp_path)]
    assert cli.main([*argv, "--grace", "1h"]) == 0
    assert capsys.readouterr().out == ""
    asyncio.run(asyncio.sleep(2.05))
    assert cli.main([*argv, "--grace", "1"]) == 0
    out, err = capsys.readouterr()
    assert out == f"{orphan}\n"
    assert "deleted 1 orphaned blob(s)" in err
    assert cli.main([*argv, "--grace", "never"]) == 2

    async def served() -> bytes:
        async with await _connect(storage) as db:
            return await (await db.media.open(kept)).read()

    assert asyncio.run(served()) == b"kept\n"


async def _connect(storage: str) -> Database:
    import docbase

    return await docbase.connect(storage)
