"""Every write entry point, from the library and over HTTPS, passes the pipeline's stages.

A recorder wraps each stage of ``db.pipeline`` and logs it as it starts; a validator,
a hook at every hook point and a change subscriber log themselves too. Each entry point
then has to produce exactly the sequence written out below: authorize, validate,
before-hooks, store, after-hooks, publish (cascaded child deletes nested inside the
parent's store stage, which stores them too, in the same store call). Reads pass
authorize, the strict-mode check and the before-read hooks.
"""

from __future__ import annotations

import json
from collections.abc import AsyncIterator, Awaitable, Callable
from pathlib import Path
from typing import Any

import pytest

from docbase import ChangeEvent, Database, HookPoint, Query, ReadEvent, WriteEvent, parse_filter
from docbase.adapters.memory import OutboxMailer
from docbase.core.auth import Principal, Scope
from docbase.core.errors import Forbidden
from docbase.core.media import Upload
from docbase.http.testing import LiveDocbase, live_docbase

Log = list[tuple[str, ...]]


class RecordingStage:
    def __init__(self, stage: Any, log: Log) -> None:
        self.stage, self.log, self.name = stage, log, stage.name

    async def __call__(self, event: Any) -> None:
        self.log.append(("stage", self.name, event.collection))
        await self.stage(event)


def record(db: Database) -> Log:
    """Start logging every stage, validator, hook and change of ``db``."""
    log: Log = []
    db.pipeline.write_stages[:] = [RecordingStage(s, log) for s in db.pipeline.write_stages]
    db.pipeline.read_stages[:] = [RecordingStage(s, log) for s in db.pipeline.read_stages]

    async def validator(write: WriteEvent) -> None:
        log.append(("validator", write.collection))

    db.validators.append(validator)
    for point in HookPoint:
        async def hook(event: Any, point: HookPoint = point) -> None:
            log.append(("hook", str(point), event.collection))
        db.hooks.on(point, hook)

    async def subscriber(change: ChangeEvent) -> None:
        log.append(("change", str(change.operation), change.collection, *change.ids))

    db.changes.subscribe(subscriber)
    return log


def passes(collection: str, operation: str, ids: list[str] | None = None,
           inner: Log | None = None, *, store: bool = True) -> Log:
    """The log of one write of ``collection`` through every stage, in order.

    ``ids`` are the ids its change event carries (``None``: no event, nothing changed).
    Without ``store``, another write's store stage stores it (a cascaded delete).
    """
    return [
        ("stage", "authorize", collection),
        ("stage", "access", collection),
        ("stage", "validate", collection),
        ("validator", collection),
        ("stage", "before-hooks", collection),
        ("hook", f"before_{operation}", collection),
        ("stage", "content", collection),
        ("stage", "access-check", collection),
        ("stage", "previous", collection),
        *([("stage", "store", collection)] if store else []),
        *(inner or []),
        ("stage", "after-hooks", collection),
        ("hook", f"after_{operation}", collection),
        ("stage", "publish", collection),
        *([] if ids is None else [("change", operation, collection, *ids)]),
    ]


def cascade(parent_ids: list[str], child_ids: list[str] | None) -> Log:
    """A delete of people: the cascaded delete of their orders runs the stages too.

    The people's store stage deletes the orders with the people, in one store call.
    """
    return passes("people", "delete", parent_ids,
                  inner=passes("orders", "delete", child_ids, store=False))


class World:
    """People Joe (with one order) and Ann, and one media file, seeded before recording."""

    def __init__(self, joe: str, ann: str, order: str, media: str) -> None:
        self.joe, self.ann, self.order, self.media = joe, ann, order, media


async def seed(db: Database) -> World:
    people = db.collection("people")
    joe = await people.insert({"name": "Joe"})
    ann = await people.insert({"name": "Ann"})
    order = await people.children(joe["_id"], "orders").insert({"item": "book"})
    [media] = (await db.media.upload([Upload("seed.txt", b"seed\n")])).ids
    return World(joe["_id"], ann["_id"], order["_id"], media)


def new_id(log: Log) -> list[str]:
    """The ids of the change events in ``log`` (for inserts, made during the call)."""
    return [i for entry in log if entry[0] == "change" for i in entry[3:]]


# ------------------------------------------------------------------------------ library

LibraryCase = tuple[Callable[[Database, World], Awaitable[Any]], Callable[[World, Log], Log]]

