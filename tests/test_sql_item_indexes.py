"""Item indexes: an equality on a path that meets arrays, served by an index of its items.

``docbase/adapters/sql/item_indexes.py``: the answers of the array-element and lookup
queries are the reference evaluator's (``MemoryDocumentStore``) before the index forms
and after, for documents whose path is an array, a scalar, a nested array, missing or
null; every write after the index formed keeps it right (insert, an update that removes
the item, delete, a delete by filter, the held-back inserts of ``db.batch()``); the
plan reads the index; the index is in the database (a second store sees it) and goes
with its collection.
"""

from __future__ import annotations

import contextlib
import re
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest
import sqlalchemy as sa

from docbase import Database
from docbase.adapters.memory import MemoryDocumentStore
from docbase.adapters.memory.blobs import MemoryBlobStore
from docbase.core.documents import new_document
from docbase.core.query import Query
from docbase.core.query.filters import parse_filter
from docbase.core.update import parse_update
from tests.backends import sql_backend, sql_url

COLLECTION = "people"
QUERIES: list[dict[str, Any]] = [
    {"tags": "t1"}, {"tags": "u2"}, {"tags": {"$in": ["t1", "t2"]}}, {"tags": 1},
    {"tags": {"$in": ["t0", "u0"]}},  # documents holding both: counted once
    {"tags": 1.0}, {"tags": True}, {"tags": None}, {"tags": {"$in": [None, "t3"]}},
    {"tags": {"$ne": "t1"}}, {"tags": {"$nin": ["t1", "u2"]}}, {"tags": ["t1", "u1"]},
    {"customer._id": "c1"}, {"customer._id": {"$in": ["c1", "c2"]}}, {"customer._id": None},
    {"$and": [{"tags": "t1"}, {"customer._id": "c1"}]}, {"$or": [{"tags": "t2"}, {"n": 3}]},
]
"""Equalities the item index serves, and what it must leave as it was (null, !=, arrays)."""
ITEMS = r"c_\d+_items"
"""An item index in a plan: the side table (with 60 documents PostgreSQL may read it
whole; ``tests/test_query_plans.py`` checks the seek on 20,000)."""


def body(i: int) -> dict[str, Any]:
    """Document ``i``: its ``tags`` an array, a scalar, nested, null or missing."""
    shapes: list[dict[str, Any]] = [
        {"tags": [f"t{i % 4}", f"u{i % 3}"], "customer": [{"_id": f"c{i % 3}"}]},
        {"tags": f"t{i % 4}", "customer": {"_id": f"c{i % 3}"}},
        {"tags": [[f"t{i % 4}"], 1], "customer": [{"_id": [f"c{i % 3}", "c9"]}, {"x": 1}]},
        {"tags": None, "customer": [{"_id": None}]},
        {"n": 3},
        {"tags": [1.0, True, "t1"], "customer": []},
    ]
    return shapes[i % len(shapes)]


async def same_answers(store: Any, memory: MemoryDocumentStore) -> None:
    """Every query of :data:`QUERIES` finds and counts what the reference does."""
    for q in QUERIES:
        for query in (Query(filter=parse_filter(q)), Query(filter=parse_filter(q), limit=3)):
            got = sorted(d["_id"] for d in await store.find(COLLECTION, query))
            expected = sorted(d["_id"] for d in await memory.find(COLLECTION, query))
            if query.limit is not None:
                assert len(got) == len(expected), q
            else:
                assert got == expected, q
        assert (await store.count(COLLECTION, parse_filter(q))
                == await memory.count(COLLECTION, parse_filter(q))), q


@contextlib.asynccontextmanager
async def stores(url: str) -> AsyncIterator[tuple[Any, MemoryDocumentStore]]:
    """The SQL store holding 60 documents, ``tags`` and ``customer._id`` indexed; the
    reference holding the same."""
    memory = MemoryDocumentStore()
    async with sql_backend(url) as (store, _):
        documents = [new_document(body(i), "me") for i in range(60)]
        await store.insert(COLLECTION, documents)
        await memory.insert(COLLECTION, documents)
        await same_answers(store, memory)  # (no item index yet)
        for path in (("tags",), ("customer", "_id")):
            await store.ensure_index(COLLECTION, path)
        yield store, memory


@pytest.fixture(params=["sqlite-file", pytest.param("postgresql", marks=pytest.mark.postgres)])
async def url(request: pytest.FixtureRequest, tmp_path: Path) -> AsyncIterator[str]:
    """An empty SQLite file or PostgreSQL schema."""
    async with sql_url(request.param, tmp_path) as found:
        yield found


async def test_answers_are_the_references_and_the_plan_reads_the_index(url: str) -> None:
    async with stores(url) as (store, memory):
        await same_answers(store, memory)
        for q in ({"tags": "t1"}, {"customer._id": {"$in": ["c1", "c2"]}}):
            plan = await store.explain(COLLECTION, Query(filter=parse_filter(q), limit=20))
            assert re.search(ITEMS, plan), plan
        null = await store.explain(COLLECTION, Query(filter=parse_filter({"tags": None})))
        assert not re.search(ITEMS, null)  # null keeps its own branches


