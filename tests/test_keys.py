"""API keys (docbase.core.auth) on every storage backend."""

from __future__ import annotations

from typing import Any

import pytest

from docbase import Database, Forbidden, InvalidQuery, NotFound, Unauthorized
from docbase.adapters.memory import MemoryDocumentStore
from docbase.core import auth
from docbase.core.errors import Conflict
from docbase.core.query import Query


@pytest.fixture
def db(stores: Any) -> Database:
    return Database(*stores, name="main")


async def test_full_access_key_authenticates_as_api(db: Database) -> None:
    raw, key = await auth.create_key(db, description="admin")
    principal = await auth.authenticate(db, raw)
    assert key.full_access
    assert (principal.kind, principal.author, principal.full_access) == ("key", "api", True)
    assert principal.key_id == key.id


async def test_only_the_hash_and_a_prefix_are_stored(db: Database) -> None:
    raw, key = await auth.create_key(db)
    stored = await db.store.find(auth.KEYS_COLLECTION, Query(limit=None))
    assert len(stored) == 1
    assert raw not in repr(stored)
    assert stored[0]["hash"] == auth.hash_key(raw)
    assert key.prefix == raw[:8]


async def test_keys_are_random_and_high_entropy(db: Database) -> None:
    first, _ = await auth.create_key(db)
    second, _ = await auth.create_key(db)
    assert first != second
    assert len(first) >= 32


async def test_given_raw_key_is_adopted_once(db: Database) -> None:
    raw, _ = await auth.create_key(db, raw_key="operator-chosen-secret")
    assert raw == "operator-chosen-secret"
    assert (await auth.authenticate(db, raw)).full_access
    with pytest.raises(Conflict):
        await auth.create_key(db, raw_key="operator-chosen-secret")


@pytest.mark.parametrize("bad", ["short", "has space inside", "ümlaut-key-value"])
async def test_given_raw_key_must_be_printable_ascii(db: Database, bad: str) -> None:
    with pytest.raises(InvalidQuery):
        await auth.create_key(db, raw_key=bad)


async def test_ensure_key_is_idempotent(db: Database) -> None:
    first, created = await auth.ensure_key(db, "admin-key-from-env")
    again, created_again = await auth.ensure_key(db, "admin-key-from-env")
    assert (created, created_again) == (True, False)
    assert first.id == again.id
    assert len(await auth.list_keys(db)) == 1


async def test_list_keys_shows_scopes_but_no_secrets(db: Database) -> None:
    await auth.create_key(db)
    await auth.create_key(db, paths=["/rest/customers/**"], methods=["get"],
                          origins=["https://app.example.com/"], expires="2999-01-01")
    listed = await auth.list_keys(db)
    assert [k.full_access for k in listed] == [True, False]
    scoped = listed[1]
    assert scoped.paths == ("/rest/customers/**",)
    assert scoped.methods == ("GET",)
    assert scoped.origins == ("https://app.example.com",)
    assert scoped.expires == "2999-01-01T00:00:00.000Z"
    assert not hasattr(scoped, "hash")


@pytest.mark.parametrize(
    "options",
    [{"paths": ["rest/x"]}, {"methods": ["FETCH"]}, {"origins": ["example.com"]},
     {"expires": "next week"}],
)
async def test_malformed_scopes_are_refused(db: Database, options: dict[str, Any]) -> None:
    with pytest.raises(InvalidQuery):
        await auth.create_key(db, **options)


async def test_unknown_and_missing_keys_are_unauthorized(db: Database) -> None:
    await auth.create_key(db)
    with pytest.raises(Unauthorized):
        await auth.authenticate(db, "not-a-key-of-this-database")
    with pytest.raises(Unauthorized):
        await auth.authenticate(db, None)
    with pytest.raises(Unauthorized):
        await auth.authenticate(db, "")


async def test_expired_key_is_unauthorized(db: Database) -> None:
    raw, _ = await auth.create_key(db, expires="2001-01-01T00:00:00Z")
    with pytest.raises(Unauthorized, match="expired"):
        await auth.authenticate(db, raw)


