"""A :class:`~docbase.core.ports.BlobStore` in process memory."""

from __future__ import annotations

from collections.abc import AsyncIterable, AsyncIterator
from datetime import UTC, datetime

from docbase.core.errors import NotFound
from docbase.core.ports import BlobInfo

_CHUNK = 64 * 1024


class MemoryBlobStore:
    """Blobs as immutable ``bytes`` keyed by name, with the time their put began."""

    def __init__(self) -> None:
        self._blobs: dict[str, tuple[bytes, str, datetime]] = {}

    async def put(self, key: str, chunks: AsyncIterable[bytes], content_type: str) -> BlobInfo:
        """Keep the contract of :meth:`~docbase.core.ports.BlobStore.put`."""
        started = datetime.now(UTC)
        parts = [bytes(chunk) async for chunk in chunks]
        data = b"".join(parts)
        self._blobs[key] = (data, content_type, started)
        return BlobInfo(key, len(data), content_type)

    async def stat(self, key: str) -> BlobInfo:
        """Keep the contract of :meth:`~docbase.core.ports.BlobStore.stat`."""
        try:
            data, content_type, _ = self._blobs[key]
        except KeyError:
            raise NotFound(f"no blob {key!r}") from None
        return BlobInfo(key, len(data), content_type)

    async def read(self, key: str, start: int = 0, end: int | None = None) -> AsyncIterator[bytes]:
        """Keep the contract of :meth:`~docbase.core.ports.BlobStore.read`."""
        try:
            data, _, _ = self._blobs[key]
        except KeyError:
            raise NotFound(f"no blob {key!r}") from None
        stop = len(data) if end is None else min(end, len(data))
        for offset in range(start, stop, _CHUNK):
            yield data[offset : min(offset + _CHUNK, stop)]

    async def delete(self, key: str) -> bool:
        """Keep the contract of :meth:`~docbase.core.ports.BlobStore.delete`."""
        return self._blobs.pop(key, None) is not None

    async def keys(self, started_before: datetime) -> AsyncIterator[str]:
        """Keep the contract of :meth:`~docbase.core.ports.BlobStore.keys`."""
        for key, (_, _, started) in list(self._blobs.items()):
            if started < started_before:
                yield key

    async def delete_unfinished(self, started_before: datetime) -> int:
        """Nothing to do: a put here is never half stored (it keeps the bytes at once)."""
        return 0
