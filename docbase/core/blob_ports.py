"""The blob port: the interface through which docbase stores binary content (media).

A blob adapter implements :class:`BlobStore`. Like the document ports of
:mod:`docbase.core.ports` (which offers these too), every method is async (or an async
iterator) and the contract is written in the docstrings, checked by
``docbase.testing.contract`` against every adapter.
"""

from __future__ import annotations

from collections.abc import AsyncIterable, AsyncIterator
from datetime import datetime
from typing import Protocol

import msgspec


class BlobInfo(msgspec.Struct, frozen=True):
    """What a blob store knows about one stored blob."""

    key: str
    size: int
    content_type: str


class BlobStore(Protocol):
    """Stores binary content by key, streamed in and out, with byte ranges."""

    async def put(
        self, key: str, chunks: AsyncIterable[bytes], content_type: str
    ) -> BlobInfo:
        """Store the bytes of ``chunks`` under ``key``, replacing any blob there.

        The content is consumed chunk by chunk and never buffered whole.
        """

    async def stat(self, key: str) -> BlobInfo:
        """Describe a blob.

        Raises:
            NotFound: no blob has this key.

        """

    def read(self, key: str, start: int = 0, end: int | None = None) -> AsyncIterator[bytes]:
        """Stream bytes ``start`` up to (not including) ``end`` of a blob.

        Raises:
            NotFound: no blob has this key (raised on first iteration).

        """

    async def delete(self, key: str) -> bool:
        """Delete a blob; return whether it existed."""

    def keys(self, started_before: datetime) -> AsyncIterator[str]:
        """Stream the keys of the stored blobs whose put began before ``started_before``.

        Only complete blobs are listed (a put in progress is not); the order is
        unspecified. A blob stored by an older docbase without a recorded start time
        counts as begun long ago. The media archive's orphan sweep reads this.
        """

    async def delete_unfinished(self, started_before: datetime) -> int:
        """Delete what puts begun before ``started_before`` left without finishing.

        A process killed in the middle of a put leaves its chunks behind, never
        served; this removes them and returns how many puts' leftovers it removed.
        A put still running that began before ``started_before`` then fails (its
        ``put`` raises) rather than publishing a blob with chunks missing.
        """