async def test_writes_after_the_index_formed_keep_it_right(url: str) -> None:
    async with stores(url) as (store, memory):
        added = [new_document({"tags": ["t1", "new"], "customer": [{"_id": "c1"}]}, "me"),
                 new_document({"tags": "new"}, "me")]
        for document in added:  # one at a time (PostgreSQL's one-row short way too)
            await store.insert(COLLECTION, [document])
            await memory.insert(COLLECTION, [document])
        await same_answers(store, memory)
        first = (await store.find(COLLECTION, Query(filter=parse_filter({"tags": "t1"}))))[0]
        removed = parse_update({"$set": {"tags": ["zz"], "customer": [{"_id": "c2"}]}})
        for target in (store, memory):  # the update that removes the item
            await target.update(COLLECTION, first["_id"], removed, stamp={})
        assert first["_id"] not in [d["_id"] for d in await store.find(
            COLLECTION, Query(filter=parse_filter({"tags": "t1"})))]
        await same_answers(store, memory)
        gone = added[0]["_id"]
        assert await store.delete(COLLECTION, [gone]) == await memory.delete(COLLECTION, [gone])
        await same_answers(store, memory)
        for target in (store, memory):
            await target.delete_where(COLLECTION, parse_filter({"tags": "u2"}))
        await same_answers(store, memory)


async def test_held_back_inserts_of_a_batch_are_indexed(url: str) -> None:
    async with stores(url) as (store, memory):
        db = Database(store, MemoryBlobStore(), name="main")
        async with db.batch():
            made = await db.collection(COLLECTION).insert_many(
                [{"tags": ["batch", "t1"]}, {"tags": "batch", "customer": [{"_id": "cb"}]}])
        await memory.insert(COLLECTION, made)
        await same_answers(store, memory)
        found = await store.find(COLLECTION, Query(filter=parse_filter({"tags": "batch"})))
        assert sorted(d["_id"] for d in found) == sorted(d["_id"] for d in made)
        lookup = await store.count(COLLECTION, parse_filter({"customer._id": "cb"}))
        assert lookup == 1


async def test_the_index_is_in_the_database_and_goes_with_its_collection(url: str) -> None:
    async with stores(url) as (store, _):
        async with sql_backend(url) as (other, _):  # another process's store, as after a restart
            query = Query(filter=parse_filter({"tags": "t1"}), limit=20)
            await other.find(COLLECTION, query)
            assert re.search(ITEMS, await other.explain(COLLECTION, query))
        await store.drop(COLLECTION)
        await store.insert(COLLECTION, [new_document({"tags": "t1"}, "me")])
        assert len(await store.find(COLLECTION, Query(filter=parse_filter({"tags": "t1"})))) == 1
        plan = await store.explain(COLLECTION, Query(filter=parse_filter({"tags": "t1"})))
        assert not re.search(ITEMS, plan)  # (a new table, none yet)


@pytest.mark.postgres
async def test_a_first_version_gin_index_is_rebuilt_as_the_ordered_side_table(
    tmp_path: Path,
) -> None:
    """Layout 3 kept PostgreSQL's item indexes as GIN indexes ``c_<n>_g<i>``; opening
    such a database (migration 4) lists the side table's rows and adds the triggers."""
    from docbase.adapters.sql import schema

    def first_version(conn: sa.Connection) -> None:
        # what layout 3 left: a GIN index per item index (a stand-in with its name), no
        # side table, no triggers
        for number, index in conn.execute(sa.text(
                "SELECT collection_id, id FROM docbase_indexes WHERE path LIKE '{\"items\"%'")):
            conn.execute(sa.text(f"DROP TRIGGER c_{number}_i{index} ON c_{number}"))
            conn.execute(sa.text(f"DROP TABLE IF EXISTS c_{number}_items"))
            conn.execute(sa.text(
                f"CREATE INDEX c_{number}_g{index} ON c_{number} USING gin (doc jsonb_path_ops)"))
        conn.execute(sa.update(schema.layout).values(version=3))

    def state(conn: sa.Connection) -> tuple[list[int], list[str], list[str]]:
        versions = list(conn.execute(sa.select(schema.layout.c.version)).scalars())
        gin = list(conn.execute(sa.text(
            "SELECT indexname FROM pg_indexes WHERE schemaname = current_schema() "
            "AND indexname ~ '^c_[0-9]+_g[0-9]+$'")).scalars())
        triggers = list(conn.execute(sa.text(
            "SELECT tgname FROM pg_trigger WHERE NOT tgisinternal "
            "AND tgrelid::regclass::text ~ '^c_[0-9]+$'")).scalars())
        return versions, gin, triggers

    async with sql_url("postgresql", tmp_path) as url:
        async with stores(url) as (store, memory):
            await store.backend.run(first_version, write=True)
            versions, gin, triggers = await store.backend.run(state, write=False)
            assert (versions, len(gin), triggers) == ([3], 2, [])
        async with sql_backend(url) as (reopened, _):  # a process of the new code opens it
            versions, gin, triggers = await reopened.backend.run(state, write=False)
            assert (versions, gin, len(triggers)) == ([schema.LAYOUT_VERSION], [], 2)
            await same_answers(reopened, memory)
            plan = await reopened.explain(
                COLLECTION, Query(filter=parse_filter({"tags": "t1"}), limit=20))
            assert re.search(r"c_\d+_items", plan), plan
            added = new_document({"tags": ["t1", "after"]}, "me")  # the triggers keep it
            await reopened.insert(COLLECTION, [added])
            found = await reopened.find(COLLECTION, Query(filter=parse_filter({"tags": "after"})))
            assert [d["_id"] for d in found] == [added["_id"]]
