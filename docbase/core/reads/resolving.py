"""Lookups resolved when read: ids in storage, the target documents as the reader may read them.

A lookup field stores only the ids it names (``[{"_id": ...}, ...]``, written so by
:mod:`docbase.core.schema.validation`). Whatever hands documents to a principal asks
:class:`LookupResolver` to replace each item by the target document, read through the
target collection's read stages for that principal:

- one read per target collection and answer: a list read of the target (authorize,
  strict mode, ``beforeGET`` hooks, which may narrow it or hide fields) asks the store
  for all the ids the answer names at once. A principal that may not list the target
  is asked per document (``GET /rest/<target>/ID``), and the documents it may read are
  still found in one store read;
- an item whose target the principal may not read, or which no longer exists, is the
  bare ``{"_id": ...}``;
- the resolved documents' own lookups are their ids (one level is resolved, never a
  chain);
- a document stored before lookups kept only ids (an embedded copy) is read by the ids
  it names: the copy is ignored. An item without an ObjectID is dropped.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Protocol

from docbase.core.auth.principal import Principal
from docbase.core.documents import Document, read_shape
from docbase.core.events import ReadEvent
from docbase.core.ids import is_object_id
from docbase.core.query import MATCH_ALL, And, In, Projection, Query
from docbase.core.schema.enforcing import SchemaEnforcingStore


class TargetReads(Protocol):
    """What resolving needs of the read road (:class:`~docbase.core.reads.ReadRoad`)."""

    @property
    def documents(self) -> SchemaEnforcingStore:
        """The store user collections are read through (password fields withheld)."""

    async def admitted(self, read: ReadEvent) -> ReadEvent | None:
        """``read`` past its read stages, or ``None`` when they refuse it."""

    async def lookup_targets(self, collection: str) -> list[tuple[str, str]]:
        """The ``(field, target collection)`` of each lookup field of ``collection``."""


def lookup_ids(value: object) -> list[str]:
    """The ids a stored lookup value names, in order (copies and bare ids read as ids)."""
    if not isinstance(value, list):
        return []
    ids = []
    for item in value:
        named = item.get("_id") if isinstance(item, dict) else item
        if is_object_id(named):
            assert isinstance(named, str)
            ids.append(named.lower())
    return ids


def bare(value: object) -> list[Document]:
    """A lookup value as it is stored: ``{"_id"}`` objects only."""
    return [{"_id": i} for i in lookup_ids(value)]


def whole_lookups(projection: Projection | None, fields: Sequence[str]) -> Projection | None:
    """``projection`` for the store: a lookup field read whole, to be shaped once resolved.

    A projection may reach inside a lookup (``owner.name``, ``owner._id``); the store
    holds only ids there, so it reads the field whole and the asked projection shapes
    the resolved documents afterwards.
    """
    if projection is None or not fields:
        return projection
    inside = [path for path in projection.paths if len(path) > 1 and path[0] in fields]
    if not inside:
        return projection
    kept = [path for path in projection.paths if path not in inside]
    if not projection.include:
        return Projection(tuple(kept), include=False) if kept else None
    whole = {(path[0],) for path in inside} - set(kept)
    return Projection((*kept, *sorted(whole)), include=True)


class LookupResolver:
    """Resolves the lookups of the documents of one answer, for one principal."""

    def __init__(self, road: TargetReads, principal: Principal) -> None:
        self.road = road
        self.principal = principal

    async def resolve(self, collection: str, documents: Sequence[Document]) -> None:
        """Replace, in place, each lookup item by its target as the principal may read it."""
        targets = await self.road.lookup_targets(collection)
        if not targets or not documents:
            return
        wanted: dict[str, set[str]] = {}
        for field, target in targets:
            for document in documents:
                wanted.setdefault(target, set()).update(lookup_ids(document.get(field)))
        found = {target: await self._read(target, sorted(ids))
                 for target, ids in wanted.items()}
        for document in documents:
            for field, target in targets:
                if document.get(field) is None:
                    continue
                readable = found[target]
                document[field] = [dict(readable.get(i) or {"_id": i})
                                   for i in lookup_ids(document[field])]

    async def _read(self, target: str, ids: list[str]) -> dict[str, Document]:
        """The documents of ``target`` with these ids that the principal may read."""
        if not ids:
            return {}
        admitted = await self.road.admitted(ReadEvent(target, self.principal,
                                                      query=Query(limit=None)))
        if admitted is not None and admitted.query is not None:
            narrowed, projection = admitted.query.filter, admitted.query.projection
        else:
            narrowed, projection = MATCH_ALL, None
            kept = []
            for i in ids:
                read = await self.road.admitted(ReadEvent(target, self.principal, document_id=i))
                if read is None:
                    continue
                kept.append(i)
                if read.within is not None:  # the access rules' scope, the same for every id
                    narrowed, projection = read.within.filter, read.within.projection
            ids = kept
            if not ids:
                return {}
        selected = In(("_id",), tuple(ids))
        query = Query(filter=selected if narrowed == MATCH_ALL else And((selected, narrowed)),
                      projection=projection, limit=None)
        nested = [field for field, _ in await self.road.lookup_targets(target)]
        readable = {}
        for document in await self.road.documents.find(target, query):
            for field in nested:
                if field in document:
                    document[field] = bare(document[field])
            readable[document["_id"]] = read_shape(document)
        return readable
