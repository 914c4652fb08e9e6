"""Derivative sizes, where their bytes are kept, and making each one once per process.

A media file's original is the blob keyed by its id; its derivatives are the blobs
``<id>/t`` and ``<id>/w``. A derivative is made the first time it is asked for and
stored in the blob store, which every process sharing the storage then serves. Within
one process, concurrent first requests for a derivative wait for the one that makes
it (:class:`KeyedLocks`); across processes two may both make it, and the blob store's
put replaces a blob whole, so no reader ever sees half a file.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import AsyncIterator

from docbase.core.errors import InvalidQuery
from docbase.core.ids import is_object_id

ORIGINAL = "o"
WIDTHS = {"t": 128, "w": 640}
"""The width in pixels of each derivative size: ``t`` thumbnail, ``w`` web."""


def parse_size(value: str | None) -> str:
    """The size an ``s`` parameter asks for: ``o`` (the default), ``t`` or ``w``.

    Raises:
        InvalidQuery: any other value.

    """
    if value is None or value in ("", ORIGINAL):
        return ORIGINAL
    if value not in WIDTHS:
        raise InvalidQuery(f"s must be t (thumbnail), w (web) or o (original), not {value!r}")
    return value


def blob_key(media_id: str, size: str = ORIGINAL) -> str:
    """The blob key of a media file's original or of one of its derivatives."""
    return media_id if size == ORIGINAL else f"{media_id}/{size}"


def all_blob_keys(media_id: str) -> list[str]:
    """Every blob key a media file may have: its original and every derivative."""
    return [blob_key(media_id), *(blob_key(media_id, size) for size in WIDTHS)]


def media_id_of(key: str) -> str | None:
    """The media id whose original or derivative ``key`` is; ``None`` for other keys."""
    media_id, slash, size = key.partition("/")
    if not is_object_id(media_id) or media_id != media_id.lower():
        return None
    return media_id if (not slash or size in WIDTHS) else None


class KeyedLocks:
    """One lock per key while anyone holds or waits for it; forgotten afterwards."""

    def __init__(self) -> None:
        self._locks: dict[str, tuple[asyncio.Lock, int]] = {}

    @contextlib.asynccontextmanager
    async def hold(self, key: str) -> AsyncIterator[None]:
        """Hold the lock of ``key``; other holders of the same key wait their turn."""
        lock, users = self._locks.get(key) or (asyncio.Lock(), 0)
        self._locks[key] = (lock, users + 1)
        try:
            async with lock:
                yield
        finally:
            lock, users = self._locks[key]
            if users == 1:
                del self._locks[key]
            else:
                self._locks[key] = (lock, users - 1)

    def __len__(self) -> int:
        return len(self._locks)
