"""The change feed as one principal may see it, through the library and ``GET /realtime``.

``db.changes_for(principal)`` and ``collection.changes()`` ask the very rule of the
realtime endpoint (``docbase/core/changes/readable.py``): no event of a collection the
principal may not read, ``post`` and ``put`` events narrowed by a ``beforeGET`` hook's
filter. ``db.changes`` itself stays unscoped, for system code.
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import msgspec
import pytest

from docbase import Database, Forbidden, Hook, ReadContext, Rejected
from docbase.adapters.memory import MemoryBlobStore, MemoryDocumentStore
from docbase.core.auth import SYSTEM, Principal, Scope
from docbase.core.changes import Change
from docbase.core.query import Projection
from docbase.core.settings import Limits
from docbase.http.testing import live_docbase
from docbase.testing.sse import open_events
from tests.backends import BACKENDS

FAST = Limits(change_poll_interval=0.05, realtime_ping_interval=0.5)
ORDERS_ONLY = Principal(kind="key", full_access=False,
                        scope=Scope(paths=("/rest/orders", "/rest/orders/*"), methods=("GET",)))


@pytest.fixture(params=["memory", "sqlite-file"])
async def db(request: pytest.FixtureRequest) -> AsyncIterator[Database]:
    async with BACKENDS[request.param](request) as stores, Database(*stores,
                                                                      limits=FAST) as opened:
        await opened.settings.set("realtime.global", True)
        yield opened


async def until_last(changes: AsyncIterator[Change], last: str) -> list[Change]:
    """The entries up to the one that wrote document ``last`` (a bound, not a timing)."""
    seen: list[Change] = []
    async with asyncio.timeout(30):
        async for change in changes:
            seen.append(change)
            if last in change.ids:
                return seen
    raise AssertionError("the feed ended")


def summary(changes: list[Change]) -> list[tuple[str | None, str, tuple[str, ...]]]:
    return [(c.collection, c.event, c.ids) for c in changes]


async def test_a_scoped_principal_receives_no_event_of_a_collection_it_may_not_read(
    db: Database,
) -> None:
    orders, secrets = db.collection("orders"), db.collection("secrets")
    order = await orders.insert({"item": "tea"})
    secret = await secrets.insert({"pin": "1234"})
    await orders.update(order["_id"], {"$set": {"item": "coffee"}})
    await secrets.delete(secret["_id"])
    last = await orders.insert({"item": "cake"})

    scoped = await until_last(db.changes_for(ORDERS_ONLY)(since=0), last["_id"])
    assert summary(scoped) == [("orders", "post", (order["_id"],)),
                               ("orders", "put", (order["_id"],)),
                               ("orders", "post", (last["_id"],))]
    wide = await until_last(db.changes_for(SYSTEM)(since=0), last["_id"])
    unscoped = await until_last(db.changes(since=0), last["_id"])
    assert summary(wide) == summary(unscoped)
    assert [c.collection for c in wide] == ["orders", "secrets", "orders", "secrets", "orders"]
    assert wide[1].documents[0]["pin"] == "1234"

    own = await until_last(db.collection("orders", ORDERS_ONLY).changes(since=0), last["_id"])
    assert summary(own) == summary(scoped)
    with pytest.raises(Forbidden, match="may not GET /rest/secrets"):
        await anext(db.collection("secrets", ORDERS_ONLY).changes(since=0))


async def test_a_before_get_hook_narrows_the_feed_as_it_narrows_reads(db: Database) -> None:
    @db.hook("orders", Hook.BEFORE_GET)
    def only_open(ctx: ReadContext) -> None:
        if ctx.principal.kind == "key":  # the embedding application itself sees all
            ctx.where({"status": {"$ne": "closed"}})

    orders = db.collection("orders")
    opened = await orders.insert({"status": "open"})
    closed = await orders.insert({"status": "closed"})
    both = await orders.insert_many([{"status": "open"}, {"status": "closed"}])
    await orders.update(closed["_id"], {"$set": {"note": "hidden"}})
    await orders.update(opened["_id"], {"$set": {"note": "shown"}})
    await orders.delete(closed["_id"])
    last = await orders.insert({"status": "open"})

    scoped = await until_last(db.collection("orders", ORDERS_ONLY).changes(since=0),
                              last["_id"])
    assert summary(scoped) == [("orders", "post", (opened["_id"],)),
                               ("orders", "post", (both[0]["_id"],)),
                               ("orders", "put", (opened["_id"],)),
                               # a delete names ids only: it cannot be matched, it is sent
                               ("orders", "delete", (closed["_id"],)),
                               ("orders", "post", (last["_id"],))]
    assert [d["status"] for c in scoped for d in c.documents] == ["open"] * 4
    listed = await db.collection("orders", ORDERS_ONLY).find()
    assert {d["_id"] for d in listed} == {opened["_id"], both[0]["_id"], last["_id"]}
    wide = await until_last(db.changes_for(SYSTEM)(since=0), last["_id"])
    assert len(wide) == 7
    assert wide[1].ids == (closed["_id"],)


async def test_a_before_get_hook_hiding_fields_hides_them_in_events(db: Database) -> None:
    @db.hook("people", Hook.BEFORE_GET)
    def no_salaries(ctx: ReadContext) -> None:
        if ctx.query is not None and ctx.principal.kind == "key":
            hidden = Projection(paths=(("salary",),), include=False)
            ctx.query = msgspec.structs.replace(ctx.query, projection=hidden)

    people = db.collection("people")
    ann = await people.insert({"name": "Ann", "salary": 10})
    await people.update(ann["_id"], {"$set": {"salary": 11}})
    everyone = Principal(kind="key", full_access=False,
                         scope=Scope(paths=("/rest/people/**",), methods=("GET",)))
    listed = await db.collection("people", everyone).find()
    seen = await until_last(db.changes_for(everyone)(since=0), ann["_id"])
    assert "salary" not in listed[0]
    assert [(c.event, sorted(c.documents[0])) for c in seen] == [("post", sorted(listed[0]))]
    wide = await until_last(db.changes_for(SYSTEM)(since=0), ann["_id"])
    assert wide[0].documents[0]["salary"] == 10


async def test_a_before_get_hook_refusing_a_principal_sends_it_nothing(db: Database) -> None:
    @db.hook("orders", Hook.BEFORE_GET)
    def keys_refused(ctx: ReadContext) -> None:
        if ctx.principal.kind == "key":
            raise Rejected("orders are read by the application only")

    await db.collection("orders").insert({"n": 1})
    last = await db.collection("notes").insert({"n": 2})
    everything = Principal(kind="key", full_access=False,
                           scope=Scope(paths=("/rest/**",), methods=("GET",)))
    seen = await until_last(db.changes_for(everything)(since=0), last["_id"])
    assert summary(seen) == [("notes", "post", (last["_id"],))]
    with pytest.raises(Rejected):
        await anext(db.collection("orders", everything).changes())


async def test_the_realtime_endpoint_applies_the_hook_too(tmp_path: Path) -> None:
    async with (Database(MemoryDocumentStore(), MemoryBlobStore(), limits=FAST) as db,
                live_docbase({"docbase": db}, tmp_path) as live):
        await db.settings.set("realtime.global", True)
        @db.hook("orders", Hook.BEFORE_GET)
        def narrowed(ctx: ReadContext) -> None:
            if ctx.principal.kind == "key" and not ctx.principal.full_access:
                ctx.where({"status": "open"})

        key = await live.key(paths=["/rest/orders", "/rest/orders/*"], methods=["GET"])
        async with (open_events(live.client, "/realtime", params={"apikey": key}) as narrow,
                    open_events(live.client, "/realtime",
                                params={"apikey": live.auth()["x-apikey"]}) as wide):
            for stream in (narrow, wide):
                assert (await stream.next()).name == "ping"
            await db.collection("orders").insert({"status": "closed", "n": 1})
            await db.collection("orders").insert({"status": "open", "n": 2})
            seen_narrow: list[Any] = [e.json()["data"]["n"] for e in await narrow.take(1)]
            seen_wide: list[Any] = [e.json()["data"]["n"] for e in await wide.take(2)]
        assert seen_narrow == [2]
        assert seen_wide == [1, 2]
