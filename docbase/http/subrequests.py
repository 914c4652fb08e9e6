"""One request of a batch, run through the application as if it had been sent alone.

:class:`SubRequests` builds an ASGI scope for each request of a batch from the batch's
own (scheme, server, client, host and credential: the ``x-apikey`` or bearer token the
batch was sent with, from a header or a parameter), the request's method, path, body
and passed headers (``If-Match``, ...), calls the Litestar application with it, and
reads the answer back. Routing, the credential check, authorization, validation, hooks
and the write pipeline are those of a request sent alone; nothing is special-cased.
Two decodings are spared: the request's JSON body goes with its bytes decoded already
(``DECODED_BODY``, read by :func:`~docbase.http.bodies.read_json`, which still checks
its size and bounds), and the answer is kept as the bytes the application sent, decoded
only if a reference or a failure looks into it.
"""

from __future__ import annotations

from typing import Any
from urllib.parse import quote, unquote

import msgspec
from litestar import Request

from docbase.core.batch.references import Answer
from docbase.core.batch.requests import BatchRequest
from docbase.http.bodies import DECODED_BODY
from docbase.http.context import raw_key, raw_token

_CREDENTIAL_HEADERS = frozenset({b"host", b"origin", b"user-agent", b"x-forwarded-for",
                                 b"x-forwarded-proto"})
_JSON = (b"content-type", b"application/json")
_QUERY_SAFE = "".join(map(chr, range(0x21, 0x7F)))
"""Kept as written in a query string; the rest (spaces, controls, non-ASCII) is
percent-encoded as UTF-8, as a client sends it on the wire."""


class SubRequests:
    """Runs requests of a batch with the batch's credential, inside its application."""

    def __init__(self, request: Request[Any, Any, Any], prefix: str) -> None:
        """``prefix``: the batch's base URL path (``/db/<name>`` or empty)."""
        self.app = request.app
        self.parent = request.scope
        self.prefix = prefix
        headers = [(name, value) for name, value in request.scope["headers"]
                   if name.lower() in _CREDENTIAL_HEADERS]
        key, token = raw_key(request), raw_token(request)
        if key:
            headers.append((b"x-apikey", key.encode("latin-1")))
        elif token:
            headers.append((b"authorization", f"Bearer {token}".encode("latin-1")))
        self.headers = headers

    async def perform(self, request: BatchRequest, path: str, body: Any) -> Answer:
        """Run ``request`` (``path`` and ``body`` with references resolved)."""
        raw = b"" if body is msgspec.UNSET else msgspec.json.encode(body)
        route, _, query = path.partition("?")
        headers = [*self.headers,
                   *((name.encode("latin-1"), value.encode("latin-1"))
                     for name, value in request.passed_headers())]
        if raw:
            headers += [_JSON, (b"content-length", str(len(raw)).encode())]
        full = self.prefix + route
        scope: dict[str, Any] = {
            "type": "http", "asgi": self.parent.get("asgi", {"version": "3.0"}),
            "http_version": self.parent.get("http_version", "1.1"),
            "method": request.method.upper(), "scheme": self.parent.get("scheme", "https"),
            "server": self.parent.get("server"), "client": self.parent.get("client"),
            "root_path": self.parent.get("root_path", ""), "path": unquote(full),
            "raw_path": full.encode("latin-1", "replace"),
            "query_string": quote(query, safe=_QUERY_SAFE).encode("ascii"),
            "headers": headers,
            "state": {},
        }
        if raw:
            scope[DECODED_BODY] = body  # a copy of its own (references.resolve_body)
        return await _call(self.app, scope, raw)


async def _call(app: Any, scope: dict[str, Any], body: bytes) -> Answer:
    sent = False
    status = 500
    chunks: list[bytes] = []

    async def receive() -> dict[str, Any]:
        nonlocal sent
        if sent:
            return {"type": "http.disconnect"}
        sent = True
        return {"type": "http.request", "body": body, "more_body": False}

    async def send(message: dict[str, Any]) -> None:
        nonlocal status
        if message["type"] == "http.response.start":
            status = int(message["status"])
        elif message["type"] == "http.response.body":
            chunks.append(message.get("body", b""))

    await app(scope, receive, send)
    return Answer.encoded(status, b"".join(chunks))
