"""The SQL adapter: documents and blobs in SQLite or PostgreSQL, through SQLAlchemy Core.

``from_url`` understands ``sqlite:///path.db``, ``sqlite://`` (in memory) and
``postgresql://user@host/db`` (``postgres://`` too; ``?schema=name`` puts every table in
that schema). Stores can also be built from a ready :class:`~sqlalchemy.ext.asyncio.
AsyncEngine`: ``SqlDocumentStore(engine)`` and ``SqlBlobStore(engine)``.
"""

from __future__ import annotations

from docbase.adapters.sql.blobs import SqlBlobStore
from docbase.adapters.sql.engine import create_engine, from_url
from docbase.adapters.sql.store import SqlDocumentStore

__all__ = ["SqlBlobStore", "SqlDocumentStore", "create_engine", "from_url"]
