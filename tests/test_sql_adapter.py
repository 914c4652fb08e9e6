"""The SQL adapter's own promises: URLs, layout versions, table names, caches, blobs."""

from __future__ import annotations

import contextlib
import importlib.util
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest
import sqlalchemy as sa

from docbase.adapters.sql import SqlBlobStore, SqlDocumentStore, create_engine, from_url
from docbase.adapters.sql import schema as layout
from docbase.core.documents import new_document
from docbase.core.errors import ConfigurationError, InvalidQuery, MissingDependencyError
from docbase.core.query import Eq, Query, Regex, Text
from docbase.core.schemes import open_stores
from tests.backends import sql_backend, sql_url


@pytest.fixture(params=["sqlite-file", "sqlite-memory", "postgresql"])
async def url(request: pytest.FixtureRequest, tmp_path: Path) -> AsyncIterator[str]:
    async with sql_url(request.param, tmp_path) as opened_url:
        yield opened_url


@contextlib.asynccontextmanager
async def opened(url: str) -> AsyncIterator[tuple[SqlDocumentStore, SqlBlobStore]]:
    async with sql_backend(url) as pair:
        yield pair


def test_urls_select_the_driver() -> None:
    assert create_engine("sqlite:///x.db").url.drivername == "sqlite+pysqlite"
    assert create_engine("sqlite://").url.drivername == "sqlite+pysqlite"
    postgres = create_engine("postgres://me@localhost/db?schema=s1&pool_pre_ping=true")
    assert postgres.url.drivername == "postgresql+asyncpg"
    assert dict(postgres.url.query) == {}
    store, blobs = open_stores("postgresql://me@localhost/db")
    assert isinstance(store, SqlDocumentStore)
    assert isinstance(blobs, SqlBlobStore)
    with pytest.raises(ConfigurationError):
        create_engine("mysql://localhost/db")


def test_missing_asyncpg_names_the_extra(monkeypatch: pytest.MonkeyPatch) -> None:
    real = importlib.util.find_spec

    def find_spec(name: str, *args: Any) -> Any:
        return None if name == "asyncpg" else real(name, *args)

    monkeypatch.setattr(importlib.util, "find_spec", find_spec)
    with pytest.raises(MissingDependencyError) as raised:
        from_url("postgresql://me@localhost/db")
    assert (raised.value.package, raised.value.extra) == ("asyncpg", "postgresql")


async def test_in_memory_database_is_shared_by_every_connection() -> None:
    async with opened("sqlite://") as (store, _):
        document = new_document({"n": 1}, "api")
        await store.insert("things", [document])
        def registered(conn: sa.Connection) -> Any:
            return conn.execute(sa.text("SELECT count(*) FROM docbase_collections")).scalar()

        for _ in range(2):  # every checkout (and every thread) sees the same database
            assert await store.backend.run(registered, write=False) == 1
        assert await SqlDocumentStore(store.engine).get("things", document["_id"]) == document


async def test_layout_is_versioned_and_migrated_once(url: str) -> None:
    async with opened(url) as (store, _):
        def versions(conn: sa.Connection) -> list[int]:
            return list(conn.execute(sa.select(layout.layout.c.version)).scalars())

        def upgrade(conn: sa.Connection) -> None:
            conn.execute(sa.update(layout.layout).values(version=layout.LAYOUT_VERSION + 1))

        assert await store.backend.run(versions, write=False) == [layout.LAYOUT_VERSION]
        await store.open()  # already at the current version: nothing to do
        assert await store.backend.run(versions, write=False) == [layout.LAYOUT_VERSION]
        await store.backend.run(upgrade, write=True)
        store.backend._ready = False  # as a fresh process opening this database would
        with pytest.raises(ConfigurationError):
            await store.open()


