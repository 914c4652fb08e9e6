"""Who asks what of which database: routing, method override and credential checks.

:func:`identify` picks the database (path prefix ``/db/<name>``, host ``<name>.<domain>``,
else the default), resolves ``X-HTTP-Method-Override``, authenticates the API key or else
the bearer token, and records the CORS headers the response carries (a token holder's:
those any key of the database allows for the origin). :func:`request_context` then asks
:func:`~docbase.core.auth.authorize` whether the credential covers the request; for the
document routes, which the pipelines authorize, :func:`documents_context` asks the origin.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import Any, NamedTuple, TypeAlias

from litestar import Request, Response
from litestar.di import NamedDependency

from docbase.core.auth import (
    UNKNOWN_KEY,
    Action,
    ApiKey,
    Bearer,
    Principal,
    authenticate_key,
    authenticate_token,
    authorize,
    authorize_origin,
)
from docbase.core.auth.tokens import refuse_token
from docbase.core.database import Collection, Database
from docbase.core.errors import InvalidQuery, NotFound, Unauthorized
from docbase.core.server import Server
from docbase.http.cors import allowed_origin_headers, cors_headers, preflight
from docbase.http.errors import CORS_STATE, MethodNotAllowed
from docbase.http.headers import bearer_token, header
from docbase.http.observe import DATABASE, PRINCIPAL

OVERRIDABLE = frozenset({"PUT", "PATCH", "DELETE"})


class RequestContext:
    """The database a request addresses and the credential it acts with."""

    __slots__ = ("bearer", "database", "database_name", "key", "method", "path", "principal")

    def __init__(
        self, database_name: str, database: Database, path: str, method: str,
        caller: Caller,
    ) -> None:
        self.database_name = database_name
        self.database = database
        self.path = path
        self.method = method
        self.principal: Principal = caller.principal
        self.key: ApiKey | None = caller.key
        self.bearer: Bearer | None = caller.bearer

    def collection(self, name: str) -> Collection:
        """Return the user collection ``name``, acting as this request's key."""
        return self.database.collection(name, self.principal)

    def require_method(self, method: str) -> None:
        """Refuse a method override where the path has no such operation."""
        if self.method != method:
            raise MethodNotAllowed(f"{self.method} (by X-HTTP-Method-Override) is not "
                                   f"allowed on {self.path}")


CREDENTIAL_REQUIRED = ("an API key (header x-apikey or parameter apikey) or a bearer token "
                       "(Authorization: Bearer, or parameter jwt) is required")
"""The 401 of a request without a credential."""


def route(server: Server, request: Request[Any, Any, Any]) -> tuple[str, Database, str]:
    """Return ``(database name, database, path within its base URL)`` of a request.

    A database the server does not hold answers what one does to a caller without a
    credential it knows: an anonymous caller cannot tell a wrong name from a right one
    (``/db/<name>``, ``<name>.<domain>``).

    Raises:
        Unauthorized: the path prefix or host names a database the server does not hold
            (the 401 of a missing credential, an unknown key or a foreign token).

    """
    try:
        name, path = server.route(header(request, "host"), request.scope["path"])
    except NotFound:
        if raw_key(request):
            raise Unauthorized(UNKNOWN_KEY) from None
        token = raw_token(request)
        if token:
            raise refuse_token(token) from None
        raise Unauthorized(CREDENTIAL_REQUIRED) from None
    return name, server.database(name), path


async def answer_options(request: Request[Any, Any, Any], server: Server) -> Response[bytes]:
    """Answer an ``OPTIONS`` request (:func:`~docbase.http.cors.preflight`).

    A database the server does not hold answers like one without keys.
    """
    try:
        name, path = server.route(header(request, "host"), request.scope["path"])
    except NotFound:
        return await preflight(request, None, request.scope["path"])
    return await preflight(request, server.database(name), path)


def effective_method(request: Request[Any, Any, Any]) -> str:
    """Return the method after ``X-HTTP-Method-Override`` (honoured on POST only).

    Raises:
        InvalidQuery: the override names anything but PUT, PATCH or DELETE.

    """
    method = request.method
    override = header(request, "x-http-method-override")
    if override is None or method != "POST":
        return method
    wanted = override.strip().upper()
    if wanted not in OVERRIDABLE:
        raise InvalidQuery(
            f"X-HTTP-Method-Override must be PUT, PATCH or DELETE, not {override!r}"
        )
    return wanted


def raw_key(request: Request[Any, Any, Any]) -> str | None:
    """Return the API key of a request: header ``x-apikey``, else parameter ``apikey``."""
    return header(request, "x-apikey") or request.query_params.get("apikey")


def raw_token(request: Request[Any, Any, Any]) -> str | None:
    """Return the bearer token: ``Authorization: Bearer T``, else parameter ``jwt``."""
    return bearer_token(request) or request.query_params.get("jwt") or None


class Caller(NamedTuple):
    """Who sent a request: its principal, and the key or token that proved it."""

    principal: Principal
    key: ApiKey | None = None
    bearer: Bearer | None = None


def client_address(request: Request[Any, Any, Any]) -> str | None:
    """The address the request came from (the proxy's client with ``--proxy-headers``)."""
    client = request.scope.get("client")
    return str(client[0]) if client else None


