"""The baseline of the HTTP benchmark: a bare Litestar app answering like docbase would.

Same routes, no database: a fixed document for get-by-id, a fixed list of 100 for the
list read, and the posted body echoed with system fields for create. Serve it with
``docbase.http.serve`` settings (same ASGI server, same TLS) through ``create_app``.
"""

from __future__ import annotations

from typing import Any

import msgspec
from litestar import Litestar, Request, Response, get, post  # noqa: TID251

DOCUMENT: dict[str, Any] = {
    "_id": "5f0c5c3e9d1b2a3c4d5e6f70",
    "name": "Joe",
    "email": "joe@example.com",
    "age": 42,
    "tags": ["a", "b"],
}
PAGE = [DOCUMENT | {"_id": f"5f0c5c3e9d1b2a3c4d5e{i:04x}"} for i in range(100)]
_ENCODE = msgspec.json.Encoder().encode


def _json(body: Any, status: int = 200) -> Response[bytes]:
    return Response(_ENCODE(body), status_code=status, media_type="application/json")


@get("/health", sync_to_thread=False)
def health() -> Response[bytes]:
    return _json({"status": "ok"})


@get("/rest/{collection:str}/{document_id:str}", sync_to_thread=False)
def get_one(collection: str, document_id: str) -> Response[bytes]:
    return _json(DOCUMENT)


@get("/rest/{collection:str}", sync_to_thread=False)
def get_list(collection: str) -> Response[bytes]:
    return _json(PAGE)


@post("/rest/{collection:str}")
async def create(collection: str, request: Request[Any, Any, Any]) -> Response[bytes]:
    body = msgspec.json.decode(await request.body())
    stamp = {"_id": DOCUMENT["_id"], "_version": 0}
    if isinstance(body, list):
        return _json([item | stamp for item in body], status=201)
    return _json(body | stamp, status=201)


def create_app() -> Litestar:
    """The bare app (an app factory, as ASGI servers expect)."""
    return Litestar([health, get_one, get_list, create], openapi_config=None)
