"""URL parameters, ``If-Match`` and ``ETag``: request details turned into facade arguments."""

from __future__ import annotations

from typing import Any

import msgspec
from litestar import Request

from docbase.core.collection import Collection
from docbase.core.errors import InvalidQuery
from docbase.core.query import JSON, Filter, Query, ReadOptions, parse_filter, parse_json
from docbase.core.query import parse_list_params as _parse_list_params
from docbase.core.settings import Limits
from docbase.http.errors import PreconditionFailed

_TRUE = frozenset({"true", "1", "yes"})
_FALSE = frozenset({"false", "0", "no", ""})


def query_params(request: Request[Any, Any, Any]) -> dict[str, list[str]]:
    """Return every URL parameter with all of its values, in order."""
    params: dict[str, list[str]] = request.query_params.dict()
    return params


def flag(params: dict[str, list[str]], name: str, default: bool = False) -> bool:
    """Read a true/false URL parameter (``true``/``1``/``yes``, ``false``/``0``/``no``)."""
    values = params.get(name)
    if not values:
        return default
    value = values[-1].lower()
    if value in _TRUE:
        return True
    if value in _FALSE:
        return False
    raise InvalidQuery(f"parameter {name!r} must be true or false, not {values[-1]!r}")


def json_depth(value: JSON) -> int:
    """Count how deeply objects and arrays nest in ``value`` (a scalar is 0)."""
    depth, level = 0, [value]
    while containers := [node for node in level if isinstance(node, dict | list)]:
        depth += 1
        level = [child for node in containers
                 for child in (node.values() if isinstance(node, dict) else node)]
    return depth


def _json_params(params: dict[str, list[str]], limits: Limits) -> dict[str, JSON]:
    found: dict[str, JSON] = {}
    for name in ("q", "h"):
        values = params.get(name)
        if values and values[-1].strip():
            found[name] = value = parse_json(values[-1], name)
            if json_depth(value) > limits.max_query_depth:
                raise InvalidQuery(f"{name} is nested deeper than {limits.max_query_depth} "
                                   "levels")
    return found


def list_query(params: dict[str, list[str]], limits: Limits) -> tuple[Query, ReadOptions]:
    """Parse a list read's parameters (``q``, ``h``, ``filter``, ``sort``, ``max``, ...).

    Without ``max`` or ``$max`` a read returns the default 1000 documents, or the
    database's ``limits.max_page`` when that is lower; asking for more is an error.

    Raises:
        InvalidQuery: a malformed parameter or a ``q``/``h`` nested too deeply.

    """
    hints = _json_params(params, limits).get("h")
    query, options = _parse_list_params(params)
    asked = "max" in params or (isinstance(hints, dict) and "$max" in hints)
    if not asked and query.limit is not None and query.limit > limits.max_page:
        query = msgspec.structs.replace(query, limit=limits.max_page)
    return query, options


def query_filter(params: dict[str, list[str]], limits: Limits) -> Filter | None:
    """Parse the ``q`` filter of a delete-by-query (``None`` without a non-blank ``q``)."""
    q = _json_params(params, limits).get("q")
    return None if q is None else parse_filter(q)


def etag(document: dict[str, Any]) -> str:
    """Return the ``ETag`` of a stored document version: ``"<_id>-<_version>"``."""
    return f'"{document["_id"]}-{document["_version"]}"'


def _if_match(request: Request[Any, Any, Any], document_id: str) -> set[int] | None:
    header = request.headers.get("if-match")
    if header is None or header.strip() == "*":
        return None
    versions: set[int] = set()
    for item in header.split(","):
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
        PreconditionFailed: no ``If-Match`` entry names the stored version.

    """
    versions = _if_match(request, document_id)
    if versions is None:
        return None
    if len(versions) == 1:
        return next(iter(versions))
    current = await collection.current_version(document_id)
    if current not in versions:
        raise PreconditionFailed(f"document {document_id} is at version {current}, "
                                 "which If-Match does not name")
    return int(current)
