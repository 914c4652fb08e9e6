"""A probe around a real store: it counts the reads of some collections, changes nothing.

Used to check that a request reads a system collection no more often than it should
(``tests/test_schema_read_once.py``, ``tests/test_log_demand.py``): every call goes to
the store underneath unchanged, through the ``DocumentStore`` protocol.
"""

from __future__ import annotations

from typing import Any

from docbase.core.documents import Document
from docbase.core.ports import DocumentStore
from docbase.core.query import Filter, Query


class ReadCounting:
    """A document store passing every call through; ``reads`` counts those of ``collections``."""

    def __init__(self, inner: DocumentStore, collections: tuple[str, ...]) -> None:
        self.inner = inner
        self.collections = collections
        self.transactional = inner.transactional
        self.reads = 0

    def __getattr__(self, name: str) -> Any:
        return getattr(self.inner, name)

    async def get(self, collection: str, document_id: str) -> Document:
        self.reads += collection in self.collections
        return await self.inner.get(collection, document_id)

    async def find(self, collection: str, query: Query) -> list[Document]:
        self.reads += collection in self.collections
        return await self.inner.find(collection, query)

    async def count(self, collection: str, filter: Filter) -> int:
        self.reads += collection in self.collections
        return await self.inner.count(collection, filter)