LIBRARY_WRITES: dict[str, LibraryCase] = {
    "insert": (lambda db, w: db.collection("people").insert({"name": "Eve"}),
               lambda w, log: passes("people", "insert", new_id(log))),
    "insert_many": (
        lambda db, w: db.collection("people").insert_many([{"name": "A"}, {"name": "B"}]),
        lambda w, log: passes("people", "insert", new_id(log))),
    "child insert": (
        lambda db, w: db.collection("people").children(w.joe, "orders").insert({"item": "pen"}),
        lambda w, log: passes("orders", "insert", new_id(log))),
    "update (PUT)": (lambda db, w: db.collection("people").update(w.joe, {"$inc": {"n": 1}}),
                     lambda w, log: passes("people", "update", [w.joe])),
    "patch": (lambda db, w: db.collection("people").patch(w.joe, {"age": 3}),
              lambda w, log: passes("people", "update", [w.joe])),
    "child patch": (
        lambda db, w: db.collection("people").children(w.joe, "orders").patch(
            w.order, {"item": "pen"}),
        lambda w, log: passes("orders", "update", [w.order])),
    "delete with cascade": (lambda db, w: db.collection("people").delete(w.joe),
                            lambda w, log: cascade([w.joe], [w.order])),
    "delete_many": (lambda db, w: db.collection("people").delete_many([w.ann]),
                    lambda w, log: cascade([w.ann], None)),
    "delete_where": (lambda db, w: db.collection("people").delete_where({"name": "Joe"}),
                     lambda w, log: cascade([w.joe], [w.order])),
    "child delete": (
        lambda db, w: db.collection("people").children(w.joe, "orders").delete(w.order),
        lambda w, log: passes("orders", "delete", [w.order])),
    "media upload": (
        lambda db, w: db.media.upload([Upload("a.txt", b"a\n"), Upload("b.txt", b"b\n")]),
        lambda w, log: passes("_media", "insert", new_id(log))),
    "media delete": (lambda db, w: db.media.delete(w.media),
                     lambda w, log: passes("_media", "delete", [w.media])),
}


@pytest.mark.parametrize("entry", LIBRARY_WRITES)
async def test_library_write_passes_every_stage_in_order(stores: Any, entry: str) -> None:
    call, expected = LIBRARY_WRITES[entry]
    async with Database(*stores) as db:
        world = await seed(db)
        log = record(db)
        await call(db, world)
        assert log == expected(world, log)


async def test_library_reads_pass_authorize_and_before_read_hooks(stores: Any) -> None:
    async with Database(*stores) as db:
        world = await seed(db)
        log = record(db)
        people = db.collection("people")
        await people.get(world.joe)
        await people.find({"name": "Joe"})
        await people.count()
        read_stages = [("stage", "authorize", "people"), ("stage", "schema", "people"),
                       ("stage", "lookups", "people"), ("stage", "before-hooks", "people"),
                       ("hook", "before_read", "people"), ("stage", "access", "people")]
        assert log == read_stages * 3


async def test_a_before_read_hook_may_change_the_query(stores: Any) -> None:
    async with Database(*stores) as db:
        await seed(db)

        async def only_ann(read: ReadEvent) -> None:
            assert read.query is not None
            read.query = Query(filter=parse_filter({"name": "Ann"}), limit=read.query.limit)

        db.hooks.on(HookPoint.BEFORE_READ, only_ann, collection="people")
        assert [p["name"] for p in await db.collection("people").find()] == ["Ann"]
        assert await db.collection("people").count() == 1


async def test_the_authorize_stage_refuses_a_scoped_principal_in_the_library(
    stores: Any,
) -> None:
    scoped = Principal(kind="key", full_access=False,
                       scope=Scope(paths=("/rest/people/**",), methods=("GET", "POST")))
    async with Database(*stores) as db:
        world = await seed(db)
        log = record(db)
        people = db.collection("people", scoped)
        await people.insert({"name": "Eve"})  # allowed: POST /rest/people
        with pytest.raises(Forbidden, match="may not PATCH /rest/people/"):
            await people.patch(world.joe, {"age": 1})
        with pytest.raises(Forbidden, match="may not GET /rest/things"):
            await db.collection("things", scoped).find()
        with pytest.raises(Forbidden, match="delete by query needs a full-access"):
            await people.delete_where({"name": "Joe"})
        refused = log[len(passes("people", "insert", ["any id"])):]
        assert refused == [("stage", "authorize", "people"), ("stage", "authorize", "things"),
                           ("stage", "authorize", "people")]
        assert await db.collection("people").count() == 3


async def test_a_failing_change_subscriber_does_not_undo_the_write(stores: Any) -> None:
    async with Database(*stores) as db:
        async def broken(change: ChangeEvent) -> None:
            raise RuntimeError("subscriber down")

        seen: list[ChangeEvent] = []

        async def working(change: ChangeEvent) -> None:
            seen.append(change)

        db.changes.subscribe(broken)
        unsubscribe = db.changes.subscribe(working)
        joe = await db.collection("people").insert({"name": "Joe"})
        assert (await db.collection("people").get(joe["_id"]))["name"] == "Joe"
        assert [(c.operation, c.ids, c.documents[0]["name"]) for c in seen] == [
            ("insert", (joe["_id"],), "Joe")]
        unsubscribe()
        await db.collection("people").delete(joe["_id"])
        assert len(seen) == 1


