"""The one allow/deny decision (docbase.core.auth.authorize) and the bounded system cache."""

from __future__ import annotations

import asyncio
import re
import time

import pytest

from docbase import Database, Forbidden, Unauthorized
from docbase.adapters.memory import MemoryDocumentStore
from docbase.core import auth
from docbase.core.auth import SYSTEM, Action, ApiKey, Namespace, Principal, Scope, SystemCache
from docbase.core.auth.revocation import REVOCATION_SECONDS, is_revoked, revoke_token

PEOPLE_READER = Principal(kind="key", full_access=False, key_id="k" * 24,
                          scope=Scope(paths=("/rest/people/**",), methods=("GET",)))
ORIGIN_BOUND_FULL = Principal(kind="key", full_access=True, key_id="f" * 24,
                              scope=Scope(origins=("https://a.example",)))
ORIGIN_BOUND_SCOPED = Principal(kind="key", full_access=False, key_id="s" * 24,
                                scope=Scope(paths=("/rest/**",), origins=("https://a.example",)))
NO_ORIGINS_FULL = Principal(kind="key", full_access=True, key_id="n" * 24, scope=Scope())


# ---------------------------------------------------------------- authorize


@pytest.mark.parametrize(("method", "path"), [
    ("GET", "/rest/people"),
    ("GET", "/rest/people/5f0c0e0c0e0c0e0c0e0c0e0c"),
    ("HEAD", "/rest/people/5f0c0e0c0e0c0e0c0e0c0e0c"),
])
def test_scoped_key_may_use_its_paths_and_methods(method: str, path: str) -> None:
    auth.authorize(PEOPLE_READER, Action(method, path))


@pytest.mark.parametrize(("method", "path"), [
    ("POST", "/rest/people"),
    ("DELETE", "/rest/people/5f0c0e0c0e0c0e0c0e0c0e0c"),
    ("GET", "/rest/orders"),
    ("GET", "/rest/peoplex"),
])
def test_scoped_key_is_refused_other_paths_and_methods(method: str, path: str) -> None:
    with pytest.raises(Forbidden, match=f"this API key may not {method} {path}"):
        auth.authorize(PEOPLE_READER, Action(method, path))


@pytest.mark.parametrize("principal", [ORIGIN_BOUND_FULL, ORIGIN_BOUND_SCOPED],
                         ids=["full-access", "scoped"])
def test_key_bound_to_other_origins_is_refused_from_a_browser_origin(
    principal: Principal,
) -> None:
    with pytest.raises(Forbidden, match=re.escape("may not be used from origin https://b.example")):
        auth.authorize(principal, Action("GET", "/rest/people", origin="https://b.example"))


@pytest.mark.parametrize("origin", ["https://a.example", None], ids=["its-origin", "no-origin"])
def test_key_bound_to_an_origin_works_from_it_and_outside_browsers(origin: str | None) -> None:
    auth.authorize(ORIGIN_BOUND_FULL, Action("DELETE", "/rest/people/x", origin=origin))
    auth.authorize(ORIGIN_BOUND_SCOPED, Action("GET", "/rest/people", origin=origin))


def test_key_without_origins_is_not_refused_for_a_browser_origin() -> None:
    auth.authorize(NO_ORIGINS_FULL, Action("GET", "/rest/people", origin="https://b.example"))


def test_full_access_key_reaches_every_path_and_method() -> None:
    auth.authorize(NO_ORIGINS_FULL, Action("PATCH", "/rest/anything/at/all"))


def test_delete_by_query_is_refused_for_a_scoped_key_even_on_its_paths() -> None:
    scoped_writer = Principal(kind="key", full_access=False,
                              scope=Scope(paths=("/rest/people/**",)))
    auth.authorize(scoped_writer, Action("DELETE", "/rest/people/*"))
    with pytest.raises(Forbidden, match="delete by query needs a full-access API key"):
        auth.authorize(scoped_writer, Action("DELETE", "/rest/people/*", by_query=True))


