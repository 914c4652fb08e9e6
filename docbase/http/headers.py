"""A request's headers, read from the ASGI scope once per request.

Litestar's ``request.headers`` builds a case-insensitive multidict the first time and
finds it again through the scope's state each time after: a served get asked it five
times (host, method override, key, origin twice) for ~7 µs of its CPU
(``docs/benchmarks.md``, run 13). :func:`header` reads the scope's raw list into a plain
dict the first time (names lower-cased, the first of repeated headers kept, values
decoded as Latin-1: what ``request.headers.get`` answers) and looks names up there.
"""

from __future__ import annotations

from typing import Any, overload

_SCOPE_KEY = "docbase.headers"
"""Where the scope keeps the request's headers as a dict, once read."""


@overload
def header(request: Any, name: str) -> str | None: ...


@overload
def header(request: Any, name: str, default: str) -> str: ...


def header(request: Any, name: str, default: str | None = None) -> str | None:
    """The value of header ``name`` (lower-case) of ``request``, else ``default``."""
    scope = request.scope
    headers: dict[bytes, bytes] | None = scope.get(_SCOPE_KEY)
    if headers is None:
        headers = {key.lower(): value for key, value in reversed(scope["headers"])}
        scope[_SCOPE_KEY] = headers
    value = headers.get(name.encode("latin-1"))
    return default if value is None else value.decode("latin-1")


def bearer_token(request: Any) -> str | None:
    """The token of ``Authorization: Bearer <token>`` (``None``: no such header, or empty)."""
    scheme, _, token = header(request, "authorization", "").strip().partition(" ")
    token = token.strip()
    return token if scheme.lower() == "bearer" and token else None
