"""URL parameters, ``If-Match`` and ``ETag``: request details turned into facade arguments."""

from __future__ import annotations

from typing import Any
from urllib.parse import unquote_to_bytes

from litestar import Request

from docbase.core.collection import Collection
from docbase.core.errors import InvalidQuery, VersionMismatch
from docbase.core.query import (
    Filter,
    Query,
    ReadOptions,
    decode_json_param,
    parse_filter,
    parse_list_params,
)
from docbase.core.settings import Limits
from docbase.http.headers import header


def query_params(request: Request[Any, Any, Any]) -> dict[str, list[str]]:
    """Return every URL parameter with all of its values, in order.

    Raises:
        InvalidQuery: the query string is not UTF-8 once percent-decoded (read as it
            is, a ``q`` would silently match the replacement character instead).

    """
    query_string = request.scope["query_string"]
    if not query_string:  # most reads: no parameter to parse
        return {}
    try:
        unquote_to_bytes(query_string).decode()
    except UnicodeDecodeError:
        raise InvalidQuery("the query string is not valid UTF-8") from None
    params: dict[str, list[str]] = request.query_params.dict()
    return params


def list_query(params: dict[str, list[str]], limits: Limits) -> tuple[Query, ReadOptions]:
    """Parse a list read's parameters (``q``, ``h``, ``filter``, ``sort``, ``max``, ...).

    Core's :func:`~docbase.core.query.parse_list_params` does all of it, against the
    database's ``limits`` (page size, ``q``/``h`` depth), decoding ``q`` and ``h`` once.

    Raises:
        InvalidQuery: a malformed parameter or a ``q``/``h`` nested too deeply.

    """
    return parse_list_params(params, limits=limits)


def query_filter(params: dict[str, list[str]], limits: Limits) -> Filter | None:
    """Parse the ``q`` filter of a delete-by-query (``None`` without a non-blank ``q``).

    Raises:
        InvalidQuery: ``q`` is not valid JSON, nests too deeply or is not a valid filter.

    """
    q = decode_json_param(params, "q", limits)  # decoded and depth-checked once
    return None if q is None else parse_filter(q, checked=True)


def etag(document: dict[str, Any]) -> str:
    """Return the ``ETag`` of a stored document version: ``"<_id>-<_version>"``."""
    return f'"{document["_id"]}-{document["_version"]}"'


def _if_match(request: Request[Any, Any, Any], document_id: str) -> set[int] | None:
    given = header(request, "if-match")
    if given is None or given.strip() == "*":
        return None
    versions: set[int] = set()
    for item in given.split(","):
        tag = item.strip().removeprefix("W/").strip('"')
        ident, _, version = tag.rpartition("-")
        if ident.lower() in ("", document_id.lower()) and version.isdigit():
            versions.add(int(version))
    return versions


async def expected_version(
    request: Request[Any, Any, Any], collection: Collection, document_id: str
) -> int | None:
    """Return the ``_version`` an ``If-Match`` request expects (``None`` without one).

    Raises:
        VersionMismatch: no ``If-Match`` entry names the stored version (answered 412
            ``PreconditionFailed`` by :mod:`docbase.http.errors`).

    """
    versions = _if_match(request, document_id)
    if versions is None:
        return None
    if len(versions) == 1:
        return next(iter(versions))
    current = await collection.current_version(document_id)
    if current not in versions:
        raise VersionMismatch(f"document {document_id} is at version {current}, "
                              "which If-Match does not name")
    return int(current)
