"""Every error status of docs/http.md that exists so far, as JSON, over real HTTPS."""

from __future__ import annotations

from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest

from docbase import BackendError, Database, HookPoint, Limits, ValidationFailed, WriteEvent
from docbase.core.errors import FieldError
from docbase.http.testing import LiveDocbase, live_docbase

LIMITS = Limits(max_page=50, max_bulk=5, max_body_bytes=2000, max_query_depth=4)
ID = "5f0c0e0c0e0c0e0c0e0c0e0c"


@pytest.fixture
async def live(stores: Any, tmp_path: Path) -> AsyncIterator[LiveDocbase]:
    database = Database(*stores, name="main", limits=LIMITS)
    async with live_docbase({"main": database}, tmp_path) as running:
        yield running


def assert_error(response: Any, status: int, name: str | None = None) -> dict[str, Any]:
    assert response.status_code == status, response.text
    assert response.headers["content-type"].startswith("application/json")
    body: dict[str, Any] = response.json()
    assert body["status"] == status
    assert isinstance(body["message"], str)
    assert body["message"]
    if name is not None:
        assert body["name"] == name
    return body


async def one(live: LiveDocbase) -> str:
    response = await live.client.post("/rest/people", json={"n": 1}, headers=live.auth())
    document_id: str = response.json()["_id"]
    return document_id


@pytest.mark.parametrize("method", ["POST", "PUT", "PATCH"])
async def test_bad_json_is_400(live: LiveDocbase, method: str) -> None:
    path = "/rest/people" if method == "POST" else f"/rest/people/{await one(live)}"
    response = await live.client.request(method, path, content=b'{"name": "Joe",',
                                         headers={**live.auth(),
                                                  "content-type": "application/json"})
    assert_error(response, 400, "InvalidQuery")


@pytest.mark.parametrize("body", ['"text"', "42", "null", "true"])
async def test_non_document_bodies_are_400(live: LiveDocbase, body: str) -> None:
    response = await live.client.post("/rest/people", content=body.encode(),
                                      headers={**live.auth(), "content-type": "application/json"})
    assert_error(response, 400)


async def test_empty_post_body_is_400(live: LiveDocbase) -> None:
    assert_error(await live.client.post("/rest/people", headers=live.auth()), 400)


async def test_update_body_must_be_an_object(live: LiveDocbase) -> None:
    response = await live.client.put(f"/rest/people/{await one(live)}", json=[1, 2],
                                     headers=live.auth())
    assert_error(response, 400)


@pytest.mark.parametrize("body", [{"$rename": {"a": "b"}}, {"$inc": {"n": "many"}}])
async def test_bad_update_operators_are_400(live: LiveDocbase, body: dict[str, Any]) -> None:
    response = await live.client.put(f"/rest/people/{await one(live)}", json=body,
                                     headers=live.auth())
    assert_error(response, 400)


@pytest.mark.parametrize(("method", "path"), [
    ("GET", "/rest/people/123"), ("PUT", "/rest/people/not-an-id"),
    ("PATCH", "/rest/people/zzzzzzzzzzzzzzzzzzzzzzzz"), ("DELETE", "/rest/people/12345"),
    ("GET", "/rest/people/123/orders"), ("GET", f"/rest/people/{ID}/orders/xyz"),
])
async def test_bad_object_id_is_400(live: LiveDocbase, method: str, path: str) -> None:
    body = {"json": {"a": 1}} if method in ("PUT", "PATCH") else {}
    response = await live.client.request(method, path, headers=live.auth(), **body)
    assert_error(response, 400, "InvalidId")


async def test_delete_array_with_a_bad_id_is_400(live: LiveDocbase) -> None:
    response = await live.client.request("DELETE", "/rest/people/*", json=[ID, "nope"],
                                         headers=live.auth())
    assert_error(response, 400, "InvalidId")


@pytest.mark.parametrize("body", [None, {"ids": []}, [1, 2]])
async def test_delete_star_needs_an_array_of_ids_or_q(live: LiveDocbase, body: Any) -> None:
    response = await live.client.request("DELETE", "/rest/people/*", json=body,
                                         headers=live.auth())
    assert_error(response, 400)


