"""Storage URLs to SQLAlchemy async engines, and the ``from_url`` factory."""

from __future__ import annotations

from typing import TYPE_CHECKING

import sqlalchemy as sa

from docbase.adapters.sql.backend import dialect_for
from docbase.adapters.sql.blobs import SqlBlobStore
from docbase.adapters.sql.store import SqlDocumentStore
from docbase.core.errors import ConfigurationError
from docbase.core.settings.limits import DEFAULT_QUERY_TIMEOUT, AutoIndexing

if TYPE_CHECKING:
    from sqlalchemy.ext.asyncio import AsyncEngine


def create_engine(url: str, *, query_timeout: float = DEFAULT_QUERY_TIMEOUT,
                  ) -> AsyncEngine | sa.Engine:
    """Create an engine for ``sqlite:///path.db``, ``sqlite://`` or ``postgresql://...``.

    The database's engine object makes it (``EngineOperations.create_engine``; see
    ``sqlite/engine.py`` and ``postgresql/engine.py``). PostgreSQL gets an asyncpg
    :class:`AsyncEngine` (``?schema=name`` sets the search path, ``?pool_pre_ping=true``
    pings pooled connections before use, ``?connect_timeout=SECONDS`` bounds opening a
    connection) whose sessions get ``statement_timeout`` = ``query_timeout`` and
    ``lock_timeout`` = :func:`~.connection_settings.lock_wait` of it. SQLite gets a
    synchronous engine that the stores drive from worker threads, one hop per operation
    (an ``AsyncEngine`` with aiosqlite works too, at several hops per operation); its
    bounds are kept by the backend (:mod:`.backend`, :mod:`.connection_settings`).

    Raises:
        ConfigurationError: the scheme is not SQLite or PostgreSQL.
        MissingDependencyError: asyncpg is not installed (PostgreSQL).

    """
    scheme = url.partition("://")[0].lower().partition("+")[0]
    if scheme in ("sqlite", "postgresql", "postgres"):
        engine = dialect_for("postgresql" if scheme == "postgres" else scheme)
        return engine.create_engine(url, query_timeout=query_timeout)
    raise ConfigurationError(f"the SQL adapter does not handle {url.partition('://')[0]!r} URLs")


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
