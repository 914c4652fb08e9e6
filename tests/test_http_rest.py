"""The /rest endpoints over real HTTPS, on every storage backend."""

from __future__ import annotations

import asyncio
import contextlib
import ssl
from typing import Any

import msgspec
import pytest

from docbase.http.testing import LiveDocbase

SYSTEM = {"_created", "_changed", "_createdby", "_changedby", "_version"}


async def create(live: LiveDocbase, path: str, body: Any) -> Any:
    response = await live.client.post(path, json=body, headers=live.auth())
    assert response.status_code == 201, response.text
    return response.json()


async def get(live: LiveDocbase, path: str, **params: Any) -> Any:
    response = await live.client.get(path, params=params, headers=live.auth())
    assert response.status_code == 200, response.text
    return response.json()


async def test_health_answers_without_a_key(live: LiveDocbase) -> None:
    response = await live.client.get("/health")
    assert response.status_code == 200
    assert response.json() == {"status": "ok"}


async def test_post_object_creates_and_returns_whole_document(live: LiveDocbase) -> None:
    response = await live.client.post("/rest/people", json={"name": "Joe", "_version": 7,
                                                            "_createdby": "x"},
                                      headers=live.auth())
    assert response.status_code == 201
    assert response.headers["content-type"].startswith("application/json")
    document = response.json()
    assert set(document) >= SYSTEM
    assert (document["name"], document["_version"], document["_createdby"]) == ("Joe", 0, "api")
    assert len(document["_id"]) == 24
    assert response.headers["etag"] == f'"{document["_id"]}-0"'


async def test_post_array_creates_all(live: LiveDocbase) -> None:
    documents = await create(live, "/rest/people", [{"n": 1}, {"n": 2}, {"n": 3}])
    assert [d["n"] for d in documents] == [1, 2, 3]
    assert all(set(d) >= SYSTEM for d in documents)
    assert len(await get(live, "/rest/people")) == 3


async def test_post_array_is_all_or_nothing(live: LiveDocbase) -> None:
    response = await live.client.post("/rest/people", json=[{"n": 1}, "not an object"],
                                      headers=live.auth())
    assert response.status_code == 400
    assert await get(live, "/rest/people") == []


async def test_post_array_with_validate_false(live: LiveDocbase) -> None:
    response = await live.client.post("/rest/people?validate=false", json=[{"n": 1}, {"n": 2}],
                                      headers=live.auth())
    assert response.status_code == 201
    assert len(response.json()) == 2


async def test_form_encoded_bodies_are_flat_objects(live: LiveDocbase) -> None:
    response = await live.client.post("/rest/people", data={"name": "Ann", "tag": ["a", "b"]},
                                      headers=live.auth())
    assert response.status_code == 201
    document = response.json()
    assert (document["name"], document["tag"]) == ("Ann", ["a", "b"])
    response = await live.client.patch(f"/rest/people/{document['_id']}", data={"city": "Oslo"},
                                       headers=live.auth())
    assert response.status_code == 200
    assert response.json()["city"] == "Oslo"


async def test_get_one_returns_user_fields_and_etag(live: LiveDocbase) -> None:
    created = await create(live, "/rest/people", {"name": "Joe"})
    response = await live.client.get(f"/rest/people/{created['_id']}", headers=live.auth())
    assert response.status_code == 200
    assert response.json() == {"_id": created["_id"], "name": "Joe"}
    assert response.headers["etag"] == f'"{created["_id"]}-0"'
    full = await get(live, f"/rest/people/{created['_id']}", metafields="true")
    assert full == created


async def test_list_reads_user_fields_and_metafields_on_request(live: LiveDocbase) -> None:
    created = await create(live, "/rest/people", {"name": "Joe"})
    assert await get(live, "/rest/people") == [{"_id": created["_id"], "name": "Joe"}]
    assert await get(live, "/rest/people", metafields="true") == [created]


async def test_unknown_collection_reads_as_empty(live: LiveDocbase) -> None:
    assert await get(live, "/rest/nothing-here") == []