@pytest.mark.parametrize("collection", ["_apikeys", "_relations", "bad name", "a" * 65])
async def test_system_and_invalid_collection_names_are_400(
    live: LiveDocbase, collection: str
) -> None:
    assert_error(await live.client.get(f"/rest/{collection}", headers=live.auth()), 400)


@pytest.mark.parametrize("method", ["GET", "PUT", "PATCH", "DELETE"])
async def test_unknown_document_is_404(live: LiveDocbase, method: str) -> None:
    body = {"json": {"a": 1}} if method in ("PUT", "PATCH") else {}
    response = await live.client.request(method, f"/rest/people/{ID}", headers=live.auth(),
                                         **body)
    assert_error(response, 404, "NotFound")


async def test_unknown_child_is_404(live: LiveDocbase) -> None:
    parent = await one(live)
    response = await live.client.get(f"/rest/people/{parent}/orders/{ID}", headers=live.auth())
    assert_error(response, 404, "NotFound")


@pytest.mark.parametrize("path", ["/", "/nothing", "/rest", "/rest/a/b/c/d/e", "/db/main/x"])
async def test_unknown_endpoint_is_404_json(live: LiveDocbase, path: str) -> None:
    assert_error(await live.client.get(path, headers=live.auth()), 404, "NotFound")


@pytest.mark.parametrize(("method", "path"), [
    ("PUT", "/rest/people"), ("DELETE", "/rest/people"), ("PATCH", "/rest/people"),
    ("POST", "/rest/_meta"), ("DELETE", "/health"),
])
async def test_wrong_method_is_405_json(live: LiveDocbase, method: str, path: str) -> None:
    assert_error(await live.client.request(method, path, headers=live.auth()), 405,
                 "MethodNotAllowed")


async def test_post_to_a_document_without_override_is_405(live: LiveDocbase) -> None:
    response = await live.client.post(f"/rest/people/{await one(live)}", json={},
                                      headers=live.auth())
    assert_error(response, 405, "MethodNotAllowed")


@pytest.mark.parametrize("value", ["GET", "POST", "OPTIONS", "TRACE", ""])
async def test_other_method_override_values_are_400(live: LiveDocbase, value: str) -> None:
    response = await live.client.post(f"/rest/people/{await one(live)}", json={},
                                      headers={**live.auth(), "X-HTTP-Method-Override": value})
    assert_error(response, 400)


async def test_override_to_a_method_the_path_lacks_is_405(live: LiveDocbase) -> None:
    response = await live.client.post("/rest/people", json={"a": 1},
                                      headers={**live.auth(), "X-HTTP-Method-Override": "PUT"})
    assert_error(response, 405)


async def test_unsupported_content_type_is_415(live: LiveDocbase) -> None:
    response = await live.client.post("/rest/people", content=b"<a/>",
                                      headers={**live.auth(), "content-type": "application/xml"})
    assert_error(response, 415, "UnsupportedMediaType")


async def test_body_over_the_limit_by_content_length_is_413(live: LiveDocbase) -> None:
    response = await live.client.post("/rest/people", json={"text": "x" * 5000},
                                      headers=live.auth())
    assert_error(response, 413, "PayloadTooLarge")


async def test_streamed_body_over_the_limit_is_413(live: LiveDocbase) -> None:
    async def chunks() -> AsyncIterator[bytes]:
        yield b'{"text": "'
        for _ in range(10):
            yield b"x" * 500
        yield b'"}'

    response = await live.client.post("/rest/people", content=chunks(),
                                      headers={**live.auth(), "content-type": "application/json"})
    assert "content-length" not in response.request.headers
    assert_error(response, 413, "PayloadTooLarge")
    assert (await live.client.get("/rest/people", headers=live.auth())).json() == []


async def test_bulk_insert_over_the_limit_is_413(live: LiveDocbase) -> None:
    response = await live.client.post("/rest/people", json=[{"n": i} for i in range(6)],
                                      headers=live.auth())
    assert_error(response, 413)
    assert (await live.client.get("/rest/people", headers=live.auth())).json() == []


async def test_bulk_delete_over_the_limit_is_413(live: LiveDocbase) -> None:
    response = await live.client.request("DELETE", "/rest/people/*", json=[ID] * 6,
                                         headers=live.auth())
    assert_error(response, 413)


