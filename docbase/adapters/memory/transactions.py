"""Transactions of the memory store: an undo log, one transaction at a time.

:meth:`MemoryTransactions.transaction` takes the store's write turn for the whole
block and records, before each write of the block, the documents it is about to change
(or their absence); a block that raises puts every one of them back. The writes of
other tasks wait for the turn, so none lands between a block's writes and its
rollback. Their reads do not wait (a read that waited for a block could deadlock it,
when the block awaits something that read is part of, such as a shared cache fetch):
they see the committed state, the undo log laid over the documents
(:meth:`MemoryTransactions._visible`), as readers of the SQL stores do. A block inside
a block keeps an undo log of its own besides: raising out of it puts back what it
changed and leaves the outer block to go on.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import AsyncIterator, Iterable
from contextvars import ContextVar
from typing import Any

from docbase.core.documents import Document


class UndoLog:
    """What a transaction's writes replaced: each ``(collection, id)``'s earlier document."""

    __slots__ = ("before", "open")

    def __init__(self) -> None:
        self.before: dict[tuple[str, str], Document | None] = {}
        self.open = True


_running: ContextVar[tuple[Any, tuple[UndoLog, ...]] | None] = ContextVar(
    "docbase_memory_transaction", default=None)
"""The store whose block this task runs, and the undo logs of its blocks, outermost first."""


class MemoryTransactions:
    """The transaction of :class:`~docbase.adapters.memory.MemoryDocumentStore`."""

    _collections: dict[str, dict[str, Document]]

    def __init__(self) -> None:
        self._turn = asyncio.Lock()
        self._open_block: UndoLog | None = None  # the outermost block's log, while one runs

    def _logs(self) -> tuple[UndoLog, ...]:
        running = _running.get()
        if running is None or running[0] is not self or not running[1][0].open:
            return ()
        return running[1]

    @contextlib.asynccontextmanager
    async def _in_turn(self) -> AsyncIterator[None]:
        """Wait for a running block to end, unless it is this task's."""
        if self._logs() or not self._turn.locked():
            yield
            return
        async with self._turn:
            yield

    def _touch(self, collection: str, ids: Iterable[str]) -> None:
        """Remember what ``ids`` of ``collection`` hold, before a write changes them."""
        logs = self._logs()
        if not logs:
            return
        stored = self._collections.get(collection, {})
        for document_id in ids:
            for log in logs:
                log.before.setdefault((collection, document_id), stored.get(document_id))

    @contextlib.asynccontextmanager
    async def transaction(self) -> AsyncIterator[None]:
        """See :meth:`~docbase.core.ports.DocumentStore.transaction`."""
        logs = self._logs()
        if logs:  # inside the running one: undone alone when it raises
            async with self._logged(logs):
                yield
            return
        async with self._turn, self._logged(()):
            yield

    def _visible(self, collection: str) -> dict[str, Document]:
        """``collection``'s documents as this task may read them, by ``_id``.

        A task inside the running block reads its writes; any other task, what was
        committed: the documents the block changed as they were before it.
        """
        stored = self._collections.get(collection, {})
        running = self._open_block
        if running is None or self._logs():
            return stored
        before = {document_id: document
                  for (name, document_id), document in running.before.items()
                  if name == collection}
        if not before:
            return stored
        view = dict(stored)
        for document_id, document in before.items():
            if document is None:
                view.pop(document_id, None)
            else:
                view[document_id] = document
        return view

    def _touched_collections(self) -> set[str]:
        """The collections the running block changed (one may be empty only inside it)."""
        running = self._open_block
        return set() if running is None else {name for name, _ in running.before}

    @contextlib.asynccontextmanager
    async def _logged(self, outer: tuple[UndoLog, ...]) -> AsyncIterator[None]:
        log = UndoLog()
        token = _running.set((self, (*outer, log)))
        if not outer:
            self._open_block = log
        try:
            yield
        except BaseException:
            self._undo(log)
            raise
        finally:
            if not outer:
                log.open = False
                self._open_block = None
            _running.reset(token)

    def _undo(self, log: UndoLog) -> None:
        for (collection, document_id), document in log.before.items():
            target = self._collections.setdefault(collection, {})
            if document is None:
                target.pop(document_id, None)
            else:
                target[document_id] = document
