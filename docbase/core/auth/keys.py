"""API keys of one database: the key record, and creating, listing and revoking keys.

Keys live in the database's own system collection ``_apikeys`` through its
:class:`~docbase.core.ports.DocumentStore`, so every process serving the database sees
the same keys, and a key of one database means nothing to another. Only the SHA-256 of
a key is stored (keys are high-entropy random strings, so a plain hash suffices), plus
a short non-secret ``prefix`` to recognise it in listings. A stored key's ``_id`` is
derived from that hash, so authenticating is one lookup by primary key (see
:mod:`docbase.core.auth.authentication`).

A key is *full-access* or *scoped* by a :class:`~docbase.core.auth.scopes.Scope`: path
globs relative to the database's base URL, HTTP methods and CORS origins. A key may
expire. A scoped key may carry ``roles`` (``docbase keys create --role R``), what
collection access rules (``docs/access.md``) grant to; a full-access key is never
limited by rules, so it has none. Creating or revoking a key through this module
clears this process's cached lookups of keys at once
(:class:`~docbase.core.auth.cache.SystemCache`).
"""

from __future__ import annotations

import hashlib
import re
import secrets
from collections.abc import Iterable
from datetime import UTC, datetime
from typing import TYPE_CHECKING, Any

import msgspec

from docbase.core.auth.cache import Namespace
from docbase.core.auth.principal import Principal, check_roles
from docbase.core.auth.scopes import Scope, parse_scope
from docbase.core.documents import new_document
from docbase.core.errors import InvalidQuery, NotFound
from docbase.core.ids import format_timestamp, utc_now
from docbase.core.query import Query, SortKey
from docbase.core.update import SetOp, Update

if TYPE_CHECKING:
    from docbase.core.system_data import SystemData

KEYS_COLLECTION = "_apikeys"
"""The system collection holding a database's API keys."""
_RAW_KEY = re.compile(r"[\x21-\x7e]{8,256}")
_OWNER = re.compile(r"[A-Za-z0-9_][A-Za-z0-9_.:/-]{0,63}")
"""An owner name: like a role, never an email (a user's ``_createdby``) nor ``*``."""


class ApiKey(msgspec.Struct, frozen=True):
    """What is known about a key; never its raw value or its hash.

    ``paths``, ``methods`` and ``origins`` are the fields of its :attr:`scope`, kept flat
    so that a listing shows them as they are stored.
    """

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
    roles: tuple[str, ...] = ()
    owner: str = "api"

    @property
    def scope(self) -> Scope:
        """The paths, methods and origins this key is limited to."""
        return Scope(self.paths, self.methods, self.origins)

    def is_expired(self, now: str | None = None) -> bool:
        """Tell whether the key has expired (timestamps compare as strings)."""
        return self.expires is not None and (now or utc_now()) >= self.expires

    def allows_origin(self, origin: str) -> bool:
        """Tell whether a browser page of ``origin`` may use this key."""
        return self.scope.allows_origin(origin)

    def allows(self, method: str, path: str) -> bool:
        """Tell whether this key may send ``method`` to ``path`` (relative to base URL)."""
        return self.full_access or self.scope.allows(method, path)

    def principal(self) -> Principal:
        """Return the principal of requests made with this key, scope included."""
        return Principal(author=self.owner, kind="key", full_access=self.full_access,
                         key_id=self.id, scope=self.scope,
                         roles=() if self.full_access else self.roles)


KEY_BY_DIGEST: Namespace[ApiKey] = Namespace("apikey-by-digest")
"""Cached key records, by the SHA-256 of the raw key."""
KEYS_BY_ORIGIN: Namespace[list[ApiKey]] = Namespace("apikeys-by-origin")
"""Cached keys whose origins hold an origin (or ``*``), by that origin."""


def forget_cached_keys(db: SystemData) -> None:
    """Drop this process's cached key lookups of ``db`` (after a key changed)."""
    db.auth_cache.invalidate(KEY_BY_DIGEST)
    db.auth_cache.invalidate(KEYS_BY_ORIGIN)


def hash_key(raw_key: str) -> str:
    """Return the stored SHA-256 (hex) of a raw key."""
    return hashlib.sha256(raw_key.encode()).hexdigest()


def key_id(digest: str) -> str:
    """Return the ``_id`` of the stored key whose hash is ``digest``."""
    return digest[:24]


def from_stored(document: dict[str, Any]) -> ApiKey:
    """Return the record of a stored key document."""
    return ApiKey(
        id=document["_id"], prefix=document["prefix"], full_access=document["full_access"],
        paths=tuple(document["paths"]), methods=tuple(document["methods"]),
        origins=tuple(document["origins"]), expires=document["expires"],
        created=document["_created"], last_used=document.get("last_used"),
        revoked=document.get("revoked"), description=document.get("description", ""),
        roles=tuple(document.get("roles") or ()), owner=document.get("owner") or "api",
    )


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


