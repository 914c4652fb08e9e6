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
- **lookups** (fields of type ``lookup``, which store only the ids they name): each item
  is resolved when read, through the target collection's read stages for the principal
  of the read, one read per target collection (:mod:`.resolving`); an item the
  principal may not read, or whose target is gone, is the bare ``{"_id": ...}``. This
  holds for every answer: reads, the answer to a write, change events and the documents
  embedded in them. A query cannot look inside a lookup beyond its ids (:mod:`.lookups`).

Counts, totals and aggregates are asked of the same store as ``find``
(:class:`~docbase.core.schema.enforcing.SchemaEnforcingStore`), after the same stages,
so they refuse what ``find`` refuses (a password field in the filter).
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Sequence

from docbase.core.access.visible import read_view
from docbase.core.auth.decision import Action, authorize
from docbase.core.auth.principal import Principal
from docbase.core.documents import SYSTEM_FIELDS, Document, read_shape
from docbase.core.errors import Forbidden, NotFound, Rejected
from docbase.core.evaluate import matches
from docbase.core.events import ReadEvent
from docbase.core.parents import ParentRef, children_of, rest_path, where_stored
from docbase.core.projection import project
from docbase.core.query import MATCH_ALL, And, Filter, Projection, Query
from docbase.core.reads.lookups import lookup_targets
from docbase.core.reads.resolving import LookupResolver, whole_lookups
from docbase.core.relations import Relations
from docbase.core.schema.enforcing import SchemaEnforcingStore
from docbase.core.schema.stored_schemas import SchemaRegistry

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
        # parents whose read stages agree on a filter and a projection (the fields the
        # principal may not see: a child list leaves them out, and so does its embedding)
        groups: list[tuple[Filter, Projection | None, list[str]]] = []
        for document in documents:
            parent = ParentRef(collection, document["_id"], field)
            read = await self.admitted(ReadEvent(field, principal, parent=parent,
                                                 query=Query(limit=None)))
            if read is None or read.query is None:
                continue
            for filter, projection, ids in groups:
                if (filter, projection) == (read.query.filter, read.query.projection):
                    ids.append(parent.document_id)
                    break
            else:
                groups.append((read.query.filter, read.query.projection,
                               [parent.document_id]))
        by_parent: dict[str, list[Document]] = {parent_id: [] for _, _, ids in groups
                                                for parent_id in ids}
        for filter, projection, ids in groups:
            selected = children_of(collection, ids)
            query = Query(filter=selected if filter == MATCH_ALL else And((selected, filter)),
                          limit=None)
            for child in await self.documents.find(field, query):
                by_parent[child["_parent_id"]].append(
                    child if projection is None else project(child, projection))
        await self.shape(field, principal,  # one read per lookup target for all parents
                         [child for children in by_parent.values() for child in children])
        for document in documents:
            if document["_id"] in by_parent:
                document[field] = [read_shape(child, metafields=metafields)
                                   for child in by_parent[document["_id"]]]

    # ------------------------------------------------------------------ lookups

    async def lookup_targets(self, collection: str) -> list[tuple[str, str]]:
        """The ``(field, target collection)`` of each lookup field of ``collection``."""
        return await lookup_targets(self.schemas, collection)

    async def stored_projection(self, collection: str,
                                projection: Projection | None) -> Projection | None:
        """The projection to read ``collection`` with: its lookups whole, shaped once resolved.

        Differs from ``projection`` when that reaches inside a lookup; the caller then
        applies ``projection`` to the documents :meth:`shape` resolved.
        """
        fields = [field for field, _ in await self.lookup_targets(collection)]
        return whole_lookups(projection, fields)

    async def shape(self, collection: str, principal: Principal,
                    documents: Sequence[Document]) -> None:
        """Resolve, in place, each lookup item to its target as the principal may read it.

        One read per target collection (:mod:`.resolving`); an item the principal may
        not read, or whose target is gone, is the bare ``{"_id"}``.
        """
        await LookupResolver(self, principal).resolve(collection, documents)

    async def shaped(self, collection: str, principal: Principal,
                     documents: Sequence[Document],
                     parent: ParentRef | None = None) -> list[Document]:
        """The answer to a write of ``documents``: what ``principal`` may read of them.

        A document the principal may not read (its credential may not GET it through
        ``parent``'s path, its roles may not read ``collection``, or it lies outside
        its read scope) is answered its ``_id`` and system fields only; of the others,
        the fields the access rules hide are left out and lookups resolved, as its
        reads show them (``docs/access.md``). Copies, where anything changes: the
        documents are others' too (already published as a change).
        """
        try:
            view = await read_view(self.schemas, principal, collection)
        except Forbidden:
            return [_system_part(document) for document in documents]
        if view is None and not await self.lookup_targets(collection) and all(
                _may_get(principal, collection, parent, d["_id"]) for d in documents):
            return list(documents)
        copies = [_system_part(document)
                  if not _may_get(principal, collection, parent, document["_id"])
                  or (view is not None and not matches(view.scope, document))
                  else {k: v for k, v in document.items()
                        if view is None or k not in view.hidden}
                  for document in documents]
        await self.shape(collection, principal, copies)
        return copies


def _may_get(principal: Principal, collection: str, parent: ParentRef | None,
             document_id: str) -> bool:
    """Whether ``principal``'s credential may GET the document (as ``AuthorizeRead``)."""
    try:
        for stored_under in where_stored(parent):
            authorize(principal, Action("GET", rest_path(collection, stored_under,
                                                         document_id)))
    except Forbidden:
        return False
    return True


def _system_part(document: Document) -> Document:
    """``document``'s ``_id`` and system fields, none of its data."""
    return {k: v for k, v in document.items() if k in SYSTEM_FIELDS}
