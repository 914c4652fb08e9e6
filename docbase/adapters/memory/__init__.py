"""The memory adapter: documents and blobs in process memory, for tests and embedding."""

from __future__ import annotations

from docbase.adapters.memory.blobs import MemoryBlobStore
from docbase.adapters.memory.mailer import OutboxMailer
from docbase.adapters.memory.store import MemoryDocumentStore


def from_url(url: str) -> tuple[MemoryDocumentStore, MemoryBlobStore]:
    """Build the stores for ``memory://`` (the URL carries no options)."""
    return MemoryDocumentStore(), MemoryBlobStore()


__all__ = ["MemoryBlobStore", "MemoryDocumentStore", "OutboxMailer", "from_url"]
