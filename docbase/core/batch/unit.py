"""The batch a write belongs to, and the events an atomic batch holds back until commit.

:func:`atomically` opens the store's transaction (:meth:`DocumentStore.transaction`)
and marks the running task as inside batch ``batch_id``; :func:`tagged` only marks it
(``atomic: false``). The write pipeline's publish stage asks :func:`current_unit`:
inside an atomic batch it hands its change event to the unit, which publishes every
held event, tagged with the batch id, once the transaction committed; a batch rolled
back publishes nothing. Outside a batch a write publishes at once, as always.
"""

from __future__ import annotations

import contextlib
from collections.abc import AsyncIterator, Awaitable, Callable, Iterator
from contextvars import ContextVar
from typing import TYPE_CHECKING

import msgspec

if TYPE_CHECKING:
    from docbase.core.events import ChangeEvent
    from docbase.core.ports import DocumentStore

Publish = Callable[["ChangeEvent"], Awaitable[None]]


class BatchUnit:
    """One running batch: its id, and (atomic) the events held until it commits."""

    __slots__ = ("atomic", "batch_id", "held")

    def __init__(self, batch_id: str, *, atomic: bool) -> None:
        self.batch_id = batch_id
        """The id every change event of the batch carries (``batch``)."""
        self.atomic = atomic
        self.held: list[tuple[Publish, ChangeEvent]] = []

    async def publish(self, publish: Publish, event: ChangeEvent) -> None:
        """Publish ``event`` tagged with the batch id; in an atomic batch, after commit."""
        tagged = msgspec.structs.replace(event, batch=self.batch_id)
        if self.atomic:
            self.held.append((publish, tagged))
        else:
            await publish(tagged)


_unit: ContextVar[BatchUnit | None] = ContextVar("docbase_batch_unit", default=None)


def current_unit() -> BatchUnit | None:
    """The batch the running task writes for, or ``None``."""
    return _unit.get()


@contextlib.contextmanager
def tagged(batch_id: str) -> Iterator[BatchUnit]:
    """Mark the writes of the block as writes of batch ``batch_id`` (not atomic)."""
    unit = BatchUnit(batch_id, atomic=False)
    token = _unit.set(unit)
    try:
        yield unit
    finally:
        _unit.reset(token)


def running(store: DocumentStore, batch_id: str, *,
            atomic: bool) -> contextlib.AbstractAsyncContextManager[BatchUnit]:
    """:func:`atomically` or, with ``atomic`` false, :func:`tagged`, as a block."""
    if atomic:
        return atomically(store, batch_id)

    @contextlib.asynccontextmanager
    async def only_tagged() -> AsyncIterator[BatchUnit]:
        with tagged(batch_id) as unit:
            yield unit

    return only_tagged()


@contextlib.asynccontextmanager
async def atomically(store: DocumentStore, batch_id: str) -> AsyncIterator[BatchUnit]:
    """Run the block in one transaction of ``store``; publish its events after commit.

    Raises:
        TransactionsUnsupported: the store has no multi-document transactions.

    """
    unit = BatchUnit(batch_id, atomic=True)
    token = _unit.set(unit)
    try:
        async with store.transaction():
            yield unit
    finally:
        _unit.reset(token)
    for publish, event in unit.held:
        await publish(event)
