"""The one place that turns exceptions into HTTP error responses.

Every error is JSON ``{"name", "message", "status"}`` (plus ``"list"`` for a
:class:`~docbase.core.errors.ValidationFailed`, and ``"result"``, each message's
outcome, for a :class:`~docbase.core.errors.MailDeliveryError` of ``POST /mail``). A
:class:`DocbaseError` answers with the status :data:`ERROR_STATUSES` gives its class,
looked up along the class hierarchy so a subclass answers like its nearest listed
ancestor, and with its class name (or the name the table gives, ``PreconditionFailed``
for a ``VersionMismatch``). This table, in :mod:`docbase.http.statuses` (no framework:
the remote client reads it back), is the only place that knows HTTP statuses of
docbase errors (``docs/http.md``). Litestar's own exceptions (unknown route 404, wrong
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

from docbase.core.errors import (
    BackendError,
    DocbaseError,
    InvalidToken,
    MailDeliveryError,
    RangeNotSatisfiable,
    TooManyRequests,
    Unauthorized,
    UnsupportedMediaType,
    ValidationFailed,
)
from docbase.http.statuses import (
    ERROR_STATUSES,
    ErrorAnswer,
    MethodNotAllowed,
    NotImplementedHere,
    answer_for,
)

logger = logging.getLogger("docbase.http")

CORS_STATE = "docbase_cors"
"""``request.state`` key of the CORS headers an error response must carry as well."""

__all__ = [
    "BACKEND_RETRY_AFTER",
    "CORS_STATE",
    "ERROR_STATUSES",
    "EXCEPTION_HANDLERS",
    "ErrorAnswer",
    "MethodNotAllowed",
    "NotImplementedHere",
    "UnsupportedMediaType",
    "answer_for",
    "docbase_error",
    "error_body",
    "error_headers",
    "error_response",
    "internal_error",
    "litestar_error",
]


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


BACKEND_RETRY_AFTER = 5
"""Seconds a 503 (storage backend unavailable) asks the client to wait: ``Retry-After``."""


def error_headers(exc: DocbaseError) -> dict[str, str]:
    """Headers of an error answer: 401 a challenge, 429/503 ``Retry-After``, 416 the size."""
    if isinstance(exc, InvalidToken):  # general terms only: RFC 6750's error code
        return {"www-authenticate": 'Bearer realm="docbase", error="invalid_token", '
                                    'error_description="the token is invalid, expired '
                                    'or revoked"'}
    if isinstance(exc, Unauthorized):
        return {"www-authenticate": 'Bearer realm="docbase"'}
    if isinstance(exc, TooManyRequests):
        return {"retry-after": str(exc.retry_after)}
    if isinstance(exc, BackendError):
        return {"retry-after": str(BACKEND_RETRY_AFTER)}
    if isinstance(exc, RangeNotSatisfiable):
        return {"content-range": f"bytes */{exc.size}"}
    return {}


def _extra(exc: DocbaseError) -> dict[str, Any] | None:
    if isinstance(exc, ValidationFailed):
        return {"list": [msgspec.to_builtins(f) for f in exc.fields]}
    if isinstance(exc, MailDeliveryError) and exc.results:
        return {"result": list(exc.results)}
    return None


def error_body(exc: DocbaseError) -> dict[str, Any]:
    """The JSON error body of ``exc``, as an answer of its own would carry it."""
    status, name = answer_for(type(exc))
    return {"name": name, "message": exc.message, "status": status, **(_extra(exc) or {})}


def docbase_error(request: Request[Any, Any, Any], exc: DocbaseError) -> Response[bytes]:
    """Answer a :class:`DocbaseError` with the status and name of :func:`answer_for`."""
    status, name = answer_for(type(exc))
    extra = _extra(exc)
    if status >= 500:
        logger.error("%s %s: %s: %s", request.method, request.url.path,
                     type(exc).__name__, exc.message, exc_info=exc.__cause__ is not None)
    return error_response(request, name or type(exc).__name__, exc.message, status,
                          extra=extra, headers=error_headers(exc))


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
