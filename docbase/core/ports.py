"""The ports: the few interfaces a storage or mail adapter implements.

The document ports are written here; the blob port (:class:`BlobStore`,
:class:`BlobInfo`) in :mod:`docbase.core.blob_ports` and the delivery ports
(:class:`Mailer`, :class:`WebhookSender` and what they carry) in
:mod:`docbase.core.delivery_ports`, all importable from here too. Every method is async.
The contract is written in the docstrings, and checked by ``docbase.testing.contract``
against every adapter.
Documents cross a port as plain JSON-compatible ``dict`` objects with 24-hex string
``_id``s; an adapter never returns an object the caller could use to change stored
state.

Children are ordinary documents carrying ``_parent_id``, ``_parent_def`` and
``_parent_field``; system collections (keys, revoked tokens, outbound mail, relations)
are ordinary collections whose names start with ``_`` or are reserved by the facade.
"""

from __future__ import annotations

from collections.abc import Sequence
from contextlib import AbstractAsyncContextManager
from typing import Any, Protocol, Self

import msgspec

from docbase.core.blob_ports import BlobInfo, BlobStore
from docbase.core.delivery_ports import Mailer, MailMessage, WebhookRequest, WebhookSender
from docbase.core.documents import Document
from docbase.core.query import Aggregate, AggregateRow, Filter, Path, Query
from docbase.core.update import Update


class Deletion(msgspec.Struct, frozen=True):
    """One collection's part of :meth:`DocumentStore.delete_all`: ids, maybe a version."""

    collection: str
    ids: tuple[str, ...]
    expected_version: int | None = None


class DocumentStore(Protocol):
    """Stores JSON documents in named collections and answers queries about them.

    Collections come into existence on their first insert; reading an unknown
    collection behaves as reading an empty one. Every method may raise
    :class:`~docbase.core.errors.BackendError` when the backend fails or is unreachable;
    the next call tries again (reconnecting if needed).
    """

    transactional: bool
    """Whether :meth:`delete_all` is all or nothing (one transaction)."""

    async def open(self) -> None:
        """Connect and prepare storage (create or migrate the layout). Idempotent."""

    async def close(self) -> None:
        """Release connections. The store may not be used afterwards."""

    async def __aenter__(self) -> Self:
        """Open the store; ``async with store:`` closes it on exit."""

    async def __aexit__(self, *exc_info: object) -> None:
        """Close the store."""

    def transaction(self) -> AbstractAsyncContextManager[None]:
        """Run the current task's operations inside the block as one transaction.

        Committed when the block ends, rolled back when it raises. Operations of the
        task (and of tasks it starts meanwhile) read what the block wrote; other tasks
        see none of it before the commit, and their writes to what the block wrote wait
        for it or fail (a lock wait past the store's bound is a ``BackendError``). A
        block inside a block of the same store runs in its transaction, and raising out
        of it undoes that inner block's writes alone (a savepoint): the outer may go on.

        Raises:
            TransactionsUnsupported: the engine (or server) has no multi-document
                transactions (a standalone MongoDB); nothing ran.

        """

    async def insert(self, collection: str, documents: Sequence[Document], *,
                     new_ids: bool = False) -> None:
        """Insert complete documents (already stamped with ``_id`` and system fields).

        All or nothing: when one document cannot be inserted, none is. ``new_ids``
        says that every ``_id`` was made for this insert (``new_document``), so no
        document can hold one already: inside :meth:`transaction` an adapter may then
        write the documents later in it, before anything else runs in it and before
        its commit, which fails (writing nothing) if they cannot be written.

        Raises:
            Conflict: an ``_id`` exists already, or a unique index would be violated.

        """

    async def get(self, collection: str, document_id: str) -> Document:
        """Return the whole stored document, system fields included.

        Raises:
            NotFound: no document has this ``_id`` in the collection.

        """

    async def find(self, collection: str, query: Query) -> list[Document]:
        """Return the documents matching ``query.filter``, sorted, paged and projected.

        Order is ``query.sort`` then ``_id`` ascending; ``skip``/``limit`` apply after
        sorting; ``projection`` shapes each document (``_id`` is always kept when
        including). ``groupby``/``aggregates`` are ignored here (see :meth:`aggregate`).
        """

    async def find_encoded(
        self, collection: str, query: Query, *, hide: Sequence[str]
    ) -> list[msgspec.Raw]:
        """Return what :meth:`find` returns, each document as JSON text.

        ``query.projection`` is ``None``. Each document lacks the top-level fields named
        in ``hide`` and is otherwise exactly as ``find`` would return it, encoded as
        ``msgspec.json.encode`` would encode that ``dict`` (key order kept). A list read
        is answered from it without decoding and encoding each document where the
        engine keeps JSON text; :class:`EncodesFound` gives it to the other stores.
        """

    async def count(self, collection: str, filter: Filter) -> int:
        """Return how many documents match ``filter``."""

    async def aggregate(
        self,
        collection: str,
        filter: Filter,
        groupby: Sequence[Path],
        aggregates: Sequence[Aggregate],
    ) -> list[AggregateRow]:
        """Group the matching documents and compute ``aggregates`` per group.

        Without ``groupby`` there is exactly one row with an empty key (also when no
        document matches). Rows are ordered by key in the total sort order.
        """

    async def update(
        self,
        collection: str,
        document_id: str,
        update: Update,
        *,
        stamp: dict[str, Any],
        expected_version: int | None = None,
    ) -> Document:
        """Apply ``update`` atomically, set the ``stamp`` fields, add 1 to ``_version``.

        Concurrent updates of one document never lose each other's changes.

        Returns:
            The whole updated document.

        Raises:
            NotFound: no document has this ``_id``.
            VersionMismatch: ``expected_version`` is given and differs from the stored one.
            Conflict: an operation meets a value of the wrong type, or a unique index
                would be violated; nothing is changed.

        """

    async def delete(
        self,
        collection: str,
        document_ids: Sequence[str],
        *,
        expected_version: int | None = None,
    ) -> list[str]:
        """Delete the documents with these ids; return the ids actually deleted.

        Unknown ids are skipped. With ``expected_version`` (one id only) the document
        is deleted only if its stored ``_version`` is that one, checked and deleted in
        one atomic step, so a concurrent update is never deleted unseen.

        Raises:
            VersionMismatch: ``expected_version`` is given and the stored document is at
                another version; nothing is deleted.
            ValueError: ``expected_version`` is given with other than one id.

        """

    async def delete_all(self, deletions: Sequence[Deletion]) -> list[list[str]]:
        """Delete each group as :meth:`delete` would, in order; return each one's ids.

        When :attr:`transactional`, the groups are deleted in one transaction: a
        failure deletes nothing. Otherwise (MongoDB without a replica set) they are
        deleted one after another, and a failure leaves the earlier groups deleted and
        the later ones in place; callers list children before their parents, so no
        child outlives its parent.

        Raises:
            VersionMismatch: a group's ``expected_version`` differs from the stored one.
            ValueError: a group has an ``expected_version`` and other than one id.

        """

    async def delete_where(self, collection: str, filter: Filter) -> list[str]:
        """Delete every document matching ``filter`` in one operation; return their ids."""

    async def collections(self) -> list[str]:
        """Return the names of the collections holding documents, sorted."""

    async def drop(self, collection: str) -> None:
        """Remove a collection, its documents and its indexes. Unknown names are ignored."""

    async def ensure_index(self, collection: str, path: Path, *, unique: bool = False) -> None:
        """Create an index on ``path`` unless it exists. Idempotent.

        Raises:
            Conflict: ``unique`` is asked and stored documents already repeat a value.

        """

    def change_signal(self) -> ChangeSignal | None:
        """The engine's push mechanism for the change log, or ``None`` when it has none.

        Readers of the change log (``docbase/core/changes/``) poll it; a signal only
        wakes them sooner. The same object is returned on every call.
        """


