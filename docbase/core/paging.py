"""The cursor of the next page of a list read (keyset paging, ``docs/query.md``).

A page that holds as many documents as it asked for may have a next one; its cursor
names the page's last document by its sort values and ``_id``
(:func:`~docbase.core.query.encode_cursor`). Those values must come from the stored
document, not the shaped one a client gets: a projection may drop the sorted fields and
the system fields are hidden without ``metafields``. So a list read whose projection
would drop a sorted field reads with a wider one (:func:`widened`) and shapes the
documents afterwards with the asked one, which gives the same documents.
"""

from __future__ import annotations

from collections.abc import Sequence

import msgspec

from docbase.core.documents import Document
from docbase.core.evaluate import sort_value
from docbase.core.query import JSON, Projection, Query, encode_cursor


class ListAnswer(msgspec.Struct, frozen=True):
    """A list read's body and the cursor of its next page (``None``: none to give)."""

    body: JSON
    next: str | None = None


def cursor_of(document: Document, query: Query) -> str:
    """The cursor naming ``document``'s place in ``query``'s order."""
    values = [sort_value(document, key.path, descending=key.direction == -1)
              for key in query.sort]
    return encode_cursor(query.sort, values, str(document["_id"]))


def is_full(count: int, query: Query) -> bool:
    """Whether a page of ``count`` documents is as long as asked (so may have a next)."""
    return count > 0 and query.limit is not None and count >= query.limit


def next_cursor(documents: Sequence[Document], query: Query) -> str | None:
    """The cursor after a page of stored documents, when the page is full."""
    return cursor_of(documents[-1], query) if is_full(len(documents), query) else None


def sorted_fields(query: Query) -> set[str]:
    """The top-level fields the sort reads, ``_id`` included."""
    return {"_id", *(key.path[0] for key in query.sort)}


def widened(projection: Projection | None, query: Query) -> Projection | None:
    """A projection keeping what ``projection`` keeps plus every top-level sorted field."""
    if projection is None:
        return None
    fields = sorted_fields(query)
    if projection.include:
        kept = {path[0] for path in projection.paths if len(path) == 1}
        extra = tuple((field,) for field in sorted(fields - kept))
        return Projection(projection.paths + extra, include=True)
    dropped = tuple(path for path in projection.paths if path[0] not in fields)
    return Projection(dropped, include=False) if dropped else None


def hides_sorted_field(query: Query, hidden: Sequence[str]) -> bool:
    """Whether the sort reads a field the answer hides (the system fields, by default)."""
    return bool(sorted_fields(query).intersection(hidden))

