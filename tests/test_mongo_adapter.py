"""The Mongo adapter's own promises: URLs, storage layout, indexes, blobs, failures."""

from __future__ import annotations

import asyncio
import contextlib
import gc
import subprocess
import sys
import warnings
from collections.abc import AsyncIterator, Iterator
from pathlib import Path
from typing import Any

import pytest
from bson import ObjectId

import docbase
from docbase.adapters.mongo import MongoBlobStore, MongoDocumentStore, from_url
from docbase.adapters.mongo.codec import collection_name, docbase_name
from docbase.core.documents import new_document
from docbase.core.errors import BackendError, Conflict, InvalidQuery, NotFound
from docbase.core.query import MATCH_ALL, Query
from docbase.testing.loopback import free_port, held_port
from docbase.testing.mongo_wire import MongoWireServer, start_mongo_wire_server
from tests.backends import mongo_backend, mongo_server, mongo_url

pytestmark = pytest.mark.mongo

C = "things"


@pytest.fixture
async def stores(request: pytest.FixtureRequest) -> AsyncIterator[tuple[Any, Any]]:
    async with mongo_backend(request) as pair:
        yield pair


@pytest.fixture
def mongo(stores: tuple[MongoDocumentStore, MongoBlobStore]) -> MongoDocumentStore:
    return stores[0]


@pytest.fixture
def blobs(stores: tuple[MongoDocumentStore, MongoBlobStore]) -> MongoBlobStore:
    return stores[1]


async def _chunks(*parts: bytes) -> AsyncIterator[bytes]:
    for part in parts:
        yield part


# ---------------------------------------------------------------- URLs and wiring


def test_database_name_comes_from_the_url_path() -> None:
    store, _ = from_url("mongodb://127.0.0.1:1/shop?serverSelectionTimeoutMS=100")
    assert store.database.name == "shop"
    store, _ = from_url("mongodb://127.0.0.1:1")
    assert store.database.name == "docbase"


def test_missing_pymongo_raises_missing_dependency_error() -> None:
    code = ("import sys; sys.modules['pymongo'] = None\n"
            "from docbase.core.schemes import open_stores\n"
            "from docbase.core.errors import MissingDependencyError\n"
            "try:\n    open_stores('mongodb://localhost/x')\n"
            "except MissingDependencyError as e:\n    print(e.package, e.extra)\n")
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                            check=True)
    assert result.stdout.split() == ["pymongo", "mongo"]


async def test_connect_by_url_gives_a_working_database(mongo: MongoDocumentStore) -> None:
    url = mongo_url(mongo_server()[0], mongo.database.name)
    async with await docbase.connect(url) as database:
        created = await database.collection("people").insert({"name": "Ada"})
        assert (await database.collection("people").get(created["_id"]))["name"] == "Ada"


@pytest.fixture
def closes_unreachable_clients() -> Iterator[None]:
    """Collect the socket pymongo 4.20 leaks when a client closes mid-connect.

    Closing a client cancels its monitor; when that happens while it connects to a
    server that is down, ``_async_create_connection`` never closes the new socket. The
    leak is the driver's (the fd is freed when the socket is collected); collecting it
    here keeps its ResourceWarning from failing whichever test runs next.
    """
    yield
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ResourceWarning)
        gc.collect()


@pytest.mark.usefixtures("closes_unreachable_clients")
async def test_unreachable_server_raises_backend_error_on_open() -> None:
    store, _ = from_url(f"mongodb://127.0.0.1:{free_port()}/x?serverSelectionTimeoutMS=200")
    with pytest.raises(BackendError):
        await store.open()
    await store.close()


# ---------------------------------------------------------------- storage layout


async def test_ids_are_stored_as_object_ids(mongo: MongoDocumentStore) -> None:
    document = new_document({"ref": "0123456789abcdef01234567"}, "api")
    await mongo.insert(C, [document])
    raw = await mongo.database[C].find_one()
    assert raw is not None
    assert raw["_id"] == ObjectId(document["_id"])
    assert raw["ref"] == "0123456789abcdef01234567"  # only _id is converted
    assert await mongo.get(C, document["_id"]) == document


@pytest.mark.parametrize("name", ["plain", "_keys", "a.b", "cost$", "100%", "system.x"])
def test_collection_names_round_trip(name: str) -> None:
    stored = collection_name(name)
    assert "." not in stored
    assert "$" not in stored
    assert docbase_name(stored) == name


async def test_collections_lists_only_docbase_collections_holding_documents(
    mongo: MongoDocumentStore, blobs: MongoBlobStore
) -> None:
    await mongo.insert("a.b", [new_document({}, "api")])
    emptied = new_document({}, "api")
    await mongo.insert("emptied", [emptied])
    await mongo.delete("emptied", [emptied["_id"]])
    await blobs.put("k", _chunks(b"x"), "text/plain")
    assert await mongo.collections() == ["a.b"]


async def test_unstorable_number_is_refused_and_nothing_is_inserted(
    mongo: MongoDocumentStore,
) -> None:
    with pytest.raises(InvalidQuery):
        await mongo.insert(C, [new_document({"n": 1}, "api"), new_document({"n": 2**70}, "api")])
    assert await mongo.count(C, MATCH_ALL) == 0


async def test_bad_ids_are_not_found(mongo: MongoDocumentStore) -> None:
    with pytest.raises(NotFound):
        await mongo.get(C, "not-an-id")
    assert await mongo.delete(C, ["not-an-id"]) == []


# ---------------------------------------------------------------- indexes