# ------------------------------------------------------------------------------ HTTP

HttpCase = tuple[Callable[[LiveDocbase, World], Awaitable[Any]], Callable[[World, Log], Log]]


def send(method: str, path: Callable[[World], str], *, body: Any = None,
         ids: Callable[[World], list[str]] | None = None, override: str | None = None,
         params: dict[str, str] | None = None) -> Callable[[LiveDocbase, World], Awaitable[Any]]:
    """A request of an HTTP case; ``ids`` gives a JSON array body made from the world."""
    async def call(live: LiveDocbase, world: World) -> Any:
        headers = live.auth() | ({"x-http-method-override": override} if override else {})
        body_ = ids(world) if ids is not None else body
        response = await live.client.request(
            method, path(world), params=params, headers=headers | {
                "content-type": "application/json"},
            content=None if body_ is None else json.dumps(body_))
        assert response.status_code < 300, response.text
        return response.json()
    return call


async def upload_over_http(live: LiveDocbase, world: World) -> Any:
    response = await live.client.post("/media", headers=live.auth(), files=[
        ("a", ("a.txt", b"a\n", "text/plain")), ("b", ("b.txt", b"b\n", "text/plain"))])
    assert response.status_code == 201, response.text
    return response.json()


HTTP_WRITES: dict[str, HttpCase] = {
    "POST object": (send("POST", lambda w: "/rest/people", body={"name": "Eve"}),
                    lambda w, log: passes("people", "insert", new_id(log))),
    "POST array": (send("POST", lambda w: "/rest/people", body=[{"n": 1}, {"n": 2}]),
                   lambda w, log: passes("people", "insert", new_id(log))),
    "POST child": (send("POST", lambda w: f"/rest/people/{w.joe}/orders", body={"item": "pen"}),
                   lambda w, log: passes("orders", "insert", new_id(log))),
    "PUT": (send("PUT", lambda w: f"/rest/people/{w.joe}", body={"$inc": {"n": 1}}),
            lambda w, log: passes("people", "update", [w.joe])),
    "PATCH": (send("PATCH", lambda w: f"/rest/people/{w.joe}", body={"age": 3}),
              lambda w, log: passes("people", "update", [w.joe])),
    "POST as PATCH": (send("POST", lambda w: f"/rest/people/{w.joe}", body={"age": 3},
                           override="PATCH"),
                      lambda w, log: passes("people", "update", [w.joe])),
    "PUT child": (send("PUT", lambda w: f"/rest/people/{w.joe}/orders/{w.order}",
                       body={"item": "pen"}),
                  lambda w, log: passes("orders", "update", [w.order])),
    "DELETE with cascade": (send("DELETE", lambda w: f"/rest/people/{w.joe}"),
                            lambda w, log: cascade([w.joe], [w.order])),
    "POST as DELETE": (send("POST", lambda w: f"/rest/people/{w.ann}", override="DELETE"),
                       lambda w, log: cascade([w.ann], None)),
    "DELETE ids": (send("DELETE", lambda w: "/rest/people/*", ids=lambda w: [w.ann]),
                   lambda w, log: cascade([w.ann], None)),
    "DELETE by query": (send("DELETE", lambda w: "/rest/people/*",
                             params={"q": '{"name": "Joe"}'}),
                        lambda w, log: cascade([w.joe], [w.order])),
    "DELETE child": (send("DELETE", lambda w: f"/rest/people/{w.joe}/orders/{w.order}"),
                     lambda w, log: passes("orders", "delete", [w.order])),
    "POST /mail": (send("POST", lambda w: "/mail", body={
        "to": "ann@example.com", "subject": "Hi", "html": "<p>Hi</p>"}),
        lambda w, log: [  # queued, claimed, sent: three writes of the outbound log
            *passes("email_outbound", "insert", new_id(log)[:1]),
            *passes("email_outbound", "update", new_id(log)[:1]),
            *passes("email_outbound", "update", new_id(log)[:1])]),
    "POST /media": (upload_over_http, lambda w, log: passes("_media", "insert", new_id(log))),
    "DELETE /media/ID": (send("DELETE", lambda w: f"/media/{w.media}"),
                         lambda w, log: passes("_media", "delete", [w.media])),
}


@pytest.fixture
async def live(stores: Any, tmp_path: Path) -> AsyncIterator[LiveDocbase]:
    database = Database(*stores, name="main", mailer=OutboxMailer())
    async with live_docbase({"main": database}, tmp_path) as running:
        yield running


@pytest.mark.parametrize("entry", HTTP_WRITES)
async def test_http_write_passes_every_stage_in_order(live: LiveDocbase, entry: str) -> None:
    call, expected = HTTP_WRITES[entry]
    world = await seed(live.db)
    log = record(live.db)
    await call(live, world)
    assert log == expected(world, log)
