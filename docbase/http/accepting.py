"""Connections spread evenly over the workers of ``docbase serve``.

The workers accept from one listening socket, which the supervisor binds
(``docbase/http/supervision.py``). uvloop's server accepts every connection waiting
when its loop wakes, so a client that opens its connections at once (an application's
pool at its start, ``wrk``'s 32) had them split between two workers unevenly, and
differently each time: 23 to 9 and 29 to 3 were measured. A keep-alive pool keeps its
split for as long as it lives, and the worker with few connections idles while the
other queues requests: a two-worker patch load served 2,400-3,100 requests/s on an
uneven split and 3,500-3,800 on an even one (``docs/benchmarks.md``, run 17).

:class:`BalancedLoop` is uvloop's event loop (uvicorn's loop factory in
``docbase/http/launch.py``) whose ``create_server`` serves a socket handed to it with
:class:`OneByOneServer`. That server accepts one connection each time the loop finds
the socket readable, and first looks at the other workers' counts of open connections
(``docbase/http/connection_shares.py``): a worker that holds more than
:data:`SHARE_SLACK` connections over the least loaded other worker lets the
connection wait :data:`DEFER_SECONDS` for that worker, which the same readiness woke;
should nobody have taken it within :data:`MAX_DEFER_SECONDS` (the other worker busy,
stopped or dead), it accepts it after all. A connection another worker took first is
simply not there (``BlockingIOError``).
"""

from __future__ import annotations

import asyncio
import logging
import select
import socket
import ssl
from collections.abc import Callable
from typing import Any

import uvloop

from docbase.http.connection_shares import ConnectionShares

SHARE_SLACK = 1
"""Connections a worker may hold over the least loaded other worker and still accept."""
DEFER_SECONDS = 0.002
"""Seconds a worker over its share leaves a waiting connection to the others."""
MAX_DEFER_SECONDS = 0.05
"""Seconds after which a worker over its share accepts a connection nobody took."""
ACCEPT_RETRY_SECONDS = 0.1
"""Seconds a worker that could not accept (out of file descriptors or memory) waits
before it tries again."""

logger = logging.getLogger("docbase.serve")


class BalancedLoop(uvloop.Loop):
    """uvloop's loop; a server on a given socket is a :class:`OneByOneServer`."""

    async def create_server(  # type: ignore[override]
        self, protocol_factory: Callable[[], asyncio.BaseProtocol], host: Any = None,
        port: Any = None, *, sock: socket.socket | None = None,
        ssl: ssl.SSLContext | None = None, backlog: int = 100, **options: Any,
    ) -> asyncio.AbstractServer:
        """Serve ``sock`` one accept at a time, balanced; anything else as uvloop does."""
        if sock is None or host is not None or port is not None or options:
            return await super().create_server(protocol_factory, host, port, sock=sock,
                                               ssl=ssl, backlog=backlog, **options)
        return OneByOneServer(self, protocol_factory, sock, ssl, backlog,
                              shares=ConnectionShares.from_environment())


