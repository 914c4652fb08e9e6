"""Sequence numbers shared by every process: a counter document incremented atomically.

A :class:`SequenceCounter` is one document of the system collection
:data:`COUNTERS_COLLECTION`. :meth:`SequenceCounter.next` is one ``$inc`` through
:meth:`DocumentStore.update <docbase.core.ports.DocumentStore.update>`, which every
adapter applies atomically (concurrent updates never lose each other's changes), so
no two callers in any process ever receive the same number. A number is allocated
before its entry is stored; :mod:`docbase.core.changes.reader` says how readers deal
with one allocated but not yet visible. The counter also keeps ``pruned``, the
highest number the log has deleted, so a reader knows a missing number below it will
never appear.
"""

from __future__ import annotations

import contextlib
import hashlib

from docbase.core.errors import Conflict, NotFound
from docbase.core.ports import DocumentStore
from docbase.core.update import IncOp, SetOp, Update

COUNTERS_COLLECTION = "_counters"
"""The system collection of sequence counters."""

_NEXT = Update((IncOp(("seq",), 1),))


class SequenceCounter:
    """The numbers of one sequence (``name``), starting at 1."""

    def __init__(self, store: DocumentStore, name: str) -> None:
        self.store = store
        self.name = name
        self.counter_id = hashlib.sha256(f"docbase sequence {name}".encode()).hexdigest()[:24]

    async def next(self, count: int = 1) -> int:
        """Allocate the next ``count`` numbers (one ``$inc``); return the last.

        The first is ``last - count + 1``.

        Raises:
            BackendError: the store failed.

        """
        step = _NEXT if count == 1 else Update((IncOp(("seq",), count),))
        try:
            counter = await self.store.update(COUNTERS_COLLECTION, self.counter_id, step,
                                              stamp={})
        except NotFound:
            await self._create()
            counter = await self.store.update(COUNTERS_COLLECTION, self.counter_id, step,
                                              stamp={})
        return int(counter["seq"])

    async def state(self) -> tuple[int, int]:
        """The last number allocated and the highest pruned one (``(0, 0)`` at first).

        Raises:
            BackendError: the store failed.

        """
        try:
            counter = await self.store.get(COUNTERS_COLLECTION, self.counter_id)
        except NotFound:
            return 0, 0
        return int(counter.get("seq", 0)), int(counter.get("pruned", 0))

    async def mark_pruned(self, seq: int) -> None:
        """Record that every entry up to ``seq`` may have been deleted."""
        await self.store.update(COUNTERS_COLLECTION, self.counter_id,
                                Update((SetOp(("pruned",), seq),)), stamp={})

    async def _create(self) -> None:
        with contextlib.suppress(Conflict):  # another process created it meanwhile
            await self.store.insert(COUNTERS_COLLECTION, [
                {"_id": self.counter_id, "name": self.name, "seq": 0, "pruned": 0,
                 "_version": 0}])
