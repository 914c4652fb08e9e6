"""A :class:`JsonReply` answers exactly as Litestar's own ``Response`` would."""

from __future__ import annotations

from typing import Any

import pytest
from litestar import Litestar, Request, Response, get, post
from litestar.testing import AsyncTestClient

from docbase.http.replies import JsonReply

BODY = b'[{"_id":"a","n":1}]'
HEADERS = {"etag": '"1"', "Link": '</rest/x?after=abc>; rel="next"', "x-next-cursor": "abc"}


def _app() -> Litestar:
    @get("/short/{status:int}", sync_to_thread=False)
    def short(request: Request[Any, Any, Any]) -> JsonReply:
        return JsonReply(BODY, request.path_params["status"], dict(HEADERS))

    @get("/litestar/{status:int}", sync_to_thread=False)
    def litestar(request: Request[Any, Any, Any]) -> Response[bytes]:
        return Response(BODY, status_code=request.path_params["status"],
                        media_type="application/json", headers=dict(HEADERS))

    @post("/short-created", sync_to_thread=False)
    def short_created() -> JsonReply:
        return JsonReply(b"{}", 201)

    @post("/litestar-created", sync_to_thread=False)
    def litestar_created() -> Response[bytes]:
        return Response(b"{}", status_code=201, media_type="application/json")

    @get("/short-cookie", response_headers={"x-route": "1"}, sync_to_thread=False)
    def short_with_route_header() -> JsonReply:  # a route-level header: Litestar's way
        return JsonReply(BODY)

    return Litestar([short, litestar, short_created, litestar_created,
                     short_with_route_header])


def _raw(response: Any) -> tuple[int, list[tuple[str, str]], bytes]:
    headers = [(name.lower(), value) for name, value in response.headers.multi_items()
               if name.lower() != "date"]
    return response.status_code, headers, response.content


@pytest.mark.parametrize("status", [200, 201, 400, 404])
async def test_a_reply_is_what_litestar_sends(status: int) -> None:
    async with AsyncTestClient(_app()) as client:
        short = _raw(await client.get(f"/short/{status}"))
        theirs = _raw(await client.get(f"/litestar/{status}"))
    assert short == theirs
    assert short[0] == status
    assert ("content-type", "application/json") in short[1]
    assert ("content-length", str(len(BODY))) in short[1]
    assert ("link", HEADERS["Link"]) in short[1]  # names lower-cased, as Litestar does


async def test_a_reply_without_headers_is_what_litestar_sends() -> None:
    async with AsyncTestClient(_app()) as client:
        assert (_raw(await client.post("/short-created"))
                == _raw(await client.post("/litestar-created")))


async def test_route_level_headers_take_litestars_way() -> None:
    async with AsyncTestClient(_app()) as client:
        response = await client.get("/short-cookie")
    assert response.headers["x-route"] == "1"
    assert response.content == BODY


async def test_a_reply_naming_its_own_content_type_takes_litestars_way() -> None:
    reply = JsonReply(BODY, 200, {"content-type": "application/geo+json"})

    @get("/typed", sync_to_thread=False)
    def typed() -> JsonReply:
        return reply

    async with AsyncTestClient(Litestar([typed])) as client:
        response = await client.get("/typed")
    assert response.headers["content-type"] == "application/geo+json"
    assert response.headers.get_list("content-type") == ["application/geo+json"]
    assert response.content == BODY
