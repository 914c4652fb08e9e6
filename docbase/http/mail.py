"""``POST /mail``: send one message or an array of them through the database's transport.

The handler reads the body and hands it to ``db.mail`` (:mod:`docbase.core.mail`),
which checks it, writes the outbound log and sends. A key or token is required; a
scoped key needs ``/mail`` among its paths (the request context asks
:func:`~docbase.core.auth.authorize` for ``POST /mail``). Answers: 201
``{"result": [{"email_outbound_id": ...}, ...]}``; 422 for a malformed message, 413
over ``limits.max_mail``, 502 with every message's outcome when the transport failed.
"""

from __future__ import annotations

from typing import Any

from litestar import Request, Response, post, route
from litestar.handlers import HTTPRouteHandler

from docbase.http.bodies import read_json
from docbase.http.context import Ctx, ServerDependency, answer_options
from docbase.http.operations import json_response

MAIL = ["/mail", "/db/{db_name:str}/mail"]


@route(MAIL, http_method=["OPTIONS"], include_in_schema=False)
async def mail_options(request: Request[Any, Any, Any],
                       docbase_server: ServerDependency) -> Response[bytes]:
    """CORS preflight of ``/mail`` (no key): see :mod:`docbase.http.cors`."""
    return await answer_options(request, docbase_server)


@post(MAIL, status_code=201)
async def send_mail(request: Request[Any, Any, Any], ctx: Ctx) -> Response[bytes]:
    """``POST /mail``: the outbound record id of each message, in request order."""
    body = await read_json(request, ctx.database.limits)
    ids = await ctx.database.mail.send(body, ctx.principal)
    return json_response(request, {"result": [{"email_outbound_id": i} for i in ids]}, 201)


MAIL_HANDLERS: list[HTTPRouteHandler] = [mail_options, send_mail]
"""The ``/mail`` handlers; they need the ``ctx`` and ``docbase_server`` dependencies."""
