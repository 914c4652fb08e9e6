"""One road for every read: what a principal is handed passes the read pipeline of the
collection it belongs to, over HTTPS and through the library, on every engine.

The first tests are the two bypasses found in issue 22: embedded children
(``fetchchildren``) skipped the child collection's read authorization, strict mode and
``beforeGET`` hooks, and ``count`` answered a filter on a password field that ``find``
refuses.
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import msgspec
import pytest

from docbase import Database, Forbidden, InvalidQuery, NotFound
from docbase.core.auth import Principal, Scope
from docbase.core.events import ReadEvent
from docbase.core.hooks import HookPoint
from docbase.core.query import Aggregate, And, Query, ReadOptions, Text, parse_filter
from docbase.core.schema import parse_schema
from docbase.core.settings import Limits
from docbase.http.testing import LiveDocbase, live_docbase
from docbase.testing.sse import open_events

ORDERS_ONLY = Principal(kind="key", full_access=False,
                        scope=Scope(paths=("/rest/orders", "/rest/orders/*"), methods=("GET",)))
"""``--path /rest/orders --path /rest/orders/* --method GET``: orders, not their lines."""


async def seed_order(db: Database) -> str:
    order = await db.collection("orders").insert({"customer": "ann"})
    lines = db.collection("orders").children(order["_id"], "lines")
    await lines.insert_many([{"sku": "a", "qty": 1}, {"sku": "b", "qty": 2}])
    return str(order["_id"])


# ------------------------------------------------------------------ embedded children


async def test_fetchchildren_over_https_embeds_no_children_a_key_may_not_read(
    live: LiveDocbase,
) -> None:
    order = await seed_order(live.db)
    key = await live.key(paths=["/rest/orders", "/rest/orders/*"], methods=["GET"])
    headers = {"x-apikey": key}
    refused = await live.client.get(f"/rest/orders/{order}/lines", headers=headers)
    assert refused.status_code == 403, refused.text
    one = await live.client.get(f"/rest/orders/{order}?fetchchildren=true", headers=headers)
    assert one.status_code == 200, one.text
    assert one.json()["customer"] == "ann"
    assert "lines" not in one.json()
    many = await live.client.get("/rest/orders?fetchchildren=true", headers=headers)
    assert many.status_code == 200, many.text
    assert [sorted(d) for d in many.json()] == [sorted(one.json())]
    admin = await live.client.get(f"/rest/orders/{order}?fetchchildren=true",
                                  headers=live.auth())
    assert sorted(c["sku"] for c in admin.json()["lines"]) == ["a", "b"]


async def test_fetchchildren_in_the_library_embeds_no_children_the_principal_may_not_read(
    stores: Any,
) -> None:
    async with Database(*stores) as db:
        order = await seed_order(db)
        orders = db.collection("orders", ORDERS_ONLY)
        with pytest.raises(Forbidden, match=f"may not GET /rest/orders/{order}/lines"):
            await orders.children(order, "lines").find()
        assert "lines" not in await orders.get(order, fetchchildren=True)
        assert len((await db.collection("orders").get(order, fetchchildren=True))["lines"]) == 2


async def test_embedded_children_pass_the_child_collections_before_read_hooks(
    stores: Any,
) -> None:
    async with Database(*stores) as db:
        order = await seed_order(db)

        async def big_lines_only(read: ReadEvent) -> None:
            if read.query is not None:
                read.query = msgspec.structs.replace(read.query, filter=And((
                    read.query.filter, parse_filter({"qty": {"$gt": 1}}))))

        db.hooks.on(HookPoint.BEFORE_READ, big_lines_only, collection="lines")
        orders = db.collection("orders")
        one = await orders.get(order, fetchchildren=True)
        assert [line["sku"] for line in one["lines"]] == ["b"]
        many: Any = await orders.read(Query(), ReadOptions(fetchchildren=True))
        assert [line["sku"] for line in many[0]["lines"]] == ["b"]


async def test_embedded_children_of_a_strict_database_need_a_defined_child_collection(
    stores: Any,
) -> None:
    async with Database(*stores) as db:
        order = await seed_order(db)
        await db.schemas.put(parse_schema("orders", {"fields": [
            {"name": "customer", "type": "text"}]}))
        await db.settings.set("schema.mode", "strict")
        orders = db.collection("orders")
        with pytest.raises(NotFound):
            await orders.children(order, "lines").find()
        assert "lines" not in await orders.get(order, fetchchildren=True)


# ------------------------------------------------------------------ counts


ACCOUNTS = {"fields": [{"name": "login", "type": "text"},
                       {"name": "pw", "type": "password"}]}
ARGON_PREFIX = {"pw": {"$regex": "^\\$argon2"}}


async def test_count_refuses_a_password_field_as_find_does(stores: Any) -> None:
    scoped = Principal(kind="key", full_access=False,
                       scope=Scope(paths=("/rest/accounts/**",), methods=("GET",)))
    async with Database(*stores) as db:
        await db.schemas.put(parse_schema("accounts", ACCOUNTS))
        await db.collection("accounts").insert({"login": "ann", "pw": "correct horse"})
        for principal in (scoped, Principal()):
            accounts = db.collection("accounts", principal)
            with pytest.raises(InvalidQuery, match="password field 'pw'"):
                await accounts.find(ARGON_PREFIX)
            with pytest.raises(InvalidQuery, match="password field 'pw'"):
                await accounts.count(ARGON_PREFIX)
        assert await db.collection("accounts", scoped).count({"login": "ann"}) == 1


async def test_counts_over_https_refuse_a_password_field(live: LiveDocbase) -> None:
    await live.db.schemas.put(parse_schema("accounts", ACCOUNTS))
    await live.db.collection("accounts").insert({"login": "ann", "pw": "correct horse"})
    key = await live.key(paths=["/rest/accounts/**"], methods=["GET"])
    q = '{"pw": {"$regex": "^\\\\$argon2"}}'
    for extra in ("", "&count=true", "&totals=true", '&h={"$aggregate":["COUNT:login"]}'):
        response = await live.client.get(f"/rest/accounts?q={q}{extra}",
                                         headers={"x-apikey": key})
        assert response.status_code == 400, (extra, response.text)
        assert "password field 'pw'" in response.json()["message"]


# ------------------------------------------------------------------ lookups


INVOICES = {"fields": [{"name": "buyer", "type": "lookup", "collection": "customers"},
                       {"name": "total", "type": "number"}]}


async def test_a_lookup_embeds_only_the_id_for_a_principal_that_may_not_read_its_target(
    stores: Any,
) -> None:
    invoices_only = Principal(kind="key", full_access=False, scope=Scope(
        paths=("/rest/invoices/**",), methods=("GET", "POST", "PATCH")))
    async with Database(*stores) as db:
        await db.schemas.put(parse_schema("invoices", INVOICES))
        ann = await db.collection("customers").insert({"name": "Ann", "card": "4111"})
        invoices = db.collection("invoices", invoices_only)
        written = await invoices.insert({"buyer": [ann["_id"]], "total": 3})
        assert written["buyer"] == [{"_id": ann["_id"]}]
        patched = await invoices.patch(written["_id"], {"total": 4})
        assert patched["buyer"] == [{"_id": ann["_id"]}]
        assert (await invoices.get(written["_id"]))["buyer"] == [{"_id": ann["_id"]}]
        assert [d["buyer"] for d in await invoices.find()] == [[{"_id": ann["_id"]}]]
        full = await db.collection("invoices").get(written["_id"])
        assert full["buyer"][0]["card"] == "4111"


async def test_a_query_into_a_lookup_reads_only_its_ids(stores: Any) -> None:
    invoices_only = Principal(kind="key", full_access=False, scope=Scope(
        paths=("/rest/invoices/**",), methods=("GET",)))
    async with Database(*stores) as db:
        await db.schemas.put(parse_schema("invoices", INVOICES))
        ann = await db.collection("customers").insert({"name": "Ann", "card": "4111"})
        await db.collection("invoices").insert({"buyer": [ann["_id"]], "total": 3})
        invoices = db.collection("invoices", invoices_only)
        prying = [
            Query(filter=parse_filter({"buyer.card": {"$regex": "^4"}})),
            Query(filter=parse_filter({"buyer": {"$elemMatch": {"card": "4111"}}})),
            Query(groupby=(("buyer", "card"),)),
            Query(aggregates=(Aggregate("MAX", "buyer.card"),)),
        ]
        for collection in (invoices, db.collection("invoices")):  # storage holds ids only
            for query in prying:
                with pytest.raises(InvalidQuery, match="lookup field 'buyer' stores only ids"):
                    await collection.read(query)
            with pytest.raises(InvalidQuery, match="lookup field 'buyer'"):
                await collection.count({"buyer.card": "4111"})
        with pytest.raises(Forbidden, match="text search over the lookup field 'buyer'"):
            await invoices.read(Query(filter=Text("4111")))
        by_id = {"buyer._id": ann["_id"]}
        assert await invoices.count(by_id) == 1
        assert await invoices.count({"total": 3}) == 1


async def test_a_lookup_over_https_embeds_only_the_id_for_a_key_that_may_not_read_its_target(
    live: LiveDocbase,
) -> None:
    await live.db.schemas.put(parse_schema("invoices", INVOICES))
    ann = await live.db.collection("customers").insert({"name": "Ann", "card": "4111"})
    key = {"x-apikey": await live.key(paths=["/rest/invoices/**"], methods=["GET", "POST"])}
    written = await live.client.post("/rest/invoices", json={"buyer": ann["_id"]},
                                     headers=key)
    assert written.status_code == 201, written.text
    assert written.json()["buyer"] == [{"_id": ann["_id"]}]
    for path in (f"/rest/invoices/{written.json()['_id']}", "/rest/invoices",
                 "/rest/invoices?totals=true"):
        answer = (await live.client.get(path, headers=key)).json()
        assert "4111" not in str(answer), path
    admin = await live.client.get("/rest/invoices", headers=live.auth())
    assert admin.json()[0]["buyer"][0]["card"] == "4111"


# ------------------------------------------------------------------ the change feed


@pytest.fixture
async def feed_live(stores: Any, tmp_path: Path) -> AsyncIterator[LiveDocbase]:
    fast = Limits(change_poll_interval=0.05, realtime_ping_interval=0.5)
    db = Database(*stores, name="main", limits=fast)
    await db.settings.set("realtime.global", True)
    async with live_docbase({"main": db}, tmp_path) as running:
        yield running
        await db.changes.close()


async def test_the_feed_sends_a_subscriber_only_what_it_may_read(feed_live: LiveDocbase) -> None:
    live = feed_live
    await live.db.schemas.put(parse_schema("invoices", INVOICES))
    ann = await live.db.collection("customers").insert({"name": "Ann", "card": "4111"})
    everything = await live.key(paths=["/rest/**"], methods=["GET"])
    invoices_only = await live.key(paths=["/rest/invoices/**"], methods=["GET"])
    async with (open_events(live.client, "/realtime", params={"apikey": everything}) as wide,
                open_events(live.client, "/realtime", params={"apikey": invoices_only})
                as narrow):
        for stream in (wide, narrow):
            assert (await stream.next()).name == "ping"
        await live.db.collection("customers").insert({"name": "Bo", "card": "5500"})
        upload = await live.client.post("/media", headers=live.auth(),
                                        files={"file": ("a.txt", b"hello", "text/plain")})
        assert upload.status_code == 201, upload.text
        await live.db.collection("invoices").insert({"buyer": ann["_id"], "total": 1})
        seen_wide = [e.json() for e in await wide.take(2)]
        seen_narrow = [e.json() for e in await narrow.take(1)]
    assert [e["collection"] for e in seen_wide] == ["customers", "invoices"]
    assert seen_wide[1]["data"]["buyer"][0]["card"] == "4111"
    assert [e["collection"] for e in seen_narrow] == ["invoices"]
    assert seen_narrow[0]["data"]["buyer"] == [{"_id": ann["_id"]}]
