"""The Litestar application: :func:`create_app` and the :class:`DocbasePlugin` it uses.

The plugin receives its :class:`~docbase.core.server.Server` by injection, so another
Litestar application can serve docbase next to its own routes::

    app = Litestar(route_handlers=[...], plugins=[DocbasePlugin(server)])

It registers the ``/rest``, ``/auth``, ``/mail``, ``/media`` and ``/realtime`` routes
(also under ``/db/<name>``), ``/health``, ``/health/ready``, the console at ``/_/``
(:mod:`docbase.http.console`) and, when configured, ``/metrics``
(:mod:`docbase.http.probes`), the ``docbase_server`` dependency, the JSON
error handlers of :mod:`docbase.http.errors` for its own routes and, unless told
otherwise, opening and closing the server's databases with the application.
"""

from __future__ import annotations

from typing import Any

from litestar import Litestar, Router
from litestar.config.app import AppConfig
from litestar.di import Provide
from litestar.plugins import InitPluginProtocol

from docbase.core.server import Server
from docbase.http.auth import AUTH_HANDLERS
from docbase.http.batch import BATCH_HANDLERS
from docbase.http.console import console_router
from docbase.http.context import SERVER_STATE, request_context
from docbase.http.errors import EXCEPTION_HANDLERS
from docbase.http.mail import MAIL_HANDLERS
from docbase.http.media import MEDIA_HANDLERS
from docbase.http.operator import OPERATOR_HANDLERS
from docbase.http.probes import MetricsAccess, ready_route
from docbase.http.realtime import REALTIME_HANDLERS
from docbase.http.rest import ROUTE_HANDLERS, health


class DocbasePlugin(InitPluginProtocol):
    """Serve a docbase :class:`Server` from a Litestar application."""

    def __init__(self, server: Server, *, manage_lifespan: bool = True,
                 metrics: MetricsAccess | None = None) -> None:
        """Serve ``server``; ``metrics`` adds ``GET /metrics`` (``docs/operations.md``).

        ``manage_lifespan`` opens and closes the server with the app.
        """
        self.server = server
        self.manage_lifespan = manage_lifespan
        self.metrics = metrics

    def _provide_server(self) -> Server:
        return self.server

    def router(self) -> Router:
        """Build the router of the docbase routes, their dependencies and error handlers."""
        return Router(
            path="/",
            route_handlers=[*ROUTE_HANDLERS, *AUTH_HANDLERS, *MAIL_HANDLERS, *MEDIA_HANDLERS,
                            *REALTIME_HANDLERS, *OPERATOR_HANDLERS, *BATCH_HANDLERS,
                            health, ready_route(self.metrics),
                            *([self.metrics.route()] if self.metrics else [])],
            dependencies={"ctx": Provide(request_context)},
            exception_handlers=EXCEPTION_HANDLERS,
            request_max_body_size=None,  # each database's Limits.max_body_bytes applies
            include_in_schema=False,
        )

    def on_app_init(self, app_config: AppConfig) -> AppConfig:
        """Add the routes, the ``docbase_server`` dependency and the lifespan hooks."""
        # not cached: the test harness points one built application at server after
        # server (docbase.http.testing), and returning an attribute costs nothing
        app_config.dependencies["docbase_server"] = Provide(
            self._provide_server, sync_to_thread=False
        )
        app_config.state[SERVER_STATE] = self.server  # for handlers that skip injection
        app_config.route_handlers.append(self.router())
        app_config.route_handlers.append(console_router())
        if self.manage_lifespan:
            app_config.on_startup.append(self.server.open)
            app_config.on_shutdown.append(self.server.close)
        return app_config


def create_app(
    server: Server,
    *,
    manage_lifespan: bool = True,
    metrics: MetricsAccess | None = None,
    debug: bool = False,
    **litestar_options: Any,
) -> Litestar:
    """Build a Litestar application serving ``server`` and nothing else.

    Unknown routes and wrong methods answer JSON errors like every docbase error.
    ``litestar_options`` pass through to :class:`~litestar.Litestar` (e.g. extra
    ``plugins``, ``middleware`` or ``on_startup`` hooks).

    The application leaves the process's logging as it finds it (``logging_config=None``
    unless given): docbase logs through the standard ``logging`` module, which
    ``docbase serve`` configures (:mod:`docbase.http.logs`) and an embedding application
    configures its own way. Litestar's default would reconfigure the root logger and
    start a queue-listener thread for every application built, which none stops.
    """
    litestar_options.setdefault("logging_config", None)
    plugins = [DocbasePlugin(server, manage_lifespan=manage_lifespan, metrics=metrics),
               *litestar_options.pop("plugins", ())]
    return Litestar(
        plugins=plugins,
        exception_handlers=EXCEPTION_HANDLERS,
        openapi_config=None,
        request_max_body_size=None,
        debug=debug,
        **litestar_options,
    )