async def create_key(
    db: SystemData,
    *,
    full_access: bool | None = None,
    paths: Iterable[str] = (),
    methods: Iterable[str] = (),
    origins: Iterable[str] = (),
    expires: str | None = None,
    description: str = "",
    raw_key: str | None = None,
    roles: Iterable[str] = (),
    owner: str | None = None,
) -> tuple[str, ApiKey]:
    """Create a key and return ``(raw key, record)``; the raw key is shown only here.

    ``full_access`` defaults to true unless paths, methods, origins or roles are given. Only a
    full-access key may delete by query; empty ``paths``/``methods`` allow every path
    or method, an empty ``origins`` allows no browser origin. ``raw_key``
    adopts a given value (e.g. ``DOCBASE_ADMIN_KEY``) instead of a random one.
    ``roles`` are a scoped key's roles for access rules (a full-access key takes none).
    ``owner`` is the name a scoped key writes as ``_createdby`` and so owns documents
    by (``@owner``, ``private``): by default ``key:<serial>``, the key's own; a new key
    given an old key's owner takes over its documents (a rotation). A full-access key
    writes as ``api``.

    Raises:
        InvalidQuery: a malformed glob, method, origin, expiry, role or given raw key,
            or roles or an owner given to a full-access key, or an owner that is not a
            name (1 to 64 letters, digits and ``_.:/-``, never an email).
        Conflict: a key with this raw value exists already.

    """
    scope, checked_roles = parse_scope(paths, methods, origins), check_roles(roles)
    if full_access is None:
        full_access = not (scope.paths or scope.methods or scope.origins or checked_roles)
    if full_access and checked_roles:
        raise InvalidQuery("a full-access key is never limited by access rules: give "
                           "roles to a scoped key (--path/--method) only")
    if full_access and owner is not None:
        raise InvalidQuery("a full-access key writes as 'api': give an owner to a scoped "
                           "key (--path/--method) only")
    if owner is not None and not (isinstance(owner, str) and _OWNER.fullmatch(owner)):
        raise InvalidQuery(f"owner {owner!r} is not 1 to 64 letters, digits and '_.:/-' "
                           "starting with a letter, digit or '_'")
    if raw_key is None:
        raw_key = secrets.token_hex(20)
    elif not isinstance(raw_key, str) or not _RAW_KEY.fullmatch(raw_key):
        raise InvalidQuery("a given API key must be 8 to 256 printable ASCII characters "
                           "without spaces")
    digest = hash_key(raw_key)
    document = new_document({}, "system")
    document.update(  # "serial": an ObjectID orders keys made within one millisecond too
        serial=document["_id"], _id=key_id(digest), hash=digest, prefix=raw_key[:8],
        full_access=full_access,
        paths=list(scope.paths), methods=list(scope.methods), origins=list(scope.origins),
        expires=_check_expiry(expires), last_used=None, revoked=None, description=description,
        roles=list(checked_roles),
        owner="api" if full_access else owner or f"key:{document['_id']}",
    )
    await db.store.insert(KEYS_COLLECTION, [document])
    forget_cached_keys(db)
    return raw_key, from_stored(document)


async def ensure_key(db: SystemData, raw_key: str, *, description: str = "admin") -> tuple[
    ApiKey, bool
]:
    """Make ``raw_key`` a full-access key unless it is one already; ``(record, created)``.

    A revoked key stays revoked: the result then has ``revoked`` set.

    Raises:
        InvalidQuery: ``raw_key`` is not 8 to 256 printable ASCII characters.

    """
    try:
        return from_stored(await db.store.get(KEYS_COLLECTION, key_id(hash_key(raw_key)))), False
    except NotFound:
        return (await create_key(db, full_access=True, raw_key=raw_key,
                                 description=description))[1], True


async def list_keys(db: SystemData) -> list[ApiKey]:
    """Every key of the database, oldest first, revoked and expired ones included."""
    rows = await db.store.find(KEYS_COLLECTION, Query(sort=(SortKey(("serial",)),), limit=None))
    return [from_stored(row) for row in rows]


async def revoke_key(db: SystemData, key: str) -> ApiKey:
    """Revoke a key named by its raw value, its id or a unique prefix of either.

    Raises:
        NotFound: no key matches.
        InvalidQuery: the prefix matches several keys.

    """
    every = await list_keys(db)
    candidates = [k for k in every if k.id in (key_id(hash_key(key)), key.lower())]
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
        found = from_stored(stored)
    forget_cached_keys(db)
    return found
