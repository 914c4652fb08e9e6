"""API keys of one database: create, list, revoke, authenticate, authorise.

Keys live in the database's own system collection ``_apikeys`` through its
:class:`~docbase.core.ports.DocumentStore`, so every process serving the database sees
the same keys, and a key of one database means nothing to another. Only the SHA-256 of
a key is stored (keys are high-entropy random strings, so a plain hash suffices), plus
a short non-secret ``prefix`` to recognise it in listings. A stored key's ``_id`` is
derived from that hash, so authenticating is one lookup by primary key.

A key is *full-access* or *scoped*: path globs relative to the database's base URL
(``/rest/customers/**``; ``*`` is one path segment, ``**`` any number of them), HTTP
methods, and CORS origins (``*`` for any), each empty meaning "no restriction". A key
may expire. Authentication results are cached for :data:`CACHE_SECONDS` per process;
revoking a key through this module clears this process's cache at once, other
processes see it within that time. ``last_used`` is written at most once per
:data:`LAST_USED_SECONDS` per key.
"""

from __future__ import annotations

import hashlib
import hmac
import re
import secrets
import time
import weakref
from collections.abc import Iterable
from datetime import UTC, datetime
from typing import TYPE_CHECKING, Any

import msgspec

from docbase.core.auth.principal import Principal
from docbase.core.documents import new_document
from docbase.core.errors import Forbidden, InvalidQuery, NotFound, Unauthorized
from docbase.core.ids import format_timestamp, utc_now
from docbase.core.query import In, Query, SortKey
from docbase.core.update import SetOp, Update

if TYPE_CHECKING:
    from docbase.core.database import Database

KEYS_COLLECTION = "_apikeys"
"""The system collection holding a database's API keys."""
CACHE_SECONDS = 1.0
"""How long one process trusts a key it has looked up before reading it again."""
LAST_USED_SECONDS = 60.0
"""The least time between two writes of one key's ``last_used``."""
METHODS = frozenset({"GET", "HEAD", "POST", "PUT", "PATCH", "DELETE"})
_MAX_CACHED_ORIGINS = 1024
_RAW_KEY = re.compile(r"[\x21-\x7e]{8,256}")


class ApiKey(msgspec.Struct, frozen=True):
    """What is known about a key; never its raw value or its hash."""

    id: str
    prefix: str
    full_access: bool
    paths: tuple[str, ...] = ()
    methods: tuple[str, ...] = ()
    origins: tuple[str, ...] = ()
    expires: str | None = None
    created: str = ""
    last_used: str | None = None
    revoked: str | None = None
    description: str = ""

    def is_expired(self, now: str | None = None) -> bool:
        """Tell whether the key has expired (timestamps compare as strings)."""
        return self.expires is not None and (now or utc_now()) >= self.expires

    def allows_origin(self, origin: str) -> bool:
        """Tell whether a browser page of ``origin`` may use this key."""
        return "*" in self.origins or origin in self.origins

    def allows(self, method: str, path: str) -> bool:
        """Tell whether this key may send ``method`` to ``path`` (relative to base URL)."""
        if self.full_access:
            return True
        method = "GET" if method == "HEAD" else method
        if self.methods and method not in self.methods:
            return False
        return not self.paths or any(_glob(p).fullmatch(_normal(path)) for p in self.paths)

    def principal(self) -> Principal:
        """Return the facade principal of requests made with this key."""
        return Principal(author="api", kind="key", full_access=self.full_access, key_id=self.id)


def hash_key(raw_key: str) -> str:
    """Return the stored SHA-256 (hex) of a raw key."""
    return hashlib.sha256(raw_key.encode()).hexdigest()


def _key_id(digest: str) -> str:
    return digest[:24]


def _normal(path: str) -> str:
    return path.rstrip("/") or "/"


_glob_cache: dict[str, re.Pattern[str]] = {}


def _glob(pattern: str) -> re.Pattern[str]:
    compiled = _glob_cache.get(pattern)
    if compiled is None:
        tail = ""
        body = _normal(pattern)
        if body.endswith("/**"):  # "/rest/c/**" also covers "/rest/c" itself
            body, tail = body[:-3], "(?:/.*)?"
        parts = re.split(r"(\*\*|\*|\?)", body)
        regex = "".join({"**": ".*", "*": "[^/]*", "?": "[^/]"}.get(p, re.escape(p))
                        for p in parts)
        compiled = _glob_cache[pattern] = re.compile(regex + tail)
    return compiled


def _check_expiry(expires: str | None) -> str | None:
    if expires is None:
        return None
    try:
        moment = datetime.fromisoformat(expires)
    except (TypeError, ValueError) as exc:
        raise InvalidQuery(f"expiry {expires!r} is not an ISO-8601 date or time") from exc
    if moment.tzinfo is None:
        moment = moment.replace(tzinfo=UTC)
    return format_timestamp(moment)


