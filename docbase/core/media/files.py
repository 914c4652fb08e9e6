"""The content of one media file as :meth:`Media.open` hands it out: metadata and bytes.

A file may be deleted while it is being sent. :meth:`MediaFile.started` reads the first
chunk before a response begins, so a file deleted before then is ``NotFound`` (404);
one deleted mid-stream ends the stream with ``NotFound``, logged as a warning, and the
HTTP server closes the connection short of the ``Content-Length`` it announced, which
every client reports as a cut-off download. No answer claims a whole file it did not send.
"""

from __future__ import annotations

import logging
from collections.abc import AsyncIterator

from docbase.core.documents import Document
from docbase.core.errors import NotFound, RangeNotSatisfiable
from docbase.core.ports import BlobStore

logger = logging.getLogger("docbase.media")


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

    async def started(self, start: int = 0, end: int | None = None) -> AsyncIterator[bytes]:
        """:meth:`chunks`, with the first one read already (to answer 404 rather than start).

        Raises:
            RangeNotSatisfiable: as :meth:`chunks`.
            NotFound: the file was deleted after it was opened.

        """
        chunks = self.chunks(start, end)
        first = await anext(chunks, b"")
        return self._resumed(first, chunks)

    async def _resumed(self, first: bytes, chunks: AsyncIterator[bytes]) -> AsyncIterator[bytes]:
        if first:
            yield first
        try:
            async for chunk in chunks:
                yield chunk
        except NotFound:
            logger.warning("media %s (%s) was deleted while being sent; the download is cut "
                           "short", self.record["_id"], self.key)
            raise

    async def read(self) -> bytes:
        """All the bytes at once (for small files; stream large ones with :meth:`chunks`)."""
        return b"".join([chunk async for chunk in self.chunks()])


async def _slice(data: bytes) -> AsyncIterator[bytes]:
    yield data

