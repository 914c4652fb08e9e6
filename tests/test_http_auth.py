"""API keys over real HTTPS: 401 and 403 exactly as docs/http.md says, databases isolated."""

from __future__ import annotations

from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest

from docbase import Database
from docbase.adapters.memory import MemoryBlobStore, MemoryDocumentStore
from docbase.core import auth
from docbase.http.testing import LiveDocbase, live_docbase

ID = "5f0c0e0c0e0c0e0c0e0c0e0c"
ENDPOINTS = [
    ("GET", "/rest/people"), ("GET", f"/rest/people/{ID}"), ("GET", f"/rest/people/{ID}/kids"),
    ("GET", f"/rest/people/{ID}/kids/{ID}"), ("POST", "/rest/people"),
    ("POST", f"/rest/people/{ID}/kids"), ("PUT", f"/rest/people/{ID}"),
    ("PATCH", f"/rest/people/{ID}"), ("DELETE", f"/rest/people/{ID}"),
    ("DELETE", "/rest/people/*"), ("GET", "/rest/_meta"), ("GET", "/rest/people/_meta"),
]


@pytest.fixture
async def live(stores: Any, tmp_path: Path) -> AsyncIterator[LiveDocbase]:
    """Two databases on one server: "main" on the backend under test, "other" in memory."""
    async with MemoryDocumentStore() as other_store:
        databases = {"main": Database(*stores, name="main"),
                     "other": Database(other_store, MemoryBlobStore(), name="other")}
        async with live_docbase(databases, tmp_path, domain="docbase.test") as running:
            yield running


def assert_status(response: Any, status: int) -> None:
    assert response.status_code == status, response.text
    assert response.json()["status"] == status
    assert response.json()["name"] == {401: "Unauthorized", 403: "Forbidden"}[status]


@pytest.mark.parametrize(("method", "path"), ENDPOINTS)
async def test_no_key_is_401_on_every_endpoint(live: LiveDocbase, method: str, path: str) -> None:
    assert_status(await live.client.request(method, path, json={}), 401)


@pytest.mark.parametrize(("method", "path"), ENDPOINTS)
async def test_unknown_key_is_401_on_every_endpoint(
    live: LiveDocbase, method: str, path: str
) -> None:
    response = await live.client.request(method, path, json={},
                                         headers={"x-apikey": "no-such-key-anywhere"})
    assert_status(response, 401)


@pytest.mark.parametrize("header", ["x-apikey", "X-APIKEY", "X-ApiKey"])
async def test_key_header_name_is_case_insensitive(live: LiveDocbase, header: str) -> None:
    response = await live.client.get("/rest/people", headers={header: live.auth()["x-apikey"]})
    assert response.status_code == 200


async def test_key_as_query_parameter(live: LiveDocbase) -> None:
    response = await live.client.get("/rest/people",
                                     params={"apikey": live.auth()["x-apikey"]})
    assert response.status_code == 200


async def test_malformed_bearer_token_is_401_with_a_challenge(live: LiveDocbase) -> None:
    response = await live.client.get("/rest/people", headers={"Authorization": "Bearer x.y.z"})
    assert_status(response, 401)
    assert response.headers["www-authenticate"].startswith('Bearer realm="docbase"')


async def test_expired_key_is_401(live: LiveDocbase) -> None:
    raw = await live.key(expires="2000-01-01T00:00:00Z")
    assert_status(await live.client.get("/rest/people", headers={"x-apikey": raw}), 401)


async def test_revoked_key_is_401_at_once(live: LiveDocbase) -> None:
    raw = await live.key()
    assert (await live.client.get("/rest/people", headers={"x-apikey": raw})).status_code == 200
    await auth.revoke_key(live.db, raw)
    response = await live.client.get("/rest/people", headers={"x-apikey": raw})
    assert_status(response, 401)
    assert "revoked" in response.json()["message"]


async def test_use_is_recorded_as_last_used(live: LiveDocbase) -> None:
    raw = await live.key(description="recorded")
    await live.client.get("/rest/people", headers={"x-apikey": raw})
    [key] = [k for k in await auth.list_keys(live.db) if k.description == "recorded"]
    assert key.last_used is not None


async def test_scoped_key_reaches_only_its_paths_and_methods(live: LiveDocbase) -> None:
    raw, key = await auth.create_key(live.db, paths=["/rest/customers/**"],
                                methods=["GET", "POST"])
    scoped = {"x-apikey": raw}
    created = await live.client.post("/rest/customers", json={"n": 1}, headers=scoped)
    assert created.status_code == 201
    # a scoped key writes as its own owner (docs/access.md, "Owners of API keys")
    assert key.owner.startswith("key:")
    assert created.json()["_createdby"] == key.owner
    document_id = created.json()["_id"]
    assert (await live.client.get(f"/rest/customers/{document_id}",
                                  headers=scoped)).status_code == 200
    assert (await live.client.get("/rest/customers", headers=scoped)).status_code == 200
    assert_status(await live.client.get("/rest/orders", headers=scoped), 403)
    assert_status(await live.client.get("/rest/_meta", headers=scoped), 403)
    assert_status(await live.client.put(f"/rest/customers/{document_id}", json={},
                                        headers=scoped), 403)
    assert_status(await live.client.delete(f"/rest/customers/{document_id}", headers=scoped),
                  403)


