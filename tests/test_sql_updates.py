"""SQL updates write the version they read, one statement; a race starts them again."""

from __future__ import annotations

from collections.abc import AsyncIterator
from pathlib import Path

import pytest

from docbase.adapters.sql import SqlDocumentStore
from docbase.core.documents import Document
from docbase.core.errors import NotFound, VersionMismatch
from docbase.core.query import Query
from docbase.core.update import parse_update
from tests.backends import numbered, sql_backend, sql_url

FIRST = numbered(1)["_id"]


@pytest.fixture(params=["sqlite-file", pytest.param("postgresql", marks=pytest.mark.postgres)])
async def url(request: pytest.FixtureRequest, tmp_path: Path) -> AsyncIterator[str]:
    """An empty database that two stores (as two processes would) open."""
    async with sql_url(request.param, tmp_path) as opened:
        yield opened


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