async def test_list_parameters(live: LiveDocbase) -> None:
    await create(live, "/rest/people", [
        {"name": "Ann", "age": 31, "city": "Oslo"},
        {"name": "Bob", "age": 25, "city": "Rome"},
        {"name": "Cid", "age": 40, "city": "Oslo"},
        {"name": "Dan", "age": 25, "city": "Lima"},
    ])

    def names(documents: list[dict[str, Any]]) -> list[str]:
        return [d["name"] for d in documents]

    assert names(await get(live, "/rest/people", q='{"city": "Oslo"}')) == ["Ann", "Cid"]
    assert names(await get(live, "/rest/people", q='{"age": {"$gt": 30}}',
                           h='{"$orderby": {"age": -1}}')) == ["Cid", "Ann"]
    assert names(await get(live, "/rest/people", filter="ROM")) == ["Bob"]
    assert names(await get(live, "/rest/people", sort=["age", "name"], dir=["-1", "-1"])) == [
        "Cid", "Ann", "Dan", "Bob"]
    assert names(await get(live, "/rest/people", sort="name", skip=1, max=2)) == ["Bob", "Cid"]
    assert await get(live, "/rest/people", h='{"$fields": {"name": 1}, "$max": 1}') == [
        {"_id": (await get(live, "/rest/people"))[0]["_id"], "name": "Ann"}]
    totals = await get(live, "/rest/people", totals="true", max=1)
    assert totals["totals"] == {"total": 4, "count": 1, "skip": 0, "max": 1}
    assert len(totals["data"]) == 1
    counted = await get(live, "/rest/people", totals="true", count="true")
    assert counted["data"] == []
    assert counted["totals"]["count"] == 4
    grouped = await get(live, "/rest/people", groupby="city")
    assert sorted(grouped) == ["Lima", "Oslo", "Rome"]
    assert names(grouped["Oslo"]) == ["Ann", "Cid"]
    aggregated = await get(live, "/rest/people", groupby="city", aggregate=["SUM:age", "COUNT:"])
    assert aggregated["Oslo"] == {"SUM age": 71, "COUNT ": 2}
    assert await get(live, "/rest/people", aggregate="MAX:age") == {"MAX age": 40}


async def test_q_and_h_may_arrive_unencoded(live: LiveDocbase) -> None:
    await create(live, "/rest/people", [{"name": "Ann", "n": 2}, {"name": "Bob", "n": 1},
                                        {"name": "Cid", "n": 3}])
    host, port = live.base_url.removeprefix("https://").split(":")
    context = ssl.create_default_context(cafile=str(live.certfile))
    reader, writer = await asyncio.open_connection(host, int(port), ssl=context)
    target = '/rest/people?q={"n":{"$gte":2}}&h={"$orderby":{"n":-1}}'
    writer.write(f"GET {target} HTTP/1.1\r\nHost: {host}\r\nx-apikey: {live.auth()['x-apikey']}"
                 "\r\nConnection: close\r\n\r\n".encode())
    await writer.drain()
    raw = await reader.read()
    writer.close()
    with contextlib.suppress(OSError, ssl.SSLError):
        await writer.wait_closed()
    head, _, body = raw.partition(b"\r\n\r\n")
    assert head.startswith(b"HTTP/1.1 200"), raw
    assert [d["name"] for d in msgspec.json.decode(body)] == ["Cid", "Ann"]


async def test_put_merges_top_level_and_applies_operators(live: LiveDocbase) -> None:
    created = await create(live, "/rest/people", {"name": "Joe", "age": 30, "tags": ["a"],
                                                  "address": {"city": "Oslo", "zip": "1"}})
    response = await live.client.put(
        f"/rest/people/{created['_id']}",
        json={"address": {"city": "Rome"}, "$inc": {"age": 1}, "$push": {"tags": "b"},
              "_id": "000000000000000000000000", "_version": 99, "_createdby": "mallory"},
        headers=live.auth(),
    )
    assert response.status_code == 200
    document = response.json()
    assert document["address"] == {"city": "Rome"}
    assert (document["age"], document["tags"], document["name"]) == (31, ["a", "b"], "Joe")
    assert (document["_id"], document["_version"], document["_createdby"]) == (
        created["_id"], 1, "api")
    assert set(document) >= SYSTEM
    assert response.headers["etag"] == f'"{created["_id"]}-1"'


async def test_patch_changes_only_the_given_properties(live: LiveDocbase) -> None:
    created = await create(live, "/rest/people", {"name": "Joe", "address": {"city": "Oslo",
                                                                             "zip": "1"}})
    response = await live.client.patch(f"/rest/people/{created['_id']}",
                                       json={"address.city": "Rome", "_changedby": "x"},
                                       headers=live.auth())
    assert response.status_code == 200
    assert response.json()["address"] == {"city": "Rome", "zip": "1"}
    assert response.json()["_changedby"] == "api"


async def test_delete_one(live: LiveDocbase) -> None:
    created = await create(live, "/rest/people", {"name": "Joe"})
    response = await live.client.delete(f"/rest/people/{created['_id']}", headers=live.auth())
    assert response.status_code == 200
    assert response.json() == {"result": [created["_id"]]}
    missing = await live.client.get(f"/rest/people/{created['_id']}", headers=live.auth())
    assert missing.status_code == 404


