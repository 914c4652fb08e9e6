"""SQL updates: nothing lost between the read and the write of one document.

PostgreSQL writes the version it read in one statement, and a race starts the update
again; SQLite reads, applies and writes in one write of its writer, under the write
lock, on the writer's connection (``docbase/adapters/sql/driver_updates.py``).
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from pathlib import Path

import pytest

from docbase.adapters.sql import SqlDocumentStore
from docbase.core.documents import Document
from docbase.core.errors import Conflict, NotFound, VersionMismatch
from docbase.core.query import Query
from docbase.core.update import parse_update
from tests.backends import numbered, sql_backend, sql_url, traced_statements

FIRST = numbered(1)["_id"]


@pytest.fixture(params=[pytest.param("postgresql", marks=pytest.mark.postgres)])
async def url(request: pytest.FixtureRequest, tmp_path: Path) -> AsyncIterator[str]:
    """An empty database that two stores (as two processes would) open (compare-and-swap)."""
    async with sql_url(request.param, tmp_path) as opened:
        yield opened


@pytest.fixture
async def sqlite(tmp_path: Path) -> AsyncIterator[tuple[SqlDocumentStore, list[str]]]:
    """A SQLite file's store, with the SQL each connection made from now on runs."""
    async with sql_backend(f"sqlite:///{tmp_path}/updates.db") as (store, _blobs):
        await store.insert("items", [numbered(1, count=0, name="a"), numbered(2, count=0)])
        statements = traced_statements(store)

        yield store, statements


def other_writes_between_read_and_write(store: SqlDocumentStore, other: SqlDocumentStore,
                                        body: dict[str, object]) -> None:
    """Make ``other`` update the document each time ``store`` has read it at version 0."""
    read = store.current

    async def get(collection: str, document_id: str) -> Document:
        document = await read(collection, document_id)
        if document["_version"] == 0:
            await other.update(collection, document_id, parse_update(body), stamp={})
        return document

    store.current = get  # type: ignore[method-assign]


async def test_an_update_racing_another_process_starts_again_from_its_version(
    url: str
) -> None:
    async with sql_backend(url) as (store, _b), sql_backend(url) as (other, _b2):
        await store.insert("items", [numbered(1, count=0, name="a")])
        other_writes_between_read_and_write(store, other, {"$inc": {"count": 10}})
        updated = await store.update("items", FIRST, parse_update({"$inc": {"count": 1}}),
                                     stamp={"_changed": "later"})
        assert (updated["count"], updated["_version"], updated["name"]) == (11, 2, "a")
        assert await other.get("items", FIRST) == updated


async def test_an_expected_version_overtaken_by_the_race_is_a_mismatch(url: str) -> None:
    async with sql_backend(url) as (store, _b), sql_backend(url) as (other, _b2):
        await store.insert("items", [numbered(1, count=0)])
        other_writes_between_read_and_write(store, other, {"count": 5})
        with pytest.raises(VersionMismatch):
            await store.update("items", FIRST, parse_update({"count": 1}), stamp={},
                               expected_version=0)
        assert (await other.get("items", FIRST))["count"] == 5


async def test_a_document_deleted_by_the_race_is_not_found(url: str) -> None:
    async with sql_backend(url) as (store, _b), sql_backend(url) as (other, _b2):
        await store.insert("items", [numbered(1), numbered(2)])
        read = store.current

        async def get(collection: str, document_id: str) -> Document:
            document = await read(collection, document_id)
            await other.delete(collection, [document_id])
            return document

        store.current = get  # type: ignore[method-assign]
        with pytest.raises(NotFound):
            await store.update("items", FIRST, parse_update({"count": 1}), stamp={})
        assert [d["_id"] for d in await other.find("items", Query())] == [numbered(2)["_id"]]


async def test_a_sqlite_update_reads_and_writes_in_one_write_transaction(
    sqlite: tuple[SqlDocumentStore, list[str]],
) -> None:
    store, statements = sqlite
    updated = await store.update("items", FIRST, parse_update({"$inc": {"count": 1}}),
                                 stamp={"_changed": "later"})
    assert (updated["count"], updated["_version"], updated["_changed"]) == (1, 1, "later")
    assert await store.get("items", FIRST) == updated
    begin = statements.index("BEGIN IMMEDIATE")
    read = next(n for n, s in enumerate(statements) if s.startswith("SELECT body FROM c_"))
    write = next(n for n, s in enumerate(statements) if s.startswith("UPDATE c_"))
    commit = statements.index("COMMIT")
    assert begin < read < write < commit  # the read under the write lock, then the write


async def test_sqlite_updates_of_one_document_at_once_all_count(
    sqlite: tuple[SqlDocumentStore, list[str]],
) -> None:
    store, _ = sqlite
    await asyncio.gather(*(store.update("items", FIRST, parse_update({"$inc": {"count": 1}}),
                                        stamp={}) for _ in range(50)))
    stored = await store.get("items", FIRST)
    assert (stored["count"], stored["_version"]) == (50, 50)


async def test_a_refused_sqlite_update_fails_alone_and_writes_nothing(
    sqlite: tuple[SqlDocumentStore, list[str]],
) -> None:
    store, statements = sqlite
    second = numbered(2)["_id"]
    results = await asyncio.gather(
        store.update("items", second, parse_update({"$inc": {"count": 1}}), stamp={}),
        store.update("items", "0" * 24, parse_update({"count": 1}), stamp={}),
        store.update("items", FIRST, parse_update({"count": 1}), stamp={},
                     expected_version=7),
        store.update("items", FIRST, parse_update({"$inc": {"name": 1}}), stamp={}),
        store.update("items", second, parse_update({"$inc": {"count": 1}}), stamp={}),
        return_exceptions=True)
    assert isinstance(results[1], NotFound)
    assert isinstance(results[2], VersionMismatch)
    assert type(results[3]) is Conflict  # $inc of a string
    assert (await store.get("items", second))["count"] == 2
    assert (await store.get("items", FIRST))["_version"] == 0
    # refused before anything was written: no batch was rolled back for them
    assert not [s for s in statements if "ROLLBACK" in s]
