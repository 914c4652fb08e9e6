"""The stages of the pipelines, each a small object with one job.

A stage is an async callable taking the event in flight. The order they run in is
written once, in :mod:`docbase.core.pipeline.assembly`.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Sequence
from typing import Protocol, TypeAlias

from docbase.core.auth import Action, authorize
from docbase.core.batch.unit import current_unit
from docbase.core.changes import ChangeBus
from docbase.core.documents import change_stamp
from docbase.core.errors import NotFound
from docbase.core.events import (
    ChangeEvent,
    DeleteIds,
    DeleteWhere,
    Insert,
    ReadEvent,
    UpdateDocument,
    WriteEvent,
)
from docbase.core.hooks.pipeline_points import HookPoint, HookRegistry
from docbase.core.names import is_user_collection
from docbase.core.parents import ParentRef, rest_path, scoped, where_stored
from docbase.core.ports import Deletion, DocumentStore
from docbase.core.projection import ID_ONLY
from docbase.core.query import Filter, In, Query
from docbase.core.relations import Relations
from docbase.core.versioning import check_version

Validator: TypeAlias = Callable[[WriteEvent], Awaitable[None]]
"""Checks and normalises a write's documents or body; raises ``ValidationFailed``."""


class Cascade(Protocol):
    """The deletes of the children of documents a write is about to delete."""

    async def plan(self, write: WriteEvent, ids: Sequence[str]) -> list[WriteEvent]:
        """Return the child deletes of ``ids``, deepest first, past their before-stages.

        Each carries the ids it is to delete; nothing is deleted yet.
        """

    async def finish(self, children: Sequence[WriteEvent]) -> None:
        """Pass the child deletes, once stored, through their after-stages."""


class WriteStage(Protocol):
    """One step every write passes."""

    name: str

    async def __call__(self, write: WriteEvent) -> None:
        """Do this stage's part of ``write``, or raise to refuse it."""


class ReadStage(Protocol):
    """One step every read passes before the store is asked."""

    name: str

    async def __call__(self, read: ReadEvent) -> None:
        """Do this stage's part of ``read``, or raise to refuse it."""


def write_action(write: WriteEvent, parent: ParentRef | None) -> Action:
    """The :class:`Action` a write asks the principal to be allowed, under ``parent``."""
    match write:
        case Insert():
            path = rest_path(write.collection, parent)
        case DeleteWhere() | DeleteIds(bulk=True):
            path = rest_path(write.collection, parent, "*")
        case UpdateDocument() | DeleteIds():
            path = rest_path(write.collection, parent, write.ids[0])
    return Action(write.method, path, by_query=isinstance(write, DeleteWhere))


class AuthorizeWrite:
    """Ask the one decision of :mod:`docbase.core.auth` whether the write is allowed.

    A write through a child path is a write to the parent's path and the same write in
    the child collection (:func:`where_stored`). A cascaded write (``cause`` set) was
    authorized with the write that caused it.
    """

    name = "authorize"

    async def __call__(self, write: WriteEvent) -> None:
        """Raise ``Forbidden`` unless the principal may do this write."""
        if write.cause is None:
            for parent in where_stored(write.parent):
                authorize(write.principal, write_action(write, parent))


class ValidateWrite:
    """Run the validators over the write: the schemas' first (``docbase.core.schema``)."""

    name = "validate"

    def __init__(self, validators: list[Validator]) -> None:
        self.validators = validators

    async def __call__(self, write: WriteEvent) -> None:
        """Raise ``ValidationFailed`` when a validator refuses the write."""
        for validator in self.validators:
            await validator(write)


class RunWriteHooks:
    """Run the hooks registered before (or after) the write's operation."""

    def __init__(self, hooks: HookRegistry, *, after: bool) -> None:
        self.hooks = hooks
        self.after = after
        self.name = "after-hooks" if after else "before-hooks"

    async def __call__(self, write: WriteEvent) -> None:
        """Run the hooks in registration order; a before-hook may refuse the write."""
        point = HookPoint.after if self.after else HookPoint.before
        await self.hooks.run(point(write.operation), write)


def _still_new(write: Insert) -> bool:
    """Whether the documents carry the ids made for them, each once (hooks may change them)."""
    ids = {document.get("_id") for document in write.documents}
    return len(ids) == len(write.documents) and ids <= write.new_ids


