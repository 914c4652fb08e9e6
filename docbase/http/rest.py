"""The ``/rest`` route handlers: each picks a collection and calls one operation.

Every path exists twice: under the database's own base URL (``/rest/...``, database
chosen by host name or the default) and under ``/db/<name>/rest/...``.
"""

from __future__ import annotations

from typing import Any

from litestar import Request, Response, delete, get, patch, post, put, route
from litestar.handlers import HTTPRouteHandler
from litestar.params import FromPath

from docbase.core.hooks.calling import HOOK_LOG
from docbase.core.request_schemas import OneSchemaRead
from docbase.http import operations as op
from docbase.http.context import (
    Ctx,
    ServerDependency,
    answer_options,
    authorized_context,
    documents_context,
)
from docbase.http.idempotency import idempotent
from docbase.http.meta import change_meta, collection_meta, database_meta, openapi

HttpRequest = Request[Any, Any, Any]
Reply = Response[bytes]
Param = FromPath[str]

COLLECTION = "/rest/{collection:str}"
DOCUMENT = COLLECTION + "/{document_id:str}"
CHILDREN = DOCUMENT + "/{field:str}"
CHILD = CHILDREN + "/{child_id:str}"
DATABASE_META = "/rest/_meta"
OPENAPI = "/rest/_openapi"
COLLECTION_META = COLLECTION + "/_meta"
HOOK_LOG_PATH = "/rest/" + HOOK_LOG
IDEMPOTENT = [idempotent]
"""The middleware of every document write: ``Idempotency-Key`` (:mod:`.idempotency`)."""


def paths(path: str) -> list[str]:
    """``path`` under the default/host-routed base URL and under ``/db/<name>``."""
    return [path, "/db/{db_name:str}" + path]


ALL_PATHS = [p for path in (COLLECTION, DOCUMENT, CHILDREN, CHILD, DATABASE_META,
                            COLLECTION_META, OPENAPI, HOOK_LOG_PATH) for p in paths(path)]


@route(ALL_PATHS, http_method=["OPTIONS"], include_in_schema=False)
async def options(request: HttpRequest, docbase_server: ServerDependency) -> Reply:
    """CORS preflight (no key): see :mod:`docbase.http.cors`."""
    return await answer_options(request, docbase_server)


# ----------------------------------------------------------------------- collections


@get(paths(COLLECTION))
async def list_documents(request: HttpRequest) -> Reply:
    """``GET /rest/<c>``: a list read (context and path read directly, as for a get)."""
    ctx = await documents_context(request)
    return await op.read_many(request, ctx, ctx.collection(request.path_params["collection"]))


@post(paths(COLLECTION), middleware=IDEMPOTENT)
async def create_documents(request: HttpRequest) -> Reply:
    """``POST /rest/<c>``: create an object or an array of objects (context read directly)."""
    ctx = await documents_context(request)
    return await op.create(request, ctx, ctx.collection(request.path_params["collection"]))


@get(paths(DOCUMENT))
async def get_document(request: HttpRequest) -> Reply:
    """``GET /rest/<c>/ID`` (context and path read directly: the hottest path)."""
    ctx, path = await documents_context(request), request.path_params
    return await op.read_one(request, ctx.collection(path["collection"]), path["document_id"])


@put(paths(DOCUMENT), middleware=IDEMPOTENT)
async def put_document(
    request: HttpRequest, collection: Param, document_id: Param
) -> Reply:
    """``PUT /rest/<c>/ID``: merge plus update operators."""
    ctx = await documents_context(request)
    return await op.update(request, ctx, ctx.collection(collection), document_id, "put")


@patch(paths(DOCUMENT), middleware=IDEMPOTENT)
async def patch_document(
    request: HttpRequest, collection: Param, document_id: Param
) -> Reply:
    """``PATCH /rest/<c>/ID``: only the given properties."""
    ctx = await documents_context(request)
    return await op.update(request, ctx, ctx.collection(collection), document_id, "patch")


@delete(paths(DOCUMENT), status_code=200, middleware=IDEMPOTENT)
async def delete_document(
    request: HttpRequest, collection: Param, document_id: Param
) -> Reply:
    """``DELETE /rest/<c>/ID``, ``DELETE /rest/<c>/*`` (array body or ``q``)."""
    ctx = await documents_context(request)
    return await op.remove(request, ctx, ctx.collection(collection), document_id)


@post(paths(DOCUMENT), middleware=IDEMPOTENT)
async def override_document(
    request: HttpRequest, collection: Param, document_id: Param
) -> Reply:
    """``POST /rest/<c>/ID`` with ``X-HTTP-Method-Override``."""
    ctx = await documents_context(request)
    return await op.overridden(request, ctx, ctx.collection(collection), document_id)


# ----------------------------------------------------------------------- children


@get(paths(CHILDREN))
async def list_children(
    request: HttpRequest, collection: Param, document_id: Param, field: Param
) -> Reply:
    """``GET /rest/<c>/ID/<sub>``: the parent's children (404 for an unknown parent).

    The read comes first: its authorize stage refuses a principal that may not read
    there before the parent's existence is told.
    """
    ctx = await documents_context(request)
    children = ctx.collection(collection).children(document_id, field)
    with OneSchemaRead(children.schema_owner):  # the read and the parent's: one request
        answer = await op.read_many(request, ctx, children)
        await children.require_parent()
    return answer


