"""Export, import and migration between every pair of stores, on real engines.

A generated database (documents of many shapes, children, ``$`` keys, unicode, a schema
with unique and password fields, an API key, a user, a media file) is exported from one
store and imported into another; it must read back identical through the library's API.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from docbase.core.auth.keys import KEYS_COLLECTION, create_key
from docbase.core.auth.users import USERS_COLLECTION, create_user
from docbase.core.changes import Change
from docbase.core.database import Database
from docbase.core.media.receiving import Upload
from docbase.core.portability import ImportRefused, export_archive, import_archive
from docbase.core.portability.capture import capturing
from docbase.core.portability.following import FollowOverrun, follow
from docbase.core.portability.migrating import migrate
from docbase.core.schema.definition import parse_schema
from docbase.core.settings import Limits
from docbase.testing.document_strategies import documents
from tests.backends import BACKENDS

ENGINES = ["memory", "sqlite-file", "postgresql", "mongo"]
PAIRS = [(a, b) for a in ENGINES for b in ENGINES if a != b]
SYSTEM_COMPARED = (KEYS_COLLECTION, USERS_COLLECTION, "_schemas", "_media", "_relations")


@contextlib.asynccontextmanager
async def database(engine: str, request: pytest.FixtureRequest) -> AsyncIterator[Database]:
    async with BACKENDS[engine](request) as (store, blobs):
        yield Database(store, blobs)


def drawn_documents(examples: int = 25) -> list[dict[str, Any]]:
    """Bodies drawn from the differential suite's strategy (NUL and ``$`` keys, unicode,
    nesting, mixed types), the same ones on every run."""
    drawn: list[dict[str, Any]] = []

    @settings(max_examples=examples, derandomize=True, database=None,
              suppress_health_check=list(HealthCheck))
    @given(st.lists(documents(), min_size=1, max_size=8))
    def draw(bodies: list[dict[str, Any]]) -> None:
        drawn.extend(bodies)

    draw()
    return drawn


DRAWN = drawn_documents()


PEOPLE = {"fields": [{"name": "email", "type": "email", "unique": True},
                     {"name": "secret", "type": "password"},
                     {"name": "age", "type": "number"}]}


async def seed(db: Database) -> None:
    await db.schemas.put(parse_schema("people", PEOPLE))
    people = db.collection("people")
    await people.insert_many([{"email": f"p{i}@example.com", "secret": f"pw-{i}-long",
                               "age": i} for i in range(5)])
    parent = (await people.find())[0]
    await people.children(parent["_id"], "notes").insert_many(
        [{"text": "child ü"}, {"text": "second"}])
    await db.collection("things").insert_many(DRAWN)
    await db.collection("things").insert({"nul\x00key": 1, "$dollar": {"$in": ["é", "日本"]}})
    await create_key(db, full_access=True, description="exported key")
    await create_user(db, "User@Example.com", "correct horse battery")
    await db.media.upload([Upload("hello.txt", b"hello, media\n" * 50)])


async def api_view(db: Database) -> dict[str, Any]:
    """What the API reads back: every user collection, and the compared system ones."""
    view: dict[str, Any] = {}
    for name in await db.collections():
        view[name] = sorted(await db.collection(name).find(h={"$max": 10000}),
                            key=lambda d: d["_id"])
    for name in SYSTEM_COMPARED:
        view[name] = sorted(await db.system_collection(name).find(h={"$max": 10000}),
                            key=lambda d: d["_id"])
    media = view["_media"]
    assert media, "the seeded media record is missing"
    view["media bytes"] = [b"".join([c async for c in db.media.blobs.read(m["_id"])])
                           for m in media]
    return view




@pytest.mark.parametrize(("source", "target"), PAIRS, ids=[f"{a}-to-{b}" for a, b in PAIRS])
async def test_migrate_copies_every_store_into_every_other_identically(
        source: str, target: str, request: pytest.FixtureRequest) -> None:
    """Export, import and verification together: migrate reads back identical."""
    async with database(source, request) as origin, database(target, request) as copy:
        await seed(origin)
        expected = await api_view(origin)
        migration = await migrate(origin, copy)
        assert [c.name for c in migration.checks if not c.ok] == []
        assert migration.manifest.documents == sum(c.found for c in migration.checks)
        assert await api_view(copy) == expected


async def test_import_twice_duplicates_nothing_and_refuses_changed_documents(
        request: pytest.FixtureRequest, tmp_path: Path) -> None:
    archive = tmp_path / "db.tar"
    async with database("sqlite-file", request) as origin:
        await seed(origin)
        await export_archive(origin, archive)
        before = await api_view(origin)
        await import_archive(origin, archive)  # everything is there already: no change
        assert await api_view(origin) == before
        things = origin.collection("things")
        first = (await things.find(h={"$max": 1}))[0]
        await things.patch(first["_id"], {"changed": True})
        with pytest.raises(ImportRefused) as refused:
            await import_archive(origin, archive)
        assert refused.value.collection == "things"
        assert refused.value.line >= 1
        await import_archive(origin, archive, mode="skip")
        assert (await things.get(first["_id"]))["changed"] is True
        await import_archive(origin, archive, mode="upsert")
        assert await things.get(first["_id"]) == first


async def test_import_refuses_a_document_that_does_not_fit_the_schema_naming_its_line(
        request: pytest.FixtureRequest, tmp_path: Path) -> None:
    archive = tmp_path / "db.tar"
    async with database("memory", request) as origin:
        await origin.collection("people").insert_many(
            [{"email": "a@example.com"}, {"email": "not an email"}])
        await export_archive(origin, archive)
    async with database("memory", request) as copy:
        await copy.schemas.put(parse_schema("people", PEOPLE))
        with pytest.raises(ImportRefused) as refused:
            await import_archive(copy, archive)
        assert (refused.value.collection, refused.value.line) == ("people", 2)
        assert await copy.collection("people").count() == 0  # the batch is all or nothing
        await import_archive(copy, archive, validate=False)
        assert await copy.collection("people").count() == 2


async def test_export_leaves_secrets_out_unless_asked(
        request: pytest.FixtureRequest, tmp_path: Path) -> None:
    async with database("memory", request) as origin:
        await origin.settings.set("mail.smtp.password", "hunter2")
        await origin.settings.set("google.private_key", "KEY")
        await origin.settings.set("mail.smtp.host", "smtp.example.com")
        await export_archive(origin, tmp_path / "plain.tar")
        await export_archive(origin, tmp_path / "secret.tar", secrets=True)
    for name, secret in (("plain.tar", False), ("secret.tar", True)):
        async with database("memory", request) as copy:
            await import_archive(copy, tmp_path / name)
            tree = await copy.settings.tree()
            assert tree["mail"]["smtp"]["host"] == "smtp.example.com"
            assert ("password" in tree["mail"]["smtp"]) is secret
            assert ("google" in tree) is secret


async def test_export_during_writes_is_one_point_in_time(
        request: pytest.FixtureRequest, tmp_path: Path) -> None:
    """A writer inserts 0, 1, 2, ... alternately into two collections, one at a time.

    Every number acknowledged before the export began must be in the archive, and the
    archive must hold a prefix of the sequence (no later number without every earlier
    one, across both collections): the store as it was at one moment.
    """
    archive = tmp_path / "db.tar"
    async with database("sqlite-file", request) as db:
        for name in ("even", "odd"):  # long enough to copy that writes happen meanwhile
            for _ in range(10):
                await db.collection(name).insert_many([{"i": -1}] * 1000)
        written = 0
        stop = asyncio.Event()

        async def writer() -> None:
            nonlocal written
            while not stop.is_set():
                await db.collection("even" if written % 2 == 0 else "odd").insert(
                    {"i": written})
                written += 1
                await asyncio.sleep(0)

        task = asyncio.create_task(writer())
        await asyncio.sleep(0.3)
        acknowledged = written
        await export_archive(db, archive)
        stop.set()
        await task
    async with database("memory", request) as copy:
        await import_archive(copy, archive)
        found = [d for name in ("odd", "even")
                 for d in await copy.collection(name).find(
                     {"i": {"$gte": 0}}, {"$max": 10000})]
        numbers = sorted(d["i"] for d in found if d["i"] >= 0)
    assert numbers[:acknowledged] == list(range(acknowledged))
    assert numbers == list(range(len(numbers)))
    assert len(numbers) > acknowledged  # writes went on during the export


async def test_follow_applies_the_sources_later_writes_to_the_target(
        request: pytest.FixtureRequest) -> None:
    async with database("sqlite-file", request) as origin, \
            database("memory", request) as copy:
        birds = origin.collection("birds")
        wren = await birds.insert({"name": "wren"})
        kite = await birds.insert({"name": "kite"})
        async with capturing(origin.store, origin.auth_cache):  # as migrate --follow does
            migration = await migrate(origin, copy)
            owl = await birds.insert({"name": "owl"})  # before following starts
            applied: list[str] = []
            following = asyncio.create_task(follow(
                origin, copy, migration.manifest.position,
                applied=lambda entry: applied.append(entry.event)))
            try:
                await birds.patch(wren["_id"], {"name": "winter wren"})
                await birds.delete(kite["_id"])
                for _ in range(100):
                    if len(applied) >= 3:
                        break
                    await asyncio.sleep(0.05)
            finally:
                following.cancel()
                with contextlib.suppress(asyncio.CancelledError):
                    await following
        assert applied == ["post", "put", "delete"]
        names = sorted(d["name"] for d in await copy.collection("birds").find())
        assert names == ["owl", "winter wren"]
        assert (await copy.collection("birds").get(owl["_id"]))["_id"] == owl["_id"]


async def test_follow_stops_when_the_log_is_pruned_just_before_its_read(
        request: pytest.FixtureRequest) -> None:
    # The reader steps over numbers it finds pruned, as every reader of the log may;
    # follow must not, or the writes in them never reach the target.
    async with BACKENDS["sqlite-file"](request) as (store, blobs), \
            database("memory", request) as copy:
        origin = Database(store, blobs, limits=Limits(change_max_entries=2))
        birds = origin.collection("birds")
        await birds.insert({"name": "wren"})
        async with capturing(origin.store, origin.auth_cache):
            migration = await migrate(origin, copy)
            for n in range(5):
                await birds.insert({"n": n})
            log = origin.changes.log
            read = log.read

            async def pruned_first(after: int, limit: int) -> list[Change]:
                assert await log.prune() == 3  # lands between follow's last look and its read
                log.read = read  # type: ignore[method-assign]
                return await read(after, limit)

            log.read = pruned_first  # type: ignore[method-assign]
            with pytest.raises(FollowOverrun, match="pruned up to"):
                await asyncio.wait_for(follow(origin, copy, migration.manifest.position), 20)
