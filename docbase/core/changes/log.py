"""The durable change log: one entry per committed write, shared by every process.

:meth:`ChangeLog.record` subscribes to the database's change bus, so it receives the
:class:`~docbase.core.events.ChangeEvent` of every write the pipeline committed
(``PublishChange``, the last stage). It takes the next number of the ``changes``
sequence and stores the entry in :data:`~.entries.CHANGES_COLLECTION` through the
database's :class:`~docbase.core.ports.DocumentStore`, so every adapter keeps the log
and every process sharing the storage reads the same one. Then it wakes the readers
of every process through the store's :class:`~docbase.core.ports.ChangeSignal`, when
the engine has one.

The entry is written after the document write committed, never in the same
transaction: the port has no transaction spanning two collections. A failed log
write is logged and never undoes or fails the client's write (the bus isolates its
subscribers); a process that dies between the two leaves a write without its entry.
``docs/realtime.md`` states this window.

Only user collections are logged, and only while someone consumes the log: the
:class:`~.feed.ChangeFeed` asks its :class:`~.feed.LogDemand` (realtime is on, a
webhook is enabled, or an export holds a capture lease,
``docbase/core/portability/capture.py``) before it hands a write to
:meth:`ChangeLog.record`; the events an atomic batch held until its commit come
together (:meth:`ChangeLog.record_all`: their numbers taken by one ``$inc``, their
entries stored by one insert). Every
:data:`PRUNE_EVERY` entries the writer of that entry deletes those beyond
``limits.change_max_entries`` or older than ``limits.change_retention``.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Sequence
from datetime import UTC, datetime, timedelta
from typing import Any

from docbase.core.changes.entries import (
    CHANGES_COLLECTION,
    Change,
    change_from,
    entry_id,
    from_document,
    to_document,
)
from docbase.core.changes.sequence import SequenceCounter
from docbase.core.errors import DocbaseError
from docbase.core.events import ChangeEvent
from docbase.core.ids import format_timestamp, utc_now
from docbase.core.names import is_user_collection
from docbase.core.ports import DocumentStore
from docbase.core.query import Gt, Lt, Lte, Or, Query
from docbase.core.settings.in_force import LimitsInForce, ReadsLimits

logger = logging.getLogger("docbase.changes")

PRUNE_EVERY = 100
"""The writer of every entry whose number is a multiple of this prunes the log."""


class ChangeLog(ReadsLimits):
    """The change log of one database, on its document store."""

    def __init__(self, store: DocumentStore, limits: LimitsInForce) -> None:
        self.store = store
        self.limits_in_force = limits
        self.signal = store.change_signal()
        self.counter = SequenceCounter(store, "changes")
        self._indexed = False

    async def record(self, event: ChangeEvent) -> None:
        """Append the committed write ``event`` (a subscriber of the change bus).

        Raises:
            BackendError: the store failed; the bus logs it, the write stays committed.

        """
        await self.record_all([event])

    async def record_all(self, events: Sequence[ChangeEvent]) -> None:
        """Append the committed writes ``events`` in order (an atomic batch's, at commit).

        Their numbers are taken by one ``$inc`` and their entries stored by one insert.

        Raises:
            BackendError: the store failed; the writes stay committed.

        """
        logged = [event for event in events if is_user_collection(event.collection)]
        if not logged:
            return
        last = await self.counter.next(len(logged))
        first, now = last - len(logged) + 1, utc_now()
        await self._append([change_from(event, first + offset, now)
                            for offset, event in enumerate(logged)])

    async def publish(self, event: str, data: Any, *, author: str) -> Change:
        """Append a custom event (``POST /realtime``) and return its entry.

        Raises:
            BackendError: the store failed.

        """
        seq = await self.counter.next()
        change = Change(seq=seq, event=event, data=data, author=author, time=utc_now())
        await self._append([change])
        return change

    async def _append(self, changes: list[Change]) -> None:
        await self.store.insert(CHANGES_COLLECTION, [to_document(c) for c in changes])
        if self.signal is not None:
            await self.signal.notify()
        first, last = changes[0].seq, changes[-1].seq
        if last // PRUNE_EVERY > (first - 1) // PRUNE_EVERY:  # a multiple of it among them
            try:
                await self.prune()
            except DocbaseError as exc:
                logger.error("change log: pruning failed: %s", exc.message)

    async def read(self, after: int, limit: int) -> list[Change]:
        """Up to ``limit`` stored entries numbered above ``after``, in sequence order.

        Raises:
            BackendError: the store failed.

        """
        stored = await self.store.find(CHANGES_COLLECTION, Query(
            filter=Gt(("_id",), entry_id(after)), limit=limit))
        return [from_document(document) for document in stored]

    async def wait(self, seen: int, within: float) -> int:
        """Sleep until the log may have grown: the store's signal, or ``within`` seconds.

        Returns:
            The signal's generation, to pass back as ``seen`` (see
            :meth:`ChangeSignal.wait <docbase.core.ports.ChangeSignal.wait>`).

        """
        if self.signal is None:
            await asyncio.sleep(within)
            return seen
        return await self.signal.wait(seen, within)

    async def state(self) -> tuple[int, int]:
        """The last sequence number taken and the highest one pruned.

        Raises:
            BackendError: the store failed.

        """
        return await self.counter.state()

    async def prune(self) -> int:
        """Delete the entries beyond the retained count or age; return how many.

        Raises:
            BackendError: the store failed.

        """
        if not self._indexed:
            await self.store.ensure_index(CHANGES_COLLECTION, ("time",))
            self._indexed = True
        last, pruned = await self.counter.state()
        cutoff = datetime.now(UTC) - timedelta(seconds=self.limits.change_retention)
        too_old = Lt(("time",), format_timestamp(cutoff))
        beyond = last - self.limits.change_max_entries
        doomed = Or((too_old, Lte(("_id",), entry_id(beyond)))) if beyond > 0 else too_old
        deleted = await self.store.delete_where(CHANGES_COLLECTION, doomed)
        highest = max((int(i, 16) for i in deleted), default=0)
        if highest > pruned:
            await self.counter.mark_pruned(highest)
        return len(deleted)