def _check_scopes(paths: Iterable[str], methods: Iterable[str], origins: Iterable[str]) -> tuple[
    tuple[str, ...], tuple[str, ...], tuple[str, ...]
]:
    paths_ = tuple(paths)
    for path in paths_:
        if not isinstance(path, str) or not path.startswith("/"):
            raise InvalidQuery(f"path glob {path!r} must start with '/' (e.g. /rest/customers/**)")
    methods_ = tuple(dict.fromkeys(m.upper() for m in methods))
    for method in methods_:
        if method not in METHODS:
            raise InvalidQuery(f"unknown method {method!r}; use {', '.join(sorted(METHODS))}")
    origins_ = tuple(o.rstrip("/") for o in origins)
    for origin in origins_:
        if origin != "*" and not re.fullmatch(r"[a-z][a-z0-9+.-]*://[^/\s]+", origin):
            raise InvalidQuery(f"origin {origin!r} must look like https://app.example.com or *")
    return paths_, methods_, origins_


def _from_stored(document: dict[str, Any]) -> ApiKey:
    return ApiKey(
        id=document["_id"], prefix=document["prefix"], full_access=document["full_access"],
        paths=tuple(document["paths"]), methods=tuple(document["methods"]),
        origins=tuple(document["origins"]), expires=document["expires"],
        created=document["_created"], last_used=document.get("last_used"),
        revoked=document.get("revoked"), description=document.get("description", ""),
    )


async def create_key(
    db: Database,
    *,
    full_access: bool | None = None,
    paths: Iterable[str] = (),
    methods: Iterable[str] = (),
    origins: Iterable[str] = (),
    expires: str | None = None,
    description: str = "",
    raw_key: str | None = None,
) -> tuple[str, ApiKey]:
    """Create a key and return ``(raw key, record)``; the raw key is shown only here.

    ``full_access`` defaults to true unless paths, methods or origins are given. Only a
    full-access key may delete by query; empty ``paths``/``methods`` allow every path
    or method, an empty ``origins`` allows no browser origin. ``raw_key``
    adopts a given value (e.g. ``DOCBASE_ADMIN_KEY``) instead of a random one.

    Raises:
        InvalidQuery: a malformed glob, method, origin, expiry or given raw key.
        Conflict: a key with this raw value exists already.

    """
    paths_, methods_, origins_ = _check_scopes(paths, methods, origins)
    if full_access is None:
        full_access = not (paths_ or methods_ or origins_)
    if raw_key is None:
        raw_key = secrets.token_hex(20)
    elif not isinstance(raw_key, str) or not _RAW_KEY.fullmatch(raw_key):
        raise InvalidQuery("a given API key must be 8 to 256 printable ASCII characters "
                           "without spaces")
    digest = hash_key(raw_key)
    document = new_document({}, "system")
    document.update(  # "serial": an ObjectID orders keys made within one millisecond too
        serial=document["_id"], _id=_key_id(digest), hash=digest, prefix=raw_key[:8],
        full_access=full_access,
        paths=list(paths_), methods=list(methods_), origins=list(origins_),
        expires=_check_expiry(expires), last_used=None, revoked=None, description=description,
    )
    await db.store.insert(KEYS_COLLECTION, [document])
    _cache(db).clear()
    return raw_key, _from_stored(document)


async def ensure_key(db: Database, raw_key: str, *, description: str = "admin") -> tuple[
    ApiKey, bool
]:
    """Make ``raw_key`` a full-access key unless it is one already; ``(record, created)``.

    A revoked key stays revoked: the result then has ``revoked`` set.
    """
    try:
        return _from_stored(await db.store.get(KEYS_COLLECTION, _key_id(hash_key(raw_key)))), False
    except NotFound:
        return (await create_key(db, full_access=True, raw_key=raw_key,
                                 description=description))[1], True


async def list_keys(db: Database) -> list[ApiKey]:
    """Every key of the database, oldest first, revoked and expired ones included."""
    rows = await db.store.find(KEYS_COLLECTION, Query(sort=(SortKey(("serial",)),), limit=None))
    return [_from_stored(row) for row in rows]


