"""One request seen from outside: its id, its access line and its metrics.

:class:`RequestObserver` is a pure ASGI middleware, outermost but for the security
headers in :func:`docbase.http.worker.build_app`, so it sees every answer, the proxy
check's refusals included. For each HTTP request it

- takes the request id from ``X-Request-Id`` when a trusted proxy sent the request
  (``docbase serve --proxy-headers``: the peer is a ``--trusted-proxy``) and the id is
  one plain token of at most 128 characters, else makes one (an ObjectID: unique across
  processes, time-ordered, and made without a system call: ``os.urandom`` releases the
  GIL, and taking it back behind the store's busy threads cost a created document a
  sixth of its CPU), and returns it in the ``X-Request-Id`` header;
- sets :data:`~docbase.http.logs.REQUEST_ID` while the request is served, so any log
  line written meanwhile carries it;
- writes one access line (``docbase.access``): request id, method, route template,
  status, duration, bytes sent, and the kind of credential (:data:`PRINCIPAL`, set by
  the request's context: ``key``, ``full-access key``, ``token`` or ``none``), never
  the path itself, whose query string may hold a key;
- reports the request to the instruments by route template, method and status, when
  metrics are on;
- records it in the request log of the database it was for (:data:`DATABASE`, set
  where the request's database is found; the default database's when none was), when
  the log is on (:mod:`docbase.core.requestlog`): the same route template, status,
  duration and kind of credential, appended to a list that a background task writes.
"""

from __future__ import annotations

import logging
import re
from collections.abc import Callable
from time import perf_counter
from typing import Any

from docbase.core.ids import new_object_id
from docbase.core.metrics import NO_INSTRUMENTS, Instruments
from docbase.core.requestlog import RequestLog
from docbase.http.logs import (
    ACCESS_LOGGER,
    REQUEST_ID,
    Access,
    AccessLines,
)

Scope = dict[str, Any]
Message = dict[str, Any]

PRINCIPAL = "docbase.principal"
"""Scope key of the kind of credential the request was served with."""
DATABASE = "docbase.database"
"""Scope key of the name of the database the request was for."""
UNMATCHED = "unmatched"
"""The route of a request that no route matched."""

_METHODS = frozenset({"GET", "HEAD", "POST", "PUT", "PATCH", "DELETE", "OPTIONS"})
_REQUEST_ID = re.compile(rb"[A-Za-z0-9._:@/+=-]{1,128}")
_HEADER = b"x-request-id"

access_log = logging.getLogger(ACCESS_LOGGER)


class RequestObserver:
    """Give each request an id, log its access line and count it."""

    def __init__(self, app: Any, instruments: Instruments = NO_INSTRUMENTS, *,
                 trusted_proxy: Callable[[str | None], bool] | None = None,
                 access: AccessLines | None = None,
                 request_logs: dict[str, RequestLog] | None = None,
                 default_database: str = "") -> None:
        """Observe ``app``; believe ``X-Request-Id`` from peers ``trusted_proxy`` accepts.

        ``access`` writes the access lines the short way (:class:`AccessLines`); without
        it they go through ``logging``. ``request_logs`` are the request logs by database
        name; a request whose database was not found goes to ``default_database``'s.
        """
        self.app = app
        self.request_logs = request_logs or None
        self.default_database = default_database
        self.access = access
        self.instruments = instruments
        self.counting = instruments is not NO_INSTRUMENTS
        self.trusted_proxy = trusted_proxy

    async def __call__(self, scope: Scope, receive: Any, send: Any) -> None:
        """Serve ``scope`` with an id, then log and count it."""
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        started = perf_counter()
        request_id = None
        if self.trusted_proxy is not None:
            client = scope.get("client")
            if self.trusted_proxy(client[0] if client else None):
                request_id = _forwarded_id(scope)
        if request_id is None:
            request_id = new_object_id()
        id_header = (_HEADER, request_id.encode())
        answer = [500, 0]  # status, body bytes: a crash before the answer is a 500

        async def observed_send(message: Message) -> None:
            if message["type"] == "http.response.start":
                answer[0] = message["status"]
                message["headers"] = [*message.get("headers", ()), id_header]
            elif message["type"] == "http.response.body":
                answer[1] += len(message.get("body", b""))
            await send(message)

        token = REQUEST_ID.set(request_id)
        try:
            await self.app(scope, receive, observed_send)
        finally:
            seconds = perf_counter() - started
            route = scope.get("path_template") or UNMATCHED
            method = scope["method"] if scope["method"] in _METHODS else "OTHER"
            if self.counting:
                self.instruments.http_request(route, method, answer[0], seconds)
            if self.request_logs is not None:
                log = self.request_logs.get(scope.get(DATABASE, self.default_database))
                if log is not None:
                    log.record(method, route, answer[0], seconds, scope.get(PRINCIPAL, "none"))
            if access_log.isEnabledFor(logging.INFO):
                access = Access(method, route, answer[0], seconds, answer[1],
                                scope.get(PRINCIPAL, "none"))
                if self.access is not None:
                    self.access.write(request_id, access)
                else:
                    access_log.info("%s", access.message(), extra={"fields": access.fields()})
            REQUEST_ID.reset(token)


def _forwarded_id(scope: Scope) -> str | None:
    """The proxy's ``X-Request-Id``, if it is one plain token of at most 128 characters."""
    for name, value in scope.get("headers", ()):
        if name == _HEADER or name.lower() == _HEADER:
            return value.decode("ascii") if _REQUEST_ID.fullmatch(value) else None
    return None
