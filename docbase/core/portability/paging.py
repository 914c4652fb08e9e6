"""Reading a whole collection page by page, in ``_id`` order, in constant memory.

Export, verification and migration read every document of a collection. Each page is
a keyset query (``_id`` above the last one seen), so a page costs the same at the end
of a collection as at its start, and documents written meanwhile are neither skipped
nor read twice. Pages come as JSON text: from the store's ``find_encoded`` when it has
one (no decoding at all: a SQL store hands over the stored text), else encoded here.
The lines are handed on as the store gave them (``msgspec.Raw``, which ``bytes.join``,
``hashlib`` and ``msgspec`` read as bytes), never copied one by one.
"""

from __future__ import annotations

import asyncio
import contextlib
import hashlib
from collections.abc import AsyncIterator

import msgspec

from docbase.core.ports import DocumentStore
from docbase.core.query import MATCH_ALL, Gt, Query

PAGE = 2000
"""Documents read per query."""

Line = bytes | msgspec.Raw
"""One document's JSON text (a ``msgspec.Raw`` is read as bytes without a copy)."""

_sorted = msgspec.json.Encoder(order="sorted")


class _Identified(msgspec.Struct):
    id: str = msgspec.field(name="_id")


_ids = msgspec.json.Decoder(_Identified)


def document_id(line: Line) -> str:
    """The ``_id`` of one document given as JSON text."""
    return _ids.decode(line).id


async def pages(store: DocumentStore, collection: str,
                page: int = PAGE) -> AsyncIterator[list[Line]]:
    """Every stored document of ``collection`` as JSON text, a page at a time.

    The next page is asked for before this one is handed on, so the store reads it
    (on its own thread, for the SQL stores) while the caller writes this one out.

    Raises:
        BackendError: the store failed.

    """
    reading = asyncio.ensure_future(_page(store, collection, None, page))
    try:
        while True:
            lines = await reading
            if len(lines) == page:
                reading = asyncio.ensure_future(
                    _page(store, collection, document_id(lines[-1]), page))
            if lines:
                yield lines
            if len(lines) < page:
                return
    finally:
        if not reading.done():
            reading.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await reading


async def _page(store: DocumentStore, collection: str, after: str | None,
                page: int) -> list[Line]:
    query = Query(filter=MATCH_ALL if after is None else Gt(("_id",), after), limit=page)
    return list(await store.find_encoded(collection, query, hide=()))


def canonical(line: Line) -> bytes:
    """A document's JSON text with keys sorted at every depth (for checksums).

    A number is written the same whatever type an engine gave it back as (``2.0`` and
    ``2`` are one JSON number, and the wire server of MongoDB returns integral doubles
    as integers).
    """
    return _sorted.encode(_numbers(msgspec.json.decode(line)))


def _numbers(value: object) -> object:
    if isinstance(value, float) and value.is_integer() and abs(value) < 2**63:
        return int(value)
    if isinstance(value, dict):
        return {k: _numbers(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_numbers(v) for v in value]
    return value


class ContentDigest:
    """Count and checksum of a collection's documents, whatever store they came from.

    Each document is hashed (SHA-256) in :func:`canonical` form, so key order and
    whitespace, which differ between engines, do not matter; the checksum is the sum
    of those hashes modulo 2**256, so neither does the order documents come in, while
    a missing, extra or changed document changes it.
    """

    def __init__(self) -> None:
        self.count = 0
        self._sum = 0

    def add(self, line: Line) -> None:
        """Count and hash one document."""
        self.count += 1
        digest = hashlib.sha256(canonical(line)).digest()
        self._sum = (self._sum + int.from_bytes(digest)) % (1 << 256)

    @property
    def hexdigest(self) -> str:
        """The checksum so far, 64 hex digits."""
        return f"{self._sum:064x}"

    def __eq__(self, other: object) -> bool:
        """Same count, same checksum."""
        return (isinstance(other, ContentDigest) and self.count == other.count
                and self._sum == other._sum)

    __hash__ = None  # type: ignore[assignment]


async def digest_collection(store: DocumentStore, collection: str) -> ContentDigest:
    """The :class:`ContentDigest` of a stored collection.

    Raises:
        BackendError: the store failed.

    """
    digest = ContentDigest()
    async for lines in pages(store, collection):
        for line in lines:
            digest.add(line)
    return digest