async def revoke_key(db: Database, key: str) -> ApiKey:
    """Revoke a key named by its raw value, its id or a unique prefix of either.

    Raises:
        NotFound: no key matches.
        InvalidQuery: the prefix matches several keys.

    """
    every = await list_keys(db)
    candidates = [k for k in every if k.id in (_key_id(hash_key(key)), key.lower())]
    if not candidates and len(key) >= 4:
        candidates = [k for k in every
                      if k.prefix.startswith(key) or k.id.startswith(key.lower())]
    if not candidates:
        raise NotFound(f"no API key matches {key!r}")
    if len(candidates) > 1:
        raise InvalidQuery(f"{key!r} matches {len(candidates)} keys; give more characters")
    found = candidates[0]
    if found.revoked is None:
        update = Update((SetOp(("revoked",), utc_now()),))
        stored = await db.store.update(KEYS_COLLECTION, found.id, update, stamp={})
        found = _from_stored(stored)
    _cache(db).clear()
    return found


class _KeyCache:
    def __init__(self) -> None:
        self.by_digest: dict[str, tuple[float, ApiKey]] = {}
        self.by_origin: dict[str, tuple[float, list[ApiKey]]] = {}
        self.last_written: dict[str, float] = {}

    def clear(self) -> None:
        self.by_digest.clear()
        self.by_origin.clear()


_caches: weakref.WeakKeyDictionary[Database, _KeyCache] = weakref.WeakKeyDictionary()


def _cache(db: Database) -> _KeyCache:
    cache = _caches.get(db)
    if cache is None:
        cache = _caches[db] = _KeyCache()
    return cache


async def authenticate_key(db: Database, raw_key: str | None) -> ApiKey:
    """Return the live key record for ``raw_key`` and note that it was used.

    Raises:
        Unauthorized: no key given, or an unknown, expired or revoked one.

    """
    if not raw_key:
        raise Unauthorized("an API key is required (header x-apikey or parameter apikey)")
    digest = hash_key(raw_key)
    cache = _cache(db)
    clock = time.monotonic()
    cached = cache.by_digest.get(digest)
    if cached is not None and clock - cached[0] < CACHE_SECONDS:
        key = cached[1]
    else:
        try:
            stored = await db.store.get(KEYS_COLLECTION, _key_id(digest))
        except NotFound:
            raise Unauthorized("unknown API key") from None
        if not hmac.compare_digest(stored["hash"], digest):
            raise Unauthorized("unknown API key")
        key = _from_stored(stored)
        cache.by_digest[digest] = (clock, key)
    if key.revoked is not None:
        raise Unauthorized("this API key has been revoked")
    now = utc_now()
    if key.is_expired(now):
        raise Unauthorized(f"this API key expired at {key.expires}")
    await _note_use(db, cache, key, now, clock)
    return key


async def _note_use(db: Database, cache: _KeyCache, key: ApiKey, now: str, clock: float) -> None:
    last = cache.last_written.get(key.id)
    if last is not None and clock - last < LAST_USED_SECONDS:
        return
    cache.last_written[key.id] = clock
    try:
        await db.store.update(KEYS_COLLECTION, key.id,
                              Update((SetOp(("last_used",), now),)), stamp={})
    except NotFound:  # deleted meanwhile; the next lookup refuses it
        cache.by_digest.clear()


async def authenticate(db: Database, raw_key: str | None) -> Principal:
    """Return the principal of a request carrying ``raw_key``.

    Raises:
        Unauthorized: no key given, or an unknown, expired or revoked one.

    """
    return (await authenticate_key(db, raw_key)).principal()


def authorize(key: ApiKey, method: str, path: str) -> None:
    """Check that ``key`` may send ``method`` to ``path`` (relative to the base URL).

    Raises:
        Forbidden: the key's paths or methods do not cover this request.

    """
    if not key.allows(method, path):
        raise Forbidden(f"this API key may not {method} {path}")


async def keys_for_origin(db: Database, origin: str) -> list[ApiKey]:
    """Return the live keys a browser page of ``origin`` may use (for CORS preflights)."""
    cache = _cache(db)
    clock = time.monotonic()
    cached = cache.by_origin.get(origin)
    if cached is not None and clock - cached[0] < CACHE_SECONDS:
        found = cached[1]
    else:
        rows = await db.store.find(KEYS_COLLECTION, Query(
            filter=In(("origins",), (origin, "*")), limit=None))
        found = [_from_stored(row) for row in rows]
        if len(cache.by_origin) >= _MAX_CACHED_ORIGINS:  # origins come from any client
            cache.by_origin.clear()
        cache.by_origin[origin] = (clock, found)
    now = utc_now()
    return [k for k in found if k.revoked is None and not k.is_expired(now)]


__all__ = [
    "CACHE_SECONDS",
    "KEYS_COLLECTION",
    "LAST_USED_SECONDS",
    "ApiKey",
    "authenticate",
    "authenticate_key",
    "authorize",
    "create_key",
    "ensure_key",
    "hash_key",
    "keys_for_origin",
    "list_keys",
    "revoke_key",
]
