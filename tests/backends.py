"""The storage backends every adapter-parametrised test runs against.

Each backend is an async context manager factory yielding an open, empty
``(DocumentStore, BlobStore)`` pair. A backend whose service is missing is skipped with
a reason locally and fails under ``CI=true``.
"""

from __future__ import annotations

import contextlib
import os
from collections.abc import AsyncIterator, Callable
from pathlib import Path
from typing import Any

import pytest

from docbase.adapters.memory import MemoryBlobStore, MemoryDocumentStore

IN_CI = os.environ.get("CI", "").lower() == "true"

Backend = Callable[[pytest.FixtureRequest], contextlib.AbstractAsyncContextManager[Any]]

TEST_QUERY_TIMEOUT = 60.0
"""Seconds a store opened by these backends lets one operation run (product default 10).

A deadline only a hang misses (docs/testing.md): the workers share two cores with the
PostgreSQL server, the Mongo wire server (JavaScript, one thread) and served processes,
and under that load a trivial query on the wire server was seen to outlast 10 s. The
tests of the timeout itself open their stores with their own, short one.
"""


def service_missing(reason: str) -> None:
    """Skip locally, fail under CI: a test that needs a service never silently passes."""
    if IN_CI:
        pytest.fail(f"required service unavailable under CI=true: {reason}")
    pytest.skip(reason)


@contextlib.asynccontextmanager
async def memory_backend(request: pytest.FixtureRequest) -> AsyncIterator[Any]:
    async with MemoryDocumentStore() as store:
        yield store, MemoryBlobStore()


BACKENDS: dict[str, Backend] = {"memory": memory_backend}


# ---------------------------------------------------------------------------- mongo

MONGO_URL_VARIABLE = "DOCBASE_TEST_MONGO_URL"
"""When set, the Mongo tests run against this real MongoDB instead of the wire server."""

MONGO_WIRE_SERVER_DEVIATIONS: dict[str, str] = {
    "test_unique_index_refuses_duplicates": (
        "CongoDB does not enforce unique secondary indexes on insert or update "
        "(it checks them only when building an index over existing documents)"
    ),
    "test_unique_index_ignores_missing_and_null": (
        "CongoDB ignores partialFilterExpression when it builds a unique index over "
        "existing documents, so two documents without the field count as duplicates"
    ),
}
"""Tests (by function name) that fail only on the CongoDB wire server, and why.

They are marked as strict xfails on that server alone; docs/adapters.md lists them.
"""

_mongo_server: dict[str, Any] = {}


def mongo_server() -> tuple[str, bool]:
    """The URL of the MongoDB under test, and whether it is the CongoDB wire server.

    ``DOCBASE_TEST_MONGO_URL`` wins; otherwise one wire server is started for the whole
    test session (and stopped when the interpreter exits).
    """
    import atexit

    from docbase.testing.mongo_wire import (
        MongoWireServerError,
        node_available,
        start_mongo_wire_server,
    )

    url = os.environ.get(MONGO_URL_VARIABLE)
    if url:
        return url, False
    if "error" in _mongo_server:
        service_missing(_mongo_server["error"])
    if "server" not in _mongo_server:
        if not node_available():
            _mongo_server["error"] = ("the Mongo wire test server needs Node.js (node and "
                                      f"npm), or set {MONGO_URL_VARIABLE}")
            service_missing(_mongo_server["error"])
        try:
            server = start_mongo_wire_server()
        except MongoWireServerError as exc:
            _mongo_server["error"] = f"the Mongo wire test server did not start: {exc}"
            service_missing(_mongo_server["error"])
        atexit.register(server.stop)
        _mongo_server["server"] = server
    return _mongo_server["server"].url, True


def stop_mongo_server() -> None:
    """Stop this process's wire server, if it started one (at the end of the session).

    ``atexit`` alone is not enough: an xdist worker ends with ``os._exit``, which runs no
    exit handlers, and each run left its workers' servers behind (300 MB each).
    """
    server = _mongo_server.pop("server", None)
    if server is not None:
        server.stop()


