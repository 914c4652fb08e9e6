"""A lost PostgreSQL connection surfaces as BackendError (or is healed) and never lingers."""

from __future__ import annotations

import socket
import time
from collections.abc import AsyncIterator

import pytest
import sqlalchemy as sa
from sqlalchemy.ext.asyncio import AsyncEngine, create_async_engine

from docbase.adapters.sql import SqlDocumentStore, from_url
from docbase.core.documents import new_document
from docbase.core.errors import BackendError
from docbase.core.query import Query
from tests.backends import POSTGRESQL_URL, postgresql_schema

ASYNC_URL = POSTGRESQL_URL.replace("postgresql://", "postgresql+asyncpg://", 1)


@pytest.fixture
async def schema() -> AsyncIterator[str]:
    async with postgresql_schema() as url:
        yield url.rpartition("schema=")[2]


async def _store(schema: str, *, pre_ping: bool) -> SqlDocumentStore:
    engine = create_async_engine(ASYNC_URL, pool_pre_ping=pre_ping, pool_size=1,
                                 connect_args={"server_settings": {"search_path": schema}})
    store = SqlDocumentStore(engine, owns_engine=True)
    await store.open()
    return store


async def _kill_backends_of(engine: AsyncEngine) -> int:
    """Terminate the server process behind the pooled connection from another session."""
    async with engine.connect() as conn:
        pid = (await conn.execute(sa.text("SELECT pg_backend_pid()"))).scalar_one()
    admin = create_async_engine(ASYNC_URL)
    try:
        async with admin.connect() as conn:
            killed = (await conn.execute(sa.text("SELECT pg_terminate_backend(:pid)"),
                                         {"pid": pid})).scalar_one()
    finally:
        await admin.dispose()
    assert killed
    return int(pid)


@pytest.mark.parametrize("pre_ping", [True, False], ids=["pre-ping", "no-pre-ping"])
async def test_killed_connection_gives_backend_error_or_success_then_recovers(
    schema: str, pre_ping: bool,
) -> None:
    store = await _store(schema, pre_ping=pre_ping)
    try:
        document = new_document({"n": 1}, "api")
        await store.insert("things", [document])
        assert isinstance(store.engine, AsyncEngine)
        await _kill_backends_of(store.engine)
        if pre_ping:  # the pool notices the dead connection and reconnects first
            assert await store.get("things", document["_id"]) == document
        else:
            with pytest.raises(BackendError) as raised:
                await store.get("things", document["_id"])
            assert raised.value.__cause__ is not None  # raised "from" the driver error
        # the next call works again, on a fresh connection
        assert await store.find("things", Query()) == [document]
        assert (await store.get("things", document["_id"])) == document
    finally:
        await store.close()


async def test_unreachable_server_is_a_backend_error() -> None:
    engine = create_async_engine("postgresql+asyncpg://postgres@127.0.0.1:1/none")
    store = SqlDocumentStore(engine, owns_engine=True)
    with pytest.raises(BackendError):
        await store.open()
    await store.close()


async def test_server_that_never_answers_is_a_backend_error_within_the_connect_timeout(
) -> None:
    # a listening socket that is never read: connections complete, and hang like a
    # PostgreSQL that stopped answering
    with socket.socket() as silent:
        silent.bind(("127.0.0.1", 0))
        silent.listen(8)
        port = silent.getsockname()[1]
        store, _ = from_url(f"postgresql://postgres@127.0.0.1:{port}/none?connect_timeout=1")
        started = time.monotonic()
        with pytest.raises(BackendError):
            await store.open()
        assert time.monotonic() - started < 10  # bounded by the timeout, not the OS
        await store.close()
