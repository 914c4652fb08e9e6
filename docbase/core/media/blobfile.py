"""A blob as a seekable, read-only file for code running in a worker thread (Pillow).

Pillow reads files synchronously and seeks about in them. :func:`open_blob` gives it a
buffered file whose reads fetch byte ranges of the blob through the event loop that
owns the blob store, so an image is never loaded whole into memory just to be read,
and the loop stays free while the thread waits. Every read checks a deadline, so work
that overruns its time limit stops at its next read.
"""

from __future__ import annotations

import asyncio
import io
import time
from collections.abc import AsyncIterator, Callable
from functools import partial
from typing import IO

from docbase.core.errors import InvalidImage
from docbase.core.ports import BlobStore

_BUFFER = 256 * 1024


class _BlobRaw(io.RawIOBase):
    def __init__(self, blobs: BlobStore, key: str, size: int,
                 loop: asyncio.AbstractEventLoop, deadline: float) -> None:
        super().__init__()
        self._blobs = blobs
        self._key = key
        self._size = size
        self._loop = loop
        self._deadline = deadline
        self._position = 0

    def readable(self) -> bool:
        return True

    def seekable(self) -> bool:
        return True

    def tell(self) -> int:
        return self._position

    def seek(self, offset: int, whence: int = io.SEEK_SET) -> int:
        base = {io.SEEK_SET: 0, io.SEEK_CUR: self._position, io.SEEK_END: self._size}[whence]
        self._position = max(0, base + offset)
        return self._position

    def readinto(self, buffer: bytearray | memoryview) -> int:  # type: ignore[override]
        end = min(self._position + len(buffer), self._size)
        if end <= self._position:
            return 0
        remaining = self._deadline - time.monotonic()
        if remaining <= 0:
            raise InvalidImage("reading the image took longer than limits.image_timeout")
        future = asyncio.run_coroutine_threadsafe(
            _collect(self._blobs.read(self._key, self._position, end)), self._loop)
        try:
            data = future.result(timeout=remaining)
        except TimeoutError:
            future.cancel()
            raise InvalidImage("reading the image took longer than "
                               "limits.image_timeout") from None
        buffer[:len(data)] = data
        self._position += len(data)
        return len(data)


def open_blob(blobs: BlobStore, key: str, size: int, loop: asyncio.AbstractEventLoop,
              deadline: float) -> io.BufferedReader:
    """A seekable file over blob ``key`` of ``size`` bytes, read through ``loop``.

    Use it from a thread other than the loop's. Reads past ``deadline`` (a
    :func:`time.monotonic` value) raise :class:`~docbase.core.errors.InvalidImage`.
    """
    return io.BufferedReader(_BlobRaw(blobs, key, size, loop, deadline), _BUFFER)


def image_source(blobs: BlobStore, key: str, size: int, data: bytes | None = None,
                 ) -> Callable[[float], IO[bytes]]:
    """What the image threads open: ``data`` when it is the whole content, else the blob.

    Call this on the event loop that owns ``blobs``, and what it returns in a thread,
    with the deadline.
    """
    if data is not None:
        return lambda _deadline: io.BytesIO(data)
    return partial(open_blob, blobs, key, size, asyncio.get_running_loop())


async def _collect(chunks: AsyncIterator[bytes]) -> bytes:
    return b"".join([chunk async for chunk in chunks])
