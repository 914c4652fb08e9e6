"""Request bodies: read within the size limit, decode JSON or a flat form."""

from __future__ import annotations

from typing import Any
from urllib.parse import parse_qsl

from litestar import Request

from docbase.core.errors import InvalidQuery, PayloadTooLarge, UnsupportedMediaType
from docbase.core.query import JSON
from docbase.core.settings import Limits
from docbase.core.untrusted_json import check_bounds, decode_untrusted
from docbase.http.headers import header

_JSON_TYPES = frozenset({"", "application/json", "text/json", "text/plain"})
_FORM = "application/x-www-form-urlencoded"
DECODED_BODY = "docbase.decoded_body"
"""The ASGI scope key under which a request of a batch carries its JSON body decoded
(:mod:`docbase.http.subrequests`): the batch decoded it already, and it is read from
there instead of being decoded again from the bytes the request also carries."""


async def read_bytes(request: Request[Any, Any, Any], limit: int) -> bytes:
    """Read the whole body, refusing it as soon as it is known to exceed ``limit``.

    Raises:
        PayloadTooLarge: ``Content-Length`` or the bytes actually streamed exceed it.

    """
    _check_declared_size(request, limit)
    chunks: list[bytes] = []
    size = 0
    async for chunk in request.stream():
        size += len(chunk)
        if size > limit:
            raise PayloadTooLarge(f"the request body exceeds the limit of {limit} bytes")
        chunks.append(chunk)
    return b"".join(chunks)


def _check_declared_size(request: Request[Any, Any, Any], limit: int) -> None:
    declared = header(request, "content-length")
    if declared is not None and declared.isdigit() and int(declared) > limit:
        raise PayloadTooLarge(f"the request body is {declared} bytes; the limit is {limit}")


_NOT_DECODED = object()


def _media_type(request: Request[Any, Any, Any]) -> str:
    return header(request, "content-type", "").partition(";")[0].strip().lower()


async def read_json(request: Request[Any, Any, Any], limits: Limits) -> JSON:
    """Decode a JSON (or form-encoded) body; an empty body is ``None``.

    Raises:
        PayloadTooLarge: the body exceeds ``limits.max_body_bytes``.
        UnsupportedMediaType: the content type is neither JSON nor a form.
        InvalidQuery: the body is not valid JSON (or UTF-8), nests deeper than
            ``limits.max_body_depth``, holds an integer beyond 64 bits or a NUL.

    """
    media_type = _media_type(request)
    is_form = media_type == _FORM
    if not is_form and media_type not in _JSON_TYPES and not media_type.endswith("+json"):
        raise UnsupportedMediaType(
            f"unsupported content type {media_type!r}: send application/json "
            f"or {_FORM}"
        )
    decoded = request.scope.get(DECODED_BODY, _NOT_DECODED)
    if decoded is not _NOT_DECODED and not is_form:
        _check_declared_size(request, limits.max_body_bytes)
        body: JSON = decoded
    else:
        raw = await read_bytes(request, limits.max_body_bytes)
        if is_form:
            return form_object(raw)
        if not raw.strip():
            return None
        body = decode_untrusted(raw, "the request body")
    check_bounds(body, "the request body", limits.max_body_depth, document=True)
    return body


def form_object(raw: bytes) -> dict[str, JSON]:
    """Decode a form body into a flat object; a repeated name gives an array of strings."""
    try:
        pairs = parse_qsl(raw.decode(), keep_blank_values=True, strict_parsing=False)
    except UnicodeDecodeError as exc:
        raise InvalidQuery("the form body is not valid UTF-8") from exc
    result: dict[str, JSON] = {}
    for name, value in pairs:
        if name in result:
            previous = result[name]
            result[name] = [*previous, value] if isinstance(previous, list) else [previous, value]
        else:
            result[name] = value
    return result


def object_body(body: JSON) -> dict[str, JSON]:
    """Return ``body`` if it is a JSON object, else raise ``InvalidQuery``."""
    if not isinstance(body, dict):
        raise InvalidQuery("the request body must be a JSON object")
    return body


def documents_body(body: JSON) -> dict[str, JSON] | list[JSON]:
    """Return ``body`` if it is an object or an array (of documents), else raise."""
    if isinstance(body, dict | list):
        return body
    raise InvalidQuery("the request body must be a JSON object or an array of objects")
