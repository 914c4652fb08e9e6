"""Shapes of list responses: totals, counts, grouped documents and aggregate results."""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

import msgspec

from docbase.core.auth.principal import Principal
from docbase.core.documents import META_FIELDS, Document, read_shape
from docbase.core.grouping import group_key
from docbase.core.ordering import sort_key
from docbase.core.paging import (
    ListAnswer,
    cursor_of,
    hides_sorted_field,
    is_full,
    next_cursor,
    widened,
)
from docbase.core.projection import project
from docbase.core.query import JSON, AggregateRow, Path, Query, ReadOptions

if TYPE_CHECKING:
    from docbase.core.reads import ReadRoad


def group_label(value: JSON) -> str:
    """The JSON object key for a group value: strings as they are, others as JSON."""
    if isinstance(value, str):
        return value
    return msgspec.json.encode(value).decode()


def nest_rows(rows: Sequence[AggregateRow]) -> dict[str, Any]:
    """Turn aggregate rows into nested objects keyed by each group value in turn."""
    result: dict[str, Any] = {}
    for row in rows:
        node = result
        for value in row.key[:-1]:
            node = node.setdefault(group_label(value), {})
        node[group_label(row.key[-1])] = dict(row.values)
    return result


def group_documents(documents: Sequence[dict[str, Any]], groupby: Sequence[Path]) -> Any:
    """Group documents into nested objects keyed by each group value, in sort order."""
    if not groupby:
        return list(documents)
    buckets: dict[str, tuple[JSON, list[dict[str, Any]]]] = {}
    for document in documents:
        value = group_key(document, groupby[0])
        buckets.setdefault(group_label(value), (value, []))[1].append(document)
    ordered = sorted(buckets.items(), key=lambda item: sort_key(item[1][0]))
    return {label: group_documents(docs, groupby[1:]) for label, (_, docs) in ordered}


def totals(data_count: int, total: int, query: Query) -> dict[str, Any]:
    """The ``totals`` object of ``totals=true``."""
    return {"total": total, "count": data_count, "skip": query.skip, "max": query.limit}


class ListReader:
    """Answers a list read of one collection, for one principal, as the REST API shapes it.

    Documents, counts, totals and aggregates all come from the road's store (the one
    ``find`` reads), so none answers what another refuses; embedded children and lookups
    pass the read stages of their own collection (:class:`~docbase.core.reads.ReadRoad`).
    """

    def __init__(self, road: ReadRoad, collection: str, principal: Principal) -> None:
        self.road = road
        self.store = road.documents
        self.collection = collection
        self.principal = principal

    async def read(self, query: Query, options: ReadOptions, *, encoded: bool = False) -> JSON:
        """An array, ``{"data", "totals"}``, groups or aggregates, as asked.

        ``query.filter`` must already be limited to the caller's scope. With
        ``encoded``, documents may come as ``msgspec.Raw`` JSON text (for a caller that
        encodes the answer with msgspec), when the store can give them so.
        """
        return (await self.page(query, options, encoded=encoded)).body

    async def page(self, query: Query, options: ReadOptions, *,
                   encoded: bool = False) -> ListAnswer:
        """As :meth:`read`, with the cursor of the next page (:mod:`docbase.core.paging`).

        With ``totals``, the body holds that cursor as ``next`` beside ``totals``.
        """
        if query.aggregates:
            return ListAnswer(await self._aggregates(query))
        if options.count:
            total = await self.store.count(self.collection, query.filter)
            return ListAnswer({"data": [], "totals": {**totals(0, total, query),
                                                      "count": total}})
        found = await self._encoded(query, options) if encoded else None
        if found is None:
            found = await self._documents(query, options)
        data, cursor = found
        if options.totals:
            total = await self.store.count(self.collection, query.filter)
            return ListAnswer({"data": data, "totals": totals(len(data), total, query),
                               "next": cursor}, cursor)
        return ListAnswer(data, cursor)

    async def _documents(self, query: Query, options: ReadOptions) -> tuple[Any, str | None]:
        wide = await self.road.stored_projection(self.collection,
                                                 widened(query.projection, query))
        documents: list[Document] = await self.store.find(
            self.collection, msgspec.structs.replace(query, projection=wide))
        cursor = None if query.groupby else next_cursor(documents, query)
        await self.road.shape(self.collection, self.principal, documents)
        if wide != query.projection:
            documents = [project(d, query.projection) for d in documents]
        if options.fetchchildren:
            await self.road.embed_children(self.collection, self.principal, documents,
                                           options.metafields)
        shaped = [read_shape(d, metafields=options.metafields) for d in documents]
        return (group_documents(shaped, query.groupby) if query.groupby else shaped), cursor

    async def _encoded(self, query: Query,
                       options: ReadOptions) -> tuple[list[msgspec.Raw], str | None] | None:
        hide = () if options.metafields else META_FIELDS
        if (options.fetchchildren or query.groupby or query.projection is not None
                or hides_sorted_field(query, hide)
                or await self.road.lookup_targets(self.collection)):
            return None
        found = await self.store.find_encoded(self.collection, query, hide=hide)
        full = is_full(len(found), query)
        return found, cursor_of(msgspec.json.decode(found[-1]), query) if full else None

    async def _aggregates(self, query: Query) -> JSON:
        rows = await self.store.aggregate(
            self.collection, query.filter, query.groupby, query.aggregates
        )
        if not query.groupby:
            return dict(rows[0].values)
        result = nest_rows(rows)
        if query.grand_total:
            grand = await self.store.aggregate(self.collection, query.filter, (),
                                               query.aggregates)
            result["$grand-total"] = dict(grand[0].values)
        return result
