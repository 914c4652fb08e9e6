"""One bounded, short-lived cache of system-collection lookups, owned by a database.

Credentials live in system collections shared by every process serving a database
(API keys today; revoked tokens and users later), and reading them on every request
would cost a store round trip each. A :class:`SystemCache` keeps what one process has
read, per :class:`Namespace` (one kind of lookup: a key by its digest, the keys of an
origin, ...), and forgets it again:

- **Staleness bound.** An entry is trusted for at most ``ttl`` seconds after it was
  stored (:data:`CACHE_SECONDS` unless the namespace or the cache says otherwise). A
  change made by another process (a key revoked from the command line, a second
  server) is therefore seen by this process within that time. A change made through
  this process (``revoke_key``, ``create_key``) calls :meth:`SystemCache.invalidate`
  and is seen at once.
- **Bound on size.** Each namespace holds at most ``max_entries`` entries; storing one
  more evicts the oldest. Lookups keyed by what a client sends (an ``Origin`` header,
  a wrong key) thus cannot grow the process without limit.
- Failed lookups are not cached: a loader that raises stores nothing.
- **One load at a time.** Callers asking for the same key while its load is under way
  wait for that load (:meth:`SystemCache.fetch`) rather than each reading the store: when
  an entry expires under load, every request in flight would otherwise read it again
  at once.

The cache is per process and per database (``Database.auth_cache``), never shared
between databases, so a key of one database means nothing to another.
"""

from __future__ import annotations

import asyncio
import time
from collections import OrderedDict
from collections.abc import Awaitable, Callable, Hashable
from typing import Any, Generic, TypeVar, cast

V = TypeVar("V")

CACHE_SECONDS = 1.0
"""How long one process trusts a lookup before reading the system collection again."""
MAX_ENTRIES = 1024
"""The most entries one namespace of a cache holds."""

_ABSENT = object()


class Namespace(Generic[V]):
    """One kind of cached lookup; ``V`` is the type of the values it holds.

    ``ttl`` overrides the cache's own for this namespace (e.g. a throttle that
    remembers a write for a minute).
    """

    __slots__ = ("name", "ttl")

    def __init__(self, name: str, *, ttl: float | None = None) -> None:
        self.name = name
        self.ttl = ttl

    def __repr__(self) -> str:
        return f"Namespace({self.name!r})"


class SystemCache:
    """Lookups of system collections, each trusted for ``ttl`` seconds at most.

    ``clock`` returns seconds (monotonic); tests inject their own instead of sleeping.

    Raises:
        ValueError: ``max_entries`` is below one.

    """

    def __init__(
        self,
        *,
        ttl: float = CACHE_SECONDS,
        max_entries: int = MAX_ENTRIES,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        if max_entries < 1:
            raise ValueError("a cache must hold at least one entry")
        self.ttl = ttl
        self.max_entries = max_entries
        self._clock = clock
        self._spaces: dict[str, OrderedDict[Hashable, tuple[float, object]]] = {}
        self._loading: dict[tuple[str, Hashable], asyncio.Task[Any]] = {}
        self._invalidated: dict[str, int] = {}
        self._cleared = 0

    def get(self, namespace: Namespace[V], key: Hashable) -> V | None:
        """Return the fresh value stored under ``key``, else ``None`` (absent or stale)."""
        found = self._lookup(namespace, key)
        return None if found is _ABSENT else cast(V, found)

    def put(self, namespace: Namespace[V], key: Hashable, value: V) -> None:
        """Store ``value`` under ``key``, evicting the oldest entry when the namespace is full."""
        self._loading.pop((namespace.name, key), None)  # newer than a load under way
        entries = self._spaces.setdefault(namespace.name, OrderedDict())
        entries.pop(key, None)
        while len(entries) >= self.max_entries:
            entries.popitem(last=False)
        entries[key] = (self._clock(), value)

    async def fetch(
        self, namespace: Namespace[V], key: Hashable, load: Callable[[], Awaitable[V]]
    ) -> V:
        """Return the fresh value under ``key``, else ``await load()``, store and return it.

        While one caller's load of ``key`` is under way, other callers wait for its
        value; the load runs on even if the caller that started it is cancelled.

        Raises:
            Exception: whatever ``load`` raises (to every caller waiting for it);
                nothing is stored then.

        """
        found = self._lookup(namespace, key)
        if found is not _ABSENT:
            return cast(V, found)
        flight = (namespace.name, key)
        task = self._loading.get(flight)
        if task is None or task.get_loop() is not asyncio.get_running_loop():
            task = asyncio.ensure_future(load())
            self._loading[flight] = task
            task.add_done_callback(lambda done: self._loaded(namespace, key, done))
        return cast(V, await asyncio.shield(task))

    def _loaded(self, namespace: Namespace[V], key: Hashable, task: asyncio.Task[Any]) -> None:
        """Store what a load found, unless the key was invalidated while it ran."""
        flight = (namespace.name, key)
        if self._loading.get(flight) is not task:
            if not task.cancelled():
                task.exception()  # retrieved: it was (or will be) raised to its callers
            return
        del self._loading[flight]
        if not task.cancelled() and task.exception() is None:
            self.put(namespace, key, task.result())

    def invalidate(self, namespace: Namespace[V], key: Hashable = _ABSENT) -> None:
        """Forget ``key`` of ``namespace``, or the whole namespace when no key is given."""
        self._invalidated[namespace.name] = self._invalidated.get(namespace.name, 0) + 1
        if key is _ABSENT:
            self._spaces.pop(namespace.name, None)
            for flight in [f for f in self._loading if f[0] == namespace.name]:
                del self._loading[flight]  # what it read may predate the change
        else:
            self._loading.pop((namespace.name, key), None)
            if namespace.name in self._spaces:
                self._spaces[namespace.name].pop(key, None)

    def clear(self) -> None:
        """Forget everything."""
        self._cleared += 1
        self._spaces.clear()
        self._loading.clear()

    def invalidations(self, *namespaces: Namespace[Any]) -> int:
        """How many times these namespaces were invalidated (or the cache cleared), summed.

        A number that changes when this process changed what they hold: a reader keeping
        its own copy of something derived from them compares it to tell.
        """
        return self._cleared + sum(self._invalidated.get(n.name, 0) for n in namespaces)

    def __len__(self) -> int:
        return sum(len(entries) for entries in self._spaces.values())

    def _lookup(self, namespace: Namespace[V], key: Hashable) -> object:
        entries = self._spaces.get(namespace.name)
        if entries is None or key not in entries:
            return _ABSENT
        stamp, value = entries[key]
        ttl = self.ttl if namespace.ttl is None else namespace.ttl
        if self._clock() - stamp >= ttl:
            del entries[key]
            return _ABSENT
        return value
