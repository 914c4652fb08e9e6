"""The four side doors of issue 30, each tried over HTTPS and, where it exists there,
through the library, on every engine: decisions are made for the collection that holds
the documents, whatever URL, projection, update or cursor reached them.

1. a projection handed over a lookup's target;
2. a writer copied another collection into its own (``$unset`` of a lookup sub-path);
3. a child path wrote into (and read from) another collection;
4. fields a ``beforeGET`` hook hides came back through cursors and aggregates.
"""

from __future__ import annotations

import json
from typing import Any

import msgspec
import pytest

from docbase import Database, Forbidden, InvalidQuery, ValidationFailed
from docbase.core.auth import Principal, Scope
from docbase.core.hooks import Hook, ReadContext
from docbase.core.query import Aggregate, Projection, Query, ReadOptions, SortKey, parse_cursor
from docbase.core.schema import parse_schema
from docbase.http.testing import LiveDocbase

SECRET = "s3cr3t-launch-code"
PUBLIC = {"fields": [{"name": "title", "type": "text"},
                     {"name": "owner", "type": "lookup", "collection": "secret"}]}


async def seed_public(db: Database) -> tuple[str, str]:
    """A ``secret`` document and a ``public`` one whose ``owner`` names it."""
    await db.schemas.put(parse_schema("public", PUBLIC))
    secret = await db.collection("secret").insert({"code": SECRET})
    public = await db.collection("public").insert({"title": "p", "owner": [secret["_id"]]})
    return str(secret["_id"]), str(public["_id"])


# ------------------------------------------------------------------ 1. projections


async def test_a_projection_hands_over_no_lookup_target(live: LiveDocbase) -> None:
    secret_id, _ = await seed_public(live.db)
    key = {"x-apikey": await live.key(paths=["/rest/public/**"], methods=["GET"])}
    await live.db.settings.set("auth.users.paths", ["/rest/public/**"])
    from docbase.core import auth
    await auth.create_user(live.db, "ann@example.com", "a long password 1")
    login = await live.client.post("/auth/login", json={"email": "ann@example.com",
                                                        "password": "a long password 1"})
    token = {"Authorization": f"Bearer {login.json()['jwt']}"}
    for hint in ({"$fields": {"owner._id": 0}}, {"$fields": {"owner.code": 1}},
                 {"$fields": {"owner": 1}}, None):
        params = {} if hint is None else {"h": json.dumps(hint)}
        for credential in (key, token):
            for accept in ("application/json", "application/x-ndjson", "text/csv"):
                response = await live.client.get("/rest/public", params=params,
                                                 headers={**credential, "accept": accept})
                assert response.status_code == 200, (hint, accept, response.text)
                assert SECRET not in response.text, (hint, accept)
    admin = await live.client.get("/rest/public", headers=live.auth(),
                                  params={"h": '{"$fields": {"owner._id": 0}}'})
    assert admin.json()[0]["owner"] == [{"code": SECRET}]
    whole = await live.client.get("/rest/public", headers=live.auth())
    assert whole.json()[0]["owner"] == [{"_id": secret_id, "code": SECRET}]
    lines = await live.client.get("/rest/public", headers={**live.auth(),
                                                           "accept": "application/x-ndjson"})
    assert json.loads(lines.text.splitlines()[0])["owner"] == whole.json()[0]["owner"]


async def test_a_library_projection_hands_over_no_lookup_target(stores: Any) -> None:
    public_only = Principal(kind="key", full_access=False,
                            scope=Scope(paths=("/rest/public/**",), methods=("GET",)))
    async with Database(*stores) as db:
        secret_id, _ = await seed_public(db)
        public = db.collection("public", public_only)
        for paths, include in (((("owner", "_id"),), False), ((("owner", "code"),), True)):
            query = Query(projection=Projection(paths, include))
            assert SECRET not in str(await public.read(query))
            assert SECRET not in str(await public.find(query=query))
        assert (await public.find())[0]["owner"] == [{"_id": secret_id}]


# ------------------------------------------------------------------ 2. stored copies


