"""Revoked bearer tokens: what ``POST /auth/logout`` writes and every request checks.

A revoked token is one document of the system collection :data:`REVOKED_COLLECTION`,
its ``_id`` derived from the token's ``jti`` (or, for a token without one, from the
token itself), kept until the token's own expiry; each logout deletes the entries of
tokens that have expired since (a revoked token that expired is refused anyway).

**How other processes learn of it.** Each process caches the whole set of revoked,
unexpired ids of a database in its :class:`~docbase.core.auth.cache.SystemCache`
(namespace :data:`REVOKED_IDS`), reading the collection again at most every
:data:`REVOCATION_SECONDS` (half a second): checking a token costs no storage round
trip, and a logout through another process is honoured here within that half second
plus one read, well inside the promised second. A logout through this
process drops the cached set at once. The set holds only tokens revoked and not yet
expired, so it is bounded by the logouts within one token lifetime (24 bytes each).
"""

from __future__ import annotations

import contextlib
import hashlib
import time
from typing import TYPE_CHECKING

from docbase.core.auth.cache import Namespace
from docbase.core.documents import new_document
from docbase.core.errors import Conflict
from docbase.core.query import Gt, Lte, Projection, Query

if TYPE_CHECKING:
    from docbase.core.system_data import SystemData

REVOKED_COLLECTION = "_revoked_tokens"
"""The system collection of revoked, not yet expired tokens."""
REVOCATION_SECONDS = 0.5
"""How long one process trusts its cached set of revoked tokens."""
REVOKED_IDS: Namespace[frozenset[str]] = Namespace("revoked-token-ids", ttl=REVOCATION_SECONDS)
"""The cached set of revoked token ids (one entry per database)."""


def revocation_id(token_id: str) -> str:
    """The ``_id`` under which the token with this ``jti`` (or digest) is revoked."""
    return hashlib.sha256(token_id.encode()).hexdigest()[:24]


async def revoke_token(db: SystemData, token_id: str, expires: float) -> None:
    """Revoke a token until ``expires`` (seconds since 1970); purge expired entries."""
    now = time.time()
    document = new_document({}, "system")
    document.update(_id=revocation_id(token_id), exp=expires)
    with contextlib.suppress(Conflict):  # revoked already
        await db.store.insert(REVOKED_COLLECTION, [document])
    await db.store.delete_where(REVOKED_COLLECTION, Lte(("exp",), now))
    db.auth_cache.invalidate(REVOKED_IDS)


async def is_revoked(db: SystemData, token_id: str) -> bool:
    """Tell whether the token with this ``jti`` (or digest) was revoked (cached, 1 s)."""
    async def load() -> frozenset[str]:
        rows = await db.store.find(REVOKED_COLLECTION, Query(
            filter=Gt(("exp",), time.time()), projection=Projection((("exp",),), include=True),
            limit=None))
        return frozenset(row["_id"] for row in rows)

    return revocation_id(token_id) in await db.auth_cache.fetch(REVOKED_IDS, None, load)
