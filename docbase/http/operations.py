"""What each ``/rest`` operation does, shared by documents and child documents.

Each function translates one request into :class:`~docbase.core.database.Collection`
calls and shapes the answer; the route handlers in :mod:`docbase.http.rest` only pick
the collection.
"""

from __future__ import annotations

from typing import Any, Literal

import msgspec
from litestar import Request, Response

from docbase.core.collection import Collection
from docbase.core.documents import read_shape
from docbase.core.errors import DocbaseError, InvalidQuery
from docbase.core.query import parse_flag
from docbase.core.request_schemas import OneSchemaRead
from docbase.http import tabular
from docbase.http.bodies import documents_body, object_body, read_json
from docbase.http.context import RequestContext
from docbase.http.errors import CORS_STATE, MethodNotAllowed, error_body
from docbase.http.paging import next_page_headers
from docbase.http.params import (
    etag,
    expected_version,
    list_query,
    query_filter,
    query_params,
)
from docbase.http.replies import JsonReply

HttpRequest = Request[Any, Any, Any]


def json_response(
    request: HttpRequest, content: Any, status: int = 200, tag: str | None = None,
    extra: dict[str, str] | None = None,
) -> Response[bytes]:
    """Encode ``content`` as JSON, with the request's CORS headers, an ``ETag``, ``extra``."""
    # the scope's state as it is: Litestar's ``request.state`` builds a State (and a lock)
    headers: dict[str, str] = dict(request.scope.get("state", {}).get(CORS_STATE) or {})
    if extra:
        headers.update(extra)
    if tag is not None:
        headers["etag"] = tag
    return JsonReply(msgspec.json.encode(content), status, headers)


async def read_many(request: HttpRequest, ctx: RequestContext, coll: Collection) -> Response[bytes]:
    """List documents: array, totals, count, groups or aggregates, as the URL asks.

    Asked for NDJSON or CSV (``Accept``), every selected document is streamed instead.
    A page with a next one tells its cursor in headers (:mod:`docbase.http.paging`).
    """
    streamed = tabular.streamed_type(request)
    if streamed is not None:
        return await tabular.stream_many(request, ctx, coll, streamed)
    params = query_params(request)
    query, options = list_query(params, ctx.database.limits)
    answer = await coll.read_page(query, options, encoded=True)
    return json_response(request, answer.body,
                         extra=next_page_headers(request, params, answer.next))


async def read_one(request: HttpRequest, coll: Collection, document_id: str) -> Response[bytes]:
    """One document; ``metafields`` adds system fields, ``fetchchildren`` embeds children."""
    params = query_params(request)
    metafields = parse_flag(params, "metafields")
    document = await coll.get(document_id, metafields=True, child_metafields=metafields,
                              fetchchildren=parse_flag(params, "fetchchildren"))
    return json_response(request, read_shape(document, metafields=metafields),
                         tag=etag(document))


async def create(request: HttpRequest, ctx: RequestContext, coll: Collection) -> Response[bytes]:
    """Create one document (object body) or many, all or nothing (array body).

    With ``validate=false`` an array is created item by item without the schema's field
    checks; the answer holds each created document, or the error body of an item that
    was refused (a repeated unique value).
    """
    lines = tabular.lines_type(request)
    if lines is not None:
        return await tabular.create_many(request, ctx, coll, lines)
    ctx.require_method("POST")
    validate = parse_flag(query_params(request), "validate", default=True)
    body = documents_body(await read_json(request, ctx.database.limits))
    if isinstance(body, list) and not validate:
        results = await coll.insert_each(body, validate=False)
        return json_response(request, [error_body(r) if isinstance(r, DocbaseError) else r
                                       for r in results], 201)
    if isinstance(body, list):
        return json_response(request, await coll.insert_many(body), 201)
    document = await coll.insert(body)
    return json_response(request, document, 201, tag=etag(document))


async def update(
    request: HttpRequest,
    ctx: RequestContext,
    coll: Collection,
    document_id: str,
    mode: Literal["put", "patch"],
) -> Response[bytes]:
    """PUT (merge plus update operators) or PATCH (only the given properties)."""
    body = object_body(await read_json(request, ctx.database.limits))
    change = coll.update if mode == "put" else coll.patch
    with OneSchemaRead(coll.schema_owner):  # If-Match's read and the write: one request
        expected = await expected_version(request, coll, document_id)
        document = await change(document_id, body, expected_version=expected)
    return json_response(request, document, tag=etag(document))


async def remove(
    request: HttpRequest, ctx: RequestContext, coll: Collection, document_id: str
) -> Response[bytes]:
    """Delete one document, the ids of an array body (``*``), or a query's matches."""
    if document_id != "*":
        with OneSchemaRead(coll.schema_owner):  # If-Match's read and the delete
            expected = await expected_version(request, coll, document_id)
            deleted = await coll.delete(document_id, expected_version=expected)
        return json_response(request, {"result": deleted})
    q = query_filter(query_params(request), ctx.database.limits)
    if q is not None:
        return json_response(request, {"result": await coll.delete_where(q)})
    body = await read_json(request, ctx.database.limits)
    if body is None:
        raise InvalidQuery("DELETE .../* needs a JSON array of ids as its body, or a q "
                           "parameter")
    return json_response(request, {"result": await coll.delete_many(body)})


async def overridden(
    request: HttpRequest, ctx: RequestContext, coll: Collection, document_id: str
) -> Response[bytes]:
    """Run the method a POST names in ``X-HTTP-Method-Override``."""
    if ctx.method in ("PUT", "PATCH"):
        return await update(request, ctx, coll, document_id, "put" if ctx.method == "PUT"
                            else "patch")
    if ctx.method == "DELETE":
        return await remove(request, ctx, coll, document_id)
    raise MethodNotAllowed("POST is not allowed on a document; send PUT, PATCH or DELETE, "
                           "or POST with X-HTTP-Method-Override")
