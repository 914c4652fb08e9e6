"""User hooks (``@db.hook``) over real HTTPS: each point changes or refuses as documented."""

from __future__ import annotations

import asyncio
import time
from collections.abc import AsyncIterator
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import pytest

from docbase import (
    Database,
    Forbidden,
    Hook,
    InvalidQuery,
    Limits,
    ReadContext,
    Rejected,
    WriteContext,
)
from docbase.adapters.memory import MemoryBlobStore, MemoryDocumentStore
from docbase.http.testing import LiveDocbase, live_docbase


@pytest.fixture
async def live(tmp_path: Path) -> AsyncIterator[LiveDocbase]:
    db = Database(MemoryDocumentStore(), MemoryBlobStore(), name="main",
                  limits=Limits(hook_timeout=0.5))
    async with db, live_docbase({"main": db}, tmp_path) as running:
        yield running


async def post(live: LiveDocbase, path: str, body: Any, key: str | None = None) -> Any:
    headers = {"x-apikey": key} if key else live.auth()
    return await live.client.post(path, json=body, headers=headers)


async def names(live: LiveDocbase, collection: str = "orders") -> list[Any]:
    response = await live.client.get(f"/rest/{collection}", headers=live.auth())
    assert response.status_code == 200, response.text
    return [d.get("item") for d in response.json()]


async def test_before_post_changes_the_documents(live: LiveDocbase) -> None:
    @live.db.hook("orders", Hook.BEFORE_POST)
    async def price(ctx: WriteContext) -> None:
        for document in ctx.documents:
            document["total"] = document["qty"] * 2

    created = await post(live, "/rest/orders", [{"qty": 3}, {"qty": 5}])
    assert created.status_code == 201
    assert [d["total"] for d in created.json()] == [6, 10]
    other = await post(live, "/rest/people", {"qty": 3})
    assert "total" not in other.json()


async def test_before_post_may_replace_the_documents(live: LiveDocbase) -> None:
    @live.db.hook("orders", Hook.BEFORE_POST)
    async def split(ctx: WriteContext) -> None:
        ctx.documents = [{"item": d["item"], "part": n} for d in ctx.documents
                         for n in (1, 2)]

    created = await post(live, "/rest/orders", [{"item": "a"}])
    assert created.status_code == 201
    assert [(d["item"], d["part"], d["_version"]) for d in created.json()] == [
        ("a", 1, 0), ("a", 2, 0)]
    assert await names(live) == ["a", "a"]


async def test_before_post_rejection_is_400_and_writes_nothing(live: LiveDocbase) -> None:
    @live.db.hook("orders", Hook.BEFORE_POST)
    def no_free(ctx: WriteContext) -> None:
        if any(d.get("price", 0) <= 0 for d in ctx.documents):
            raise Rejected("an order needs a positive price")

    response = await post(live, "/rest/orders", [{"item": "a", "price": 1},
                                                  {"item": "b", "price": 0}])
    assert response.status_code == 400
    assert response.json() == {"name": "Rejected", "status": 400,
                               "message": "an order needs a positive price"}
    assert await names(live) == []


async def test_a_hook_may_refuse_with_a_status_of_the_safe_set(live: LiveDocbase) -> None:
    @live.db.hook(Hook.BEFORE_DELETE)
    async def keep(ctx: WriteContext) -> None:
        raise Forbidden(f"{ctx.collection} documents are kept")

    created = (await post(live, "/rest/orders", {"item": "a"})).json()
    response = await live.client.delete(f"/rest/orders/{created['_id']}", headers=live.auth())
    assert (response.status_code, response.json()["message"]) == (
        403, "orders documents are kept")
    assert await names(live) == ["a"]


async def test_after_post_sees_the_stored_documents(live: LiveDocbase) -> None:
    seen: list[Any] = []

    @live.db.hook("orders", Hook.AFTER_POST)
    async def remember(ctx: WriteContext) -> None:
        seen.append([(d["item"], d["_version"]) for d in ctx.result])

    await post(live, "/rest/orders", {"item": "a"})
    assert seen == [[("a", 0)]]


