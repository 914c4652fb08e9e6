"""The memory adapter: documents and blobs in process memory, for tests and embedding."""

from __future__ import annotations

from docbase.adapters.memory.blobs import MemoryBlobStore
from docbase.adapters.memory.mailer import OutboxMailer
from docbase.adapters.memory.store import MemoryDocumentStore
from docbase.core.settings.limits import DEFAULT_QUERY_TIMEOUT, AutoIndexing


def from_url(url: str, *, query_timeout: float = DEFAULT_QUERY_TIMEOUT,
             auto_index: AutoIndexing | None = None,
             ) -> tuple[MemoryDocumentStore, MemoryBlobStore]:
    """Build the stores for ``memory://`` (the URL carries no options).

    ``auto_index`` is not used: memory holds no indexes.
    """
    return MemoryDocumentStore(query_timeout=query_timeout), MemoryBlobStore()


__all__ = ["MemoryBlobStore", "MemoryDocumentStore", "OutboxMailer", "from_url"]
