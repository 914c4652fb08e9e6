"""One road for every read: documents reach a principal only through their read stages.

A read of one collection passes its read stages (authorize, strict mode, ``beforeGET``
hooks: :mod:`docbase.core.pipeline.assembly`) before the store is asked. Documents of
*other* collections travel inside an answer in two ways, and each passes the read stages
of the collection it belongs to, for the principal of the read:

- **children** embedded by ``fetchchildren``: the children of parent ``P`` in field
  ``F`` are read as ``GET /rest/<c>/P/F`` would read them. A principal that may not read
  them (``Forbidden``), a strict database without that child collection (``NotFound``)
  or a ``beforeGET`` hook refusing (``Rejected``) leaves the field out of the parent; a
  hook narrowing the query narrows the embedded children.
- **lookups** (fields of type ``lookup``, stored with a copy of the documents they name):
  an item whose target document the principal may not read (``GET /rest/<target>/ID``
  refused, as above) is handed over as the bare ``{"_id": ...}``. This holds for every
  answer: reads, the answer to a write, and the documents embedded in them. A query
  that reads inside the copy needs the target as a list (:mod:`.lookups`).

Counts, totals and aggregates are asked of the same store as ``find``
(:class:`~docbase.core.schema.enforcing.SchemaEnforcingStore`), after the same stages,
so they refuse what ``find`` refuses (a password field in the filter).
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Sequence

import msgspec

from docbase.core.auth.principal import Principal
from docbase.core.documents import Document, read_shape
from docbase.core.errors import Forbidden, NotFound, Rejected
from docbase.core.events import ReadEvent
from docbase.core.parents import ParentRef, children_of
from docbase.core.projection import project
from docbase.core.query import MATCH_ALL, And, Eq, Filter, Projection, Query
from docbase.core.reads.lookups import lookup_targets
from docbase.core.relations import Relations
from docbase.core.schema.enforcing import SchemaEnforcingStore
from docbase.core.schema.stored_schemas import SchemaRegistry

Seen = bool | Projection
"""What a principal sees of a lookup's target: nothing, all of it, or this projection."""
ID_ONLY = Projection((("_id",),), True)
"""The projection of a query that only needs the ids."""
UNREADABLE = (Forbidden, NotFound, Rejected)
"""What the read stages raise for a read the principal is not to be answered."""

ReadStages = Callable[[ReadEvent], Awaitable[ReadEvent]]
"""The read pipeline: passes a read through every read stage, returns it as changed."""


class ReadRoad:
    """The reads that hand a principal documents of another collection than the one asked.

    ``stages`` is the database's read pipeline; ``documents`` the store user collections
    are read through (password fields withheld and refused in queries).
    """

    def __init__(self, stages: ReadStages, documents: SchemaEnforcingStore,
                 relations: Relations, schemas: SchemaRegistry) -> None:
        self.stages = stages
        self.documents = documents
        self.relations = relations
        self.schemas = schemas

    async def admitted(self, read: ReadEvent) -> ReadEvent | None:
        """``read`` past its read stages, or ``None`` when they refuse it."""
        try:
            return await self.stages(read)
        except UNREADABLE:
            return None

    # ------------------------------------------------------------------ children

    async def embed_children(self, collection: str, principal: Principal,
                             documents: list[Document], metafields: bool) -> None:
        """Put each document's readable children, as arrays under the child field names.

        A child field the principal may not read under a parent is left out of it.
        """
        if not documents:
            return
        for field in await self.relations.child_fields(collection):
            await self._embed_field(collection, field, principal, documents, metafields)

    async def _embed_field(self, collection: str, field: str, principal: Principal,
                           documents: list[Document], metafields: bool) -> None:
        groups: list[tuple[Filter, list[str]]] = []  # parents whose stages agree on a filter
        for document in documents:
            parent = ParentRef(collection, document["_id"], field)
            read = await self.admitted(ReadEvent(field, principal, parent=parent,
                                                 query=Query(limit=None)))
            if read is None or read.query is None:
                continue
            for filter, ids in groups:
                if filter == read.query.filter:
                    ids.append(parent.document_id)
                    break
            else:
                groups.append((read.query.filter, [parent.document_id]))
        by_parent: dict[str, list[Document]] = {parent_id: [] for _, ids in groups
                                                for parent_id in ids}
        for filter, ids in groups:
            selected = children_of(collection, ids)
            query = Query(filter=selected if filter == MATCH_ALL else And((selected, filter)),
                          limit=None)
            for child in await self.documents.find(field, query):
                by_parent[child["_parent_id"]].append(child)
        for children in by_parent.values():
            await self.shape(field, principal, children)
        for document in documents:
            if document["_id"] in by_parent:
                document[field] = [read_shape(child, metafields=metafields)
                                   for child in by_parent[document["_id"]]]

    # ------------------------------------------------------------------ lookups

    async def lookup_targets(self, collection: str) -> list[tuple[str, str]]:
        """The ``(field, target collection)`` of each lookup field of ``collection``."""
        return await lookup_targets(self.schemas, collection)

    async def shape(self, collection: str, principal: Principal,
                    documents: Sequence[Document]) -> None:
        """Reduce, in place, each lookup item the principal may not read to its ``_id``."""
        targets = await self.lookup_targets(collection)
        if not targets or not documents:
            return
        readable: dict[tuple[str, str], Seen] = {}
        for document in documents:
            for field, target in targets:
                items = document.get(field)
                if isinstance(items, list):
                    document[field] = [await self._lookup_item(principal, target, item,
                                                               readable) for item in items]

    async def shaped(self, collection: str, principal: Principal,
                     documents: Sequence[Document]) -> list[Document]:
        """``documents`` as :meth:`shape` leaves them, copied first when it may change them.

        For documents others hold too (a write's, already published as a change).
        """
        if not await self.lookup_targets(collection):
            return list(documents)
        copies = [dict(document) for document in documents]
        await self.shape(collection, principal, copies)
        return copies

    async def _lookup_item(self, principal: Principal, target: str, item: object,
                           readable: dict[tuple[str, str], Seen]) -> object:
        if not isinstance(item, dict) or not isinstance(item.get("_id"), str):
            return item
        key = (target, item["_id"])
        if key not in readable:
            read = ReadEvent(target, principal, document_id=item["_id"])
            readable[key] = await self._sees(await self.admitted(read))
        seen = readable[key]
        if seen is False:
            return {"_id": item["_id"]}
        return item if seen is True else project(item, seen)

    async def _sees(self, read: ReadEvent | None) -> Seen:
        """Whether a read of one document, past its stages, finds it within their limits.

        Where access rules hide fields of it, the projection that drops them.
        """
        if read is None or read.within is None or read.document_id is None:
            return read is not None
        query = msgspec.structs.replace(read.within, filter=And((
            Eq(("_id",), read.document_id), read.within.filter)), projection=ID_ONLY)
        if not await self.documents.find(read.collection, query):
            return False
        return read.within.projection or True
