"""The batch a write belongs to, and the events an atomic batch holds back until commit.

:func:`atomically` opens the store's transaction (:meth:`DocumentStore.transaction`)
and marks the running task as inside batch ``batch_id``; :func:`tagged` only marks it
(``atomic: false``). The write pipeline's publish stage asks :func:`current_unit`:
inside an atomic batch it hands its change event to the unit, which publishes every
held event, tagged with the batch id, once the transaction committed, all in one
:meth:`Publisher.publish_all` (the change log numbers and stores them together); a
batch rolled back publishes nothing. Outside a batch a write publishes at once, as
always.
"""

from __future__ import annotations

import contextlib
from collections.abc import AsyncIterator, Iterator, Sequence
from contextvars import ContextVar
from typing import TYPE_CHECKING, Protocol

import msgspec

if TYPE_CHECKING:
    from docbase.core.events import ChangeEvent
    from docbase.core.ports import DocumentStore


class Publisher(Protocol):
    """Where the events of a batch go (the database's change bus)."""

    async def publish(self, event: ChangeEvent) -> None:
        """Hand one committed write's event to the subscribers."""

    async def publish_all(self, events: Sequence[ChangeEvent]) -> None:
        """Hand several committed writes' events to the subscribers, in order."""


class BatchUnit:
    """One running batch: its id, and (atomic) the events held until it commits."""

    __slots__ = ("atomic", "batch_id", "held", "outer")

    def __init__(self, batch_id: str | None, *, atomic: bool,
                 outer: BatchUnit | None = None) -> None:
        """``outer``: the atomic unit this one runs inside, which publishes for it."""
        self.batch_id = batch_id
        """The id every change event of the batch carries (``batch``)."""
        self.atomic: bool = atomic
        self.outer: BatchUnit | None = outer if outer is not None and outer.atomic else None
        self.held: list[tuple[Publisher, ChangeEvent]] = []

    async def publish(self, publisher: Publisher, event: ChangeEvent) -> None:
        """Publish ``event`` tagged with the batch id; in an atomic batch, after commit."""
        tagged = event if self.batch_id is None else msgspec.structs.replace(
            event, batch=self.batch_id)
        if self.atomic:
            self.held.append((publisher, tagged))
        elif self.outer is not None:  # inside an atomic unit: after its commit
            self.outer.held.append((publisher, tagged))
        else:
            await publisher.publish(tagged)

    async def publish_held(self) -> None:
        """Publish the held events in order, those of one publisher in a row together."""
        start = 0
        while start < len(self.held):
            publisher = self.held[start][0]
            end = start
            while end < len(self.held) and self.held[end][0] is publisher:
                end += 1
            await publisher.publish_all([event for _, event in self.held[start:end]])
            start = end


_unit: ContextVar[BatchUnit | None] = ContextVar("docbase_batch_unit", default=None)


def current_unit() -> BatchUnit | None:
    """The batch the running task writes for, or ``None``."""
    return _unit.get()


@contextlib.contextmanager
def tagged(batch_id: str) -> Iterator[BatchUnit]:
    """Mark the writes of the block as writes of batch ``batch_id`` (not atomic)."""
    unit = BatchUnit(batch_id, atomic=False, outer=_unit.get())
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
async def atomically(store: DocumentStore,
                     batch_id: str | None) -> AsyncIterator[BatchUnit]:
    """Run the block in one transaction of ``store``; publish its events after commit.

    ``batch_id`` tags the events (``None``: a unit of work that is no batch, such as a
    write with an ``Idempotency-Key``). A block inside an atomic block joins its
    transaction and hands its events to it, to be published after the outer commit.

    Raises:
        TransactionsUnsupported: the store has no multi-document transactions.

    """
    outer = _unit.get()
    unit = BatchUnit(batch_id, atomic=True)
    token = _unit.set(unit)
    try:
        async with store.transaction():
            yield unit
    finally:
        _unit.reset(token)
    if outer is not None and outer.atomic:
        outer.held.extend(unit.held)
        return
    await unit.publish_held()