async def test_put_and_patch_hooks_are_told_apart(live: LiveDocbase) -> None:
    calls: list[str] = []

    @live.db.hook("orders", Hook.BEFORE_PUT)
    async def put_stamp(ctx: WriteContext) -> None:
        assert ctx.body is not None
        ctx.body["via"] = "put"

    @live.db.hook("orders", Hook.BEFORE_PATCH)
    async def patch_stamp(ctx: WriteContext) -> None:
        assert ctx.body is not None
        ctx.body["via"] = "patch"

    @live.db.hook("orders", Hook.AFTER_PUT)
    async def after_put(ctx: WriteContext) -> None:
        calls.append(f"afterPUT {ctx.documents[0]['via']}")

    @live.db.hook("orders", Hook.AFTER_PATCH)
    async def after_patch(ctx: WriteContext) -> None:
        calls.append(f"afterPATCH {ctx.documents[0]['via']}")

    doc = (await post(live, "/rest/orders", {"item": "a"})).json()
    put = await live.client.put(f"/rest/orders/{doc['_id']}", json={"n": 1},
                                headers=live.auth())
    assert (put.status_code, put.json()["via"]) == (200, "put")
    patched = await live.client.patch(f"/rest/orders/{doc['_id']}", json={"n": 2},
                                      headers=live.auth())
    assert (patched.json()["via"], patched.json()["n"]) == ("patch", 2)
    assert calls == ["afterPUT put", "afterPATCH patch"]


async def test_before_patch_rejection_leaves_the_document(live: LiveDocbase) -> None:
    @live.db.hook("orders", Hook.BEFORE_PATCH)
    async def frozen(ctx: WriteContext) -> None:
        if ctx.body and "price" in ctx.body:
            raise Rejected("prices are fixed")

    doc = (await post(live, "/rest/orders", {"item": "a", "price": 1})).json()
    response = await live.client.patch(f"/rest/orders/{doc['_id']}", json={"price": 9},
                                       headers=live.auth())
    assert (response.status_code, response.json()["message"]) == (400, "prices are fixed")
    stored = await live.client.get(f"/rest/orders/{doc['_id']}", headers=live.auth())
    assert stored.json()["price"] == 1


async def test_before_get_narrows_the_query_and_sees_hints(live: LiveDocbase) -> None:
    seen: list[Any] = []

    @live.db.hook("orders", Hook.BEFORE_GET)
    async def only_open(ctx: ReadContext) -> None:
        if ctx.query is not None:
            seen.append(ctx.query.limit)
            ctx.where({"status": "open"})

    await post(live, "/rest/orders", [{"item": "a", "status": "open"},
                                      {"item": "b", "status": "closed"},
                                      {"item": "c", "status": "open"}])
    response = await live.client.get("/rest/orders", params={"h": '{"$max": 5}'},
                                     headers=live.auth())
    assert [d["item"] for d in response.json()] == ["a", "c"]
    assert seen == [5]


async def test_before_get_may_refuse_one_document(live: LiveDocbase) -> None:
    @live.db.hook(Hook.BEFORE_GET)
    async def hidden(ctx: ReadContext) -> None:
        if ctx.document_id is not None:
            raise Rejected("read the list instead")

    doc = (await post(live, "/rest/orders", {"item": "a"})).json()
    response = await live.client.get(f"/rest/orders/{doc['_id']}", headers=live.auth())
    assert (response.status_code, response.json()["name"]) == (400, "Rejected")


async def test_after_delete_sees_the_deleted_ids(live: LiveDocbase) -> None:
    seen: list[Any] = []

    @live.db.hook("orders", Hook.AFTER_DELETE)
    async def remember(ctx: WriteContext) -> None:
        seen.append(ctx.result)

    doc = (await post(live, "/rest/orders", {"item": "a"})).json()
    response = await live.client.delete(f"/rest/orders/{doc['_id']}", headers=live.auth())
    assert response.status_code == 200
    assert seen == [[doc["_id"]]]


async def test_a_hook_deletes_by_query_where_its_scoped_caller_may_not(
    live: LiveDocbase,
) -> None:
    @live.db.hook("orders", Hook.AFTER_POST)
    async def drop_cancelled(ctx: WriteContext) -> None:
        await ctx.db.collection("orders").delete_where({"status": "cancelled"})

    scoped = await live.key(paths=["/rest/orders/**", "/rest/orders"],
                            methods=["POST", "DELETE", "GET"])
    headers = {"x-apikey": scoped}
    await live.db.collection("orders").insert_many([{"item": "x", "status": "cancelled"},
                                                    {"item": "y", "status": "open"}])
    refused = await live.client.delete("/rest/orders/*", params={"q": '{"status": "open"}'},
                                       headers=headers)
    assert refused.status_code == 403
    created = await post(live, "/rest/orders", {"item": "z", "status": "open"}, key=scoped)
    assert created.status_code == 201, created.text
    assert sorted(await names(live)) == ["y", "z"]


async def test_a_raising_hook_is_500_naming_it(
    live: LiveDocbase, caplog: pytest.LogCaptureFixture
) -> None:
    @live.db.hook("orders", Hook.BEFORE_POST)
    async def broken(ctx: WriteContext) -> None:
        raise KeyError("secret")

    response = await post(live, "/rest/orders", {"item": "a"})
    body = response.json()
    assert (response.status_code, body["name"]) == (500, "HookFailed")
    assert "test_a_raising_hook_is_500_naming_it.<locals>.broken" in body["message"]
    assert "beforePOST" in body["message"]
    assert "secret" not in response.text
    assert "secret" in caplog.text
    assert await names(live) == []


