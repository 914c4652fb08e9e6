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
