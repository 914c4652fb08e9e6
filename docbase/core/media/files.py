"""The content of one media file as :meth:`Media.open` hands it out: metadata and bytes."""

from __future__ import annotations

from collections.abc import AsyncIterator

from docbase.core.documents import Document
from docbase.core.errors import RangeNotSatisfiable
from docbase.core.ports import BlobStore


class MediaFile:
    """An original or a derivative: what to call it, its type, size, tag and bytes."""

    def __init__(self, blobs: BlobStore, record: Document, key: str, *, content_type: str,
                 size: int, etag: str, data: bytes | None = None) -> None:
        self._blobs = blobs
        self.data = data
        """The whole content when it is small enough to be kept in memory, else ``None``."""
        self.record = record
        """The metadata record of the media file."""
        self.key = key
        self.content_type = content_type
        self.size = size
        self.etag = etag
        """A strong entity tag (quoted) of exactly these bytes."""

    @property
    def filename(self) -> str:
        """The name the file was uploaded with (path components removed)."""
        return str(self.record["origname"])

    def chunks(self, start: int = 0, end: int | None = None) -> AsyncIterator[bytes]:
        """Stream bytes ``start`` up to (not including) ``end``; all of them by default.

        Raises:
            RangeNotSatisfiable: ``start`` lies beyond the content (or ``end`` before it).

        """
        stop = self.size if end is None else min(end, self.size)
        if start < 0 or (start >= self.size and self.size > 0) or stop < start:
            raise RangeNotSatisfiable(f"bytes {start}-{stop} are outside the "
                                      f"{self.size} bytes of this file", self.size)
        if self.data is not None:
            return _slice(self.data[start:stop])
        return self._blobs.read(self.key, start, stop)

    async def read(self) -> bytes:
        """All the bytes at once (for small files; stream large ones with :meth:`chunks`)."""
        return b"".join([chunk async for chunk in self.chunks()])


async def _slice(data: bytes) -> AsyncIterator[bytes]:
    yield data

