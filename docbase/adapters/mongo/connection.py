"""The connection half of the MongoDB store: one database, every driver call bounded.

:class:`MongoConnection` holds the ``AsyncMongoClient`` and its database, opens and
closes them, maps docbase collection names to MongoDB's (:mod:`.codec`) and runs every
driver call inside :meth:`~MongoConnection._bounded`: pymongo's client-side timeout
plus the translation of driver errors into docbase's (:mod:`.errors`).
:class:`~docbase.adapters.mongo.store.MongoDocumentStore` adds the documents on top.
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterator
from typing import Any

import pymongo
from pymongo import AsyncMongoClient
from pymongo.asynchronous.collection import AsyncCollection
from pymongo.asynchronous.database import AsyncDatabase

from docbase.adapters.mongo.codec import collection_name
from docbase.adapters.mongo.errors import translated
from docbase.core.errors import TransactionsUnsupported
from docbase.core.lifecycle import AsyncResource
from docbase.core.settings.limits import DEFAULT_QUERY_TIMEOUT

DEFAULT_DATABASE = "docbase"
Raw = dict[str, Any]


class MongoConnection(AsyncResource):
    """One MongoDB database reached through a client, every call bounded in time."""

    def __init__(
        self,
        client: AsyncMongoClient[Raw],
        database: str = DEFAULT_DATABASE,
        *,
        owns_client: bool = False,
        query_timeout: float = DEFAULT_QUERY_TIMEOUT,
    ) -> None:
        """Use ``database`` through ``client`` (closed with the store if ``owns_client``).

        Every operation is bounded by ``query_timeout`` (:meth:`_bounded`), residual
        filters likewise.
        """
        self.query_timeout = query_timeout
        self._client = client
        self._db: AsyncDatabase[Raw] = client[database]
        self._owns_client = owns_client

    @property
    def database(self) -> AsyncDatabase[Raw]:
        """The MongoDB database holding the collections."""
        return self._db

    async def open(self) -> None:
        """Check that the server answers (collections need no set-up)."""
        with self._bounded("reach MongoDB"):
            await self._db.command("ping")

    async def close(self) -> None:
        """Close the client if this store created it.

        Closing ends the client's sessions on the server: bounded like any operation,
        so that a stalled server cannot hold up a graceful shutdown.
        """
        if self._owns_client:
            with pymongo.timeout(self.query_timeout):
                await self._client.close()

    @contextlib.contextmanager
    def _bounded(self, action: str, *, query: bool = False) -> Iterator[None]:
        """Run driver calls about ``action`` within ``query_timeout``, errors translated.

        pymongo's client-side operation timeout bounds the whole operation (server
        selection, connection, the reply) and sends the time left as ``maxTimeMS``:
        a server that honours it stops the query itself; one that does not (the
        CongoDB test server, a stalled server) is given up on by the client, the
        connection closed, so no request waits longer. A ``query`` past it is a
        ``QueryTimeout`` (400), any other operation a ``BackendError`` (503): a write
        by ``_id`` that gets no answer says nothing about the request.

        While the client knows no server that answers (before the first reply, after
        one was lost), the bound is at most the URL's ``serverSelectionTimeoutMS``: under
        a client-side timeout pymongo waits the whole of it for a server instead.
        """
        bound = self.query_timeout
        if not self._client.topology_description.has_writable_server():
            bound = min(bound, self._client.options.server_selection_timeout)
        with pymongo.timeout(bound), translated(action, query=query):
            yield

    def _collection(self, name: str) -> AsyncCollection[Raw]:
        return self._db[collection_name(name)]

    async def _run(self, target: AsyncCollection[Raw], pipeline: list[Raw]) -> list[Raw]:
        # sort keys are computed, so no index serves a sort: let big sorts spill to disk
        cursor = await target.aggregate(pipeline, allowDiskUse=True)
        return await cursor.to_list()

    def transaction(self) -> contextlib.AbstractAsyncContextManager[None]:
        """Refuse: multi-document transactions are not used on MongoDB (yet).

        A replica set would allow them; the store runs every operation on its own, as
        on a standalone server (and the CongoDB wire server), which has none.

        Raises:
            TransactionsUnsupported: always; an atomic batch answers 501.

        """
        raise TransactionsUnsupported(
            "the MongoDB engine runs no multi-document transactions here: send the batch "
            'with "atomic": false')
