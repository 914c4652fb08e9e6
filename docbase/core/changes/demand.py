"""Whether a write goes to the change log: asked by every write, read ten times a second.

Writes are logged while someone consumes the log: realtime is on (``realtime.global``),
a webhook is enabled, or an export or migration holds a capture lease
(``docbase/core/portability/capture.py``). Those three live in system collections that
every process shares, and asking them on every write cost about 35 µs (three cached
lookups). :class:`LogDemand` instead keeps one answer per process:

- **Trusted for** :data:`DEMAND_SECONDS` **from the moment its read began** (not
  ended): a read begun at ``s`` sees every registration committed before ``s``, and its
  answer is used only until ``s + DEMAND_SECONDS``. Expired, the next write reads the
  three again (fresh, not through the system cache), once for all writes waiting.
- **Changes made through this process** (a webhook added, a lease taken, a setting set)
  count as invalidations of their system-cache namespaces
  (:meth:`~docbase.core.auth.cache.SystemCache.invalidations`), compared on every call:
  the next write reads again.
- **Changes made by another process** are seen within :data:`DEMAND_SECONDS`, so the
  registration itself waits that long (:func:`until_every_process_logs`, with a margin)
  before it returns: a webhook added, a realtime switched on or a capture begun is, when
  the call returns, logged by every process's next write. A registration never loses a
  write that starts after it returned; one that runs while it is being made may or may
  not be logged, as any write concurrent with it.

Switching a consumer off needs no wait: a process logging a little longer is harmless.
The time compared is each process's own monotonic clock; only durations cross between
processes, never instants.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Callable
from typing import TYPE_CHECKING, Any, Protocol

if TYPE_CHECKING:
    from docbase.core.auth.cache import Namespace, SystemCache
    from docbase.core.settings.stored import DatabaseSettings

DEMAND_SECONDS = 0.1
"""How long one process trusts its answer to "is the change log consumed?".

Each registration waits a little longer (:data:`ANNOUNCE_SECONDS`, 0.17 s). Half a
second made it 0.65 s; a writer reading the answer ten times a second instead of twice
did not write measurably slower (``benchmarks/log_demand_bench.py``).
"""
ANNOUNCE_SECONDS = DEMAND_SECONDS * 1.2 + 0.05
"""How long a registration waits for every process's answer to have been read again."""


async def until_every_process_logs() -> None:
    """Wait until every process sharing the storage has read the log's consumers again.

    Called by what makes a consumer of the log (a webhook added or enabled, realtime
    switched on, a capture lease taken) after storing it and before returning.
    """
    await asyncio.sleep(ANNOUNCE_SECONDS)


class LogConsumer(Protocol):
    """One kind of consumer of the change log, stored in a system collection."""

    @property
    def cached_as(self) -> Namespace[Any]:
        """The system-cache namespace this process invalidates when it changes them."""

    async def consuming_now(self) -> bool:
        """Tell, reading the store now (no cache), whether one of them consumes the log."""


class FreshSettings(Protocol):
    """The stored settings, read past the cache (``db.settings``)."""

    @property
    def cached_as(self) -> Namespace[Any]:
        """The system-cache namespace this process invalidates when it changes them."""

    async def read_now(self) -> DatabaseSettings:
        """The settings as stored now."""


class RealtimeSwitch:
    """Realtime (``realtime.global``) as a consumer of the log."""

    def __init__(self, settings: FreshSettings) -> None:
        self.settings = settings

    @property
    def cached_as(self) -> Namespace[Any]:
        """The settings' namespace."""
        return self.settings.cached_as

    async def consuming_now(self) -> bool:
        """Tell whether realtime is on, as stored now."""
        return (await self.settings.read_now()).realtime.enabled


class LogDemand:
    """Whether writes go to the change log, answered from one read per half second."""

    def __init__(self, consumers: tuple[LogConsumer, ...], cache: SystemCache, *,
                 clock: Callable[[], float] = time.monotonic) -> None:
        """Ask ``consumers`` (in order, the first yes answers); ``cache`` counts local changes."""
        self.consumers = consumers
        self.cache = cache
        self.clock = clock
        """Seconds, monotonic; tests set their own instead of sleeping."""
        self._watched = tuple(consumer.cached_as for consumer in consumers)
        self._answer = False
        self._until = float("-inf")
        self._seen = -1
        self._reading: tuple[float, int, asyncio.Task[bool]] | None = None

    async def __call__(self) -> bool:
        """Tell whether someone consumes the log now (see the module's docstring)."""
        if self.clock() < self._until and self._seen == self.cache.invalidations(
                *self._watched):
            return self._answer
        return await self._read()

    async def _read(self) -> bool:
        now, seen = self.clock(), self.cache.invalidations(*self._watched)
        reading = self._reading
        if (reading is None or reading[1] != seen or now >= reading[0] + DEMAND_SECONDS
                or reading[2].get_loop() is not asyncio.get_running_loop()):
            task = asyncio.ensure_future(self._consumed())
            reading = self._reading = (now, seen, task)
            task.add_done_callback(lambda done: self._settle(now, seen, done))
        return await asyncio.shield(reading[2])

    async def _consumed(self) -> bool:
        for consumer in self.consumers:
            if await consumer.consuming_now():
                return True
        return False

    def _settle(self, started: float, seen: int, task: asyncio.Task[bool]) -> None:
        """Keep what a read found, unless this process changed a consumer meanwhile."""
        if self._reading is not None and self._reading[2] is task:
            self._reading = None
        if task.cancelled() or task.exception() is not None:
            return
        if seen == self.cache.invalidations(*self._watched) and started >= self._until - (
                DEMAND_SECONDS):
            self._answer, self._until, self._seen = task.result(), started + DEMAND_SECONDS, seen
