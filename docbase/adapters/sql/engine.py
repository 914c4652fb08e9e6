"""Storage URLs to SQLAlchemy async engines, and the ``from_url`` factory."""

from __future__ import annotations

import functools
import importlib
import importlib.util
from typing import TYPE_CHECKING

import sqlalchemy as sa
from sqlalchemy.engine import make_url
from sqlalchemy.pool import StaticPool

from docbase.adapters.sql import pg_connections
from docbase.adapters.sql.blobs import SqlBlobStore
from docbase.adapters.sql.connection_settings import lock_wait
from docbase.adapters.sql.store import SqlDocumentStore
from docbase.core.errors import ConfigurationError, MissingDependencyError
from docbase.core.settings.limits import DEFAULT_QUERY_TIMEOUT, AutoIndexing

if TYPE_CHECKING:
    from sqlalchemy.ext.asyncio import AsyncEngine


def create_engine(url: str, *, query_timeout: float = DEFAULT_QUERY_TIMEOUT,
                  ) -> AsyncEngine | sa.Engine:
    """Create an engine for ``sqlite:///path.db``, ``sqlite://`` or ``postgresql://...``.

    PostgreSQL gets an asyncpg :class:`AsyncEngine` (``?schema=name`` sets the search
    path, ``?pool_pre_ping=true`` pings pooled connections before use,
    ``?connect_timeout=SECONDS`` bounds opening a connection, default
    :data:`CONNECT_TIMEOUT`). SQLite gets a
    synchronous engine that the stores drive from worker threads, one hop per operation
    (an ``AsyncEngine`` with aiosqlite works too, at several hops per operation).
    PostgreSQL sessions get ``statement_timeout`` = ``query_timeout`` and
    ``lock_timeout`` = :func:`~.connection_settings.lock_wait` of it; SQLite's bounds are
    kept by the backend (:mod:`.backend`, :mod:`.connection_settings`).

    Raises:
        ConfigurationError: the scheme is not SQLite or PostgreSQL.
        MissingDependencyError: asyncpg is not installed (PostgreSQL).

    """
    scheme = url.partition("://")[0].lower().partition("+")[0]
    if scheme == "sqlite":
        return _sqlite(url)
    if scheme in ("postgresql", "postgres"):
        return _postgresql(url, query_timeout)
    raise ConfigurationError(f"the SQL adapter does not handle {url.partition('://')[0]!r} URLs")


# connections kept open: up to the expected concurrency, so that a burst of requests
# does not open and close overflow connections (new connection, session setup and, on
# PostgreSQL, an empty prepared-statement cache) on every call; the backend's threads
# (16) cover it
_POOL_SIZE = 15
CONNECT_TIMEOUT = 5.0
"""Seconds to open a PostgreSQL connection before the call fails with ``BackendError``
(503), so that requests to an unreachable server answer rather than hang."""


def _sqlite(url: str) -> sa.Engine:
    parsed = make_url(url)
    threads = {"check_same_thread": False}  # connections move between worker threads
    if parsed.database in (None, "", ":memory:"):
        # one connection holds the in-memory database; the backend serialises its use
        return sa.create_engine("sqlite+pysqlite://", poolclass=StaticPool,
                                connect_args=threads)
    return sa.create_engine(parsed.set(drivername="sqlite+pysqlite"),
                            pool_size=_POOL_SIZE, max_overflow=0,
                            connect_args={**threads, "timeout": 30})


def _postgresql(url: str, query_timeout: float) -> AsyncEngine:
    if importlib.util.find_spec("asyncpg") is None:
        raise MissingDependencyError("asyncpg", extra="postgresql")
    parsed = make_url(url.replace("postgres://", "postgresql://", 1) if url.startswith(
        "postgres://") else url)
    query = dict(parsed.query)
    schema = query.pop("schema", None)
    pre_ping = query.pop("pool_pre_ping", "false")
    timeout = query.pop("connect_timeout", None)
    # a statement running longer is cancelled by the server (SQLSTATE 57014): one
    # request can never hold a connection and a worker for longer
    settings = {"statement_timeout": _milliseconds(query_timeout),
                # waiting for a lock another transaction holds ends sooner (55P03): the
                # backend is busy, a 503 to retry, not a slow query (lock_wait)
                "lock_timeout": _milliseconds(lock_wait(query_timeout))}
    if isinstance(schema, str):
        settings["search_path"] = schema
    connect_args: dict[str, object] = {
        "server_settings": settings,
        "timeout": float(timeout) if isinstance(timeout, str) else CONNECT_TIMEOUT}
    # without pre-ping, a lost connection fails one call (BackendError) and SQLAlchemy
    # then discards every pooled connection of that age; pre-ping costs a round trip
    # imported here: it brings SQLAlchemy's ORM (~7 MiB), which SQLite never needs
    from sqlalchemy.ext.asyncio import create_async_engine  # noqa: PLC0415

    engine = create_async_engine(parsed.set(drivername="postgresql+asyncpg", query=query),
                                 pool_size=_POOL_SIZE, max_overflow=0,
                                 pool_pre_ping=pre_ping in ("true", "1", "yes"),
                                 connect_args=connect_args)
    asyncpg = importlib.import_module("asyncpg")  # found above; loaded for PostgreSQL only
    dsn = parsed.set(drivername="postgresql", query=query).render_as_string(
        hide_password=False)
    pg_connections.register(engine, functools.partial(
        asyncpg.connect, dsn, server_settings={**settings, "jit": "off"},
        timeout=connect_args["timeout"]))
    return engine


def _milliseconds(seconds: float) -> str:
    return str(max(1, round(seconds * 1000)))


def from_url(url: str, *, query_timeout: float = DEFAULT_QUERY_TIMEOUT,
             auto_index: AutoIndexing | None = None,
             ) -> tuple[SqlDocumentStore, SqlBlobStore]:
    """Build (not yet open) the stores of a storage URL; see :func:`create_engine`.

    ``auto_index`` says when the store indexes a path by itself (:mod:`.auto_indexes`).
    """
    engine = create_engine(url, query_timeout=query_timeout)
    store = SqlDocumentStore(engine, owns_engine=True, query_timeout=query_timeout,
                             auto_index=auto_index)
    return store, SqlBlobStore(engine)