def mongo_url(base: str, database: str) -> str:
    """``base`` with its path (the database) replaced by ``database``."""
    import urllib.parse

    parts = urllib.parse.urlsplit(base)
    return urllib.parse.urlunsplit(parts._replace(path="/" + database))


def mark_wire_server_deviation(request: pytest.FixtureRequest) -> None:
    """Expect the requesting test to fail if it is a known deviation of the wire server."""
    reason = MONGO_WIRE_SERVER_DEVIATIONS.get(getattr(request.node, "originalname", ""))
    if reason is not None:
        request.node.add_marker(pytest.mark.xfail(reason=f"CongoDB wire server: {reason}",
                                                  strict=True))


@contextlib.asynccontextmanager
async def mongo_backend(request: pytest.FixtureRequest) -> AsyncIterator[Any]:
    """A fresh database on the MongoDB under test, dropped afterwards."""
    import uuid

    from docbase.core.errors import MissingDependencyError

    try:
        from pymongo import AsyncMongoClient

        from docbase.adapters.mongo import MongoBlobStore, MongoDocumentStore
    except (ImportError, MissingDependencyError):
        service_missing("pymongo is not installed (pip install 'docbase[mongo]')")
    url, wire_server = mongo_server()
    if wire_server:
        mark_wire_server_deviation(request)
    database = f"docbase_test_{uuid.uuid4().hex[:16]}"
    client: AsyncMongoClient[dict[str, Any]] = AsyncMongoClient(
        mongo_url(url, database), serverSelectionTimeoutMS=10_000)
    try:
        async with MongoDocumentStore(client, database,
                                      query_timeout=TEST_QUERY_TIMEOUT) as store:
            yield store, MongoBlobStore(client, database)
    finally:
        await client.drop_database(database)
        await client.close()


BACKENDS["mongo"] = mongo_backend


# ---------------------------------------------------------------------------- SQL

POSTGRESQL_URL = os.environ.get("DOCBASE_TEST_POSTGRESQL",
                                "postgresql://postgres@127.0.0.1:5432/test")


@contextlib.asynccontextmanager
async def postgresql_schema() -> AsyncIterator[str]:
    """A fresh, uniquely named PostgreSQL schema, dropped afterwards; yields its URL."""
    import uuid

    import sqlalchemy as sa
    from sqlalchemy.ext.asyncio import create_async_engine
    from sqlalchemy.pool import NullPool

    worker = os.environ.get("PYTEST_XDIST_WORKER", "main")  # e.g. gw0: whose schema it is
    schema = f"docbase_test_{worker}_{os.getpid()}_{uuid.uuid4().hex[:10]}"
    admin = create_async_engine(POSTGRESQL_URL.replace("postgresql://", "postgresql+asyncpg://",
                                                       1), poolclass=NullPool)
    try:
        async with admin.begin() as conn:
            await conn.execute(sa.text(f'CREATE SCHEMA "{schema}"'))
    except (OSError, sa.exc.DBAPIError) as exc:
        await admin.dispose()
        service_missing(f"PostgreSQL at {POSTGRESQL_URL} is unreachable: {exc}")
    try:
        yield f"{POSTGRESQL_URL}?schema={schema}"
    finally:
        async with admin.begin() as conn:
            await conn.execute(sa.text(f'DROP SCHEMA "{schema}" CASCADE'))
        await _vacuum_catalogs_now_and_then(admin)
        await admin.dispose()


_CATALOGS = ("pg_attribute", "pg_class", "pg_type", "pg_depend", "pg_index",
             "pg_constraint", "pg_attrdef", "pg_namespace", "pg_statistic", "pg_sequence")
VACUUM_EVERY = 40
"""Schemas a worker drops between two vacuums of the system catalogs."""
_dropped = [0]