async def test_unique_index_ignores_missing_and_null(mongo: MongoDocumentStore) -> None:
    await mongo.insert(C, [new_document(b, "api") for b in ({}, {}, {"e": None}, {"e": None},
                                                            {"e": "a"})])
    await mongo.ensure_index(C, ("e",), unique=True)
    info = await mongo.database[C].index_information()
    (unique,) = [i for i in info.values() if i.get("unique") and i["key"] == [("e", 1)]]
    assert "null" not in unique["partialFilterExpression"]["e"]["$type"]


async def test_unique_index_replaces_a_plain_one(mongo: MongoDocumentStore) -> None:
    await mongo.ensure_index(C, ("e",))
    await mongo.ensure_index(C, ("e",), unique=True)
    await mongo.ensure_index(C, ("e",))
    keyed = [i for i in (await mongo.database[C].index_information()).values()
             if i["key"] == [("e", 1)]]
    assert [bool(i.get("unique")) for i in keyed] == [True]


async def test_unique_index_over_duplicates_conflicts(mongo: MongoDocumentStore) -> None:
    await mongo.insert(C, [new_document({"e": 1}, "api"), new_document({"e": 1.0}, "api")])
    with pytest.raises(Conflict):
        await mongo.ensure_index(C, ("e",), unique=True)


# ---------------------------------------------------------------- blobs


async def test_range_reads_cross_gridfs_chunks(blobs: MongoBlobStore) -> None:
    payload = bytes(range(256)) * 4096  # 1 MiB: four GridFS chunks
    await blobs.put("big", _chunks(payload[:100_000], payload[100_000:]), "application/x")
    for start, end in ((0, 10), (261_000, 262_000), (1_000_000, None), (5, 5)):
        got = b"".join([c async for c in blobs.read("big", start, end)])
        assert got == payload[start:end]


async def test_failed_upload_keeps_the_old_blob(blobs: MongoBlobStore,
                                                mongo: MongoDocumentStore) -> None:
    await blobs.put("k", _chunks(b"old"), "text/plain")

    async def broken() -> AsyncIterator[bytes]:
        yield b"x" * 300_000
        raise RuntimeError("client went away")

    with pytest.raises(RuntimeError):
        await blobs.put("k", broken(), "text/plain")
    assert b"".join([c async for c in blobs.read("k")]) == b"old"
    assert await mongo.database["blobs.files"].count_documents({}) == 1
    assert await mongo.database["blobs.chunks"].count_documents({}) == 1


async def test_concurrent_puts_leave_exactly_one_blob(blobs: MongoBlobStore,
                                                      mongo: MongoDocumentStore) -> None:
    await asyncio.gather(*(blobs.put("k", _chunks(bytes([i]) * 10), "text/plain")
                           for i in range(5)))
    assert (await blobs.stat("k")).size == 10
    assert await mongo.database["blobs.files"].count_documents({}) == 1


# ---------------------------------------------------------------- failures


async def test_closed_client_surfaces_as_backend_error() -> None:
    store, _ = from_url(mongo_url(mongo_server()[0], "docbase_closed"))
    await store.open()
    await store.close()
    with pytest.raises(BackendError):
        await store.find(C, Query())


class RestartableWireServer:
    """A wire server of our own, stopped and started again on the same port."""

    def __init__(self) -> None:
        self._held = contextlib.ExitStack()  # no one else's port between a stop and a start
        self.port = self._held.enter_context(held_port())
        self._server: MongoWireServer | None = None

    def start(self) -> None:
        self._server = start_mongo_wire_server(port=self.port)

    def stop(self) -> None:
        if self._server is not None:
            self._server.stop()
            self._server = None

    def close(self) -> None:
        """Stop the server and let the port go."""
        self.stop()
        self._held.close()


@pytest.fixture
def restartable_server() -> Iterator[RestartableWireServer]:
    if not mongo_server()[1]:
        pytest.skip("only the wire test server can be stopped and restarted by a test")
    server = RestartableWireServer()
    try:
        server.start()
        yield server
    finally:
        server.close()


@pytest.mark.usefixtures("closes_unreachable_clients")
async def test_lost_server_raises_backend_error_then_reconnects(
    restartable_server: RestartableWireServer,
) -> None:
    url = f"mongodb://127.0.0.1:{restartable_server.port}/x?serverSelectionTimeoutMS=1000&serverMonitoringMode=poll"
    # a lost server is retried for the whole operation's bound (pymongo's client-side
    # timeout): 2 s, not the default 10, is enough to see it given up on
    store, _ = from_url(url, query_timeout=2.0)
    async with store:
        await store.insert(C, [new_document({"n": 1}, "api")])
        restartable_server.stop()
        with pytest.raises(BackendError):
            await store.count(C, MATCH_ALL)
        restartable_server.start()
        assert await store.count(C, MATCH_ALL) == 0  # the new server starts empty
        await store.insert(C, [new_document({"n": 2}, "api")])
        assert await store.count(C, MATCH_ALL) == 1


def test_the_wire_server_keeps_the_callers_node_options_and_a_small_young_generation(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    if not mongo_server()[1]:
        pytest.skip("only the wire test server is started by the tests")
    monkeypatch.setenv("NODE_OPTIONS", "--max-old-space-size=512")
    server = start_mongo_wire_server()
    try:
        environment = Path(f"/proc/{server.pid}/environ").read_bytes().split(b"\0")
    finally:
        server.stop()
    assert b"NODE_OPTIONS=--max-old-space-size=512 --max-semi-space-size=4" in environment
