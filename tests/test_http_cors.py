"""CORS decided by the database's API keys (see docbase.http.cors), over real HTTPS."""

from __future__ import annotations

import pytest

from docbase.core import auth
from docbase.http.testing import LiveDocbase

APP = "https://app.example.com"
EVIL = "https://evil.example.net"


def preflight(origin: str, method: str = "GET", headers: str = "x-apikey") -> dict[str, str]:
    return {"Origin": origin, "Access-Control-Request-Method": method,
            "Access-Control-Request-Headers": headers}


async def test_preflight_allowed_for_an_origin_of_a_key(live: LiveDocbase) -> None:
    await live.key(origins=[APP], paths=["/rest/people/**"], methods=["GET", "PUT"])
    response = await live.client.options("/rest/people", headers=preflight(APP))
    assert response.status_code == 204
    assert response.headers["access-control-allow-origin"] == APP
    assert response.headers["access-control-allow-methods"] == "GET"
    assert response.headers["access-control-allow-headers"] == "x-apikey"
    assert int(response.headers["access-control-max-age"]) > 0
    assert "Origin" in response.headers["vary"]


async def test_preflight_for_a_method_override_post(live: LiveDocbase) -> None:
    await live.key(origins=[APP], methods=["PUT"])
    response = await live.client.options(f"/rest/people/{'0' * 24}",
                                         headers=preflight(APP, "POST"))
    assert response.status_code == 204


@pytest.mark.parametrize("method", ["GET", "TRACE"])
async def test_preflight_refused_unless_a_key_allows_the_origin(
    live: LiveDocbase, method: str
) -> None:
    await live.key(origins=[APP], paths=["/rest/people/**"], methods=["GET"])
    await live.key()  # a full-access key without origins allows no browser
    origin = EVIL if method == "GET" else APP
    response = await live.client.options("/rest/people", headers=preflight(origin, method))
    assert response.status_code == 403
    assert response.json()["name"] == "Forbidden"
    assert "access-control-allow-origin" not in response.headers


async def test_preflight_tells_nothing_of_a_keys_paths_or_methods(live: LiveDocbase) -> None:
    """Issue 30: an anonymous preflight told which paths and methods some key allows."""
    await live.key(origins=[APP], paths=["/rest/people/**"], methods=["GET"])
    answers = []
    for method, path in [("GET", "/rest/people"), ("DELETE", "/rest/people/" + "0" * 24),
                         ("GET", "/rest/secret"), ("DELETE", "/rest/secret/" + "0" * 24)]:
        response = await live.client.options(path, headers=preflight(APP, method))
        headers = {k: v for k, v in response.headers.items() if k not in ("date",)}
        answers.append((response.status_code, headers | {
            "access-control-allow-methods": "?"}, response.content))
        assert response.headers["access-control-allow-methods"] == method
    assert all(answer == answers[0] for answer in answers), answers
    assert answers[0][0] == 204
    refused = await live.client.delete("/rest/secret/" + "0" * 24, headers={
        "Origin": APP, "x-apikey": await live.key(origins=[APP], paths=["/rest/people/**"])})
    assert refused.status_code == 403  # the actual request is still checked


async def test_wildcard_origin_key_allows_any_origin(live: LiveDocbase) -> None:
    raw = await live.key(origins=["*"], methods=["GET"])
    response = await live.client.options("/rest/people", headers=preflight(EVIL))
    assert response.headers["access-control-allow-origin"] == EVIL
    actual = await live.client.get("/rest/people", headers={"x-apikey": raw, "Origin": EVIL})
    assert actual.headers["access-control-allow-origin"] == EVIL


async def test_revoked_keys_open_no_origin(live: LiveDocbase) -> None:
    raw = await live.key(origins=[APP])
    await auth.revoke_key(live.db, raw)
    response = await live.client.options("/rest/people", headers=preflight(APP))
    assert response.status_code == 403


async def test_options_without_preflight_headers_lists_methods(live: LiveDocbase) -> None:
    response = await live.client.options("/rest/people")
    assert response.status_code == 204
    assert "GET" in response.headers["allow"]


async def test_actual_request_reflects_an_origin_its_key_allows(live: LiveDocbase) -> None:
    raw = await live.key(origins=[APP])
    response = await live.client.post("/rest/people", json={"n": 1},
                                      headers={"x-apikey": raw, "Origin": APP})
    assert response.status_code == 201
    assert response.headers["access-control-allow-origin"] == APP
    assert "etag" in response.headers["access-control-expose-headers"].lower()
    assert "Origin" in response.headers["vary"]


async def test_key_restricted_to_other_origins_is_403(live: LiveDocbase) -> None:
    raw = await live.key(origins=[APP])
    response = await live.client.get("/rest/people", headers={"x-apikey": raw, "Origin": EVIL})
    assert response.status_code == 403
    assert "access-control-allow-origin" not in response.headers


async def test_key_without_origins_works_but_opens_no_cors(live: LiveDocbase) -> None:
    await live.key(origins=[APP])
    response = await live.client.get("/rest/people", headers={**live.auth(), "Origin": APP})
    assert response.status_code == 200
    assert "access-control-allow-origin" not in response.headers


async def test_errors_carry_cors_headers_for_allowed_origins(live: LiveDocbase) -> None:
    raw = await live.key(origins=[APP])
    unknown_key = await live.client.get("/rest/people",
                                        headers={"x-apikey": "wrong-key-value", "Origin": APP})
    assert unknown_key.status_code == 401
    assert unknown_key.headers["access-control-allow-origin"] == APP
    missing = await live.client.get(f"/rest/people/{'0' * 24}",
                                    headers={"x-apikey": raw, "Origin": APP})
    assert missing.status_code == 404
    assert missing.headers["access-control-allow-origin"] == APP


async def test_requests_without_origin_get_no_cors_headers(live: LiveDocbase) -> None:
    await live.key(origins=["*"])
    response = await live.client.get("/rest/people", headers=live.auth())
    assert "access-control-allow-origin" not in response.headers
