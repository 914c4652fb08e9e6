"""Run docbase over real HTTPS on loopback, inside the caller's event loop, for tests.

Needs the test extras (``uvicorn``, ``httpx``, ``cryptography``)::

    async with live_docbase({"main": Database(store, blobs)}, tmp_path) as live:
        response = await live.client.get("/rest/people", headers=live.auth())

The server runs as a task of the running event loop, so stores opened by the test
(whose drivers may be bound to that loop) serve the requests.
"""

from __future__ import annotations

import asyncio
import contextlib
import socket
import ssl
from collections.abc import AsyncIterator, Iterator, Mapping
from pathlib import Path
from typing import Any

import httpx
import uvicorn

from docbase.core.auth import create_key
from docbase.core.database import Database
from docbase.core.server import Server
from docbase.http.app import DocbasePlugin, create_app
from docbase.http.context import SERVER_STATE
from docbase.http.tls import self_signed_certificate


def write_certificate(directory: Path) -> tuple[Path, Path]:
    """Write a self-signed certificate for ``127.0.0.1``/``localhost``: ``(cert, key)``."""
    cert_pem, key_pem = self_signed_certificate(["localhost", "127.0.0.1"])
    certfile, keyfile = directory / "cert.pem", directory / "key.pem"
    certfile.write_bytes(cert_pem)
    keyfile.write_bytes(key_pem)
    return certfile, keyfile


@contextlib.asynccontextmanager
async def serve_tls(app: Any, certfile: Path, keyfile: Path) -> AsyncIterator[str]:
    """Serve ``app`` over TLS on a free loopback port; yield its base URL.

    Uvicorn's own serving loop polls and sleeps on shutdown; a test server needs
    neither, so this drives its startup and shutdown steps directly.
    """
    # proto=IPPROTO_TCP: asyncio sets TCP_NODELAY on accepted sockets only then
    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM, socket.IPPROTO_TCP)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    sock.bind(("127.0.0.1", 0))
    port = sock.getsockname()[1]
    config = uvicorn.Config(app, ssl_certfile=str(certfile), ssl_keyfile=str(keyfile),
                            log_level="warning", lifespan="on", ws="none")
    config.load()
    server = uvicorn.Server(config)
    server.lifespan = config.lifespan_class(config)
    await server.startup(sockets=[sock])
    try:
        yield f"https://127.0.0.1:{port}"
    finally:
        for listener in server.servers:
            listener.close()
        for connection in list(server.server_state.connections):
            connection.shutdown()
        for _ in range(5000):  # at most about 5 s for in-flight responses to finish
            if not (server.server_state.connections or server.server_state.tasks):
                break
            await asyncio.sleep(0.001)
        await server.lifespan.shutdown()
        sock.close()


class LiveDocbase:
    """A running docbase: its server, a client trusting its certificate, admin keys."""

    def __init__(self, server: Server, base_url: str, client: httpx.AsyncClient,
                 admin_keys: Mapping[str, str], certfile: Path) -> None:
        self.server = server
        self.base_url = base_url
        self.client = client
        self.admin_keys = dict(admin_keys)
        self.certfile = certfile

    @property
    def db(self) -> Database:
        """The default database."""
        return self.server.database(self.server.default)

    def auth(self, database: str | None = None) -> dict[str, str]:
        """Headers carrying the full-access key of ``database`` (default: the default)."""
        return {"x-apikey": self.admin_keys[database or self.server.default]}

    async def key(self, database: str | None = None, **options: Any) -> str:
        """Create a key (see :func:`docbase.core.auth.create_key`); return its raw value."""
        raw, _ = await create_key(self.server.database(database or self.server.default),
                                       **options)
        return raw


_IDLE_APPS: list[Any] = []
"""Applications built by :func:`live_docbase` and no longer serving, to serve again."""


@contextlib.contextmanager
def application_for(server: Server) -> Iterator[Any]:
    """An application (:func:`create_app`, the lifespan left to the caller) serving ``server``.

    Building one registers some 240 route handlers and costs about a quarter of a second,
    more than the rest of a test's server; a suite starts hundreds. So an application
    that served an earlier server (and serves nothing now) is pointed at this one:
    the docbase plugin and the application state are its only references to a server.
    """
    app = _IDLE_APPS.pop() if _IDLE_APPS else create_app(server, manage_lifespan=False)
    app.plugins.get(DocbasePlugin).server = server
    app.state[SERVER_STATE] = server
    try:
        yield app
    finally:
        _IDLE_APPS.append(app)


@contextlib.asynccontextmanager
async def live_docbase(
    databases: Mapping[str, Database],
    directory: Path,
    *,
    domain: str | None = None,
) -> AsyncIterator[LiveDocbase]:
    """Serve already opened ``databases``, each with a new full-access key.

    A fresh self-signed certificate is written to ``directory``.
    """
    certfile, keyfile = write_certificate(directory)
    server = Server(databases, domain=domain)
    admin = {name: (await create_key(db, description="test admin"))[0]
             for name, db in databases.items()}
    verify = ssl.create_default_context(cafile=str(certfile))
    with application_for(server) as app:
        async with (
            serve_tls(app, certfile, keyfile) as url,
            httpx.AsyncClient(base_url=url, verify=verify, timeout=30) as client,
        ):
            yield LiveDocbase(server, url, client, admin, certfile)
