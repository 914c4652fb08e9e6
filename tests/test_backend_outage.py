"""A lost backend is a clear error, then recovery, without restarting ``docbase serve``.

A private PostgreSQL instance is stopped with ``pg_ctl`` and started again; a Mongo wire
server is killed with SIGKILL and started again on its port. Meanwhile every request
answers ``503 BackendError`` JSON with ``Retry-After`` within a bounded time (the
drivers' connect and server-selection timeouts, 5 s), and once the backend is back the
same server process answers again.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest

import docbase
from docbase.core.auth import create_key
from docbase.testing.loopback import held_port
from docbase.testing.mongo_wire import node_available, start_mongo_wire_server
from tests.backends import mongo_url, service_missing
from tests.private_postgresql import private_postgresql
from tests.test_serve_harness import Served, launch

ANSWER_WITHIN = 20.0
"""Seconds any request may take while the backend is down (timeouts are 5 s)."""
RECOVER_WITHIN = 60.0
"""Seconds the server may take to answer again once the backend is back."""


async def _unavailable(served: Served, key: str, requests: list[tuple[str, str, Any]],
                       ) -> None:
    """Send ``requests`` at once; each must answer 503 JSON, Retry-After, in time."""
    async with httpx.AsyncClient(base_url=served.url, verify=served.ssl_context(),
                                 timeout=3 * ANSWER_WITHIN,
                                 headers={"x-apikey": key}) as client:
        async def timed(method: str, path: str, body: Any) -> tuple[float, httpx.Response]:
            started = time.monotonic()
            reply = await client.request(method, path, json=body)
            return time.monotonic() - started, reply

        answers = await asyncio.gather(*(timed(*request) for request in requests))
    for elapsed, reply in answers:
        assert elapsed < ANSWER_WITHIN, f"{reply.request.method} hung for {elapsed:.1f} s"
        assert reply.status_code == 503, reply.text
        assert reply.json()["name"] == "BackendError"
        assert reply.json()["status"] == 503
        assert int(reply.headers["retry-after"]) > 0


def _recovered(served: Served, key: str, method: str, path: str, body: Any = None,
               ) -> httpx.Response:
    """Repeat a request until it stops answering 503; return that answer."""
    deadline = time.monotonic() + RECOVER_WITHIN
    while True:
        reply = served.request(method, path, key=key, json=body)
        if reply.status_code != 503:
            return reply
        assert time.monotonic() < deadline, f"still 503 after {RECOVER_WITHIN} s: {reply.text}"
        time.sleep(0.2)


@pytest.fixture
def postgres() -> Iterator[Any]:
    with private_postgresql() as server:
        yield server


@pytest.mark.postgres
async def test_stopped_postgresql_answers_503_then_the_same_server_recovers(
    tmp_path: Path, postgres: Any
) -> None:
    served = await asyncio.to_thread(launch, tmp_path, "--storage", postgres.url)
    try:
        key = served.admin_key
        created = served.request("POST", "/rest/items", key=key, json={"n": 1})
        assert created.status_code == 201, created.text
        path = f"/rest/items/{created.json()['_id']}"

        await asyncio.to_thread(postgres.stop)
        await _unavailable(served, key, [("GET", path, None), ("GET", "/rest/items", None),
                                         ("POST", "/rest/items", {"n": 2}),
                                         ("PUT", path, {"$inc": {"n": 1}})])
        await asyncio.to_thread(postgres.start)

        back = await asyncio.to_thread(_recovered, served, key, "GET", path)
        assert back.status_code == 200, back.text
        assert back.json() == {"_id": created.json()["_id"], "n": 1}
        assert served.request("PUT", path, key=key, json={"$inc": {"n": 1}}).json()["n"] == 2
        assert served.process.poll() is None, "the server was restarted"
    finally:
        served.stop()


@pytest.mark.mongo
async def test_killed_mongo_wire_server_answers_503_then_the_same_server_recovers(
    tmp_path: Path,
) -> None:
    if not node_available():
        service_missing("the Mongo wire test server needs Node.js")
    with held_port() as port:  # the same port after the kill, no one else's meanwhile
        wire = await asyncio.to_thread(start_mongo_wire_server, port=port)
        url = mongo_url(wire.url, "outage")
        try:
            served = await asyncio.to_thread(launch, tmp_path, "--storage", url)
            try:
                key = served.admin_key
                created = served.request("POST", "/rest/items", key=key, json={"n": 1})
                assert created.status_code == 201, created.text

                wire.kill()
                await _unavailable(served, key, [
                    ("GET", f"/rest/items/{created.json()['_id']}", None),
                    ("POST", "/rest/items", {"n": 2})])
                wire = await asyncio.to_thread(start_mongo_wire_server, port=port)

                # the wire server kept everything in memory, keys too: store the key again
                async with await docbase.connect(url) as db:
                    await create_key(db, raw_key=key)
                again = await asyncio.to_thread(_recovered, served, key, "POST", "/rest/items",
                                                {"n": 3})
                assert again.status_code == 201, again.text
                listed = served.request("GET", "/rest/items", key=key)
                assert [d["n"] for d in listed.json()] == [3]
                assert served.process.poll() is None, "the server was restarted"
            finally:
                served.stop()
        finally:
            wire.stop()
