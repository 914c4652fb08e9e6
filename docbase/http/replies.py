"""A JSON answer sent the short way: the body and its headers, straight to ASGI.

Litestar turns each :class:`~litestar.Response` a handler returns into an
``ASGIResponse`` through several layers: the response checks its cookies and headers
against ``typing.Mapping`` (an ``isinstance`` that goes through ``typing``'s generic
machinery), copies the headers into a ``MutableScopeHeaders``, then sets the content type
and length on it one ``setdefault`` at a time. For the answers of ``/rest``, which have no
cookies, no background task and only a few plain headers, that was ~10 µs of a served
get's ~100 µs of Python (``docs/benchmarks.md``, run 13). :class:`JsonReply` is such a
response that, when Litestar asks it for its ASGI app, answers with
:class:`_JsonAnswer`, which sends exactly what Litestar would have sent (the same
headers in the same order: the reply's own, then ``content-type`` and
``content-length``; ``tests/test_http_replies.py`` compares the two). Anything else (a
route-level header or cookie, a background task, ``HEAD``, a status without a body)
takes Litestar's own way.
"""

from __future__ import annotations

from typing import Any

from litestar import Response

_CONTENT_TYPE = (b"content-type", b"application/json")
_BODY_HEADERS = frozenset({b"content-type", b"content-length"})


class JsonReply(Response[bytes]):
    """JSON already encoded, with a status and plain headers (no cookies, no tasks)."""

    __slots__ = ()

    def __init__(self, body: bytes, status: int = 200,
                 headers: dict[str, str] | None = None) -> None:
        """Hold ``body`` (encoded JSON), ``status`` and ``headers`` (lower-case names)."""
        # the slots of Response, set as its __init__ would for these arguments
        self.content = body
        self.status_code = status
        self.headers = headers or {}
        self.media_type = "application/json"
        self.background = None
        self.cookies = []
        self.encoding = "utf-8"
        self.response_type_encoders = {}

    def to_asgi_response(self, app: Any, request: Any, *, background: Any = None,
                         cookies: Any = None, encoded_headers: Any = None,
                         headers: Any = None, is_head_response: bool = False,
                         media_type: Any = None, status_code: Any = None,
                         type_encoders: Any = None) -> Any:
        """The short way when nothing but the reply's own parts is asked for."""
        status = self.status_code or 200
        encoded = [(name.lower().encode("latin-1"), value.encode("latin-1"))
                   for name, value in self.headers.items()]
        if (app is None and not background and not cookies and not encoded_headers
                and not headers and not is_head_response and status >= 200
                and status not in (204, 304)
                and not any(name in _BODY_HEADERS for name, _ in encoded)):
            # what Litestar's setdefault of the two adds after the reply's own headers
            encoded += [_CONTENT_TYPE, (b"content-length", str(len(self.content)).encode())]
            return _JsonAnswer(status, self.content, encoded)
        return super().to_asgi_response(
            app, request, background=background, cookies=cookies,
            encoded_headers=encoded_headers, headers=headers,
            is_head_response=is_head_response, media_type=media_type,
            status_code=status_code, type_encoders=type_encoders)


class _JsonAnswer:
    """The ASGI app of a :class:`JsonReply`: a start message and one body message."""

    __slots__ = ("body", "headers", "status")

    def __init__(self, status: int, body: bytes, headers: list[tuple[bytes, bytes]]) -> None:
        self.status, self.body, self.headers = status, body, headers

    async def __call__(self, scope: Any, receive: Any, send: Any) -> None:
        """Send the answer."""
        await send({"type": "http.response.start", "status": self.status,
                    "headers": self.headers})
        await send({"type": "http.response.body", "body": self.body, "more_body": False})