@pytest.mark.parametrize("principal", [
    NO_ORIGINS_FULL,
    SYSTEM,
    Principal(kind="hook", full_access=False),
], ids=["full-access-key", "system", "hook"])
def test_delete_by_query_is_allowed_for_full_access_and_hooks(principal: Principal) -> None:
    auth.authorize(principal, Action("DELETE", "/rest/people/*", by_query=True))


def test_a_keys_principal_carries_its_scope() -> None:
    key = ApiKey(id="x" * 24, prefix="xxxxxxxx", full_access=False, paths=("/rest/a/**",),
                 methods=("GET",), origins=("https://a.example",))
    principal = key.principal()
    assert principal == Principal(author="api", kind="key", full_access=False,
                                  key_id="x" * 24,
                                  scope=Scope(("/rest/a/**",), ("GET",), ("https://a.example",)))
    with pytest.raises(Forbidden):
        auth.authorize(principal, Action("GET", "/rest/b"))


# ---------------------------------------------------------------- the cache


class FakeClock:
    def __init__(self) -> None:
        self.now = 100.0

    def __call__(self) -> float:
        return self.now


NUMBERS: Namespace[int] = Namespace("numbers")
WORDS: Namespace[str] = Namespace("words")


def test_cache_entry_is_trusted_until_its_ttl_has_passed() -> None:
    clock = FakeClock()
    cache = SystemCache(ttl=1.0, clock=clock)
    cache.put(NUMBERS, "one", 1)
    clock.now = 100.999
    assert cache.get(NUMBERS, "one") == 1
    clock.now = 101.0
    assert cache.get(NUMBERS, "one") is None
    assert len(cache) == 0


def test_namespace_ttl_overrides_the_caches() -> None:
    clock = FakeClock()
    cache = SystemCache(ttl=1.0, clock=clock)
    throttle: Namespace[bool] = Namespace("throttle", ttl=60.0)
    cache.put(throttle, "key", True)
    clock.now = 159.5
    assert cache.get(throttle, "key") is True
    clock.now = 160.0
    assert cache.get(throttle, "key") is None


async def test_cache_fetch_loads_once_per_ttl_and_stores_no_failure() -> None:
    clock = FakeClock()
    cache = SystemCache(ttl=1.0, clock=clock)
    loads: list[str] = []

    async def load() -> int:
        loads.append("load")
        return len(loads)

    assert await cache.fetch(NUMBERS, "n", load) == 1
    assert await cache.fetch(NUMBERS, "n", load) == 1
    clock.now = 101.5
    assert await cache.fetch(NUMBERS, "n", load) == 2
    assert loads == ["load", "load"]

    async def fail() -> int:
        raise Unauthorized("unknown API key")

    with pytest.raises(Unauthorized):
        await cache.fetch(NUMBERS, "missing", fail)
    assert cache.get(NUMBERS, "missing") is None


async def test_concurrent_fetches_of_one_key_share_one_load() -> None:
    cache = SystemCache(ttl=1.0, clock=FakeClock())
    started, release = asyncio.Event(), asyncio.Event()
    loads: list[str] = []

    async def load() -> int:
        loads.append("load")
        started.set()
        await release.wait()
        return 7

    first = asyncio.ensure_future(cache.fetch(NUMBERS, "n", load))
    await started.wait()
    others = [asyncio.ensure_future(cache.fetch(NUMBERS, "n", load)) for _ in range(5)]
    await asyncio.sleep(0)
    first.cancel()  # the caller that started the load goes away: the load runs on
    release.set()
    assert await asyncio.gather(*others) == [7] * 5
    assert loads == ["load"]
    assert cache.get(NUMBERS, "n") == 7
    with pytest.raises(asyncio.CancelledError):
        await first


async def test_a_failed_shared_load_fails_every_caller_and_stores_nothing() -> None:
    cache = SystemCache(clock=FakeClock())
    release = asyncio.Event()

    async def fail() -> int:
        await release.wait()
        raise Unauthorized("unknown API key")

    callers = [asyncio.ensure_future(cache.fetch(NUMBERS, "n", fail)) for _ in range(3)]
    await asyncio.sleep(0)
    release.set()
    results = await asyncio.gather(*callers, return_exceptions=True)
    assert [type(r) for r in results] == [Unauthorized] * 3
    assert cache.get(NUMBERS, "n") is None


