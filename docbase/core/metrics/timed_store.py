"""A :class:`~docbase.core.ports.DocumentStore` that times every data operation.

:func:`timed` wraps the store the composition root built when a server has metrics
(``docbase/core/composition.py``), so every caller (pipelines, auth, the change log,
jobs) is measured without knowing it. Each operation kind has its observer, asked from
the instruments once here, so a call costs two clock reads and one observation.
Without metrics the store is not wrapped at all.

Anything else the adapter offers (``find_encoded`` when it has it, ``change_signal``,
its own extras) is passed through unchanged.
"""

from __future__ import annotations

from collections.abc import Sequence
from contextlib import AbstractAsyncContextManager
from time import perf_counter
from typing import TYPE_CHECKING, Any, Self

from docbase.core.metrics.instruments import Instruments

if TYPE_CHECKING:
    import msgspec

    from docbase.core.documents import Document
    from docbase.core.ports import ChangeSignal, Deletion, DocumentStore
    from docbase.core.query import Aggregate, AggregateRow, Filter, Path, Query
    from docbase.core.update import Update

KINDS = ("insert", "get", "find", "count", "aggregate", "update", "delete", "delete_where")
"""The operation kinds a store's latency is reported by (the ``kind`` label)."""


def timed(store: DocumentStore, engine: str, instruments: Instruments) -> DocumentStore:
    """Wrap ``store`` so that each data operation reports its latency to ``instruments``."""
    return TimedStore(store, engine, instruments)


class TimedStore:
    """Pass every call to the wrapped store; time the data operations."""

    def __init__(self, inner: DocumentStore, engine: str, instruments: Instruments) -> None:
        self.inner = inner
        self.engine = engine
        self.transactional = inner.transactional
        observe = {kind: instruments.store_timer(kind, engine) for kind in KINDS}
        self._insert, self._get, self._find = observe["insert"], observe["get"], observe["find"]
        self._count, self._aggregate = observe["count"], observe["aggregate"]
        self._update, self._delete = observe["update"], observe["delete"]
        self._delete_where = observe["delete_where"]

    def __getattr__(self, name: str) -> Any:
        """Whatever else the adapter has, unchanged."""
        return getattr(self.inner, name)

    async def open(self) -> None:
        """Open the wrapped store."""
        await self.inner.open()

    async def close(self) -> None:
        """Close the wrapped store."""
        await self.inner.close()

    async def __aenter__(self) -> Self:
        await self.open()
        return self

    async def __aexit__(self, *exc_info: object) -> None:
        await self.close()

    def transaction(self) -> AbstractAsyncContextManager[None]:
        """The wrapped store's transaction (its operations are timed one by one)."""
        return self.inner.transaction()

    async def find_encoded(self, collection: str, query: Query, *,
                           hide: Sequence[str]) -> list[msgspec.Raw]:
        """The adapter's :meth:`~docbase.core.ports.DocumentStore.find_encoded`, timed."""
        started = perf_counter()
        try:
            return await self.inner.find_encoded(collection, query, hide=hide)
        finally:
            self._find(perf_counter() - started)

    async def insert(self, collection: str, documents: Sequence[Document], *,
                     new_ids: bool = False) -> None:
        """Insert, timed as ``insert``."""
        started = perf_counter()
        try:
            await self.inner.insert(collection, documents, new_ids=new_ids)
        finally:
            self._insert(perf_counter() - started)

    async def get(self, collection: str, document_id: str) -> Document:
        """Get one document, timed as ``get``."""
        started = perf_counter()
        try:
            return await self.inner.get(collection, document_id)
        finally:
            self._get(perf_counter() - started)

    async def find(self, collection: str, query: Query) -> list[Document]:
        """Find, timed as ``find``."""
        started = perf_counter()
        try:
            return await self.inner.find(collection, query)
        finally:
            self._find(perf_counter() - started)

    async def count(self, collection: str, filter: Filter) -> int:
        """Count, timed as ``count``."""
        started = perf_counter()
        try:
            return await self.inner.count(collection, filter)
        finally:
            self._count(perf_counter() - started)

    async def aggregate(self, collection: str, filter: Filter, groupby: Sequence[Path],
                        aggregates: Sequence[Aggregate]) -> list[AggregateRow]:
        """Aggregate, timed as ``aggregate``."""
        started = perf_counter()
        try:
            return await self.inner.aggregate(collection, filter, groupby, aggregates)
        finally:
            self._aggregate(perf_counter() - started)

    async def update(self, collection: str, document_id: str, update: Update, *,
                     stamp: dict[str, Any], expected_version: int | None = None) -> Document:
        """Update one document, timed as ``update``."""
        started = perf_counter()
        try:
            return await self.inner.update(collection, document_id, update, stamp=stamp,
                                           expected_version=expected_version)
        finally:
            self._update(perf_counter() - started)

    async def delete(self, collection: str, document_ids: Sequence[str], *,
                     expected_version: int | None = None) -> list[str]:
        """Delete by ids, timed as ``delete``."""
        started = perf_counter()
        try:
            return await self.inner.delete(collection, document_ids,
                                           expected_version=expected_version)
        finally:
            self._delete(perf_counter() - started)

    async def delete_all(self, deletions: Sequence[Deletion]) -> list[list[str]]:
        """Delete several collections' ids, timed as ``delete``."""
        started = perf_counter()
        try:
            return await self.inner.delete_all(deletions)
        finally:
            self._delete(perf_counter() - started)

    async def delete_where(self, collection: str, filter: Filter) -> list[str]:
        """Delete by filter, timed as ``delete_where``."""
        started = perf_counter()
        try:
            return await self.inner.delete_where(collection, filter)
        finally:
            self._delete_where(perf_counter() - started)

    async def collections(self) -> list[str]:
        """List the collections (not timed: an administrative call)."""
        return await self.inner.collections()

    async def drop(self, collection: str) -> None:
        """Drop a collection (not timed)."""
        await self.inner.drop(collection)

    async def ensure_index(self, collection: str, path: Path, *, unique: bool = False) -> None:
        """Ensure an index (not timed)."""
        await self.inner.ensure_index(collection, path, unique=unique)

    def change_signal(self) -> ChangeSignal | None:
        """The wrapped store's change signal."""
        return self.inner.change_signal()
