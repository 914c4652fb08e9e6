"""NDJSON and CSV on ``/rest/<c>``: list reads streamed out, bulk inserts read in.

``GET`` with ``Accept: application/x-ndjson`` (one document a line) or ``text/csv`` (a
header row, then one document a row) streams every document the query selects, page by
page through the collection's list read (:mod:`docbase.core.portability.streaming`),
so ``q``, ``h``, ``filter``, ``sort``, ``fields``, scopes and before-read hooks apply as
to a JSON read; ``max``/``$max`` limit it when given, ``limits.export_max`` always.
``POST`` with ``Content-Type: application/x-ndjson`` or ``text/csv`` inserts the lines
or rows all or nothing, as a JSON array would be (``limits.max_body_bytes`` and
``max_bulk`` apply); an error names the line. ``docs/http.md`` states both.
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from typing import Any

import msgspec
from litestar import Request, Response
from litestar.response import Stream

from docbase.core.collection import Collection
from docbase.core.errors import FieldError, ValidationFailed
from docbase.core.portability.streaming import PAGE, stream_pages, stream_query
from docbase.core.portability.tables import (
    csv_columns,
    csv_documents,
    csv_header,
    csv_lines,
    ndjson_documents,
)
from docbase.core.schema.model import FieldType
from docbase.http.bodies import read_bytes
from docbase.http.context import RequestContext
from docbase.http.errors import CORS_STATE
from docbase.http.headers import header
from docbase.http.params import list_query, query_params

HttpRequest = Request[Any, Any, Any]
NDJSON = "application/x-ndjson"
CSV = "text/csv"
_LINE_TYPES = (NDJSON, CSV)
_NOT_COLUMNS = (FieldType.CHILD, FieldType.PASSWORD)


def _media_types(header: str) -> list[str]:
    return [part.partition(";")[0].strip().lower() for part in header.split(",")]


def streamed_type(request: HttpRequest) -> str | None:
    """The line format the ``Accept`` header asks for, unless it prefers JSON first."""
    for media_type in _media_types(header(request, "accept", "")):
        if media_type in _LINE_TYPES:
            return media_type
        if media_type == "application/json":
            return None
    return None


def lines_type(request: HttpRequest) -> str | None:
    """The line format of the request body (its ``Content-Type``), if it is one."""
    media_type = _media_types(header(request, "content-type", ""))[0]
    return media_type if media_type in _LINE_TYPES else None


def _asked_max(params: dict[str, list[str]]) -> bool:
    if "max" in params:
        return True
    h = (params.get("h") or [""])[-1]
    try:
        hints = msgspec.json.decode(h) if h else None
    except msgspec.DecodeError:
        return False  # list_query has refused it already
    return isinstance(hints, dict) and "$max" in hints


async def stream_many(request: HttpRequest, ctx: RequestContext, coll: Collection,
                      media_type: str) -> Response[Any]:
    """Stream the documents a list read selects as NDJSON or CSV.

    The first page is read before the answer starts, so a refused read (bad query,
    forbidden, strict mode) is an ordinary JSON error.
    """
    limits = ctx.database.limits
    params = query_params(request)
    query, options = list_query(params, limits)
    query = stream_query(query, options, asked=_asked_max(params))
    pages = stream_pages(coll, query, options, export_max=limits.export_max,
                         page=min(PAGE, limits.max_page))
    first: list[Any] = await anext(pages, [])
    if media_type == NDJSON:
        body = _ndjson(first, pages)
    else:
        schema = await ctx.database.schemas.get(coll.name)
        declared = [] if schema is None or query.projection is not None else ["_id"] + [
            f.name for f in schema.fields if f.type not in _NOT_COLUMNS]
        decoded = [_dict(d) for d in first]
        body = _csv(decoded, csv_columns(decoded, declared), pages)
    headers = dict(request.state.get(CORS_STATE) or {})
    return Stream(body, media_type=media_type, headers=headers)


def _dict(document: Any) -> dict[str, Any]:
    if isinstance(document, msgspec.Raw):
        decoded: dict[str, Any] = msgspec.json.decode(document)
        return decoded
    return dict(document)


async def _ndjson(first: list[Any], rest: AsyncIterator[list[Any]]) -> AsyncIterator[bytes]:
    yield b"".join(msgspec.json.encode(d) + b"\n" for d in first)
    async for page in rest:
        yield b"".join(msgspec.json.encode(d) + b"\n" for d in page)


async def _csv(first: list[dict[str, Any]], columns: list[str],
               rest: AsyncIterator[list[Any]]) -> AsyncIterator[bytes]:
    """Rows under the columns of the first page (the schema's fields, then the keys seen)."""
    yield csv_header(columns) + b"".join(csv_lines(first, columns))
    async for page in rest:
        yield b"".join(csv_lines((_dict(d) for d in page), columns))


async def create_many(request: HttpRequest, ctx: RequestContext, coll: Collection,
                      media_type: str) -> Response[bytes]:
    """Insert the NDJSON lines or CSV rows of the body, all or nothing."""
    ctx.require_method("POST")
    limits = ctx.database.limits
    raw = await read_bytes(request, limits.max_body_bytes)
    read = ndjson_documents if media_type == NDJSON else csv_documents
    numbered = read(raw, limits.max_body_depth)
    lines = [number for number, _ in numbered]
    try:
        created = await coll.insert_many([document for _, document in numbered])
    except ValidationFailed as exc:
        raise by_line(exc, lines) from None
    headers = dict(request.state.get(CORS_STATE) or {})
    return Response(msgspec.json.encode(created), status_code=201,
                    media_type="application/json", headers=headers)


def by_line(error: ValidationFailed, lines: list[int]) -> ValidationFailed:
    """The bulk insert's refusal with each ``<index>.<field>`` as ``line <n>.<field>``."""
    fields = []
    for field in error.fields:
        index, _, name = field.field.partition(".")
        line = lines[int(index)] if index.isdigit() and int(index) < len(lines) else None
        fields.append(FieldError(f"line {line}.{name}" if line else field.field,
                                 field.message))
    first = fields[0].field.split(".")[0] if fields else "a line"
    return ValidationFailed(f"{first}: {error.message}", fields)


__all__ = ["by_line", "create_many", "lines_type", "stream_many", "streamed_type"]