async def test_a_load_under_way_when_the_key_changes_is_not_stored() -> None:
    cache = SystemCache(clock=FakeClock())
    release = asyncio.Event()
    values = iter([1, 2])

    async def load() -> int:
        await release.wait()
        return next(values)

    stale = asyncio.ensure_future(cache.fetch(NUMBERS, "n", load))
    await asyncio.sleep(0)
    cache.invalidate(NUMBERS, "n")  # written meanwhile: what the load read may be old
    fresh = asyncio.ensure_future(cache.fetch(NUMBERS, "n", load))
    release.set()
    assert sorted(await asyncio.gather(stale, fresh)) == [1, 2]
    assert cache.get(NUMBERS, "n") == 2


def test_full_namespace_evicts_its_oldest_entry_only() -> None:
    cache = SystemCache(max_entries=2, clock=FakeClock())
    cache.put(WORDS, "kept", "in another namespace")
    cache.put(NUMBERS, "a", 1)
    cache.put(NUMBERS, "b", 2)
    cache.put(NUMBERS, "a", 10)  # storing again makes "a" the newest
    cache.put(NUMBERS, "c", 3)
    assert [cache.get(NUMBERS, k) for k in ("a", "b", "c")] == [10, None, 3]
    assert cache.get(WORDS, "kept") == "in another namespace"
    assert len(cache) == 3


def test_cache_invalidate_and_clear_forget_at_once() -> None:
    cache = SystemCache(clock=FakeClock())
    cache.put(NUMBERS, "a", 1)
    cache.put(NUMBERS, "b", 2)
    cache.put(WORDS, "w", "word")
    cache.invalidate(NUMBERS, "a")
    assert (cache.get(NUMBERS, "a"), cache.get(NUMBERS, "b")) == (None, 2)
    cache.invalidate(NUMBERS)
    assert (cache.get(NUMBERS, "b"), cache.get(WORDS, "w")) == (None, "word")
    cache.clear()
    assert cache.get(WORDS, "w") is None
    assert len(cache) == 0


def test_cache_must_hold_at_least_one_entry() -> None:
    with pytest.raises(ValueError, match="at least one entry"):
        SystemCache(max_entries=0)


async def test_revocation_by_another_process_is_seen_within_the_ttl() -> None:
    clock = FakeClock()
    async with MemoryDocumentStore() as store:
        serving, operator = Database(store, name="main"), Database(store, name="main")
        serving.auth_cache = SystemCache(ttl=1.0, clock=clock)
        raw, _ = await auth.create_key(operator)
        assert (await auth.authenticate(serving, raw)).kind == "key"
        await auth.revoke_key(operator, raw)
        clock.now = 100.5  # still trusted by the serving process
        assert (await auth.authenticate(serving, raw)).kind == "key"
        clock.now = 101.0
        with pytest.raises(Unauthorized, match="revoked"):
            await auth.authenticate(serving, raw)



async def test_a_logout_in_another_process_is_honoured_once_the_revoked_set_is_stale(
) -> None:
    # the served test (tests/test_serve_jwt.py) sees it across real processes; this
    # one pins the bound: the set is trusted REVOCATION_SECONDS, then read again
    clock = FakeClock()
    async with MemoryDocumentStore() as store:
        serving, other = Database(store, name="main"), Database(store, name="main")
        serving.auth_cache = SystemCache(clock=clock)
        assert not await is_revoked(serving, "jti-1")  # cached: nothing revoked
        await revoke_token(other, "jti-1", expires=time.time() + 60)
        assert await is_revoked(other, "jti-1")  # its own logout: at once
        clock.now += REVOCATION_SECONDS * 0.9
        assert not await is_revoked(serving, "jti-1")  # still trusting its set
        clock.now += REVOCATION_SECONDS * 0.2
        assert await is_revoked(serving, "jti-1")
        assert REVOCATION_SECONDS <= 0.5  # the promise: honoured everywhere within 1 s