async def test_any_collection_name_maps_to_a_safe_table(url: str) -> None:
    names = ["_keys", "my-things", "Robert'); DROP TABLE docbase_collections; --", "ÆØÅ"]
    async with opened(url) as (store, _):
        for name in names:
            await store.insert(name, [new_document({"name": name}, "api")])
        assert await store.collections() == sorted(names)
        for name in names:
            (found,) = await store.find(name, Query(filter=Eq(("name",), name)))
            assert found["name"] == name


@pytest.fixture(params=["sqlite-file", "postgresql"])
async def shared_url(request: pytest.FixtureRequest, tmp_path: Path) -> AsyncIterator[str]:
    """A database two stores can open at once (so not an in-memory one)."""
    async with sql_url(request.param, tmp_path) as opened_url:
        yield opened_url


async def test_a_collection_dropped_elsewhere_is_noticed(shared_url: str) -> None:
    async with opened(shared_url) as (first, _), opened(shared_url) as (second, _):
        await first.insert("shared", [new_document({"v": "old"}, "api")])
        assert len(await first.find("shared", Query())) == 1  # first caches the table
        await second.drop("shared")
        await second.insert("shared", [new_document({"v": "new"}, "api")])
        assert [d["v"] for d in await first.find("shared", Query())] == ["new"]


async def test_text_search_lowercases_like_python(url: str) -> None:
    async with opened(url) as (store, _):
        kelvin = new_document({"unit": "\u212a"}, "api")  # KELVIN SIGN lowers to "k"
        dotted = new_document({"name": "\u0130stanbul"}, "api")  # lowers to "i̇stanbul"
        await store.insert("words", [kelvin, dotted, new_document({"n": "K"}, "api")])
        assert [d["_id"] for d in await store.find("words", Query(filter=Text("k")))] == [
            kelvin["_id"], *(d["_id"] for d in await store.find("words", Query(
                filter=Eq(("n",), "K"))))]
        found = await store.find("words", Query(filter=Text("i\u0307stanbul")))
        assert [d["_id"] for d in found] == [dotted["_id"]]


async def test_regex_without_an_equivalent_is_refused_consistently(url: str) -> None:
    async with opened(url) as (store, _):
        await store.insert("words", [new_document({"w": "aab"}, "api")])
        query = Query(filter=Regex(("w",), "(?>a+)b"))
        if store.dialect.name == "postgresql":
            with pytest.raises(InvalidQuery):
                await store.find("words", query)
        else:
            assert len(await store.find("words", query)) == 1


async def test_a_ready_async_engine_works_too(tmp_path: Path) -> None:
    from sqlalchemy.ext.asyncio import create_async_engine

    engine = create_async_engine(f"sqlite+aiosqlite:///{tmp_path}/async.db")
    async with SqlDocumentStore(engine, owns_engine=True) as store:
        document = new_document({"n": 1}, "api")
        await store.insert("things", [document])
        assert await store.find("things", Query(filter=Eq(("n",), 1))) == [document]


async def _chunks(*parts: bytes) -> AsyncIterator[bytes]:
    for part in parts:
        yield part


async def test_blob_ranges_cross_chunk_boundaries(url: str) -> None:
    async with opened(url) as (store, _):
        blobs = SqlBlobStore(store.engine, chunk_size=7)
        payload = bytes(range(100))
        await blobs.put("b", _chunks(payload[:3], payload[3:50], payload[50:]), "x/y")
        for start, end in [(0, None), (5, 9), (6, 8), (7, 14), (13, 99), (99, 100), (50, 500)]:
            got = b"".join([part async for part in blobs.read("b", start, end)])
            assert got == payload[start:end], (start, end)
        assert all(len(part) <= 7 for part in [p async for p in blobs.read("b")])
        assert b"".join([p async for p in blobs.read("b", 100)]) == b""
        await blobs.put("empty", _chunks(), "x/y")
        assert (await blobs.stat("empty")).size == 0
        assert b"".join([p async for p in blobs.read("empty")]) == b""
