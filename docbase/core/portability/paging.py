"""Reading a whole collection page by page, in ``_id`` order, in constant memory.

Export, verification and migration read every document of a collection. Each page is
a keyset query (``_id`` above the last one seen), so a page costs the same at the end
of a collection as at its start, and documents written meanwhile are neither skipped
nor read twice. Pages come as JSON text: from the store's ``find_encoded`` when it has
one (:class:`~docbase.core.ports.EncodedFind`, no decoding at all), else encoded here.
"""

from __future__ import annotations

import hashlib
from collections.abc import AsyncIterator

import msgspec

from docbase.core.ports import DocumentStore
from docbase.core.query import MATCH_ALL, Gt, Query

PAGE = 2000
"""Documents read per query."""

_encoder = msgspec.json.Encoder()
_sorted = msgspec.json.Encoder(order="sorted")


class _Identified(msgspec.Struct):
    id: str = msgspec.field(name="_id")


_ids = msgspec.json.Decoder(_Identified)


def document_id(line: bytes) -> str:
    """The ``_id`` of one document given as JSON text."""
    return _ids.decode(line).id


async def pages(store: DocumentStore, collection: str,
                page: int = PAGE) -> AsyncIterator[list[bytes]]:
    """Every stored document of ``collection`` as JSON text, a page at a time.

    Raises:
        BackendError: the store failed.

    """
    after: str | None = None
    find_encoded = getattr(store, "find_encoded", None)
    while True:
        query = Query(filter=MATCH_ALL if after is None else Gt(("_id",), after), limit=page)
        if find_encoded is not None:
            lines = [bytes(raw) for raw in await find_encoded(collection, query, hide=())]
        else:
            lines = [_encoder.encode(d) for d in await store.find(collection, query)]
        if not lines:
            return
        yield lines
        if len(lines) < page:
            return
        after = document_id(lines[-1])


def canonical(line: bytes) -> bytes:
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

    def add(self, line: bytes) -> None:
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
