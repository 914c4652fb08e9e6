"""Access rules on the change feed (issue 30, docs/access.md, docs/realtime.md): a
subscriber hears only of documents it may read, without hidden fields, and an update
that takes a document out of its read scope reaches it as a ``delete``; on every engine,
over HTTPS and through the library."""

from __future__ import annotations

import asyncio
import re
from collections.abc import AsyncIterator
from typing import Any

import pytest

from docbase import Database
from docbase.core.changes.entries import Change
from docbase.core.schema import parse_schema
from docbase.core.settings import Limits
from docbase.http.testing import LiveDocbase
from docbase.testing.sse import open_events
from tests import test_read_road
from tests.access_fixtures import ANN, NOTES, user_token

feed_live = test_read_road.feed_live
"""The live server of the feed tests (realtime on, fast polls)."""

RED_ONLY = {"read": ["*"], "where": {"read": {"team": "red"}},
            "fields": {"salary": {"read": ["hr"]}}}
"""Token holders read red notes only, and never their salary."""


async def scripted_writes(db: Database) -> tuple[str, str]:
    """Writes of which a red-only reader may hear some; the ids of the red notes."""
    notes = db.collection("notes")
    await db.schemas.put(parse_schema("notes", {**NOTES, "access": RED_ONLY}))
    blue = await notes.insert({"title": "blue", "team": "blue", "salary": 1})
    red = await notes.insert({"title": "red", "team": "red", "salary": 2})
    other = await notes.insert({"title": "other red", "team": "red", "salary": 3})
    await notes.update(blue["_id"], {"title": "still blue"})
    await notes.update(red["_id"], {"team": "blue"})  # leaves the scope
    await notes.delete(blue["_id"])
    await notes.delete(other["_id"])
    await notes.insert({"title": "last", "team": "red"})
    return red["_id"], other["_id"]


def expected(red: str, other: str) -> list[tuple[str, Any]]:
    return [("post", "red"), ("post", "other red"), ("delete", [red]), ("delete", [other]),
            ("post", "last")]


async def test_the_library_feed_follows_the_read_scope(stores: Any) -> None:
    async with Database(*stores, limits=Limits(change_poll_interval=0.05)) as db:
        await db.settings.set("realtime.global", True)  # the log keeps every write
        red, other = await scripted_writes(db)
        seen: list[Change] = []

        async def take() -> None:
            async for change in db.changes_for(ANN)("notes", since=0):
                seen.append(change)
                if len(seen) == 5:
                    return

        try:
            await asyncio.wait_for(take(), 20)
        except TimeoutError:
            pytest.fail(f"five changes expected, seen: {seen}")
        await db.changes.close()
    shown = [(c.event, c.documents[0]["title"] if c.documents else list(c.ids))
             for c in seen]
    assert shown == expected(red, other)
    assert all("salary" not in d for c in seen for d in c.documents)
    assert all(not c.previous for c in seen)


async def test_realtime_over_https_sends_a_delete_when_a_document_leaves(
    feed_live: LiveDocbase,
) -> None:
    live = feed_live
    token = await user_token(live, "ann@example.com")
    await live.db.schemas.put(parse_schema("notes", {**NOTES, "access": RED_ONLY}))
    async with open_events(live.client, "/realtime", params={"jwt": token}) as stream:
        assert (await stream.next()).name == "ping"
        red, other = await scripted_writes(live.db)
        events = [await stream.next(skip_pings=True) for _ in range(5)]
    shown = [(e.name, e.json()["data"]["title"] if e.name == "post" else e.json()["data"])
             for e in events]
    assert shown == expected(red, other)
    assert all("salary" not in e.json()["data"] for e in events if e.name == "post")


async def test_a_scoped_streams_ids_hide_the_writes_it_does_not_see(
    feed_live: LiveDocbase,
) -> None:
    live = feed_live
    token = await user_token(live, "ann@example.com")
    await live.db.schemas.put(parse_schema("notes", {**NOTES, "access": RED_ONLY}))
    notes = live.db.collection("notes")
    async with open_events(live.client, "/realtime", params={"jwt": token}) as stream:
        assert (await stream.next()).name == "ping"
        await notes.insert({"title": "first", "team": "red"})
        for number in range(5):  # writes ann does not see
            await notes.insert({"title": f"blue {number}", "team": "blue"})
        await notes.insert({"title": "second", "team": "red"})
        first, second = [await stream.next(skip_pings=True) for _ in range(2)]
    ids = [first.id, second.id]
    assert all(re.fullmatch(r"x[0-9a-f]{16}", i) for i in ids), ids
    sequence = [c.seq async for c in take_changes(live.db, 7)]
    assert not {str(seq) for seq in sequence} & set(ids)
    async with open_events(live.client, "/realtime", params={"jwt": token},
                           headers={"Last-Event-ID": first.id}) as resumed:
        again = await resumed.next(skip_pings=True)
    assert again.json()["data"]["title"] == "second"
    assert again.id == second.id


async def take_changes(db: Database, count: int) -> AsyncIterator[Change]:
    taken = 0
    async for change in db.changes(since=0):
        yield change
        taken += 1
        if taken == count:
            return