class OneByOneServer(asyncio.AbstractServer):
    """A server that accepts one connection per readiness event, balanced.

    A connection waits for a less loaded worker first (:meth:`_over_share`). Each is
    handed to the loop's ``connect_accepted_socket`` (the TLS handshake included), as
    uvloop's own server would. ``close`` stops accepting and leaves the socket open:
    uvicorn closes it, and the other workers keep accepting from it.
    """

    def __init__(self, loop: asyncio.AbstractEventLoop,
                 protocol_factory: Callable[[], asyncio.BaseProtocol], sock: socket.socket,
                 tls: ssl.SSLContext | None, backlog: int, *,
                 shares: ConnectionShares | None) -> None:
        self._loop = loop
        self._protocol_factory = protocol_factory
        self._sock = sock
        self._tls = tls
        self._shares = shares
        self._serving = False
        self._deferring_since: float | None = None
        self._connecting: set[asyncio.Task[None]] = set()
        self._waiting = select.poll()  # a look at the socket without a readiness event
        self._waiting.register(sock.fileno(), select.POLLIN)
        sock.setblocking(False)
        sock.listen(backlog)  # the supervisor binds; each worker listens, as uvloop would
        self._start()

    @property
    def sockets(self) -> tuple[socket.socket, ...]:
        """The listening socket (none once closed)."""
        return (self._sock,) if self._serving else ()

    def _start(self) -> None:
        self._loop.add_reader(self._sock.fileno(), self._accept)
        self._serving = True

    def _pause(self, seconds: float) -> None:
        self._loop.remove_reader(self._sock.fileno())
        self._loop.call_later(seconds, self._resume)

    def _resume(self) -> None:
        if not self._serving:
            return
        if not self._waiting.poll(0):
            self._deferring_since = None  # another worker took it
        self._start()

    def _over_share(self) -> bool:
        """Whether to leave the waiting connection to another worker for now."""
        shares = self._shares
        if shares is None or shares.open <= SHARE_SLACK:  # within any share: no look needed
            return False
        fewest = shares.fewest_elsewhere()
        if fewest is None or shares.open <= fewest + SHARE_SLACK:
            return False
        now = self._loop.time()
        if self._deferring_since is None:
            self._deferring_since = now
        return now - self._deferring_since < MAX_DEFER_SECONDS

    def _accept(self) -> None:
        if self._over_share():
            self._pause(DEFER_SECONDS)
            return
        self._deferring_since = None
        try:
            connection, _address = self._sock.accept()
        except (BlockingIOError, InterruptedError, ConnectionAbortedError):
            return  # another worker took it, or its client gave up
        except OSError as exc:  # out of descriptors or memory, or worse: never spin on it
            logger.error("cannot accept connections (%s): trying again in %.1f s", exc,
                         ACCEPT_RETRY_SECONDS)
            self._pause(ACCEPT_RETRY_SECONDS)
            return
        task = self._loop.create_task(self._connect(connection))
        self._connecting.add(task)
        task.add_done_callback(self._connecting.discard)

    async def _connect(self, connection: socket.socket) -> None:
        connection.setblocking(False)
        try:
            await self._loop.connect_accepted_socket(self._counted_protocol, connection,
                                                     ssl=self._tls)
        except (TimeoutError, OSError, ssl.SSLError) as exc:
            connection.close()  # a failed TLS handshake, a client gone: its own loss
            logger.debug("connection not set up: %s", exc)

    def _counted_protocol(self) -> asyncio.BaseProtocol:
        """The server's protocol, counted in the shares while its connection is open."""
        protocol = self._protocol_factory()
        shares = self._shares
        if shares is None:
            return protocol
        made, lost = protocol.connection_made, protocol.connection_lost

        def connection_made(transport: asyncio.BaseTransport) -> None:
            shares.change(+1)
            made(transport)

        def connection_lost(exc: Exception | None) -> None:
            shares.change(-1)
            lost(exc)

        protocol.connection_made = connection_made  # type: ignore[method-assign]
        protocol.connection_lost = connection_lost  # type: ignore[method-assign]
        return protocol

    def close(self) -> None:
        """Stop accepting; connections accepted already go on."""
        if self._serving:
            self._serving = False
            self._loop.remove_reader(self._sock.fileno())
            if self._shares is not None:  # a stopping worker must not hold connections back
                self._shares.leave()

    async def wait_closed(self) -> None:
        """Return at once: accepting stops in :meth:`close`."""

    def is_serving(self) -> bool:
        """Whether this server still accepts connections."""
        return self._serving

    def get_loop(self) -> asyncio.AbstractEventLoop:
        """The loop this server accepts on."""
        return self._loop

    async def start_serving(self) -> None:
        """Nothing to do: a server accepts from the moment it is made."""

    async def serve_forever(self) -> None:
        """Not used by uvicorn, which runs its own main loop."""
        raise NotImplementedError("OneByOneServer is served by uvicorn's main loop")
