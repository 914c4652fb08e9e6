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
from collections.abc import AsyncIterator, Sequence
from datetime import UTC, datetime
from typing import Any

from docbase.adapters.memory import MemoryDocumentStore
from docbase.core.documents import Document
from docbase.core.errors import Conflict
from docbase.core.evaluate import json_equal
from docbase.core.ports import DocumentStore
from docbase.core.query import AggregateRow, Path
from docbase.core.update import Update

NOW = datetime(2024, 5, 17, 12, 30, tzinfo=UTC)
"""The fixed "now" that dynamic ``$date`` values are parsed against."""

STAMP = {"_changed": "2030-01-01T00:00:00.000Z", "_changedby": "someone"}
"""The system fields every differential update sets."""


@contextlib.asynccontextmanager
async def loaded(
    candidate: DocumentStore, documents: Sequence[Document], indexed: Sequence[Path] = ()
) -> AsyncIterator[tuple[str, MemoryDocumentStore]]:
    """Load ``documents`` into a fresh collection of ``candidate`` and of a memory store.

    Yields the collection name and the memory store; the candidate's collection is
    dropped afterwards. ``indexed`` paths are indexed in the candidate first.
    """
    name = f"c{uuid.uuid4().hex[:12]}"
    memory = MemoryDocumentStore()
    await memory.insert(name, documents)
    for path in indexed:
        await candidate.ensure_index(name, path)
    await candidate.insert(name, documents)
    try:
        yield name, memory
    finally:
        await candidate.drop(name)


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
