"""The ``/auth`` route handlers: sign a token, log in, who am I, log out.

Each path exists under the database's own base URL and under ``/db/<name>`` like the
``/rest`` routes. The work is done in :mod:`docbase.core.auth`; these handlers read
the body, authenticate and answer:

- ``POST /auth/jwt`` (full-access API key, else 403): 201 ``{"jwt"}``.
- ``POST /auth/login`` (no credential): 200 ``{"jwt"}``; 401 for a wrong email or
  password alike; 429 with ``Retry-After`` after too many failures.
- ``GET /auth/userinfo`` (bearer token): ``{"email", "displayname", "image", "roles"}``
  (``roles`` as the token's requests have them now).
- ``POST /auth/logout`` (bearer token): 200 ``{"result": "ok"}``.
"""

from __future__ import annotations

from typing import Any

from litestar import Request, Response, get, post
from litestar.handlers import HTTPRouteHandler

from docbase.core import auth
from docbase.core.auth.login import refuse_login
from docbase.core.database import Database
from docbase.core.errors import Forbidden, Unauthorized
from docbase.core.server import Server
from docbase.core.settings import Limits
from docbase.http.bodies import object_body, read_json
from docbase.http.context import (
    ServerDependency,
    authenticate_request,
    raw_key,
    raw_token,
    route,
)
from docbase.http.operations import json_response

HttpRequest = Request[Any, Any, Any]
Reply = Response[bytes]


def paths(path: str) -> list[str]:
    """``path`` under the default/host-routed base URL and under ``/db/<name>``."""
    return [path, "/db/{db_name:str}" + path]


async def _bearer(server: Server, request: HttpRequest) -> tuple[Database, auth.Bearer]:
    token = raw_token(request)
    if token is None:  # before the database is known: alike for a name it does not hold
        raise Unauthorized("a bearer token is required (Authorization: Bearer, or "
                           "parameter jwt)")
    if raw_key(request):
        raise Forbidden("this endpoint takes a bearer token, not an API key")
    _, database, _ = route(server, request)
    bearer = (await authenticate_request(database, request)).bearer
    if bearer is None:  # unreachable: a token and no key authenticate as a bearer
        raise Unauthorized("a bearer token is required")
    return database, bearer


@post(paths("/auth/jwt"), status_code=201)
async def sign_token(request: HttpRequest, docbase_server: ServerDependency) -> Reply:
    """``POST /auth/jwt``: sign a token with a stored secret."""
    _, database, _ = route(docbase_server, request)
    caller = await authenticate_request(database, request)
    if caller.key is None or not caller.key.full_access:
        raise Forbidden("POST /auth/jwt needs a full-access API key")
    body = object_body(await read_json(request, database.limits))
    token = auth.sign_request(await database.settings.load(), body)
    return json_response(request, {"jwt": token}, 201)


@post(paths("/auth/login"), status_code=200)
async def log_in(request: HttpRequest, docbase_server: ServerDependency) -> Reply:
    """``POST /auth/login``: email and password for a login token."""
    try:
        _, database, _ = route(docbase_server, request)
    except Unauthorized:  # a database the server does not hold: as one without users
        body = object_body(await read_json(request, Limits()))
        raise refuse_login(body.get("email"), body.get("password")) from None
    body = object_body(await read_json(request, database.limits))
    token = await auth.login(database, body.get("email"), body.get("password"))
    return json_response(request, {"jwt": token})


@get(paths("/auth/userinfo"))
async def user_info(request: HttpRequest, docbase_server: ServerDependency) -> Reply:
    """``GET /auth/userinfo``: the token's user."""
    database, bearer = await _bearer(docbase_server, request)
    return json_response(request, bearer.info(await database.settings.load()))


@post(paths("/auth/logout"), status_code=200)
async def log_out(request: HttpRequest, docbase_server: ServerDependency) -> Reply:
    """``POST /auth/logout``: revoke the token for every process until it expires."""
    database, bearer = await _bearer(docbase_server, request)
    await auth.logout(database, bearer)
    return json_response(request, {"result": "ok"})


AUTH_HANDLERS: list[HTTPRouteHandler] = [sign_token, log_in, user_info, log_out]
"""Every ``/auth`` handler; they need the ``docbase_server`` dependency."""
