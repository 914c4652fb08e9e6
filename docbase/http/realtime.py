"""``/realtime``: the change feed as server-sent events, and custom events.

- ``GET /realtime``: ``text/event-stream`` of the events that
  :mod:`docbase.core.changes.realtime` makes (``ping``, ``post``, ``put``, ``delete``,
  custom), each with an ``id:``; a ``Last-Event-ID`` header resumes after that id (a
  scoped credential's ids are masked, :mod:`docbase.core.changes.event_ids`). The
  credential is a key (header ``x-apikey``, parameter ``apikey``), a token (``jwt``),
  or ``rt-apikey`` (alone, or with a ``jwt``, when it must be a live key too). Any
  valid credential may subscribe; it receives the collections it may read. 401 without
  a credential, 403 while the database's ``realtime.global`` setting is off.
- ``POST /realtime`` ``{"event": NAME, "data": ...}``: 202 ``{"result": "ok"}``, the
  event goes to every subscriber of the database. The credential needs
  ``POST /realtime`` (full-access keys have it).
"""

from __future__ import annotations

import logging
from collections.abc import AsyncIterator
from typing import Any

from litestar import Request, Response, get, post, route
from litestar.handlers import HTTPRouteHandler
from litestar.response import ServerSentEvent
from litestar.response.sse import ServerSentEventMessage

from docbase.core.auth import authenticate_key
from docbase.core.auth.tokens import login_secret
from docbase.core.changes.event_ids import MaskedEventIds
from docbase.core.changes.readable import ReadableChanges
from docbase.core.changes.realtime import (
    check_event_name,
    parse_event_id,
    realtime_events,
)
from docbase.core.database import Database
from docbase.core.errors import DocbaseError, Forbidden
from docbase.http.bodies import object_body, read_json
from docbase.http.context import (
    Caller,
    Ctx,
    ServerDependency,
    answer_options,
    authenticate_request,
    identify,
    raw_key,
    raw_token,
)
from docbase.http.errors import CORS_STATE
from docbase.http.headers import header
from docbase.http.operations import json_response

logger = logging.getLogger("docbase.http")

HttpRequest = Request[Any, Any, Any]
REALTIME = ["/realtime", "/db/{db_name:str}/realtime"]


async def realtime_caller(database: Database, request: HttpRequest) -> Caller:
    """Authenticate a realtime request: as any request, or by its ``rt-apikey``.

    Raises:
        Unauthorized: no credential, or one that is unknown, expired or revoked.
        InvalidToken: the ``jwt`` is refused.

    """
    rt_key = request.query_params.get("rt-apikey")
    if rt_key and not raw_key(request):
        key = await authenticate_key(database, rt_key)
        if raw_token(request) is None:
            return Caller(key.principal(), key=key)
    return await authenticate_request(database, request)


async def require_realtime(database: Database) -> None:
    """Refuse unless the database's ``realtime.global`` setting is on.

    Raises:
        Forbidden: realtime is off.

    """
    if not (await database.settings.load()).realtime.enabled:
        raise Forbidden("realtime is off for this database (setting realtime.global)")


@route(REALTIME, http_method=["OPTIONS"], include_in_schema=False)
async def realtime_options(request: HttpRequest,
                           docbase_server: ServerDependency) -> Response[bytes]:
    """CORS preflight of ``/realtime`` (no key): see :mod:`docbase.http.cors`."""
    return await answer_options(request, docbase_server)


@get(REALTIME)
async def subscribe(request: HttpRequest, docbase_server: ServerDependency) -> ServerSentEvent:
    """``GET /realtime``: the event stream, resumed after ``Last-Event-ID`` if given."""
    context = await identify(request, docbase_server, realtime_caller)
    database = context.database
    await require_realtime(database)
    origin = header(request, "origin") or None
    key = context.key
    if origin and key is not None and key.origins and not key.allows_origin(origin):
        raise Forbidden(f"this API key may not be used from origin {origin}")
    last = header(request, "last-event-id")
    masked = (None if context.principal.full_access
              else MaskedEventIds(await login_secret(database)))
    resume = None if not last else masked.parse(last) if masked else parse_event_id(last)

    async def still_allowed() -> bool:
        try:
            await realtime_caller(database, request)
            await require_realtime(database)
        except DocbaseError:
            return False
        return True

    events = realtime_events(database.changes, database.limits,
                             ReadableChanges(context.principal, origin, database.reads),
                             resume=resume, still_allowed=still_allowed, label=masked or str)

    async def messages() -> AsyncIterator[ServerSentEventMessage]:
        try:
            async for event in events:
                yield ServerSentEventMessage(data=event.data, event=event.name, id=event.id)
        except DocbaseError as exc:  # the client reconnects and resumes from its last id
            logger.warning("realtime stream of %s ended: %s", database.name, exc.message)

    return ServerSentEvent(messages(), headers=dict(request.state.get(CORS_STATE) or {}))


@post(REALTIME, status_code=202)
async def publish(request: HttpRequest, ctx: Ctx) -> Response[bytes]:
    """``POST /realtime``: publish a custom event to every subscriber."""
    await require_realtime(ctx.database)
    body = object_body(await read_json(request, ctx.database.limits))
    name = check_event_name(body.get("event"))
    await ctx.database.changes.publish_custom(name, body.get("data"),
                                              author=ctx.principal.author)
    return json_response(request, {"result": "ok"}, 202)


REALTIME_HANDLERS: list[HTTPRouteHandler] = [realtime_options, subscribe, publish]
"""The ``/realtime`` handlers; they need the ``ctx`` and ``docbase_server`` dependencies."""
