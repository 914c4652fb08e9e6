"""Concurrent writers on one MongoDB document never lose each other's updates."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from typing import Any

import pytest
from pymongo import AsyncMongoClient

from docbase.adapters.mongo import MongoDocumentStore
from docbase.adapters.mongo.updates import compile_update
from docbase.core.documents import new_document
from docbase.core.update import IncOp, PullOp, Update, parse_update
from tests.backends import mongo_backend, mongo_server

pytestmark = pytest.mark.mongo

C = "counters"


@pytest.fixture
async def mongo(request: pytest.FixtureRequest) -> AsyncIterator[MongoDocumentStore]:
    async with mongo_backend(request) as (store, _):
        yield store


@pytest.fixture
async def second_worker(mongo: MongoDocumentStore) -> AsyncIterator[MongoDocumentStore]:
    """Another store on the same database through its own client, as a second process."""
    url, _ = mongo_server()
    client: AsyncMongoClient[dict[str, Any]] = AsyncMongoClient(url)
    async with MongoDocumentStore(client, mongo.database.name, owns_client=True) as store:
        yield store


async def test_fifty_concurrent_increments_end_at_plus_fifty(
    mongo: MongoDocumentStore,
) -> None:
    document = new_document({"n": 7}, "api")
    await mongo.insert(C, [document])
    update = parse_update({"$inc": {"n": 1}})
    await asyncio.gather(*(mongo.update(C, document["_id"], update, stamp={})
                           for _ in range(50)))
    final = await mongo.get(C, document["_id"])
    assert (final["n"], final["_version"]) == (57, 50)


async def test_native_and_read_apply_replace_updates_interleave_without_loss(
    mongo: MongoDocumentStore, second_worker: MongoDocumentStore
) -> None:
    document = new_document({"n": 0, "objs": [{"x": 1}, {"x": 2}]}, "api")
    await mongo.insert(C, [document])
    native = Update((IncOp(("n",), 1),))
    # a $pull of an object cannot be native, so this one reads, applies and replaces
    replaced = Update((IncOp(("n",), 1), PullOp(("objs",), {"x": 9})))
    assert compile_update(native, {}) is not None
    assert compile_update(replaced, {}) is None
    writes = [store.update(C, document["_id"], update, stamp={})
              for store in (mongo, second_worker) for update in (native, replaced)
              for _ in range(13)]
    await asyncio.gather(*writes)
    final = await mongo.get(C, document["_id"])
    assert (final["n"], final["_version"]) == (52, 52)
    assert final["objs"] == [{"x": 1}, {"x": 2}]
