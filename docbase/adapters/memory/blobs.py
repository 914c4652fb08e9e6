"""A :class:`~docbase.core.ports.BlobStore` in process memory."""

from __future__ import annotations

from collections.abc import AsyncIterable, AsyncIterator

from docbase.core.errors import NotFound
from docbase.core.ports import BlobInfo

_CHUNK = 64 * 1024


class MemoryBlobStore:
    """Blobs as immutable ``bytes`` keyed by name."""

    def __init__(self) -> None:
        self._blobs: dict[str, tuple[bytes, str]] = {}

    async def put(self, key: str, chunks: AsyncIterable[bytes], content_type: str) -> BlobInfo:
        """Keep the contract of :meth:`~docbase.core.ports.BlobStore.put`."""
        parts = [bytes(chunk) async for chunk in chunks]
        data = b"".join(parts)
        self._blobs[key] = (data, content_type)
        return BlobInfo(key, len(data), content_type)

    async def stat(self, key: str) -> BlobInfo:
        """Keep the contract of :meth:`~docbase.core.ports.BlobStore.stat`."""
        try:
            data, content_type = self._blobs[key]
        except KeyError:
            raise NotFound(f"no blob {key!r}") from None
        return BlobInfo(key, len(data), content_type)

    async def read(self, key: str, start: int = 0, end: int | None = None) -> AsyncIterator[bytes]:
        """Keep the contract of :meth:`~docbase.core.ports.BlobStore.read`."""
        try:
            data, _ = self._blobs[key]
        except KeyError:
            raise NotFound(f"no blob {key!r}") from None
        stop = len(data) if end is None else min(end, len(data))
        for offset in range(start, stop, _CHUNK):
            yield data[offset : min(offset + _CHUNK, stop)]

    async def delete(self, key: str) -> bool:
        """Keep the contract of :meth:`~docbase.core.ports.BlobStore.delete`."""
        return self._blobs.pop(key, None) is not None