async def test_delete_array_of_ids_reports_those_deleted(live: LiveDocbase) -> None:
    first, second, third = await create(live, "/rest/people", [{"n": 1}, {"n": 2}, {"n": 3}])
    unknown = "0" * 24
    response = await live.client.request("DELETE", "/rest/people/*",
                                         json=[first["_id"], third["_id"], unknown],
                                         headers=live.auth())
    assert response.status_code == 200
    assert sorted(response.json()["result"]) == sorted([first["_id"], third["_id"]])
    assert [d["_id"] for d in await get(live, "/rest/people")] == [second["_id"]]


async def test_delete_by_query_with_full_access_key(live: LiveDocbase) -> None:
    await create(live, "/rest/people", [{"n": 1}, {"n": 2}, {"n": 3}])
    response = await live.client.delete("/rest/people/*", params={"q": '{"n": {"$gte": 2}}'},
                                        headers=live.auth())
    assert response.status_code == 200
    assert len(response.json()["result"]) == 2
    assert [d["n"] for d in await get(live, "/rest/people")] == [1]


async def test_children_create_list_get_update_delete(live: LiveDocbase) -> None:
    parent = await create(live, "/rest/people", {"name": "Joe"})
    base = f"/rest/people/{parent['_id']}/orders"
    one = await create(live, base, {"item": "pen"})
    assert (one["_parent_id"], one["_parent_def"], one["_parent_field"]) == (
        parent["_id"], "people", "orders")
    assert set(one) >= SYSTEM
    many = await create(live, base, [{"item": "ink"}, {"item": "pad"}])
    assert len(many) == 2
    listed = await get(live, base)
    assert [c["item"] for c in listed] == ["pen", "ink", "pad"]
    assert set(listed[0]) == {"_id", "item", "_parent_id", "_parent_def", "_parent_field"}
    response = await live.client.get(f"{base}/{one['_id']}", headers=live.auth())
    assert response.status_code == 200
    assert response.json()["item"] == "pen"
    assert response.headers["etag"] == f'"{one["_id"]}-0"'
    changed = await live.client.put(f"{base}/{one['_id']}", json={"qty": 2}, headers=live.auth())
    assert changed.json()["qty"] == 2
    patched = await live.client.patch(f"{base}/{one['_id']}", json={"qty": 3},
                                      headers=live.auth())
    assert patched.json()["qty"] == 3
    deleted = await live.client.delete(f"{base}/{many[0]['_id']}", headers=live.auth())
    assert deleted.json() == {"result": [many[0]["_id"]]}
    assert [c["item"] for c in await get(live, base)] == ["pen", "pad"]


async def test_fetchchildren_embeds_children_and_delete_cascades(live: LiveDocbase) -> None:
    parent = await create(live, "/rest/people", {"name": "Joe"})
    await create(live, f"/rest/people/{parent['_id']}/orders", [{"item": "pen"}])
    document = await get(live, f"/rest/people/{parent['_id']}", fetchchildren="true")
    assert [c["item"] for c in document["orders"]] == ["pen"]
    assert not SYSTEM & set(document["orders"][0])
    with_meta = await get(live, f"/rest/people/{parent['_id']}", fetchchildren="true",
                          metafields="true")
    assert set(with_meta["orders"][0]) >= SYSTEM
    listed = await get(live, "/rest/people", fetchchildren="true")
    assert [c["item"] for c in listed[0]["orders"]] == ["pen"]
    await live.client.delete(f"/rest/people/{parent['_id']}", headers=live.auth())
    assert await get(live, "/rest/orders") == []


async def test_children_of_an_unknown_parent_are_404(live: LiveDocbase) -> None:
    base = f"/rest/people/{'0' * 24}/orders"
    assert (await live.client.get(base, headers=live.auth())).status_code == 404
    response = await live.client.post(base, json={"item": "pen"}, headers=live.auth())
    assert response.status_code == 404


async def test_meta_lists_collections_and_children(live: LiveDocbase) -> None:
    parent = await create(live, "/rest/people", {"name": "Joe"})
    await create(live, f"/rest/people/{parent['_id']}/orders", {"item": "pen"})
    meta = await get(live, "/rest/_meta")
    assert meta["name"] == "main"
    assert {c["name"] for c in meta["collections"]} == {"people", "orders"}
    people = await get(live, "/rest/people/_meta")
    assert people == {"name": "people", "fields": [], "indexes": [],
                      "children": [{"name": "orders", "type": "child", "collection": "orders"}]}
    unknown = await get(live, "/rest/nothing/_meta")
    assert (unknown["name"], unknown["children"]) == ("nothing", [])


