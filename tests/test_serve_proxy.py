"""The ``--proxy-headers`` check as an ASGI middleware, without a server."""

from __future__ import annotations

import json
from typing import Any

import pytest

from docbase.http.proxy import ForwardedHttpsOnly


class Recorder:
    def __init__(self) -> None:
        self.scopes: list[dict[str, Any]] = []

    async def __call__(self, scope: dict[str, Any], receive: Any, send: Any) -> None:
        self.scopes.append(scope)
        if scope["type"] == "http":
            await send({"type": "http.response.start", "status": 200, "headers": []})
            await send({"type": "http.response.body", "body": b"ok"})


async def _call(app: Any, client: str, headers: dict[str, str],
                path: str = "/rest/people") -> tuple[int, bytes]:
    scope = {
        "type": "http", "scheme": "http", "path": path, "method": "GET",
        "client": (client, 50000),
        "headers": [(k.lower().encode(), v.encode()) for k, v in headers.items()],
    }
    sent: list[dict[str, Any]] = []

    async def receive() -> dict[str, Any]:
        return {"type": "http.request", "body": b"", "more_body": False}

    async def send(message: dict[str, Any]) -> None:
        sent.append(message)

    await app(scope, receive, send)
    return sent[0]["status"], b"".join(m.get("body", b"") for m in sent[1:])


@pytest.fixture
def inner() -> Recorder:
    return Recorder()


async def test_trusted_proxy_with_https_passes_as_https(inner: Recorder) -> None:
    app = ForwardedHttpsOnly(inner, ["127.0.0.1", "10.0.0.0/8"])
    status, _ = await _call(app, "10.2.3.4", {"X-Forwarded-Proto": "https",
                                              "X-Forwarded-For": "203.0.113.9, 10.0.0.7"})
    assert status == 200
    assert inner.scopes[0]["scheme"] == "https"
    assert inner.scopes[0]["client"] == ("203.0.113.9", 0)


@pytest.mark.parametrize(("client", "headers"), [
    ("127.0.0.1", {}),
    ("127.0.0.1", {"X-Forwarded-Proto": "http"}),
    ("127.0.0.1", {"X-Forwarded-Proto": "https, http"}),  # the last proxy hop was plain
    ("192.0.2.1", {"X-Forwarded-Proto": "https"}),
    ("not-an-address", {"X-Forwarded-Proto": "https"}),
])
async def test_anything_else_gets_https_required(
    inner: Recorder, client: str, headers: dict[str, str]
) -> None:
    status, body = await _call(ForwardedHttpsOnly(inner, ["127.0.0.1"]), client, headers)
    assert status == 403
    answer = json.loads(body)
    assert answer["name"] == "HTTPSRequired"
    assert answer["status"] == 403
    assert inner.scopes == []


async def test_health_answers_probes_without_the_header(inner: Recorder) -> None:
    status, _ = await _call(ForwardedHttpsOnly(inner, ["127.0.0.1"]), "192.0.2.1", {},
                            path="/health")
    assert status == 200


async def test_ipv4_mapped_ipv6_peer_is_recognised(inner: Recorder) -> None:
    app = ForwardedHttpsOnly(inner, ["127.0.0.1"])
    status, _ = await _call(app, "::ffff:127.0.0.1", {"X-Forwarded-Proto": "https"})
    assert status == 200


async def test_lifespan_passes_through(inner: Recorder) -> None:
    app = ForwardedHttpsOnly(inner, ["127.0.0.1"])
    await app({"type": "lifespan"}, None, None)
    assert inner.scopes == [{"type": "lifespan"}]
