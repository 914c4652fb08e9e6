"""One ``Idempotency-Key`` record: claimed before the write, its answer filled in after.

A record's ``_id`` is a digest of the credential and the key, so a key sent with
another credential is another record: nobody replays someone else's answer. The
record holds a fingerprint of the request (method, path with query, body) and, once
the first request answered, that answer (status, body, the headers worth repeating).
The body is kept as its exact bytes, compressed (zlib) and written as one base64 string
(:func:`packed`): a stored document the store neither escapes nor searches at length.
A 1,000-document insert answers ~230 kB of JSON; kept as JSON text, every quote was
escaped in the row and the whole text lower-cased again into the search column (SQL,
MongoDB), ~4 ms of a ~40 ms request on SQLite; packed it is ~10 kB and ~0.5 ms.

On a store with transactions the HTTP layer runs the claim, the write and
:func:`remember` in one transaction (``docbase/http/idempotency.py``), so a claim
without an answer is never committed. Without transactions:

**Two requests with one key at once.** The first inserts the record (the claim) before
it writes anything; an insert of an existing ``_id`` fails on every adapter
(``Conflict``), so exactly one request claims a key. The other finds the record: with
an answer, it replays it; without one (the first is still running, or its process died
between claim and answer), it is refused with ``IdempotencyKeyInUse`` (409) and applies
nothing; never twice. A request that failed on the server's side (5xx) forgets its
claim, so that a retry runs again. Records are kept :data:`KEEP_SECONDS`; expired ones
are purged by the claims that find them, and by a new claim at most once a minute per
process and database.
"""

from __future__ import annotations

import base64
import hashlib
import time
import zlib
from typing import TYPE_CHECKING

import msgspec

from docbase.core.documents import new_document
from docbase.core.errors import (
    Conflict,
    IdempotencyKeyInUse,
    IdempotencyKeyReused,
    InvalidQuery,
    NotFound,
)
from docbase.core.query import Lte
from docbase.core.update import SetOp, Update

if TYPE_CHECKING:
    from docbase.core.system_data import SystemData

IDEMPOTENCY_COLLECTION = "_idempotency"
"""The system collection of ``Idempotency-Key`` records."""
KEEP_SECONDS = 24 * 3600
"""How long an answered key is honoured (24 hours)."""
MAX_KEY_LENGTH = 255
PURGE_SECONDS = 60.0
_purged: dict[str, float] = {}  # database name: when this process last purged its records


class StoredAnswer(msgspec.Struct, frozen=True):
    """The answer a key gave: status, body (the bytes sent) and the headers it repeats."""

    status: int
    body: bytes
    headers: tuple[tuple[str, str], ...] = ()


class _Packed(msgspec.Struct, frozen=True):
    """A :class:`StoredAnswer` as stored: the body compressed, as one base64 string.

    ``body`` is the text of a record written before the body was packed (kept 24 hours).
    """

    status: int
    headers: tuple[tuple[str, str], ...] = ()
    packed: str | None = None
    body: str | None = None


def packed(answer: StoredAnswer) -> dict[str, object]:
    """The stored form of ``answer``: its body compressed and base64-encoded."""
    body = base64.b64encode(zlib.compress(answer.body, 1)).decode("ascii")
    return {"status": answer.status, "headers": [list(pair) for pair in answer.headers],
            "packed": body}


def unpacked(stored: object) -> StoredAnswer:
    """The answer :func:`packed` stored, its body byte for byte."""
    record = msgspec.convert(stored, _Packed)
    body = (zlib.decompress(base64.b64decode(record.packed)) if record.packed is not None
            else (record.body or "").encode())
    return StoredAnswer(record.status, body, record.headers)


class Claim(msgspec.Struct, frozen=True):
    """What :func:`claim` found: this request's claim (``answer`` None) or a stored answer."""

    record_id: str
    answer: StoredAnswer | None = None


def check_key(key: str) -> str:
    """Return ``key`` if it is 1 to 255 visible ASCII characters.

    Raises:
        InvalidQuery: an empty, too long or non-printable key.

    """
    if not 0 < len(key) <= MAX_KEY_LENGTH or not all(" " < c <= "~" for c in key):
        raise InvalidQuery(f"Idempotency-Key must be 1 to {MAX_KEY_LENGTH} visible ASCII "
                           "characters")
    return key


def fingerprint(method: str, path: str, body: bytes) -> str:
    """The digest a retry must repeat: method, path (with query string) and body."""
    digest = hashlib.sha256(f"{method.upper()}\n{path}\n".encode())
    digest.update(body)
    return digest.hexdigest()


def record_id(owner: str, key: str) -> str:
    """The ``_id`` of ``owner``'s record of ``key`` (owner: who the credential is)."""
    return hashlib.sha256(f"{owner}\n{key}".encode()).hexdigest()[:24]


async def claim(db: SystemData, owner: str, key: str, request: str) -> Claim:
    """Claim ``key`` for a request of fingerprint ``request``, or find its stored answer.

    Raises:
        IdempotencyKeyReused: the key answered (or is answering) another request.
        IdempotencyKeyInUse: the key's first request has not answered yet.

    """
    ident = record_id(owner, check_key(key))
    for _ in range(3):
        now = time.time()
        document = new_document({"fingerprint": request, "exp": now + KEEP_SECONDS}, "system")
        document["_id"] = ident
        try:
            await db.store.insert(IDEMPOTENCY_COLLECTION, [document])
        except Conflict:
            try:
                stored = await db.store.get(IDEMPOTENCY_COLLECTION, ident)
            except NotFound:  # forgotten meanwhile: claim again
                continue
            if stored.get("exp", 0) <= now:
                await db.store.delete(IDEMPOTENCY_COLLECTION, [ident])
                continue
            if stored.get("fingerprint") != request:
                raise IdempotencyKeyReused(
                    "this Idempotency-Key was used with another method, path or body"
                ) from None
            answer = stored.get("answer")
            if answer is None:
                raise IdempotencyKeyInUse(
                    "a request with this Idempotency-Key has not answered yet; retry later"
                ) from None
            return Claim(ident, unpacked(answer))
        if _purged.get(db.name, 0.0) + PURGE_SECONDS <= now:
            _purged[db.name] = now
            await db.store.delete_where(IDEMPOTENCY_COLLECTION, Lte(("exp",), now))
        return Claim(ident)
    raise IdempotencyKeyInUse("this Idempotency-Key is being claimed by another request")


async def remember(db: SystemData, claimed: Claim, answer: StoredAnswer) -> None:
    """Store the answer of the request that claimed the key."""
    update = Update((SetOp(("answer",), packed(answer)),))
    await db.store.update(IDEMPOTENCY_COLLECTION, claimed.record_id, update, stamp={})


async def forget(db: SystemData, claimed: Claim) -> None:
    """Drop the claim of a request that failed on the server's side: a retry runs again."""
    await db.store.delete(IDEMPOTENCY_COLLECTION, [claimed.record_id])