async def authenticate_request(database: Database, request: Request[Any, Any, Any]) -> Caller:
    """Authenticate the API key of a request, else its bearer token, within rate limits.

    Every request with a credential passes here, so the database's
    :class:`~docbase.core.ratelimit.RateLimiter` is asked here, once: an address that
    failed too many credentials is refused before its credential is looked at, a
    refused credential is counted, and an accepted one counts against the per-key and
    per-address limits.

    Raises:
        Unauthorized: neither is given, or the key is unknown, expired or revoked.
        InvalidToken: the bearer token is refused (see :mod:`docbase.core.auth.tokens`).
        TooManyRequests: a rate limit is reached (429 with ``Retry-After``).

    """
    limiter, address = database.rate_limiter, client_address(request)
    await limiter.check_address(address)
    try:
        caller = await authenticate_credential(database, request)
    except Unauthorized:
        if raw_key(request) or raw_token(request):  # a wrong guess, not a missing key
            await limiter.credential_failed(address)
        raise
    await limiter.admit(caller.principal, address)
    return caller


async def authenticate_credential(database: Database,
                                  request: Request[Any, Any, Any]) -> Caller:
    """Authenticate the API key of a request, else its bearer token (no rate limits).

    For a second look at a credential :func:`authenticate_request` counts once.

    Raises:
        Unauthorized: neither is given, or the key is unknown, expired or revoked.
        InvalidToken: the bearer token is refused.

    """
    key = raw_key(request)
    token = None if key else raw_token(request)
    if token is not None:
        bearer = await authenticate_token(database, token)
        return Caller(bearer.principal(await database.settings.load()), bearer=bearer)
    if not key:
        raise Unauthorized(CREDENTIAL_REQUIRED)
    api_key = await authenticate_key(database, key)
    return Caller(api_key.principal(), key=api_key)


ServerDependency: TypeAlias = NamedDependency[Server]
"""A handler parameter ``docbase_server: ServerDependency`` receives the served Server."""


Authenticator: TypeAlias = Callable[[Database, Request[Any, Any, Any]], Awaitable[Caller]]
"""How a request proves who sends it (:func:`authenticate_request` for most routes)."""


async def identify(
    request: Request[Any, Any, Any], server: Server,
    authenticate: Authenticator = authenticate_request,
) -> RequestContext:
    """Resolve database, method and credential of a request, without authorizing it.

    Raises:
        NotFound: an unknown database.
        Unauthorized: no credential, an unknown, expired or revoked key, or a refused
            bearer token.

    """
    name, database, path = route(server, request)
    request.scope[DATABASE] = name  # type: ignore[literal-required]  # for the request log
    await database.settings.follow_limits()  # another process may have lowered one
    method = effective_method(request)
    origin = header(request, "origin")
    if origin:  # let the browser read an error about the key too, when it may
        headers = await allowed_origin_headers(database, origin)
        if headers:
            request.state[CORS_STATE] = headers
    caller = await authenticate(database, request)
    key = caller.key
    request.scope[PRINCIPAL] = (  # type: ignore[literal-required]  # for the access line
        "token" if caller.bearer is not None else "none" if key is None
        else "full-access key" if caller.principal.full_access else "key")
    if origin and key is not None:
        if key.allows_origin(origin):
            request.state[CORS_STATE] = cors_headers(origin)
        elif not key.origins:  # usable, but the browser must not read the response
            request.state.pop(CORS_STATE, None)
        # a key limited to other origins: authorize refuses it, with the headers above
    return RequestContext(name, database, path, method, caller)


async def request_context(
    request: Request[Any, Any, Any], docbase_server: ServerDependency
) -> RequestContext:
    """Resolve database, method and credential of a request; check it is allowed.

    Raises:
        NotFound, Unauthorized: as :func:`identify`. Forbidden: the credential's paths,
            methods or origins do not cover this request.

    """
    return await authorized_context(request, docbase_server)


async def authorized_context(request: Request[Any, Any, Any], server: Server, *,
                             description: bool = False) -> RequestContext:
    """Identify a request and check it is allowed, as :func:`request_context` does.

    ``description`` asks for the API's description, which any valid credential may
    read (:class:`~docbase.core.auth.Action`).

    Raises:
        NotFound: an unknown database.
        Unauthorized: no credential, an unknown, expired or revoked key, or a refused
            bearer token.
        Forbidden: the credential does not cover this request.

    """
    context = await identify(request, server)
    authorize(context.principal, Action(context.method, context.path,
                                        origin=header(request, "origin") or None,
                                        description=description))
    return context


SERVER_STATE = "docbase_server"
"""Where the application's state holds the served :class:`Server`."""


async def documents_context(request: Request[Any, Any, Any]) -> RequestContext:
    """Identify a request on documents and check its origin; the pipelines decide the rest.

    Every operation of a document route passes a pipeline whose authorize stage decides
    method and path for the collection holding the documents (``docs/architecture.md``,
    Authorization), so only the origin, which they do not see, is asked here. Resolved
    directly: Litestar's injection of ``ctx`` was ~9 % of the hottest handlers' time.

    Raises: NotFound, Unauthorized as :func:`identify`; Forbidden: a refused origin.
    """
    context = await identify(request, request.app.state[SERVER_STATE])
    authorize_origin(context.principal, header(request, "origin") or None)
    return context


Ctx: TypeAlias = NamedDependency[RequestContext]
"""A handler parameter ``ctx: Ctx`` receives the :func:`request_context` of the request."""