async def test_a_writer_cannot_store_a_copy_of_another_collection(live: LiveDocbase) -> None:
    secret_id, public_id = await seed_public(live.db)
    key = {"x-apikey": await live.key(paths=["/rest/public/**"],
                                      methods=["GET", "POST", "PUT", "PATCH", "DELETE"])}
    path = f"/rest/public/{public_id}"
    assert (await live.client.put(path, json={"$set": {"owner": [secret_id]}},
                                  headers=key)).status_code == 200
    unset = await live.client.put(path, json={"$unset": {"owner.0._id": ""}}, headers=key)
    assert unset.status_code == 422, unset.text  # as a $set or PATCH of it
    assert unset.json()["list"][0]["field"] == "owner"
    smuggled = await live.client.post("/rest/public", headers=key, json={
        "title": "q", "owner": [{"_id": secret_id, "code": "forged"}]})
    assert smuggled.status_code == 201, smuggled.text
    bulk = await live.client.post("/rest/public?validate=false", headers=key, json=[
        {"title": "r", "owner": [{"_id": secret_id, "extra": "forged"}]}])
    assert bulk.status_code == 201, bulk.text
    scoped = await live.client.get("/rest/public", headers=key)
    assert SECRET not in scoped.text
    admin = await live.client.get("/rest/public", headers=live.auth())
    assert "forged" not in scoped.text + admin.text
    stored = await live.db.documents.find("public", Query(limit=None))
    assert sorted(str(d["owner"]) for d in stored) == [str([{"_id": secret_id}])] * 3
    await live.db.collection("secret").update(secret_id, {"code": "rotated"})
    rotated = await live.client.get(path, headers=live.auth())
    assert rotated.json()["owner"] == [{"_id": secret_id, "code": "rotated"}]


async def test_the_library_refuses_an_unset_inside_a_lookup(stores: Any) -> None:
    async with Database(*stores) as db:
        secret_id, public_id = await seed_public(db)
        public = db.collection("public")
        with pytest.raises(ValidationFailed, match="owner"):
            await public.update(public_id, {"$unset": {"owner.0._id": ""}})
        with pytest.raises(ValidationFailed, match="owner"):
            await public.insert({"owner": [{"_id": "not-an-id", "code": "x"}]})
        stored = await db.documents.get("public", public_id)
        assert stored["owner"] == [{"_id": secret_id}]


# ------------------------------------------------------------------ 3. child paths


async def test_a_child_path_is_also_a_write_into_the_child_collection(
    live: LiveDocbase,
) -> None:
    await live.db.schemas.put(parse_schema("secret", {"fields": [
        {"name": "code", "type": "text", "unique": True}]}))
    held = await live.db.collection("secret").insert({"code": SECRET})
    parent = await live.db.collection("public").insert({"title": "p"})
    key = {"x-apikey": await live.key(paths=["/rest/public/**"],
                                      methods=["GET", "POST", "PUT", "DELETE"])}
    child = f"/rest/public/{parent['_id']}/secret"
    for code in (SECRET, "free-value"):  # no 409/201 oracle either
        response = await live.client.post(child, json={"code": code}, headers=key)
        assert response.status_code == 403, response.text
    assert (await live.client.get(child, headers=key)).status_code == 403
    assert (await live.client.get(f"{child}/{held['_id']}", headers=key)).status_code == 403
    listed = await live.client.get("/rest/secret", headers=live.auth())
    assert [d["code"] for d in listed.json()] == [SECRET]
    both = {"x-apikey": await live.key(paths=["/rest/public/**", "/rest/secret/**"],
                                       methods=["GET", "POST"])}
    created = await live.client.post(child, json={"code": "free-value"}, headers=both)
    assert created.status_code == 201, created.text
    assert len((await live.client.get(child, headers=both)).json()) == 1


async def test_a_library_child_view_needs_the_child_collection(stores: Any) -> None:
    public_only = Principal(kind="key", full_access=False, scope=Scope(
        paths=("/rest/public/**",), methods=("GET", "POST", "PUT", "DELETE")))
    async with Database(*stores) as db:
        parent = await db.collection("public").insert({"title": "p"})
        children = db.collection("public", public_only).children(parent["_id"], "secret")
        with pytest.raises(Forbidden, match="/rest/secret"):
            await children.insert({"code": SECRET})
        with pytest.raises(Forbidden, match="/rest/secret"):
            await children.find()
        assert await db.collection("secret").find() == []


# ------------------------------------------------------------------ 4. hidden fields


def hide_salary(db: Database) -> None:
    @db.hook("hooked", Hook.BEFORE_GET)
    async def hidden(ctx: ReadContext) -> None:
        if ctx.query is not None:
            ctx.query = msgspec.structs.replace(
                ctx.query, projection=Projection((("salary",),), include=False))