@pytest.mark.parametrize("spelling", ["PUT", "put"])
async def test_method_override_put(live: LiveDocbase, spelling: str) -> None:
    created = await create(live, "/rest/people", {"name": "Joe"})
    response = await live.client.post(f"/rest/people/{created['_id']}", json={"age": 3},
                                      headers={**live.auth(), "X-HTTP-Method-Override": spelling})
    assert response.status_code == 200
    assert response.json()["age"] == 3


async def test_method_override_patch_and_delete(live: LiveDocbase) -> None:
    created = await create(live, "/rest/people", {"name": "Joe", "a": {"b": 1, "c": 2}})
    path = f"/rest/people/{created['_id']}"
    patched = await live.client.post(path, json={"a.b": 5},
                                     headers={**live.auth(), "x-http-method-override": "PATCH"})
    assert patched.json()["a"] == {"b": 5, "c": 2}
    deleted = await live.client.post(path, headers={**live.auth(),
                                                    "X-HTTP-Method-Override": "DELETE"})
    assert deleted.json() == {"result": [created["_id"]]}


async def test_method_override_delete_array(live: LiveDocbase) -> None:
    first, _ = await create(live, "/rest/people", [{"n": 1}, {"n": 2}])
    response = await live.client.post("/rest/people/*", json=[first["_id"]],
                                      headers={**live.auth(), "X-HTTP-Method-Override": "DELETE"})
    assert response.json() == {"result": [first["_id"]]}


async def test_if_match_guards_updates_and_deletes(live: LiveDocbase) -> None:
    created = await create(live, "/rest/people", {"name": "Joe"})
    path = f"/rest/people/{created['_id']}"
    tag = (await live.client.get(path, headers=live.auth())).headers["etag"]
    first = await live.client.put(path, json={"n": 1}, headers={**live.auth(), "If-Match": tag})
    assert first.status_code == 200
    assert first.headers["etag"] != tag
    stale = await live.client.patch(path, json={"n": 2}, headers={**live.auth(), "If-Match": tag})
    assert stale.status_code == 412
    assert stale.json()["name"] == "PreconditionFailed"
    stale_delete = await live.client.delete(path, headers={**live.auth(), "If-Match": tag})
    assert stale_delete.status_code == 412
    assert (await get(live, path))["n"] == 1
    bare = await live.client.patch(path, json={"n": 3}, headers={**live.auth(), "If-Match": '"1"'})
    assert bare.status_code == 200
    listed = await live.client.patch(
        path, json={"n": 4},
        headers={**live.auth(), "If-Match": f'{tag}, {bare.headers["etag"]}'})
    assert listed.status_code == 200
    anything = await live.client.delete(path, headers={**live.auth(), "If-Match": "*"})
    assert anything.status_code == 200


async def test_database_selected_by_path_prefix(live: LiveDocbase) -> None:
    created = await create(live, "/db/main/rest/people", {"name": "Joe"})
    assert await get(live, f"/db/main/rest/people/{created['_id']}") == {
        "_id": created["_id"], "name": "Joe"}
    assert len(await get(live, "/rest/people")) == 1


async def test_children_are_scoped_to_their_parent(live: LiveDocbase) -> None:
    first, second = await create(live, "/rest/people", [{"n": 1}, {"n": 2}])
    child = await create(live, f"/rest/people/{first['_id']}/orders", {"item": "pen"})
    elsewhere = f"/rest/people/{second['_id']}/orders/{child['_id']}"
    assert (await live.client.get(elsewhere, headers=live.auth())).status_code == 404
    assert (await live.client.delete(elsewhere, headers=live.auth())).status_code == 404
    assert await get(live, f"/rest/people/{second['_id']}/orders") == []


async def test_method_override_on_a_child(live: LiveDocbase) -> None:
    parent = await create(live, "/rest/people", {"n": 1})
    child = await create(live, f"/rest/people/{parent['_id']}/orders", {"item": "pen"})
    path = f"/rest/people/{parent['_id']}/orders/{child['_id']}"
    patched = await live.client.post(path, json={"qty": 5},
                                     headers={**live.auth(), "X-HTTP-Method-Override": "PATCH"})
    assert patched.json()["qty"] == 5
    deleted = await live.client.post(path, headers={**live.auth(),
                                                    "X-HTTP-Method-Override": "DELETE"})
    assert deleted.json() == {"result": [child["_id"]]}