class ChangeSignal(Protocol):
    """Wakes the readers of the change log in every process sharing the storage.

    An optional capability of a :class:`DocumentStore` (PostgreSQL ``LISTEN/NOTIFY``;
    in memory, the process itself). Best effort: a lost notification delays readers
    until their next poll, it never loses an entry.
    """

    async def notify(self) -> None:
        """Tell every waiter, in every process sharing the storage, that the log grew.

        It may return before the notification is on its way, and a notification that
        cannot be sent is logged, not raised: readers find the entry at their next poll.
        """

    async def wait(self, seen: int, within: float) -> int:
        """Wait for a notification newer than generation ``seen``, at most ``within`` seconds.

        Returns:
            The current generation (``seen`` when the time ran out). A waiter passes
            it back as ``seen`` next time, so no notification between two waits is lost.

        """


class DeletesByGroups:
    """For stores: :meth:`DocumentStore.delete` as a one-group :meth:`~DocumentStore.delete_all`."""

    async def delete_all(self, deletions: Sequence[Deletion]) -> list[list[str]]:
        """Keep the contract of :meth:`DocumentStore.delete_all` (the store's own)."""
        raise NotImplementedError

    async def delete(
        self,
        collection: str,
        document_ids: Sequence[str],
        *,
        expected_version: int | None = None,
    ) -> list[str]:
        """Keep the contract of :meth:`DocumentStore.delete`, one group of ``delete_all``."""
        (deleted,) = await self.delete_all([Deletion(collection, tuple(document_ids),
                                                     expected_version)])
        return deleted


class EncodesFound:
    """For stores: :meth:`DocumentStore.find_encoded` as ``find`` encoded here.

    A store whose engine holds documents as JSON text answers with that text instead
    (the SQL adapter); one that holds them otherwise takes this.
    """

    async def find(self, collection: str, query: Query) -> list[Document]:
        """Keep the contract of :meth:`DocumentStore.find` (the store's own)."""
        raise NotImplementedError

    async def find_encoded(
        self, collection: str, query: Query, *, hide: Sequence[str]
    ) -> list[msgspec.Raw]:
        """Keep the contract of :meth:`DocumentStore.find_encoded` by encoding ``find``."""
        dropped = frozenset(hide)
        return [msgspec.Raw(msgspec.json.encode(
                    {k: v for k, v in document.items() if k not in dropped}))
                for document in await self.find(collection, query)]


__all__ = [
    "BlobInfo", "BlobStore", "ChangeSignal", "DeletesByGroups", "Deletion", "DocumentStore",
    "EncodesFound", "MailMessage", "Mailer", "WebhookRequest", "WebhookSender",
]
