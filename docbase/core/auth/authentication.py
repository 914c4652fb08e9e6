"""Who a request is: an API key turned into a principal, and the keys of an origin.

Lookups go through the database's :class:`~docbase.core.auth.cache.SystemCache`, so a
key is read from its system collection at most once per cache lifetime
(:data:`~docbase.core.auth.cache.CACHE_SECONDS`) per process; a revocation by another
process is seen within that time. Whether the principal may do what it asks is not
decided here but by :func:`~docbase.core.auth.decision.authorize`. ``last_used`` is
written at most once per :data:`LAST_USED_SECONDS` per key and process.
"""

from __future__ import annotations

import hmac
from typing import TYPE_CHECKING

from docbase.core.auth.cache import Namespace
from docbase.core.auth.keys import (
    KEY_BY_DIGEST,
    KEYS_BY_ORIGIN,
    KEYS_COLLECTION,
    ApiKey,
    from_stored,
    hash_key,
    key_id,
)
from docbase.core.auth.principal import Principal
from docbase.core.errors import NotFound, Unauthorized
from docbase.core.ids import utc_now
from docbase.core.query import In, Query
from docbase.core.update import SetOp, Update

if TYPE_CHECKING:
    from docbase.core.system_data import SystemData

UNKNOWN_KEY = "unknown API key"
"""What a key that no database of the request knows is refused with."""
LAST_USED_SECONDS = 60.0
"""The least time between two writes of one key's ``last_used``."""
LAST_USED_NOTED: Namespace[bool] = Namespace("apikey-last-used-noted", ttl=LAST_USED_SECONDS)
"""Keys (by id) whose ``last_used`` this process wrote recently: the write throttle."""


async def authenticate_key(db: SystemData, raw_key: str | None) -> ApiKey:
    """Return the live key record for ``raw_key`` and note that it was used.

    Raises:
        Unauthorized: no key given, or an unknown, expired or revoked one.

    """
    if not raw_key:
        raise Unauthorized("an API key is required (header x-apikey or parameter apikey)")
    digest = hash_key(raw_key)

    async def load() -> ApiKey:
        try:
            stored = await db.store.get(KEYS_COLLECTION, key_id(digest))
        except NotFound:
            raise Unauthorized(UNKNOWN_KEY) from None
        if not hmac.compare_digest(stored["hash"], digest):  # same id prefix, other key
            raise Unauthorized(UNKNOWN_KEY)
        return from_stored(stored)

    key = await db.auth_cache.fetch(KEY_BY_DIGEST, digest, load)
    if key.revoked is not None:
        raise Unauthorized("this API key has been revoked")
    if key.expires is not None and key.is_expired():  # the clock is read only if it matters
        raise Unauthorized(f"this API key expired at {key.expires}")
    await _note_use(db, key)
    return key


async def _note_use(db: SystemData, key: ApiKey) -> None:
    if db.auth_cache.get(LAST_USED_NOTED, key.id):
        return
    db.auth_cache.put(LAST_USED_NOTED, key.id, True)
    try:
        await db.store.update(KEYS_COLLECTION, key.id,
                              Update((SetOp(("last_used",), utc_now()),)), stamp={})
    except NotFound:  # deleted meanwhile; the next lookup refuses it
        db.auth_cache.invalidate(KEY_BY_DIGEST)


async def authenticate(db: SystemData, raw_key: str | None) -> Principal:
    """Return the principal of a request carrying ``raw_key``.

    Raises:
        Unauthorized: no key given, or an unknown, expired or revoked one.

    """
    return (await authenticate_key(db, raw_key)).principal()


async def keys_for_origin(db: SystemData, origin: str) -> list[ApiKey]:
    """Return the live keys a browser page of ``origin`` may use (for CORS preflights)."""

    async def load() -> list[ApiKey]:
        rows = await db.store.find(KEYS_COLLECTION, Query(
            filter=In(("origins",), (origin, "*")), limit=None))
        return [from_stored(row) for row in rows]

    found = await db.auth_cache.fetch(KEYS_BY_ORIGIN, origin, load)
    now = utc_now()
    return [k for k in found if k.revoked is None and not k.is_expired(now)]
