"""The MongoDB adapter: ``mongodb://`` and ``mongodb+srv://`` URLs, via pymongo's asyncio client.

The database is the URL's path (``mongodb://host/mydb``), ``docbase`` when absent.
Connection options ride on the URL as usual (``?replicaSet=rs0&tls=true``); a server
that does not answer within 5 s raises :class:`~docbase.core.errors.BackendError`
unless the URL sets ``serverSelectionTimeoutMS``. To share a client you built
yourself, construct the stores directly::

    client = AsyncMongoClient(url)
    store, blobs = MongoDocumentStore(client, "mydb"), MongoBlobStore(client, "mydb")
"""

from __future__ import annotations

from typing import Any

from docbase.core.errors import MissingDependencyError
from docbase.core.settings.limits import DEFAULT_QUERY_TIMEOUT, AutoIndexing

try:
    from pymongo import AsyncMongoClient
except ImportError as exc:  # pragma: no cover - exercised in a subprocess test
    raise MissingDependencyError("pymongo", extra="mongo") from exc

from docbase.adapters.mongo.blobs import MongoBlobStore
from docbase.adapters.mongo.connection import DEFAULT_DATABASE
from docbase.adapters.mongo.store import MongoDocumentStore

DEFAULT_SERVER_SELECTION_TIMEOUT_MS = 5000


def from_url(url: str, *, query_timeout: float = DEFAULT_QUERY_TIMEOUT,
             auto_index: AutoIndexing | None = None,
             ) -> tuple[MongoDocumentStore, MongoBlobStore]:
    """Build (not yet open) the stores for a ``mongodb://`` or ``mongodb+srv://`` URL.

    ``auto_index`` is not used: MongoDB indexes are declared (``index: true``).

    The document store owns the client and closes it; the blob store shares it.
    """
    options: dict[str, Any] = {}
    if "serverselectiontimeoutms" not in url.lower():
        options["serverSelectionTimeoutMS"] = DEFAULT_SERVER_SELECTION_TIMEOUT_MS
    client: AsyncMongoClient[dict[str, Any]] = AsyncMongoClient(url, **options)
    database = client.get_default_database(DEFAULT_DATABASE).name
    return (MongoDocumentStore(client, database, owns_client=True,
                               query_timeout=query_timeout),
            MongoBlobStore(client, database))


__all__ = ["DEFAULT_DATABASE", "MongoBlobStore", "MongoDocumentStore", "from_url"]