async def test_scope_applies_to_the_overridden_method(live: LiveDocbase) -> None:
    raw = await live.key(paths=["/rest/customers/**"], methods=["GET", "POST"])
    created = await live.client.post("/rest/customers", json={"n": 1}, headers={"x-apikey": raw})
    response = await live.client.post(f"/rest/customers/{created.json()['_id']}",
                                      headers={"x-apikey": raw,
                                               "X-HTTP-Method-Override": "DELETE"})
    assert_status(response, 403)


async def test_scoped_key_may_not_delete_by_query(live: LiveDocbase) -> None:
    raw = await live.key(paths=["/rest/customers/**"])
    await live.client.post("/rest/customers", json=[{"n": 1}], headers={"x-apikey": raw})
    response = await live.client.delete("/rest/customers/*", params={"q": "{}"},
                                        headers={"x-apikey": raw})
    assert_status(response, 403)
    remaining = await live.client.get("/rest/customers", headers={"x-apikey": raw})
    assert len(remaining.json()) == 1
    ids = [remaining.json()[0]["_id"]]
    by_ids = await live.client.request("DELETE", "/rest/customers/*", json=ids,
                                       headers={"x-apikey": raw})
    assert by_ids.json() == {"result": ids}


async def test_key_of_one_database_is_401_on_another(live: LiveDocbase) -> None:
    main, other = live.auth("main"), live.auth("other")
    assert (await live.client.get("/db/main/rest/people", headers=main)).status_code == 200
    assert (await live.client.get("/db/other/rest/people", headers=other)).status_code == 200
    assert_status(await live.client.get("/db/other/rest/people", headers=main), 401)
    assert_status(await live.client.get("/db/main/rest/people", headers=other), 401)
    assert_status(await live.client.get("/rest/people", headers=other), 401)  # default: main


async def test_databases_hold_their_own_documents(live: LiveDocbase) -> None:
    await live.client.post("/db/other/rest/people", json={"name": "Other"},
                           headers=live.auth("other"))
    await live.client.post("/rest/people", json={"name": "Main"}, headers=live.auth("main"))
    main = await live.client.get("/db/main/rest/people", headers=live.auth("main"))
    other = await live.client.get("/db/other/rest/people", headers=live.auth("other"))
    assert [d["name"] for d in main.json()] == ["Main"]
    assert [d["name"] for d in other.json()] == ["Other"]


async def test_database_selected_by_host_name(live: LiveDocbase) -> None:
    other = {**live.auth("other"), "Host": "other.docbase.test"}
    await live.client.post("/rest/people", json={"name": "Other"}, headers=other)
    listed = await live.client.get("/rest/people", headers=other)
    assert [d["name"] for d in listed.json()] == ["Other"]
    meta = await live.client.get("/rest/_meta", headers=other)
    assert meta.json()["name"] == "other"
    wrong = await live.client.get("/rest/people",
                                  headers={**live.auth("main"), "Host": "other.docbase.test"})
    assert_status(wrong, 401)


async def test_an_unknown_database_answers_like_a_real_one_to_strangers(
        live: LiveDocbase) -> None:
    """Issue 30: ``/db/<name>`` answered 404 for an unknown name, 401 for a real one."""
    def seen(answer: Any) -> tuple[Any, ...]:
        body = answer.json() if answer.content else None
        return (answer.status_code, body, answer.headers.get("www-authenticate"),
                answer.headers.get("access-control-allow-origin"))

    preflight = {"Origin": "https://app.example.com", "Access-Control-Request-Method": "GET"}
    for method, path, headers in [
        ("GET", "/rest/people", {}),
        ("GET", "/rest/people", live.auth("main")),
        ("GET", "/rest/people", {"Authorization": "Bearer a.b.c"}),
        ("POST", "/rest/people", {}),
        ("POST", "/auth/login", {}),
        ("GET", "/auth/userinfo", {}),
        ("GET", "/media/" + "0" * 24, {}),
        ("POST", "/mail", {}),
        ("OPTIONS", "/rest/people", preflight),
        ("OPTIONS", "/rest/people", {}),
    ]:
        body = {"email": "ann@example.com", "password": "long enough"} if "login" in path \
            else None
        real = await live.client.request(method, "/db/other" + path, headers=headers, json=body)
        unknown = await live.client.request(method, "/db/nope" + path, headers=headers,
                                            json=body)
        assert seen(real) == seen(unknown), (method, path, headers)
        assert real.status_code in (400, 401, 403, 404, 204), real.text
        by_host = await live.client.request(
            method, path, headers={**headers, "Host": "nope.docbase.test"}, json=body)
        real_host = await live.client.request(
            method, path, headers={**headers, "Host": "other.docbase.test"}, json=body)
        assert seen(by_host) == seen(real_host), (method, path, headers)