@post(paths(CHILDREN), middleware=IDEMPOTENT)
async def create_children(
    request: HttpRequest, collection: Param, document_id: Param, field: Param
) -> Reply:
    """``POST /rest/<c>/ID/<sub>``: create child documents."""
    ctx = await documents_context(request)
    return await op.create(request, ctx, ctx.collection(collection).children(document_id, field))


@get(paths(CHILD))
async def get_child(request: HttpRequest, *, collection: Param,
                    document_id: Param, field: Param, child_id: Param) -> Reply:
    """``GET /rest/<c>/ID/<sub>/ID``."""
    ctx = await documents_context(request)
    children = ctx.collection(collection).children(document_id, field)
    return await op.read_one(request, children, child_id)


@put(paths(CHILD), middleware=IDEMPOTENT)
async def put_child(request: HttpRequest, *, collection: Param,
                    document_id: Param, field: Param, child_id: Param) -> Reply:
    """``PUT /rest/<c>/ID/<sub>/ID``."""
    ctx = await documents_context(request)
    children = ctx.collection(collection).children(document_id, field)
    return await op.update(request, ctx, children, child_id, "put")


@patch(paths(CHILD), middleware=IDEMPOTENT)
async def patch_child(request: HttpRequest, *, collection: Param,
                      document_id: Param, field: Param, child_id: Param) -> Reply:
    """``PATCH /rest/<c>/ID/<sub>/ID``."""
    ctx = await documents_context(request)
    children = ctx.collection(collection).children(document_id, field)
    return await op.update(request, ctx, children, child_id, "patch")


@delete(paths(CHILD), status_code=200, middleware=IDEMPOTENT)
async def delete_child(request: HttpRequest, *, collection: Param,
                       document_id: Param, field: Param, child_id: Param) -> Reply:
    """``DELETE /rest/<c>/ID/<sub>/ID`` (or ``.../*``)."""
    ctx = await documents_context(request)
    children = ctx.collection(collection).children(document_id, field)
    return await op.remove(request, ctx, children, child_id)


@post(paths(CHILD), middleware=IDEMPOTENT)
async def override_child(request: HttpRequest, *, collection: Param,
                         document_id: Param, field: Param, child_id: Param) -> Reply:
    """``POST /rest/<c>/ID/<sub>/ID`` with ``X-HTTP-Method-Override``."""
    ctx = await documents_context(request)
    children = ctx.collection(collection).children(document_id, field)
    return await op.overridden(request, ctx, children, child_id)


# ----------------------------------------------------------------------- metadata


@get(paths(DATABASE_META))
async def get_database_meta(request: HttpRequest, ctx: Ctx) -> Reply:
    """``GET /rest/_meta``."""
    return op.json_response(request, await database_meta(ctx))


@get(paths(OPENAPI))
async def get_openapi(request: HttpRequest, docbase_server: ServerDependency) -> Reply:
    """``GET /rest/_openapi``: the OpenAPI 3.1 document of the current schemas.

    Any valid credential may read it; it describes what that credential may use.
    """
    return op.json_response(request, await openapi(await authorized_context(
        request, docbase_server, description=True)))


@get(paths(COLLECTION_META))
async def get_collection_meta(request: HttpRequest, ctx: Ctx, collection: Param) -> Reply:
    """``GET /rest/<c>/_meta``."""
    return op.json_response(request, await collection_meta(ctx, collection))


@put(paths(COLLECTION_META))
async def put_collection_meta(request: HttpRequest, ctx: Ctx, collection: Param) -> Reply:
    """``PUT /rest/<c>/_meta``: define the collection's schema (full-access key)."""
    return op.json_response(request, await change_meta(request, ctx, collection))


@delete(paths(COLLECTION_META), status_code=200)
async def delete_collection_meta(request: HttpRequest, ctx: Ctx, collection: Param) -> Reply:
    """``DELETE /rest/<c>/_meta``: remove the collection's schema (full-access key)."""
    return op.json_response(request, await change_meta(request, ctx, collection))


@post(paths(COLLECTION_META))
async def override_collection_meta(request: HttpRequest, ctx: Ctx, collection: Param) -> Reply:
    """``POST /rest/<c>/_meta`` with ``X-HTTP-Method-Override: PUT|DELETE``."""
    return op.json_response(request, await change_meta(request, ctx, collection))


@get(paths(HOOK_LOG_PATH))
async def get_hook_log(request: HttpRequest, ctx: Ctx) -> Reply:
    """``GET /rest/_hooklog``: job runs and failed after-hooks (full-access key only)."""
    log = ctx.database.system_collection(HOOK_LOG, ctx.principal)
    return await op.read_many(request, ctx, log)


@get("/health", include_in_schema=False)
async def health() -> Reply:
    """Liveness: answers without a key."""
    return Response(b'{"status":"ok"}', media_type="application/json")


ROUTE_HANDLERS: list[HTTPRouteHandler] = [
    options,  # first: Litestar would otherwise add its own OPTIONS handler to each path
    list_documents, create_documents,
    get_document, put_document, patch_document, delete_document, override_document,
    list_children, create_children,
    get_child, put_child, patch_child, delete_child, override_child,
    get_database_meta, get_openapi, get_collection_meta, put_collection_meta,
    delete_collection_meta, override_collection_meta, get_hook_log,
]
"""Every ``/rest`` handler; they need the ``ctx`` and ``docbase_server`` dependencies."""