@pytest.mark.parametrize("params", [{"max": "51"}, {"h": '{"$max": 100}'}])
async def test_max_over_the_limit_is_400(live: LiveDocbase, params: dict[str, str]) -> None:
    response = await live.client.get("/rest/people", params=params, headers=live.auth())
    assert_error(response, 400)


async def test_query_deeper_than_the_limit_is_400(live: LiveDocbase) -> None:
    ok = '{"$or": [{"a": {"$gt": 1}}]}'
    deep = '{"$or": [{"$and": [{"a": {"$gt": 1}}]}]}'
    assert (await live.client.get("/rest/people", params={"q": ok},
                                  headers=live.auth())).status_code == 200
    response = await live.client.get("/rest/people", params={"q": deep}, headers=live.auth())
    assert_error(response, 400)
    response = await live.client.delete("/rest/people/*", params={"q": deep},
                                        headers=live.auth())
    assert_error(response, 400)


@pytest.mark.parametrize("params", [
    {"q": "{bad json"}, {"q": '{"$where": "1"}'}, {"q": '{"a": {"$foo": 1}}'}, {"q": "[1]"},
    {"h": '{"$fields": {"a": 1, "b": 0}}'}, {"h": '{"$bogus": 1}'}, {"skip": "-1"},
    {"max": "many"}, {"totals": "maybe"}, {"sort": "a", "dir": "sideways"},
    {"aggregate": "MEDIAN:a"}, {"metafields": "perhaps"},
])
async def test_malformed_list_parameters_are_400(
    live: LiveDocbase, params: dict[str, str]
) -> None:
    response = await live.client.get("/rest/people", params=params, headers=live.auth())
    assert_error(response, 400, "InvalidQuery")


async def test_update_meeting_a_value_of_the_wrong_type_is_409(live: LiveDocbase) -> None:
    created = await live.client.post("/rest/people", json={"name": "Joe"}, headers=live.auth())
    response = await live.client.put(f"/rest/people/{created.json()['_id']}",
                                     json={"$inc": {"name": 1}}, headers=live.auth())
    assert_error(response, 409, "Conflict")


async def test_duplicate_id_conflict_is_409(live: LiveDocbase) -> None:
    async def reuse_id(event: WriteEvent) -> None:
        event.documents[0]["_id"] = taken

    taken = await one(live)
    live.db.hooks.on(HookPoint.BEFORE_INSERT, reuse_id)
    response = await live.client.post("/rest/people", json={"n": 2}, headers=live.auth())
    assert_error(response, 409, "Conflict")


async def test_validation_failure_is_422_with_field_list(live: LiveDocbase) -> None:
    async def refuse(event: WriteEvent) -> None:
        raise ValidationFailed("invalid document",
                               [FieldError("email", ("not a valid email",))])

    live.db.hooks.on(HookPoint.BEFORE_INSERT, refuse, collection="people")
    response = await live.client.post("/rest/people", json={"email": "x"}, headers=live.auth())
    body = assert_error(response, 422, "ValidationFailed")
    assert body["list"] == [{"field": "email", "message": ["not a valid email"]}]


async def test_backend_failure_is_503(live: LiveDocbase) -> None:
    async def down(event: WriteEvent) -> None:
        raise BackendError("the database server is unreachable")

    live.db.hooks.on(HookPoint.BEFORE_INSERT, down)
    response = await live.client.post("/rest/people", json={}, headers=live.auth())
    assert_error(response, 503, "BackendError")


async def test_unexpected_failure_is_500_without_details(
    live: LiveDocbase, caplog: pytest.LogCaptureFixture
) -> None:
    async def crash(event: WriteEvent) -> None:
        raise RuntimeError("secret internal detail /etc/passwd")

    live.db.hooks.on(HookPoint.BEFORE_INSERT, crash)
    response = await live.client.post("/rest/people", json={}, headers=live.auth())
    body = assert_error(response, 500, "InternalServerError")
    assert "secret" not in response.text
    assert "Traceback" not in response.text
    assert set(body) == {"name", "message", "status"}
    assert "secret internal detail" in caplog.text


async def test_success_bodies_never_carry_a_message_key(live: LiveDocbase) -> None:
    response = await live.client.post("/rest/people", json={"n": 1}, headers=live.auth())
    assert "message" not in response.json()
    listed = await live.client.get("/rest/people", params={"totals": "true"},
                                   headers=live.auth())
    assert "message" not in listed.json()
