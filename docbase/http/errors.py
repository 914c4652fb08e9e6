"""The one place that turns exceptions into HTTP error responses.

Every error is JSON ``{"name", "message", "status"}`` (plus ``"list"`` for a
:class:`~docbase.core.errors.ValidationFailed`). A :class:`DocbaseError` answers with
its class name and its ``status``; Litestar's own exceptions (unknown route 404, wrong
method 405, ...) answer in the same shape; anything else is logged and answers a bare
500 that reveals nothing about the failure.
"""

from __future__ import annotations

import logging
from http import HTTPStatus
from typing import Any

import msgspec
from litestar import Request, Response
from litestar.exceptions import HTTPException
from litestar.types import ExceptionHandlersMap

from docbase.core.errors import DocbaseError, InvalidQuery, ValidationFailed, VersionMismatch

logger = logging.getLogger("docbase.http")

CORS_STATE = "docbase_cors"
"""``request.state`` key of the CORS headers an error response must carry as well."""


class MethodNotAllowed(DocbaseError):
    """The path exists but does not take this method (or method override)."""

    status = 405


class PreconditionFailed(VersionMismatch):
    """``If-Match`` names a version that is no longer (or never was) the stored one."""

    status = 412


class UnsupportedMediaType(InvalidQuery):
    """The request body has a content type this endpoint does not read."""

    status = 415


_LITESTAR_NAMES = {
    400: "InvalidQuery", 401: "Unauthorized", 403: "Forbidden", 404: "NotFound",
    405: "MethodNotAllowed", 413: "PayloadTooLarge", 415: "UnsupportedMediaType",
    429: "TooManyRequests",
}


def error_response(
    request: Request[Any, Any, Any] | None,
    name: str,
    message: str,
    status: int,
    *,
    extra: dict[str, Any] | None = None,
    headers: dict[str, str] | None = None,
) -> Response[bytes]:
    """Build the JSON error response (with the request's CORS headers, if any)."""
    body: dict[str, Any] = {"name": name, "message": message, "status": status}
    if extra:
        body.update(extra)
    all_headers = dict(headers or {})
    if request is not None:
        all_headers.update(request.state.get(CORS_STATE) or {})
    return Response(msgspec.json.encode(body), status_code=status,
                    media_type="application/json", headers=all_headers)


def docbase_error(request: Request[Any, Any, Any], exc: DocbaseError) -> Response[bytes]:
    """Answer a :class:`DocbaseError` with its class name and status."""
    extra = None
    if isinstance(exc, ValidationFailed):
        extra = {"list": [msgspec.to_builtins(f) for f in exc.fields]}
    if exc.status >= 500:
        logger.error("%s %s: %s: %s", request.method, request.url.path,
                     type(exc).__name__, exc.message, exc_info=exc.__cause__ is not None)
    return error_response(request, type(exc).__name__, exc.message, exc.status, extra=extra)


def litestar_error(request: Request[Any, Any, Any], exc: HTTPException) -> Response[bytes]:
    """Answer one of Litestar's own exceptions (routing, body size, ...) in our shape."""
    status = exc.status_code
    if status >= 500:
        return internal_error(request, exc)
    name = _LITESTAR_NAMES.get(status) or HTTPStatus(status).phrase.replace(" ", "")
    message = exc.detail or HTTPStatus(status).phrase
    if status == 404 and message == "Not Found":
        message = f"no such endpoint: {request.method} {request.url.path}"
    elif status == 405:
        message = f"{request.method} is not allowed on {request.url.path}"
    headers = {k: v for k, v in (exc.headers or {}).items() if k.lower() == "allow"}
    return error_response(request, name, message, status, headers=headers)


def internal_error(request: Request[Any, Any, Any], exc: Exception) -> Response[bytes]:
    """Log an unexpected exception and answer 500 without any detail of it."""
    logger.exception("unhandled error in %s %s", request.method, request.url.path,
                     exc_info=exc)
    return error_response(request, "InternalServerError",
                          "the server failed to answer this request", 500)


EXCEPTION_HANDLERS: ExceptionHandlersMap = {
    DocbaseError: docbase_error,
    HTTPException: litestar_error,
    Exception: internal_error,
}
"""Exception handlers for a Litestar app or router serving docbase."""