@pytest.mark.parametrize("by", ["raw", "id", "prefix", "id-prefix"])
async def test_revoked_key_is_unauthorized(db: Database, by: str) -> None:
    raw, key = await auth.create_key(db)
    await auth.authenticate(db, raw)  # cached now: revoking must still take effect
    name = {"raw": raw, "id": key.id, "prefix": key.prefix, "id-prefix": key.id[:10]}[by]
    revoked = await auth.revoke_key(db, name)
    assert revoked.id == key.id
    assert revoked.revoked is not None
    with pytest.raises(Unauthorized, match="revoked"):
        await auth.authenticate(db, raw)
    assert (await auth.list_keys(db))[0].revoked == revoked.revoked


async def test_revoke_refuses_unknown_and_ambiguous_names(db: Database) -> None:
    await auth.create_key(db, raw_key="samestart-one")
    await auth.create_key(db, raw_key="samestart-two")
    with pytest.raises(NotFound):
        await auth.revoke_key(db, "nothing-like-it")
    with pytest.raises(InvalidQuery, match="2 keys"):
        await auth.revoke_key(db, "samesta")


async def test_last_used_lands_in_storage(db: Database) -> None:
    raw, key = await auth.create_key(db)
    assert key.last_used is None
    await auth.authenticate(db, raw)
    stored = await db.store.get(auth.KEYS_COLLECTION, key.id)
    assert stored["last_used"] is not None


async def test_a_key_of_one_database_is_unknown_to_another(db: Database) -> None:
    raw, _ = await auth.create_key(db)
    async with MemoryDocumentStore() as other_store:
        other = Database(other_store, name="other")
        with pytest.raises(Unauthorized):
            await auth.authenticate(other, raw)


@pytest.mark.parametrize(
    ("method", "path", "allowed"),
    [
        ("GET", "/rest/customers", True),
        ("GET", "/rest/customers/", True),
        ("GET", "/rest/customers/5f0c0e0c0e0c0e0c0e0c0e0c", True),
        ("HEAD", "/rest/customers/5f0c0e0c0e0c0e0c0e0c0e0c/orders", True),
        ("POST", "/rest/customers", True),
        ("DELETE", "/rest/customers/5f0c0e0c0e0c0e0c0e0c0e0c", False),
        ("GET", "/rest/customersx", False),
        ("GET", "/rest/orders", False),
        ("GET", "/rest/_meta", False),
    ],
)
async def test_scoped_key_allows_its_globs_and_methods(
    db: Database, method: str, path: str, allowed: bool
) -> None:
    raw, _ = await auth.create_key(db, paths=["/rest/customers/**"], methods=["GET", "POST"])
    key = await auth.authenticate_key(db, raw)
    assert not key.full_access
    if allowed:
        auth.authorize(key.principal(), auth.Action(method, path))
    else:
        with pytest.raises(Forbidden):
            auth.authorize(key.principal(), auth.Action(method, path))


def test_single_star_matches_one_segment() -> None:
    key = auth.ApiKey(id="x" * 24, prefix="x", full_access=False,
                      paths=("/rest/*/_meta", "/rest/p?ople"))
    assert key.allows("GET", "/rest/customers/_meta")
    assert not key.allows("GET", "/rest/a/b/_meta")
    assert key.allows("GET", "/rest/people")
    assert not key.allows("GET", "/rest/people/5f0c0e0c0e0c0e0c0e0c0e0c")


async def test_keys_for_origin_lists_live_keys_allowing_it(db: Database) -> None:
    await auth.create_key(db, origins=["https://a.example"])
    await auth.create_key(db, origins=["*"], methods=["GET"])
    await auth.create_key(db, origins=["https://a.example"], expires="2001-01-01")
    revoked, _ = await auth.create_key(db, origins=["https://a.example"])
    await auth.revoke_key(db, revoked)
    await auth.create_key(db)
    assert len(await auth.keys_for_origin(db, "https://a.example")) == 2
    assert len(await auth.keys_for_origin(db, "https://b.example")) == 1
