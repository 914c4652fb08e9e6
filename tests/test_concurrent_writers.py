"""Two ``docbase serve`` processes, many clients: no lost update, no torn delete.

Both servers share one storage (an SQLite file, a PostgreSQL schema, a database on the
Mongo wire server) and the clients of every scenario are spread over both, so that
writes to one document interleave across processes. Memory storage lives inside one
process, so on ``memory`` both "servers" are the same single process (the scenarios
then exercise concurrency within it only).

Each scenario checks that the stored result is exactly what the acknowledged answers
say: every acknowledged ``$inc`` counted once, every ``If-Match`` retry loop's change
kept, and a ``DELETE`` with ``If-Match`` racing an update either refused (412) with
the update kept, or done with the update refused (404), never both acknowledged.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
from collections.abc import AsyncIterator, Iterator
from typing import Any

import httpx
import pytest

from tests.served_engines import ENGINES, engine_storage
from tests.test_serve_harness import Served, launch

C = "/rest/shared"
CLIENTS_PER_SERVER = 4


class Servers:
    """The servers under test (the same one twice on memory) and their admin key."""

    def __init__(self, servers: list[Served]) -> None:
        self.servers = servers
        self.key = servers[0].admin_key

    @contextlib.asynccontextmanager
    async def clients(self) -> AsyncIterator[list[httpx.AsyncClient]]:
        """:data:`CLIENTS_PER_SERVER` clients on each server, alternating between them."""
        async with contextlib.AsyncExitStack() as stack:
            clients = [await stack.enter_async_context(httpx.AsyncClient(
                base_url=served.url, verify=served.ssl_context(), timeout=60,
                headers={"x-apikey": self.key}))
                for _ in range(CLIENTS_PER_SERVER) for served in self.servers]
            yield clients


@pytest.fixture(scope="module", params=ENGINES)
def servers(request: pytest.FixtureRequest,
            tmp_path_factory: pytest.TempPathFactory) -> Iterator[Servers]:
    """Two servers on one storage of the engine (one server on memory), for the module."""
    directory = tmp_path_factory.mktemp(request.param)
    with engine_storage(request.param, directory) as storage:
        started: list[Served] = []
        try:
            for name in ("a", "b")[: 1 if request.param == "memory" else 2]:
                (directory / name).mkdir()
                started.append(launch(directory / name, "--storage", storage))
            yield Servers(started * (2 if request.param == "memory" else 1))
        finally:
            for served in started:
                served.stop()


async def _create(client: httpx.AsyncClient, body: Any) -> Any:
    reply = await client.post(C, json=body)
    assert reply.status_code == 201, reply.text
    return reply.json()


async def test_concurrent_increments_from_two_processes_all_count(servers: Servers) -> None:
    async with servers.clients() as clients:
        counter = await _create(clients[0], {"n": 0})
        path = f"{C}/{counter['_id']}"

        async def increment(client: httpx.AsyncClient) -> list[int]:
            statuses = []
            for _ in range(10):
                statuses.append((await client.put(path, json={"$inc": {"n": 1}})).status_code)
            return statuses

        statuses = [s for batch in await asyncio.gather(*map(increment, clients))
                    for s in batch]
        final = (await clients[1].get(path, params={"metafields": "true"})).json()
    assert statuses == [200] * len(statuses)
    assert (final["n"], final["_version"]) == (len(statuses), len(statuses))


async def test_if_match_retry_loops_from_two_processes_lose_no_change(
    servers: Servers,
) -> None:
    async with servers.clients() as clients:
        shared = await _create(clients[0], {"items": []})
        path = f"{C}/{shared['_id']}"
        refused = 0

        async def append(client: httpx.AsyncClient, token: str) -> None:
            nonlocal refused
            while True:
                current = await client.get(path)
                assert current.status_code == 200, current.text
                reply = await client.patch(path, json={"items": [*current.json()["items"], token]},
                                           headers={"if-match": current.headers["etag"]})
                if reply.status_code == 200:
                    return
                assert reply.status_code == 412, reply.text
                refused += 1

        async def appender(client: httpx.AsyncClient, number: int) -> list[str]:
            tokens = [f"{number}-{i}" for i in range(4)]
            for token in tokens:
                await append(client, token)
            return tokens

        sent = [t for tokens in await asyncio.gather(
            *(appender(client, n) for n, client in enumerate(clients))) for t in tokens]
        final = (await clients[1].get(path, params={"metafields": "true"})).json()
    assert sorted(final["items"]) == sorted(sent)
    assert final["_version"] == len(sent)
    assert refused > 0, "the clients never raced: the test proved nothing"


async def test_delete_if_match_racing_an_update_is_never_both_acknowledged(
    servers: Servers,
) -> None:
    async with servers.clients() as clients:
        documents = await _create(clients[0], [{"n": i} for i in range(40)])

        async def race(number: int, document: dict[str, Any]) -> tuple[int, int]:
            path = f"{C}/{document['_id']}"
            deleter, updater = clients[number % len(clients)], clients[(number + 1) % len(clients)]
            deleted, updated = await asyncio.gather(
                deleter.delete(path, headers={"if-match": f'"{document["_id"]}-0"'}),
                updater.put(path, json={"$inc": {"n": 100}}))
            return deleted.status_code, updated.status_code

        outcomes = await asyncio.gather(*(race(n, d) for n, d in enumerate(documents)))
        listed = await clients[1].get(C, params={"max": 1000, "metafields": "true"})
    stored = {d["_id"]: d for d in listed.json()}
    for document, (deleted, updated) in zip(documents, outcomes, strict=True):
        assert (deleted, updated) in ((200, 404), (412, 200)), (document, deleted, updated)
        if updated == 200:
            assert (stored[document["_id"]]["n"], stored[document["_id"]]["_version"]) == (
                document["n"] + 100, 1)
        else:
            assert document["_id"] not in stored
    print(f"\ndelete won {sum(d == 200 for d, _ in outcomes)}, update won "
          f"{sum(u == 200 for _, u in outcomes)} of {len(outcomes)} races; "
          f"{json.dumps(sorted(set(outcomes)))}")
