"""The ``/media`` routes: each hands the request to ``db.media`` (:mod:`docbase.core.media`).

``GET /media/ID`` (or a file name) needs no credential; every other route needs a key
or token whose paths cover it, as ``request_context`` checks. Answers: ``POST /media``
201 ``{"msg": "OK", "uploadid", "ids"}``; ``GET /media/ID`` the bytes
(:mod:`docbase.http.content`); ``GET /media/ID/meta`` a one-element array;
``GET /media/*/meta`` an array (``q``, ``h``, or ``ids=A,B``); ``DELETE /media/ID``
``{"result": ["ID"]}``; ``PUT /media`` 501.
"""

from __future__ import annotations

from typing import Any

from litestar import Request, Response, delete, get, head, post, put, route
from litestar.handlers import HTTPRouteHandler
from litestar.params import FromPath

from docbase.core.errors import Unauthorized
from docbase.core.media.service import no_media_file
from docbase.core.query import last_param, parse_flag
from docbase.http.content import content_response
from docbase.http.context import Ctx, RequestContext, ServerDependency, answer_options
from docbase.http.context import route as route_request
from docbase.http.errors import MethodNotAllowed, NotImplementedHere
from docbase.http.operations import json_response
from docbase.http.params import list_query, query_params
from docbase.http.rest import paths
from docbase.http.uploads import uploaded_files

HttpRequest = Request[Any, Any, Any]
Param = FromPath[str]

MEDIA = "/media"
ITEM = MEDIA + "/{media_ref:str}"
META = ITEM + "/meta"


@route([p for path in (MEDIA, ITEM, META) for p in paths(path)], http_method=["OPTIONS"],
       include_in_schema=False)
async def media_options(request: HttpRequest, docbase_server: ServerDependency) -> Response[bytes]:
    """CORS preflight of ``/media`` (no key): see :mod:`docbase.http.cors`."""
    return await answer_options(request, docbase_server)


@post(paths(MEDIA), status_code=201)
async def upload_media(request: HttpRequest, ctx: Ctx) -> Response[bytes]:
    """``POST /media``: store the files of a multipart body, streamed as they arrive."""
    ctx.require_method("POST")
    files = uploaded_files(request, ctx.database.limits)
    uploaded = await ctx.database.media.upload(files, principal=ctx.principal)
    return json_response(request, {"msg": "OK", "uploadid": uploaded.uploadid,
                                   "ids": uploaded.ids}, 201)


@put(paths(MEDIA))
async def put_media() -> Response[bytes]:
    """``PUT /media``: not implemented, as in the original service (501)."""
    raise NotImplementedHere("PUT /media is not implemented; upload with POST /media")


async def _content(request: HttpRequest, server: ServerDependency,
                   media_ref: str) -> Response[Any]:
    try:
        _, database, _ = route_request(server, request)
    except Unauthorized:  # a database the server does not hold has no files either
        raise no_media_file(media_ref) from None
    params = query_params(request)
    file = await database.media.open(media_ref, last_param(params, "s"))
    return await content_response(request, file, download=parse_flag(params, "download"),
                                  by_name=media_ref.lower() != file.record["_id"])


@get(paths(ITEM))
async def get_media(request: HttpRequest, docbase_server: ServerDependency,
                    media_ref: Param) -> Response[Any]:
    """``GET /media/ID`` or ``/media/<file name>``: the bytes, no credential needed."""
    return await _content(request, docbase_server, media_ref)


@head(paths(ITEM))
async def head_media(request: HttpRequest, docbase_server: ServerDependency,
                     media_ref: Param) -> Response[None]:
    """``HEAD /media/ID``: the headers ``GET`` would answer, without the bytes."""
    response: Response[None] = await _content(request, docbase_server, media_ref)
    return response


async def _delete(request: HttpRequest, ctx: RequestContext, media_ref: str) -> Response[bytes]:
    deleted = await ctx.database.media.delete(media_ref, principal=ctx.principal)
    return json_response(request, {"result": deleted})


@delete(paths(ITEM), status_code=200)
async def delete_media(request: HttpRequest, ctx: Ctx, media_ref: Param) -> Response[bytes]:
    """``DELETE /media/ID``: the bytes, derivatives and metadata."""
    return await _delete(request, ctx, media_ref)


@post(paths(ITEM))
async def override_media(request: HttpRequest, ctx: Ctx, media_ref: Param) -> Response[bytes]:
    """``POST /media/ID`` with ``X-HTTP-Method-Override: DELETE``."""
    if ctx.method != "DELETE":
        raise MethodNotAllowed(f"{ctx.method} is not allowed on /media/ID; send DELETE, or "
                               "POST with X-HTTP-Method-Override: DELETE")
    return await _delete(request, ctx, media_ref)


@get(paths(META))
async def get_media_meta(request: HttpRequest, ctx: Ctx, media_ref: Param) -> Response[bytes]:
    """``GET /media/ID/meta`` (one-element array) or ``/media/*/meta`` (q, h or ids)."""
    media = ctx.database.media
    if media_ref != "*":
        return json_response(request, [await media.meta(media_ref, principal=ctx.principal)])
    params = query_params(request)
    ids = last_param(params, "ids")
    if ids is not None:
        wanted = [i.strip() for i in ids.split(",") if i.strip()]
        return json_response(request, await media.find_ids(wanted, principal=ctx.principal))
    query, _ = list_query(params, ctx.database.limits)
    return json_response(request, await media.find(query=query, principal=ctx.principal))


MEDIA_HANDLERS: list[HTTPRouteHandler] = [
    media_options, upload_media, put_media, get_media, head_media, delete_media,
    override_media, get_media_meta,
]
"""The ``/media`` handlers; they need the ``ctx`` and ``docbase_server`` dependencies."""
