"""docbase mounted as a plugin in another Litestar application, over real HTTPS."""

from __future__ import annotations

import ssl
from pathlib import Path
from typing import Any

import httpx
from litestar import Litestar, get
from litestar.di import NamedDependency

from docbase import Database
from docbase.adapters.memory import MemoryDocumentStore
from docbase.core import auth
from docbase.core.server import Server
from docbase.http import DocbasePlugin, create_app
from docbase.http.testing import serve_tls, write_certificate


@get("/hello")
async def hello(docbase_server: NamedDependency[Server]) -> dict[str, Any]:
    return {"hello": "world", "databases": sorted(docbase_server.databases)}


async def test_plugin_serves_docbase_next_to_the_host_routes(stores: Any, tmp_path: Path) -> None:
    server = Server({"main": Database(*stores, name="main")})
    raw, _ = await auth.create_key(server.database("main"))
    app = Litestar(route_handlers=[hello], plugins=[DocbasePlugin(server, manage_lifespan=False)])
    certfile, keyfile = write_certificate(tmp_path)
    verify = ssl.create_default_context(cafile=str(certfile))
    async with (
        serve_tls(app, certfile, keyfile) as url,
        httpx.AsyncClient(base_url=url, verify=verify) as client,
    ):
        assert (await client.get("/hello")).json() == {"hello": "world", "databases": ["main"]}
        created = await client.post("/rest/people", json={"n": 1}, headers={"x-apikey": raw})
        assert created.status_code == 201
        missing = await client.get(f"/rest/people/{'0' * 24}", headers={"x-apikey": raw})
        assert missing.json()["name"] == "NotFound"
        assert (await client.get("/health")).status_code == 200


class CountingStore(MemoryDocumentStore):
    opened = 0
    closed = 0

    async def open(self) -> None:
        self.opened += 1

    async def close(self) -> None:
        self.closed += 1


async def test_app_opens_and_closes_its_databases(tmp_path: Path) -> None:
    store = CountingStore()
    certfile, keyfile = write_certificate(tmp_path)
    async with serve_tls(create_app(Server({"main": Database(store)})), certfile, keyfile):
        assert (store.opened, store.closed) == (1, 0)
    assert (store.opened, store.closed) == (1, 1)
