"""CORS, decided by the API keys of the database a request addresses.

- A preflight (``OPTIONS`` with ``Origin`` and ``Access-Control-Request-Method``)
  carries no key. It succeeds (204) when at least one live key of that database allows
  the origin (its origins hold the origin or ``*``) and the method is one the API
  serves, with the same answer for every path: which paths and methods some key
  allows is never told to a caller without a key (the actual request is checked
  against its own key). Otherwise it is refused with 403.
- An actual request with ``Origin`` gets ``Access-Control-Allow-Origin: <origin>``
  only when its own key allows that origin. A key restricted to other origins is
  refused with 403; a key without an origin list works but gets no CORS headers (the
  browser then hides the response). Errors raised before the key is known carry the
  CORS headers when some key of the database allows the origin.
"""

from __future__ import annotations

from typing import Any

from litestar import Request, Response

from docbase.core.auth import keys_for_origin
from docbase.core.database import Database
from docbase.core.errors import Forbidden
from docbase.http.headers import header

MAX_AGE = 600
"""Seconds a browser may cache a preflight answer."""
CORS_METHODS = frozenset({"GET", "HEAD", "POST", "PUT", "PATCH", "DELETE"})
"""Methods a preflight may ask for."""
ALLOWED_HEADERS = "content-type, x-apikey, authorization, if-match, x-http-method-override"
"""Request headers a preflight allows when the browser does not list any."""


def cors_headers(origin: str) -> dict[str, str]:
    """Return the CORS headers of an actual response to a page of ``origin``."""
    return {
        "access-control-allow-origin": origin,
        "access-control-expose-headers": "ETag, Link, X-Next-Cursor",
        "vary": "Origin",
    }


async def allowed_origin_headers(database: Database, origin: str) -> dict[str, str] | None:
    """CORS headers for ``origin`` when any live key of ``database`` allows it."""
    return cors_headers(origin) if await keys_for_origin(database, origin) else None


async def preflight(
    request: Request[Any, Any, Any], database: Database | None, path: str
) -> Response[bytes]:
    """Answer an ``OPTIONS`` request to ``path`` of ``database`` (preflight or plain).

    The answer does not depend on ``path``; ``None`` stands for a database the server
    does not hold, which answers like one without keys.

    Raises:
        Forbidden: no live key of the database allows this origin, or the method is
            not one the API serves.

    """
    origin = header(request, "origin")
    method = header(request, "access-control-request-method", "").upper()
    if not origin or not method:
        return Response(b"", status_code=204, headers={"allow": "GET, POST, PUT, PATCH, "
                                                               "DELETE, OPTIONS"})
    if (method not in CORS_METHODS or database is None
            or not await keys_for_origin(database, origin)):
        raise Forbidden(f"no API key of this database allows {method} from {origin}")
    requested = header(request, "access-control-request-headers")
    return Response(b"", status_code=204, headers={
        "access-control-allow-origin": origin,
        "access-control-allow-methods": method,
        "access-control-allow-headers": requested or ALLOWED_HEADERS,
        "access-control-max-age": str(MAX_AGE),
        "vary": "Origin",
    })