async def _vacuum_catalogs_now_and_then(admin: Any) -> None:
    """Vacuum the catalogs after every :data:`VACUUM_EVERY` schemas this process dropped.

    Each schema leaves thousands of dead catalog rows when dropped (its tables' columns,
    types, indexes, dependencies). Where the server runs with autovacuum off (this
    machine's does), a whole run piled up 330,000 dead rows in ``pg_attribute`` alone,
    and every new connection's type look-up and every plan of a new schema's first query
    wades through them: a bare ``SELECT`` on a fresh schema once outlasted the 10 s
    statement timeout late in a CI run. Vacuuming, as autovacuum would, keeps them few.
    """
    import sqlalchemy as sa

    _dropped[0] += 1
    if _dropped[0] % VACUUM_EVERY:
        return
    async with admin.connect() as conn:
        autocommit = await conn.execution_options(isolation_level="AUTOCOMMIT")
        for catalog in _CATALOGS:
            await autocommit.execute(sa.text(f"VACUUM pg_catalog.{catalog}"))


@contextlib.asynccontextmanager
async def sql_url(kind: str, directory: Path) -> AsyncIterator[str]:
    """The storage URL of an empty SQL database of ``kind``: ``sqlite-file`` (a file in
    ``directory``, which several stores and processes may open at once),
    ``sqlite-memory`` or ``postgresql`` (a fresh schema, dropped afterwards)."""
    if kind == "sqlite-file":
        yield f"sqlite:///{directory}/docbase.db"
    elif kind == "sqlite-memory":
        yield "sqlite://"
    else:
        async with postgresql_schema() as url:
            yield url


@contextlib.asynccontextmanager
async def sql_backend(url: str, auto_index: Any = None) -> AsyncIterator[Any]:
    from docbase.adapters.sql import from_url

    store, blobs = from_url(url, auto_index=auto_index, query_timeout=TEST_QUERY_TIMEOUT)
    async with store:
        yield store, blobs


@contextlib.asynccontextmanager
async def sqlite_file_backend(request: pytest.FixtureRequest) -> AsyncIterator[Any]:
    tmp_path = request.getfixturevalue("tmp_path")
    async with sql_backend(f"sqlite:///{tmp_path}/docbase.db") as pair:
        yield pair


@contextlib.asynccontextmanager
async def sqlite_memory_backend(request: pytest.FixtureRequest) -> AsyncIterator[Any]:
    async with sql_backend("sqlite://") as pair:
        yield pair


@contextlib.asynccontextmanager
async def postgresql_backend(request: pytest.FixtureRequest) -> AsyncIterator[Any]:
    async with postgresql_schema() as url, sql_backend(url) as pair:
        yield pair


BACKENDS["sqlite-file"] = sqlite_file_backend
BACKENDS["sqlite-memory"] = sqlite_memory_backend
BACKENDS["postgresql"] = postgresql_backend


def numbered(n: int, **fields: Any) -> dict[str, Any]:
    """A stored-shape document whose ``_id`` is ``n`` in hex and whose field ``n`` is ``n``."""
    return {"_id": f"{n:024x}", "_version": 0, "n": n, **fields}


def refuse_usual_path(store: Any, monkeypatch: pytest.MonkeyPatch) -> None:
    """Make ``store``'s usual way to its database (worker threads, SQLAlchemy) fail."""
    async def refuse(*_args: Any, **_kwargs: Any) -> Any:
        raise AssertionError("went the usual way")

    monkeypatch.setattr(store.backend, "_run", refuse)


def traced_statements(store: Any) -> list[str]:
    """The SQL that ``store``'s SQLite connections run from now on, as SQLite saw it.

    The engine's pooled connections are closed, so that every one made afterwards
    (the writer's, the pool's, not the loop reader's) reports its statements.
    """
    import sqlalchemy as sa

    engine = store.engine
    assert isinstance(engine, sa.Engine)
    engine.dispose()
    statements: list[str] = []

    @sa.event.listens_for(engine, "connect")
    def traced(dbapi_connection: Any, _record: Any) -> None:
        dbapi_connection.set_trace_callback(statements.append)

    return statements
