"""The order of the stages, written once.

Every write, from HTTP or the library, passes :func:`write_stages` in this order:
authorize, the collection's access rules (:mod:`docbase.core.access.writing`), validate
(schemas), before-hooks, the document rules of :mod:`.content`, the access rules' check
of what would be stored, keeping what an update or delete of a ruled collection finds
(:mod:`docbase.core.access.previous`), the store operation,
after-hooks, and publishing a :class:`~docbase.core.events.ChangeEvent`. Every read
passes :func:`read_stages`: authorize, refuse a collection a strict database does not
define, refuse a query into a lookup beyond its ids, the before-read hooks, which
refuse a query by a field they hide (:mod:`docbase.core.reads.hidden`), then the
collection's access rules (:mod:`docbase.core.access`), last so that no hook widens
them. A feature adds a
stage here or a subscriber to the change bus; entry points never grow special cases.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

from docbase.core.access.previous import RememberPrevious
from docbase.core.access.reading import ApplyAccessRules
from docbase.core.access.writing import AuthorizeAccessWrite, CheckAccessWrite
from docbase.core.changes import ChangeBus
from docbase.core.events import ReadEvent, WriteEvent
from docbase.core.hooks.pipeline_points import HookRegistry
from docbase.core.pipeline.cascade import CascadedDeletes, StagedWrites
from docbase.core.pipeline.content import CheckDocumentContent
from docbase.core.pipeline.stages import (
    AuthorizeRead,
    AuthorizeWrite,
    PublishChange,
    ReadStage,
    RunReadHooks,
    RunWriteHooks,
    StoreWrite,
    ValidateWrite,
    Validator,
    WriteStage,
)
from docbase.core.ports import DocumentStore
from docbase.core.reads.hidden import RefuseHiddenFields
from docbase.core.reads.lookups import GuardLookupQueries
from docbase.core.relations import Relations
from docbase.core.schema.stored_schemas import SchemaRegistry
from docbase.core.schema.strict import RequireDefinedCollection
from docbase.core.settings.in_force import LimitsInForce


def write_stages(
    staged: StagedWrites,
    *,
    store: DocumentStore,
    relations: Relations,
    hooks: HookRegistry,
    validators: list[Validator],
    changes: ChangeBus,
    limits: LimitsInForce,
    schemas: SchemaRegistry,
) -> list[WriteStage]:
    """The stages of the write pipeline, in the order they run.

    ``staged`` is the pipeline they make up: a delete's cascade passes each child
    delete through its stages before and after the store.
    """
    cascade = CascadedDeletes(relations, store, staged)
    return [
        AuthorizeWrite(),
        AuthorizeAccessWrite(schemas, store),
        ValidateWrite(validators),
        RunWriteHooks(hooks, after=False),
        CheckDocumentContent(limits),
        CheckAccessWrite(schemas, store),
        RememberPrevious(schemas, store),
        StoreWrite(store, relations, cascade),
        RunWriteHooks(hooks, after=True),
        PublishChange(changes),
    ]


def read_stages(*, hooks: HookRegistry, schemas: SchemaRegistry,
                store: DocumentStore) -> list[ReadStage]:
    """The stages a read passes before the store is asked, in order."""
    hooks_stage = RunReadHooks(hooks)
    return [AuthorizeRead(), RequireDefinedCollection(schemas), GuardLookupQueries(schemas),
            RefuseHiddenFields(hooks_stage, hooks_stage.name),
            ApplyAccessRules(schemas, store)]


class Pipeline:
    """Runs writes and reads through their stages; a stage that raises stops the rest."""

    def __init__(self, writes: Callable[[StagedWrites], Sequence[WriteStage]],
                 reads: Sequence[ReadStage]) -> None:
        """Assemble the write stages ``writes(self)`` makes, and ``reads``."""
        self.write_stages = list(writes(self))
        self.read_stages = list(reads)

    async def write(self, write: WriteEvent) -> WriteEvent:
        """Pass ``write`` through every write stage; return it as stored."""
        for stage in self.write_stages:
            await stage(write)
        return write

    async def prepare(self, write: WriteEvent) -> None:
        """Pass ``write`` through the stages before the store stage only.

        For a write whose store operation another write's store stage carries out (a
        cascaded delete); :meth:`finish` passes it through the rest afterwards.
        """
        for stage in self.write_stages[: self._store_stage()]:
            await stage(write)

    async def finish(self, write: WriteEvent) -> None:
        """Pass a ``write`` stored by another write through the stages after the store."""
        for stage in self.write_stages[self._store_stage() + 1:]:
            await stage(write)

    def _store_stage(self) -> int:
        return next(i for i, stage in enumerate(self.write_stages)
                    if stage.name == StoreWrite.name)

    async def read(self, read: ReadEvent) -> ReadEvent:
        """Pass ``read`` through every read stage; return it (hooks may change its query)."""
        for stage in self.read_stages:
            await stage(read)
        return read