async def test_hook_hidden_fields_reach_no_cursor_or_aggregate(live: LiveDocbase) -> None:
    hide_salary(live.db)
    first = await live.db.collection("hooked").insert({"name": "a", "salary": 42000})
    await live.db.collection("hooked").insert({"name": "b", "salary": 51000})
    asked = [{"sort": "salary", "max": "1"}, {"sort": "name", "max": "1", "dir": "-1"},
             {"q": json.dumps({"_id": first["_id"]}), "aggregate": "SUM:salary"},
             {"q": json.dumps({"_id": first["_id"]}), "aggregate": "MAX:salary"},
             {"q": '{"salary": {"$gt": 45000}}', "count": "true"},
             {"q": '{"salary": 42000}'}, {"groupby": "salary"},
             {"h": '{"$orderby": {"salary": 1}, "$max": 1}'}]
    for params in asked:
        response = await live.client.get("/rest/hooked", params=params, headers=live.auth())
        text = response.text + json.dumps(dict(response.headers))
        cursor = response.headers.get("x-next-cursor")
        if cursor is not None:
            text += json.dumps(msgspec.to_builtins(parse_cursor(cursor)))
        assert "42000" not in text, (params, text)
        assert "51000" not in text, (params, text)
        assert response.status_code in (200, 403), (params, response.text)
        if "salary" in json.dumps(params):
            assert response.status_code == 403, (params, response.text)


async def test_hook_hidden_fields_are_refused_in_library_queries(stores: Any) -> None:
    async with Database(*stores) as db:
        hide_salary(db)
        hooked = db.collection("hooked")
        await hooked.insert({"name": "a", "salary": 42000})
        for query in (Query(sort=(SortKey(("salary",), 1),), limit=1),
                      Query(aggregates=(Aggregate("MAX", "salary"),)),
                      Query(groupby=(("salary",),))):
            with pytest.raises(Forbidden, match="salary"):
                await hooked.read(query)
        with pytest.raises(Forbidden, match="salary"):
            await hooked.count({"salary": 42000})
        assert await hooked.count({"name": "a"}) == 1
        page = await hooked.read_page(Query(sort=(SortKey(("name",), 1),), limit=1))
        assert page.body == [{"_id": page.body[0]["_id"], "name": "a"}]  # type: ignore[index]


async def test_a_query_inside_a_lookup_beyond_its_id_is_a_clear_400(stores: Any) -> None:
    async with Database(*stores) as db:
        secret_id, _ = await seed_public(db)
        public = db.collection("public")
        with pytest.raises(InvalidQuery, match="'owner'"):
            await public.find({"owner.code": SECRET})
        assert len(await public.find({"owner._id": secret_id})) == 1


# ------------------------------------------------------------------ resolution


def count_finds(db: Database, monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """The collections ``db.documents.find`` is asked for from now on, in order."""
    asked: list[str] = []
    find = db.documents.find

    async def counted(collection: str, query: Query) -> Any:
        asked.append(collection)
        return await find(collection, query)

    monkeypatch.setattr(db.documents, "find", counted)
    return asked


async def test_lookups_resolve_in_one_read_per_target_collection(
    stores: Any, monkeypatch: pytest.MonkeyPatch,
) -> None:
    async with Database(*stores) as db:
        await db.schemas.put(parse_schema("public", PUBLIC))
        secrets = await db.collection("secret").insert_many(
            [{"code": f"c{n}"} for n in range(30)])
        await db.collection("public").insert_many(
            [{"title": f"p{n}", "owner": [s["_id"], secrets[0]["_id"]]}
             for n, s in enumerate(secrets)])
        await db.collection("secret").delete(secrets[1]["_id"])
        asked = count_finds(db, monkeypatch)
        one_by_one = Principal(kind="key", full_access=False, scope=Scope(
            paths=("/rest/public/**", "/rest/secret/*"), methods=("GET",)))
        for principal, expected in ((None, "c2"), (one_by_one, "c2")):
            asked.clear()
            public = (db.collection("public") if principal is None
                      else db.collection("public", principal))
            found = await public.find(h={"$orderby": {"title": 1}, "$max": 100})
            assert asked.count("secret") == 1, (principal, asked)
            by_title = {d["title"]: d["owner"] for d in found}
            assert by_title["p12"][0]["code"] == "c12"
            assert by_title["p2"][1]["code"] == "c0"
            assert by_title["p1"][0] == {"_id": secrets[1]["_id"]}  # deleted: its id
            assert by_title["p2"][0]["code"] == expected


async def test_embedded_children_resolve_their_lookups_in_one_read(
    stores: Any, monkeypatch: pytest.MonkeyPatch,
) -> None:
    async with Database(*stores) as db:
        await db.schemas.put(parse_schema("kids", PUBLIC))
        secret = await db.collection("secret").insert({"code": SECRET})
        parents = await db.collection("public").insert_many([{"title": "a"}, {"title": "b"}])
        for parent in parents:
            await db.collection("public").children(parent["_id"], "kids").insert(
                {"title": "k", "owner": secret["_id"]})
        asked = count_finds(db, monkeypatch)
        found = await db.collection("public").read(Query(), ReadOptions(fetchchildren=True))
        assert asked.count("secret") == 1, asked
        assert [d["kids"][0]["owner"][0]["code"] for d in found] == [SECRET, SECRET]  # type: ignore[index]
