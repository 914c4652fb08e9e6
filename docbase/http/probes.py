"""What an operator's tools ask: ``GET /health/ready`` and ``GET /metrics``.

``GET /health`` (in :mod:`docbase.http.rest`) is liveness: the process answers, nothing
more is asked. ``GET /health/ready`` is readiness: each database's store is asked one
cheap real query (:func:`~docbase.core.metrics.state.check_store`), and the answer is
``200`` when all answered, else ``503``, so a load balancer takes the process out while
its backend is gone and back when it returns. Neither needs a credential nor reveals a
document; an anonymous caller gets the overall status alone, not which databases the
server holds: the checks by name, and why one failed, are for the metrics reader and
full-access keys.

``GET /metrics`` exists only when metrics are configured (:class:`MetricsAccess`); it
answers a request from a metrics address, or bearing the metrics token in
``Authorization: Bearer``, and refuses any other with ``401``. The text is rendered by
the exporter the server chose (``docbase/adapters/prometheus/``), from this process's
view of every worker's counts and the databases' shared state read now.
"""

from __future__ import annotations

import asyncio
import hmac
import ipaddress
from collections.abc import Callable, Mapping
from typing import Any

import msgspec
from litestar import Request, Response, get
from litestar.handlers import HTTPRouteHandler

from docbase.core.errors import NotFound, Unauthorized
from docbase.core.metrics.state import StoreState, check_store, read_state
from docbase.core.server import Server
from docbase.http.context import (
    ServerDependency,
    authenticate_request,
    client_address,
    raw_key,
    route,
)
from docbase.http.headers import bearer_token
from docbase.http.proxy import Network, in_networks

HttpRequest = Request[Any, Any, Any]
Render = Callable[[Mapping[str, StoreState]], bytes]
"""Renders the metrics text given each database's shared state."""


def ready_route(metrics: MetricsAccess | None) -> HTTPRouteHandler:
    """The ``GET /health/ready`` handler; ``metrics`` decides who reads every check."""

    @get("/health/ready", include_in_schema=False)
    async def ready(request: HttpRequest, docbase_server: ServerDependency) -> Response[bytes]:
        """Readiness: 200 when every database's store answers, else 503.

        Anyone gets the overall status alone; the checks, named by database, with why
        they failed, go to whoever may read ``/metrics`` (every database) and to a
        full-access key (its own database's check), never to an anonymous caller.
        """
        server: Server = docbase_server
        names = list(server.databases)
        failures = await asyncio.gather(*(check_store(server.databases[name].store)
                                          for name in names))
        checks = {f"store:{name}": failure or "ok"
                  for name, failure in zip(names, failures, strict=True)}
        failed = [check for check, outcome in checks.items() if outcome != "ok"]
        body: dict[str, object] = {"status": "unavailable" if failed else "ok"}
        shown = await _shown_checks(request, server, metrics)
        if shown is not None:
            body["checks"] = {c: o for c, o in checks.items() if shown(c)}
            if failed:
                body["failed"] = [check for check in failed if shown(check)]
        return Response(msgspec.json.encode(body), status_code=503 if failed else 200,
                        media_type="application/json")

    return ready


async def _shown_checks(request: HttpRequest, server: Server, metrics: MetricsAccess | None
                        ) -> Callable[[str], bool] | None:
    """Which checks the caller may read: all, its database's, or none (``None``)."""
    if metrics is not None and metrics.allows(request):
        return lambda check: True
    if not raw_key(request):
        return None
    try:
        name, database, _ = route(server, request)
        caller = await authenticate_request(database, request)
    except (Unauthorized, NotFound):
        return None
    if not caller.principal.full_access:
        return None
    return lambda check: check == f"store:{name}"


class MetricsAccess:
    """Who may read ``GET /metrics``, and how it is rendered."""

    def __init__(self, render: Render, content_type: str, *, token: str | None,
                 addresses: tuple[str, ...]) -> None:
        self.render = render
        self.content_type = content_type
        self._token = token.encode() if token else None
        self._networks: tuple[Network, ...] = tuple(
            ipaddress.ip_network(address, strict=False) for address in addresses)

    def allows(self, request: HttpRequest) -> bool:
        """Tell whether the request comes from a metrics address or bears the token."""
        if self._from_metrics_address(client_address(request)):
            return True
        given = bearer_token(request)
        return (self._token is not None and given is not None
                and hmac.compare_digest(given.encode(), self._token))

    def check(self, request: HttpRequest) -> None:
        """Let a metrics address or the token holder through.

        Raises:
            Unauthorized: neither.

        """
        if not self.allows(request):
            raise Unauthorized("GET /metrics needs the metrics token (Authorization: Bearer) "
                           "or a request from a metrics address")

    def _from_metrics_address(self, address: str | None) -> bool:
        return bool(address) and in_networks(str(address), self._networks)

    def route(self) -> HTTPRouteHandler:
        """The ``GET /metrics`` handler."""

        @get("/metrics", include_in_schema=False)
        async def metrics(request: HttpRequest, docbase_server: ServerDependency,
                          ) -> Response[bytes]:
            self.check(request)
            server: Server = docbase_server
            names = list(server.databases)
            states = await asyncio.gather(*(
                read_state(db.store, db.changes.log, db.webhooks)
                for db in (server.databases[name] for name in names)))
            return Response(self.render(dict(zip(names, states, strict=True))),
                            media_type=self.content_type)

        return metrics
