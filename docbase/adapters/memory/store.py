"""A :class:`~docbase.core.ports.DocumentStore` in process memory.

Filtering, sorting and aggregation are those of ``docbase.core.evaluate`` itself.
Stored documents are private copies: everything returned is decoded afresh, so a
caller can never change stored state through a result. Every method runs without an
``await`` between reading and writing its collection, so concurrent asyncio tasks see
each operation as atomic.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import Any

import msgspec

from docbase.adapters.memory.transactions import MemoryTransactions
from docbase.core import evaluate, grouping
from docbase.core.changes.signal import LocalChangeSignal
from docbase.core.documents import Document
from docbase.core.errors import Conflict, NotFound
from docbase.core.lifecycle import AsyncResource
from docbase.core.ports import DeletesByGroups, Deletion, EncodesFound
from docbase.core.query import Aggregate, AggregateRow, Filter, Path, Query
from docbase.core.query.deadline import within
from docbase.core.settings.limits import DEFAULT_QUERY_TIMEOUT
from docbase.core.update import Update
from docbase.core.versioning import check_version, updated_document, versioned_id

_encoder = msgspec.json.Encoder()
_decoder = msgspec.json.Decoder()


def _copy(document: Document) -> Document:
    result: Document = _decoder.decode(_encoder.encode(document))
    return result


class MemoryDocumentStore(MemoryTransactions, DeletesByGroups, EncodesFound, AsyncResource):
    """Collections as dicts of documents keyed by ``_id``."""

    transactional = True  # nothing awaits between checking and deleting

    def __init__(self, *, query_timeout: float = DEFAULT_QUERY_TIMEOUT) -> None:
        """Start empty; each query may match for ``query_timeout`` seconds in total."""
        super().__init__()
        self.query_timeout = query_timeout
        self._collections: dict[str, dict[str, Document]] = {}
        self._unique: dict[str, set[Path]] = {}
        self._indexes: dict[str, set[Path]] = {}
        self._signal = LocalChangeSignal()

    async def open(self) -> None:
        """Nothing to connect to."""

    async def close(self) -> None:
        """Nothing to release; the data stays until the object is dropped."""

    def _documents(self, collection: str) -> list[Document]:
        """The documents this task may read (``_visible``: a writer sees the stored ones)."""
        return list(self._visible(collection).values())

    def _check_unique(
        self,
        collection: str,
        candidates: Sequence[Document],
        replacing: str | None = None,
        paths: Iterable[Path] | None = None,
    ) -> None:
        stored = [d for d in self._documents(collection) if d["_id"] != replacing]
        for path in self._unique.get(collection, ()) if paths is None else paths:
            seen: list[Any] = []
            for document in [*stored, *candidates]:
                value = grouping.group_key(document, path)
                if value is None:
                    continue
                if any(evaluate.json_equal(value, other) for other in seen):
                    raise Conflict(f"duplicate value for unique field {'.'.join(path)!r} "
                                   f"in {collection!r}")
                seen.append(value)

    async def insert(self, collection: str, documents: Sequence[Document], *,
                     new_ids: bool = False) -> None:
        """Keep the contract of :meth:`~docbase.core.ports.DocumentStore.insert`."""
        async with self._in_turn():
            self._insert(collection, documents)

    def _insert(self, collection: str, documents: Sequence[Document]) -> None:
        target = self._collections.get(collection, {})
        ids = [d["_id"] for d in documents]
        if len(set(ids)) != len(ids) or any(i in target for i in ids):
            raise Conflict(f"duplicate _id in {collection!r}")
        self._check_unique(collection, documents)
        copies = [_copy(d) for d in documents]
        self._touch(collection, ids)
        target = self._collections.setdefault(collection, {})
        for document in copies:
            target[document["_id"]] = document

    async def get(self, collection: str, document_id: str) -> Document:
        """Keep the contract of :meth:`~docbase.core.ports.DocumentStore.get`."""
        document = self._visible(collection).get(document_id)
        if document is None:
            raise NotFound(f"no document {document_id} in {collection!r}")
        return _copy(document)

    async def find(self, collection: str, query: Query) -> list[Document]:
        """Keep the contract of :meth:`~docbase.core.ports.DocumentStore.find`."""
        with within(self.query_timeout):
            return evaluate.run_query(self._documents(collection), query)

    async def count(self, collection: str, filter: Filter) -> int:
        """Keep the contract of :meth:`~docbase.core.ports.DocumentStore.count`."""
        with within(self.query_timeout):
            return evaluate.count(self._documents(collection), filter)

    async def aggregate(
        self,
        collection: str,
        filter: Filter,
        groupby: Sequence[Path],
        aggregates: Sequence[Aggregate],
    ) -> list[AggregateRow]:
        """Keep the contract of :meth:`~docbase.core.ports.DocumentStore.aggregate`."""
        with within(self.query_timeout):
            matching = [d for d in self._documents(collection) if evaluate.matches(filter, d)]
        rows = grouping.aggregate(matching, groupby, aggregates)
        return [AggregateRow(row.key, _copy(row.values)) for row in rows]

    async def update(
        self,
        collection: str,
        document_id: str,
        update: Update,
        *,
        stamp: dict[str, Any],
        expected_version: int | None = None,
    ) -> Document:
        """Keep the contract of :meth:`~docbase.core.ports.DocumentStore.update`."""
        async with self._in_turn():
            return self._update(collection, document_id, update, stamp, expected_version)

    def _update(self, collection: str, document_id: str, update: Update,
                stamp: dict[str, Any], expected_version: int | None) -> Document:
        current = self._collections.get(collection, {}).get(document_id)
        if current is None:
            raise NotFound(f"no document {document_id} in {collection!r}")
        changed = updated_document(document_id, current, update, stamp, expected_version)
        self._check_unique(collection, [changed], replacing=document_id)
        self._touch(collection, [document_id])
        self._collections[collection][document_id] = _copy(changed)
        return changed

    async def delete_all(self, deletions: Sequence[Deletion]) -> list[list[str]]:
        """Keep the contract of :meth:`~docbase.core.ports.DocumentStore.delete_all`."""
        async with self._in_turn():
            return self._delete_all(deletions)

    def _delete_all(self, deletions: Sequence[Deletion]) -> list[list[str]]:
        for deletion in deletions:  # every version first: a mismatch deletes nothing
            target = self._collections.get(deletion.collection, {})
            versioned = versioned_id(deletion.ids, deletion.expected_version)
            if versioned is not None and versioned in target:
                check_version(versioned, target[versioned].get("_version", 0),
                              deletion.expected_version)
        for deletion in deletions:
            self._touch(deletion.collection, deletion.ids)
        return [[i for i in dict.fromkeys(deletion.ids)
                 if self._collections.get(deletion.collection, {}).pop(i, None) is not None]
                for deletion in deletions]

    async def delete_where(self, collection: str, filter: Filter) -> list[str]:
        """Keep the contract of :meth:`~docbase.core.ports.DocumentStore.delete_where`."""
        async with self._in_turn():
            target = self._collections.get(collection, {})
            with within(self.query_timeout):
                doomed = [i for i, d in target.items() if evaluate.matches(filter, d)]
            self._touch(collection, doomed)
            return self._forget(target, doomed)

    @staticmethod
    def _forget(target: dict[str, Document], doomed: list[str]) -> list[str]:
        for document_id in doomed:
            del target[document_id]
        return doomed

    async def collections(self) -> list[str]:
        """Keep the contract of :meth:`~docbase.core.ports.DocumentStore.collections`."""
        names = {*self._collections, *self._touched_collections()}
        return sorted(name for name in names if self._visible(name))

    async def drop(self, collection: str) -> None:
        """Keep the contract of :meth:`~docbase.core.ports.DocumentStore.drop`."""
        self._touch(collection, list(self._collections.get(collection, {})))
        self._collections.pop(collection, None)
        self._unique.pop(collection, None)
        self._indexes.pop(collection, None)

    async def ensure_index(self, collection: str, path: Path, *, unique: bool = False) -> None:
        """Keep the contract of :meth:`~docbase.core.ports.DocumentStore.ensure_index`."""
        if unique:
            self._check_unique(collection, [], paths=[path])
            self._unique.setdefault(collection, set()).add(path)
        self._indexes.setdefault(collection, set()).add(path)

    def change_signal(self) -> LocalChangeSignal:
        """Wake the readers of this process directly: nothing else shares the storage."""
        return self._signal
