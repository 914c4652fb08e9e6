"""Keeping the request log off the request path: buffered in memory, written in batches.

A served request costs the log one :meth:`RequestLog.record`: a tuple appended to a
list. A background task of the process (:meth:`RequestLog.open`) writes what was
recorded every :data:`FLUSH_SECONDS`, or sooner once :data:`BATCH` entries wait, as one
insert of entries and one of minute tallies (:mod:`.records`), and deletes what is
beyond the configured number of entries (and tallies older than the longest chart)
every :data:`PRUNE_SECONDS`. :meth:`RequestLog.close` writes the rest at shutdown.

Every request is counted in the tallies, but a write lists at most :data:`LISTED` of
them as entries: all of them below that rate, and above it the errors first, then the
newest others; the tallies count the requests left out (``unlisted``). With a document
written per request a served get by id took about a fifth more CPU on SQLite in a noisy
run (the JSON, the search column, the row: ``docs/benchmarks.md``, "requestlog").

A write that fails (the store is down, slow or refuses) is logged once per run of
failures and its batch is dropped: a request never waits for the log nor fails with it,
and a store that does not answer cannot make the buffer grow beyond
:data:`MAX_PENDING` entries (those recorded beyond it are counted in :attr:`dropped`).
Everything runs on the process's event loop, so the buffer needs no lock.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import os
import time
from typing import TYPE_CHECKING, Any

from docbase.core.ids import new_object_id
from docbase.core.query import And, Eq, Lt, Lte, Or, Query, SortKey
from docbase.core.requestlog.records import (
    ENTRIES_COLLECTION,
    MINUTES_COLLECTION,
    MINUTES_KEPT,
    bucket_field,
    latency_bucket,
)

if TYPE_CHECKING:
    from docbase.core.ports import DocumentStore

FLUSH_SECONDS = 1.0
"""How long a recorded request waits, at most, to be written with the others."""
BATCH = 5000
"""Recorded requests that are written without waiting for the time to pass."""
LISTED = 200
"""The most requests one write lists as entries; the others are only counted."""
MAX_PENDING = 20_000
"""Recorded requests held while writes fail or lag; later ones are not kept."""
PRUNE_SECONDS = 30.0
"""How often a process deletes the entries beyond the number kept."""

NEWEST_FIRST = (SortKey(("at",), -1), SortKey(("seq",), -1))
"""The order of the log: the newest first; of one millisecond, the last recorded first
(``seq`` counts a process's entries)."""

logger = logging.getLogger("docbase.requestlog")

Recorded = tuple[float, str, str, int, float, str]
"""When (epoch seconds), method, route template, status, seconds, credential kind."""


class RequestLog:
    """The request log of one database in one process (see the module's description)."""

    def __init__(self, store: DocumentStore, keep: int) -> None:
        """Log into ``store``, keeping its newest ``keep`` entries."""
        self.store = store
        self.keep = keep
        self.pid = os.getpid()
        self.dropped = 0
        """Requests not logged: recorded while :data:`MAX_PENDING` were waiting."""
        self._pending: list[Recorded] = []
        self._task: asyncio.Task[None] | None = None
        self._wake = asyncio.Event()
        self._failing = False
        self._pruned = time.monotonic()
        self._seq = 0

    def record(self, method: str, route: str, status: int, seconds: float,
               credential: str) -> None:
        """Note one served request; it is written by the background task."""
        pending = self._pending
        if len(pending) >= MAX_PENDING:
            self.dropped += 1
            return
        pending.append((time.time(), method, route, status, seconds, credential))
        if len(pending) == BATCH:
            self._wake.set()

    async def open(self) -> None:
        """Index the collections (once per store) and start the background writer."""
        with contextlib.suppress(Exception):  # the log never stops a server starting
            await self.store.ensure_index(ENTRIES_COLLECTION, ("at",))
            await self.store.ensure_index(MINUTES_COLLECTION, ("minute",))
        self._wake = asyncio.Event()
        self._task = asyncio.create_task(self._run(), name="docbase request log")

    async def close(self) -> None:
        """Stop the writer and write what is still recorded."""
        if self._task is not None:
            self._task.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await self._task
            self._task = None
        await self.flush()

    async def _run(self) -> None:
        while True:
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(self._wake.wait(), FLUSH_SECONDS)
            self._wake.clear()
            await self.flush()
            if time.monotonic() - self._pruned >= PRUNE_SECONDS:
                await self.prune()

    async def flush(self) -> int:
        """Write the recorded requests now; return how many were written (0 on failure)."""
        batch, self._pending = self._pending, []
        if not batch:
            return 0
        entries, tallies = self._documents(batch)
        try:
            await self.store.insert(ENTRIES_COLLECTION, entries, new_ids=True)
            await self.store.insert(MINUTES_COLLECTION, tallies, new_ids=True)
        except Exception as exc:  # a background writer has no caller to raise to
            self._failed("writing", len(batch), exc)
            return 0
        self._failing = False
        return len(batch)

    async def prune(self) -> None:
        """Delete the entries beyond the newest :attr:`keep` and the tallies too old."""
        self._pruned = time.monotonic()
        try:
            edge = await self.store.find(ENTRIES_COLLECTION, Query(
                sort=NEWEST_FIRST, skip=self.keep, limit=1))
            if edge:  # it and everything after it in the newest-first order
                at, seq = edge[0]["at"], edge[0].get("seq", 0)
                await self.store.delete_where(ENTRIES_COLLECTION, Or((
                    Lt(("at",), at), And((Eq(("at",), at), Lte(("seq",), seq))))))
            oldest = int(time.time() // 60) - MINUTES_KEPT
            await self.store.delete_where(MINUTES_COLLECTION, Lt(("minute",), oldest))
        except Exception as exc:  # the same: logged, tried again at the next prune
            self._failed("pruning", 0, exc)

    def _failed(self, doing: str, lost: int, exc: Exception) -> None:
        if not self._failing:
            logger.warning("request log: %s failed (%d request(s) not logged): %s: %s",
                           doing, lost, type(exc).__name__, exc)
        self._failing = True

    def _documents(self, batch: list[Recorded]) -> tuple[list[dict[str, Any]],
                                                         list[dict[str, Any]]]:
        pid = self.pid
        minutes: dict[int, dict[str, Any]] = {}
        for at, _, _, status, seconds, _ in batch:
            minute = int(at // 60)
            tally = minutes.get(minute)
            if tally is None:
                tally = minutes[minute] = {"_id": new_object_id(), "minute": minute,
                                           "pid": pid, "n": 0, "e4": 0, "e5": 0,
                                           "unlisted": 0}
            tally["n"] += 1
            if status >= 500:
                tally["e5"] += 1
            elif status >= 400:
                tally["e4"] += 1
            field = bucket_field(latency_bucket(seconds * 1000))
            tally[field] = tally.get(field, 0) + 1
        chosen = _listed(batch)
        if len(chosen) < len(batch):
            kept = set(chosen)
            for index, recorded in enumerate(batch):
                if index not in kept:
                    minutes[int(recorded[0] // 60)]["unlisted"] += 1
        entries = []
        for at, method, route, status, seconds, credential in (batch[i] for i in chosen):
            self._seq += 1
            entries.append({"_id": new_object_id(), "at": int(at * 1000), "seq": self._seq,
                            "method": method, "route": route, "status": status,
                            "ms": round(seconds * 1000, 3), "credential": credential,
                            "pid": pid})
        return entries, list(minutes.values())


def _listed(batch: list[Recorded]) -> list[int]:
    """The indexes of the requests of ``batch`` listed as entries (see the module)."""
    if len(batch) <= LISTED:
        return list(range(len(batch)))
    errors = [index for index, recorded in enumerate(batch) if recorded[3] >= 400][-LISTED:]
    room = LISTED - len(errors)
    others = [index for index, recorded in enumerate(batch) if recorded[3] < 400]
    return sorted(errors + (others[-room:] if room else []))
