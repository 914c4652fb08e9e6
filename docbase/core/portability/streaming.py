"""A list read answered as a stream of pages, for NDJSON and CSV over HTTP.

``GET /rest/<c>`` with ``Accept: application/x-ndjson`` or ``text/csv`` selects documents
exactly as a JSON list read does (``q``, ``h``, ``filter``, ``sort``, ``fields``, scopes
and before-read hooks), but streams all of them rather than one page. Each page is one
ordinary list read of the collection (:meth:`CollectionReads.read
<docbase.core.collection_reads.CollectionReads.read>`), so it passes the read pipeline
like any other read; there is no second way to the store. Without a ``sort`` the pages
follow ``_id`` (each page asks for the ids after the last one seen, so a page costs the
same deep into a collection); with one they follow the sort by ``skip``. Memory holds
one page.
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from typing import Any, Protocol

import msgspec

from docbase.core.errors import InvalidQuery
from docbase.core.query import JSON, And, Gt, Query, ReadOptions

PAGE = 1000
"""Documents read per page of a stream."""


class ListReads(Protocol):
    """What a stream reads through: a collection's list read (the read pipeline)."""

    async def read(self, query: Query, options: ReadOptions | None = None, *,
                   encoded: bool = False) -> JSON:
        """Answer a list read as the REST API shapes it."""
        ...


def stream_query(query: Query, options: ReadOptions, *, asked: bool) -> Query:
    """The query of a stream: the list read's own, without its default page size.

    ``asked`` tells whether the client gave ``max``/``$max``; without it the stream has
    no limit but the export limit (:func:`stream_pages`).

    Raises:
        InvalidQuery: the read asks for counts, totals, groups or aggregates, which
            have no NDJSON or CSV form.

    """
    if query.groupby or query.aggregates or options.count or options.totals:
        raise InvalidQuery("NDJSON and CSV answers hold documents only: drop groupby, "
                           "aggregate, count and totals, or ask for application/json")
    return query if asked else msgspec.structs.replace(query, limit=None)


async def stream_pages(reads: ListReads, query: Query, options: ReadOptions, *,
                       export_max: int = 0, page: int = PAGE) -> AsyncIterator[list[Any]]:
    """The documents ``query`` selects, one page (a list) at a time.

    At most ``query.limit`` documents, and at most ``export_max`` when it is above 0.
    Documents come as ``msgspec.Raw`` JSON text when the store can give them so.

    Raises:
        DocbaseError: whatever a list read raises (on the page where it happens).

    """
    remaining = query.limit
    if export_max > 0:
        remaining = export_max if remaining is None else min(remaining, export_max)
    keyset = not query.sort
    skip, last = query.skip, None
    while remaining is None or remaining > 0:
        size = page if remaining is None else min(page, remaining)
        filter = query.filter if last is None else And((query.filter, Gt(("_id",), last)))
        shaped = msgspec.structs.replace(query, filter=filter, skip=skip, limit=size)
        found = await reads.read(shaped, options, encoded=True)
        assert isinstance(found, list)
        if not found:
            return
        yield found
        if len(found) < size:
            return
        if remaining is not None:
            remaining -= len(found)
        if keyset:
            skip, last = 0, _id_of(found[-1])
        else:
            skip += len(found)


class _Identified(msgspec.Struct):
    id: str = msgspec.field(name="_id")


def _id_of(document: Any) -> str:
    if isinstance(document, msgspec.Raw):
        return msgspec.json.decode(document, type=_Identified).id
    return str(document["_id"])