class StoreWrite:
    """The store operation itself, one atomic store call per write.

    A delete first plans its cascade (children, then their own children, each child
    collection's delete passing its before-stages), then deletes the children and the
    documents in one ``delete_all``: one transaction where the engine has them, else
    children first, so that a crash in between can leave a parent without children,
    never children without a parent.
    """

    name = "store"

    def __init__(self, store: DocumentStore, relations: Relations, cascade: Cascade) -> None:
        self.store = store
        self.relations = relations
        self.cascade = cascade

    async def __call__(self, write: WriteEvent) -> None:
        """Store the write and record in it what was stored."""
        match write:
            case Insert():
                if write.parent is not None:
                    await self.relations.record(write.parent)
                if write.documents:
                    await self.store.insert(write.collection, write.documents,
                                            new_ids=_still_new(write))
            case UpdateDocument():
                await self._update(write)
            case DeleteIds() | DeleteWhere():
                await self._delete(write)

    async def _update(self, write: UpdateDocument) -> None:
        document_id = write.ids[0]
        if write.parent is not None:
            await self._require(write, document_id)
        document = await self.store.update(
            write.collection, document_id, write.update,
            stamp=change_stamp(write.principal.author),
            expected_version=write.expected_version,
        )
        write.documents = [document]

    async def _delete(self, write: DeleteIds | DeleteWhere) -> None:
        filter = scoped(write.filter, write.parent) if isinstance(write, DeleteWhere) else None
        ids = await self._targets(write, filter)
        children = await self.cascade.plan(write, ids)
        one = isinstance(write, DeleteIds) and not write.bulk
        # the store compares the version as it deletes: an update that lands between
        # the check in _require and the delete is never deleted unseen
        expected = write.expected_version if isinstance(write, DeleteIds) and one else None
        doomed = [child for child in children if child.ids]
        if doomed:
            *deleted, write.ids = await self.store.delete_all([
                *(Deletion(child.collection, tuple(child.ids)) for child in doomed),
                Deletion(write.collection, tuple(ids), expected)])
            for child, child_ids in zip(doomed, deleted, strict=True):
                child.ids = child_ids
        elif filter is not None:
            write.ids = await self.store.delete_where(write.collection, filter)
        else:
            write.ids = await self.store.delete(write.collection, ids, expected_version=expected)
        await self.cascade.finish(children)
        if one and not write.ids:  # another writer deleted it
            raise NotFound(f"no document {ids[0]} in {write.collection!r}")

    async def _targets(self, write: DeleteIds | DeleteWhere, filter: Filter | None,
                       ) -> list[str]:
        """The ids a delete is about, before it cascades to their children."""
        if isinstance(write, DeleteWhere) and filter is not None:
            matching = await self.store.find(
                write.collection, Query(filter=filter, limit=None, projection=ID_ONLY))
            return [d["_id"] for d in matching]
        if isinstance(write, DeleteIds) and not write.bulk:
            await self._require(write, write.ids[0])
        elif write.parent is not None:
            found = await self.store.find(write.collection, Query(
                filter=write.parent.scope(In(("_id",), tuple(write.ids))), limit=None,
                projection=ID_ONLY))
            return [d["_id"] for d in found]
        return write.ids

    async def _require(self, write: UpdateDocument | DeleteIds, document_id: str) -> None:
        document = await self.store.get(write.collection, document_id)
        if write.parent is not None and not write.parent.holds(document):
            raise NotFound(f"no document {document_id} in {write.collection!r}")
        if isinstance(write, DeleteIds):  # refuse a stale delete before its cascade
            check_version(document_id, document.get("_version", 0), write.expected_version)


class PublishChange:
    """Publish the committed write to the change bus."""

    name = "publish"

    def __init__(self, bus: ChangeBus) -> None:
        self.bus = bus

    async def __call__(self, write: WriteEvent) -> None:
        """Describe the write as a :class:`ChangeEvent`; writes that changed nothing are quiet."""
        deleted = isinstance(write, DeleteIds | DeleteWhere)
        ids = write.ids if deleted else [d["_id"] for d in write.documents]
        if not ids:
            return
        documents = () if deleted else tuple(write.documents)
        event = ChangeEvent(
            write.collection, write.operation, write.method, tuple(ids), documents,
            author=write.principal.author, cause=write.cause, previous=tuple(write.previous),
        )
        unit = current_unit()
        if unit is None:
            await self.bus.publish(event)
        else:  # tagged with its batch; an atomic batch's, once it committed
            await unit.publish(self.bus, event)


class AuthorizeRead:
    """Ask the one decision of :mod:`docbase.core.auth` whether the read is allowed.

    A read through a child path is a read of the parent's path and of the child
    collection (:func:`where_stored`).
    """

    name = "authorize"

    async def __call__(self, read: ReadEvent) -> None:
        """Raise ``Forbidden`` unless the principal may read this."""
        tail = () if read.document_id is None else (read.document_id,)
        for parent in where_stored(read.parent):
            authorize(read.principal, Action("GET", rest_path(read.collection, parent, *tail),
                                             system=not is_user_collection(read.collection)))


class RunReadHooks:
    """Run the before-read hooks; they may change the query or refuse the read."""

    name = "before-hooks"

    def __init__(self, hooks: HookRegistry) -> None:
        self.hooks = hooks

    async def __call__(self, read: ReadEvent) -> None:
        """Run the hooks in registration order."""
        await self.hooks.run(HookPoint.BEFORE_READ, read)
