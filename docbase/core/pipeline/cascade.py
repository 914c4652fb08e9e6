"""The deletes a delete cascades to: planned before its store call, finished after it.

Deleting documents deletes their children (the documents of the child collections
recorded in :mod:`docbase.core.relations` whose ``_parent_id`` is one of them), and
theirs in turn. Each child collection's delete is a write of the same pipeline: while
the cascade is planned it passes the stages before the store (it was authorized with
its cause; validators and before-hooks run, and may refuse it before anything is
deleted). The parent's store stage then deletes every planned group, children first,
in one :meth:`~docbase.core.ports.DocumentStore.delete_all`, and each child write
passes the stages after the store (after-hooks, publish) before the parent's do.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Protocol

from docbase.core.events import DeleteWhere, WriteEvent
from docbase.core.parents import children_of
from docbase.core.ports import DocumentStore
from docbase.core.projection import ID_ONLY
from docbase.core.query import Query
from docbase.core.relations import Relations


class StagedWrites(Protocol):
    """The pipeline as a cascade uses it: the stages before the store, and after it."""

    async def prepare(self, write: WriteEvent) -> None:
        """Pass ``write`` through the stages before the store stage."""

    async def finish(self, write: WriteEvent) -> None:
        """Pass a stored ``write`` through the stages after the store stage."""


class CascadedDeletes:
    """Keeps the :class:`~docbase.core.pipeline.stages.Cascade` protocol for a database.

    It is built by the :class:`~docbase.core.pipeline.assembly.Pipeline` whose store
    stage it serves, with that pipeline as ``staged``.
    """

    def __init__(self, relations: Relations, store: DocumentStore,
                 staged: StagedWrites) -> None:
        self.relations = relations
        self.store = store
        self.staged = staged

    async def plan(self, write: WriteEvent, ids: Sequence[str]) -> list[WriteEvent]:
        """Return the child deletes of ``ids``, deepest first, past their before-stages."""
        planned: list[WriteEvent] = []
        if not ids:
            return planned
        for field in await self.relations.child_fields(write.collection):
            child = DeleteWhere(collection=field, principal=write.principal,
                                filter=children_of(write.collection, ids),
                                cause=f"cascade from {write.collection}")
            await self.staged.prepare(child)
            found = await self.store.find(  # with the filter a before-hook may have narrowed
                field, Query(filter=child.filter, limit=None, projection=ID_ONLY))
            child.ids = [document["_id"] for document in found]
            planned += await self.plan(child, child.ids)
            planned.append(child)
        return planned

    async def finish(self, children: Sequence[WriteEvent]) -> None:
        """Pass the child deletes, once stored, through the stages after the store."""
        for child in children:
            await self.staged.finish(child)