@pytest.mark.parametrize("blocking", [False, True], ids=["async", "thread"])
async def test_a_hanging_hook_is_504_within_the_time_limit(
    live: LiveDocbase, blocking: bool
) -> None:
    if blocking:
        @live.db.hook("orders", Hook.BEFORE_POST)
        def hang(ctx: WriteContext) -> None:
            time.sleep(2)
    else:
        @live.db.hook("orders", Hook.BEFORE_POST)
        async def hang(ctx: WriteContext) -> None:
            await asyncio.sleep(3600)

    started = time.monotonic()
    response = await post(live, "/rest/orders", {"item": "a"})
    assert time.monotonic() - started < 2
    assert (response.status_code, response.json()["name"]) == (504, "HookTimedOut")
    assert "0.5 s" in response.json()["message"]
    assert await names(live) == []
    health = await live.client.get("/health")
    assert health.status_code == 200


async def test_after_hook_failure_keeps_the_write_and_is_logged(live: LiveDocbase) -> None:
    @live.db.hook("orders", Hook.AFTER_POST)
    async def notify(ctx: WriteContext) -> None:
        raise ConnectionError("mail server down")

    response = await post(live, "/rest/orders", {"item": "a"})
    assert response.status_code == 201
    assert await names(live) == ["a"]
    log = await live.client.get("/rest/_hooklog", headers=live.auth())
    assert log.status_code == 200
    [entry] = log.json()
    assert (entry["kind"], entry["hook"], entry["status"], entry["ids"]) == (
        "after-hook", "afterPOST", "failed", [response.json()["_id"]])
    assert "ConnectionError" in entry["error"]


async def test_the_hook_log_needs_a_full_access_key(live: LiveDocbase) -> None:
    scoped = await live.key(paths=["/rest/**"], methods=["GET"])
    response = await live.client.get("/rest/_hooklog", headers={"x-apikey": scoped})
    assert response.status_code == 403


async def test_hooks_on_media_refuse_uploads_see_their_metadata_and_deletes(
    live: LiveDocbase,
) -> None:
    seen: list[tuple[str, str, Any]] = []

    @live.db.hook("_media", Hook.BEFORE_POST)
    def no_programs(ctx: WriteContext) -> None:
        for record in ctx.documents:
            if record["origname"].endswith(".exe"):
                raise Rejected(f"{record['origname']} is a program")

    @live.db.hook("_media", Hook.AFTER_POST)
    async def index(ctx: WriteContext) -> None:
        for record in ctx.documents:
            await ctx.db.collection("uploads").insert({
                "media": record["_id"], "name": record["origname"],
                "size": record["filesize"], "by": ctx.principal.author})

    for hook in (Hook.BEFORE_DELETE, Hook.AFTER_DELETE):
        @live.db.hook("_media", hook)
        async def deleting(ctx: WriteContext) -> None:
            seen.append((ctx.hook.value, ctx.collection, ctx.ids))

    refused = await live.client.post("/media", headers=live.auth(), files=[
        ("a", ("notes.txt", b"fine\n", "text/plain")),
        ("b", ("setup.exe", b"MZ" + bytes(200), "application/octet-stream"))])
    assert refused.status_code == 400, refused.text
    assert refused.json()["message"] == "setup.exe is a program"
    anything = datetime.now(UTC) + timedelta(days=1)
    assert [k async for k in live.db.media.blobs.keys(anything)] == []  # no bytes kept

    uploaded = await live.client.post("/media", headers=live.auth(), files=[
        ("a", ("notes.txt", b"fine\n", "text/plain"))])
    assert uploaded.status_code == 201, uploaded.text
    [media_id] = uploaded.json()["ids"]
    indexed = (await live.client.get("/rest/uploads", headers=live.auth())).json()
    [meta] = (await live.client.get(f"/media/{media_id}/meta", headers=live.auth())).json()
    assert [(d["media"], d["name"], d["size"], d["by"]) for d in indexed] == [
        (media_id, "notes.txt", 5, meta["_createdby"])]

    deleted = await live.client.delete(f"/media/{media_id}", headers=live.auth())
    assert deleted.status_code == 200, deleted.text
    assert seen == [("beforeDELETE", "_media", [media_id]),
                    ("afterDELETE", "_media", [media_id])]


@pytest.mark.parametrize("collection", ["_users", "_settings", "_hooklog", "_mediax"])
async def test_hooks_on_other_system_collections_are_refused(
    live: LiveDocbase, collection: str,
) -> None:
    with pytest.raises(InvalidQuery, match="invalid collection name"):
        live.db.hook(collection, Hook.BEFORE_POST)
