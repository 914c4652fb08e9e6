"""Scaffolding for differential tests: an adapter must answer what the reference does.

The memory adapter runs ``docbase.core.evaluate`` itself, so comparing a candidate
store with it on the same documents and the same query finds every place where the
candidate's compiled form departs from the reference semantics. Results are compared
with :func:`~docbase.core.evaluate.json_equal`: key order counts, ``1 == 1.0``,
``True != 1``.
"""

from __future__ import annotations

import contextlib
import uuid
import weakref
from collections.abc import AsyncIterator, Sequence
from datetime import UTC, datetime
from typing import Any

from docbase.adapters.memory import MemoryDocumentStore
from docbase.core.documents import Document
from docbase.core.errors import Conflict
from docbase.core.evaluate import json_equal
from docbase.core.ports import DocumentStore
from docbase.core.query import AggregateRow, And, Path
from docbase.core.update import Update

NOW = datetime(2024, 5, 17, 12, 30, tzinfo=UTC)
"""The fixed "now" that dynamic ``$date`` values are parsed against."""

STAMP = {"_changed": "2030-01-01T00:00:00.000Z", "_changedby": "someone"}
"""The system fields every differential update sets."""


class EmptiedCollections:
    """Collections of one candidate store, emptied after use, to load the next example into.

    Creating a collection and dropping it costs a SQL engine a table, its indexes and
    thousands of catalog rows: about 40 ms an example on PostgreSQL against 4 ms to empty
    one and fill it again, and hundreds of examples a property. A collection is reused
    only for the same indexed paths, so each example still runs on exactly the indexes
    it asked for; at most :attr:`KEPT` of them are kept, the least recently used dropped.
    """

    KEPT = 16

    def __init__(self) -> None:
        self._idle: dict[tuple[Path, ...], str] = {}

    def take(self, indexed: Sequence[Path]) -> tuple[str, bool]:
        """A collection for ``indexed`` paths and whether it is new (to be indexed)."""
        name = self._idle.pop(tuple(sorted(indexed)), None)
        return (name, False) if name else (f"c{uuid.uuid4().hex[:12]}", True)

    async def give_back(self, candidate: DocumentStore, indexed: Sequence[Path],
                        name: str) -> None:
        """Empty ``name`` for the next example with these paths (or drop it)."""
        key = tuple(sorted(indexed))
        try:
            await candidate.delete_where(name, And(()))
        except Exception:
            await candidate.drop(name)
            raise
        if key in self._idle:
            await candidate.drop(name)
            return
        self._idle[key] = name
        if len(self._idle) > self.KEPT:
            await candidate.drop(self._idle.pop(next(iter(self._idle))))


_EMPTIED: weakref.WeakKeyDictionary[DocumentStore, EmptiedCollections] = (
    weakref.WeakKeyDictionary())


@contextlib.asynccontextmanager
async def loaded(
    candidate: DocumentStore, documents: Sequence[Document], indexed: Sequence[Path] = ()
) -> AsyncIterator[tuple[str, MemoryDocumentStore]]:
    """Load ``documents`` into an empty collection of ``candidate`` and of a memory store.

    Yields the collection name and the memory store; the candidate's collection is
    emptied afterwards for a later example with the same ``indexed`` paths
    (:class:`EmptiedCollections`), which are indexed in the candidate first.
    """
    collections = _EMPTIED.setdefault(candidate, EmptiedCollections())
    name, new = collections.take(indexed)
    memory = MemoryDocumentStore()
    await memory.insert(name, documents)
    try:
        for path in indexed if new else ():
            await candidate.ensure_index(name, path)
        await candidate.insert(name, documents)
        for path in indexed:  # again: a path meeting arrays gets its SQL item index only
            await candidate.ensure_index(name, path)  # now (then later examples write it)
        yield name, memory
    finally:
        await collections.give_back(candidate, indexed, name)


def assert_same(got: Any, expected: Any) -> None:
    """Assert that two results are equal by :func:`json_equal`."""
    assert json_equal(got, expected), f"\n     got {got!r}\nexpected {expected!r}"


def assert_same_rows(got: list[AggregateRow], expected: list[AggregateRow]) -> None:
    """Assert that two aggregate results hold equal keys and values, in order."""
    assert_same([[list(r.key), r.values] for r in got],
                [[list(r.key), r.values] for r in expected])


async def update_outcomes(
    stores: Sequence[DocumentStore], name: str, document_id: str, update: Update,
    *, stale: bool,
) -> list[tuple[Any, ...]]:
    """Apply ``update`` in each store; return what each answered and then held.

    A stale update expects ``_version`` 1 of a document still at 0. Each outcome is
    ``("updated", returned, stored)`` or ``(error class name, stored)``.
    """
    outcomes: list[tuple[Any, ...]] = []
    for store in stores:
        try:
            changed = await store.update(name, document_id, update, stamp=STAMP,
                                         expected_version=1 if stale else None)
        except Conflict as exc:
            outcomes.append((type(exc).__name__, await store.get(name, document_id)))
        else:
            outcomes.append(("updated", changed, await store.get(name, document_id)))
    return outcomes
