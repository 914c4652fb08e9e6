"""Delete by query from the console: how many documents match, then delete them.

The documents ticked in the table are deleted the same way, by the query naming their
ids (:func:`selected`).

``GET /_/c/<collection>/_delete?q=...`` counts the documents the ``q`` filter matches
(through the collection's read pipeline, like ``GET /rest/<collection>?q=...&count=true``)
and asks for confirmation; ``POST`` deletes them with
:meth:`~docbase.core.collection.Collection.delete_where`, as
``DELETE /rest/<collection>/*?q=...`` does (children included).
"""

from __future__ import annotations

from typing import Any

import msgspec
from litestar import Response

from docbase.core.collection import Collection
from docbase.core.errors import InvalidQuery
from docbase.core.query import Filter
from docbase.http.console.flash import go
from docbase.http.console.guard import Console
from docbase.http.console.rendering import render
from docbase.http.console.targets import Target
from docbase.http.params import query_filter


def selected(ids: list[str]) -> str:
    """The ``q`` filter of the documents ticked in the table: ``{"_id": {"$in": [...]}}``."""
    return msgspec.json.encode({"_id": {"$in": ids}}).decode()


def _filter(console: Console, q: Any) -> tuple[str, Filter]:
    text = q.strip() if isinstance(q, str) else ""
    parsed = query_filter({"q": [text]}, console.database.limits) if text else None
    if parsed is None:
        raise InvalidQuery("delete by query needs a q filter, e.g. {\"status\": \"old\"}")
    return text, parsed


async def preview(console: Console, target: Target, collection: Collection,
                  q: Any) -> Response[str]:
    """The confirmation page, with the number of matching documents."""
    text, parsed = _filter(console, q)
    return render("delete_many.html", **console.page(
        title="Delete matching documents?", target=target, q=text,
        count=await collection.count(parsed)))


async def delete_matching(console: Console, target: Target, collection: Collection,
                          q: Any) -> Response[Any]:
    """Delete what ``q`` matches, then back to the collection."""
    _, parsed = _filter(console, q)
    deleted = await collection.delete_where(parsed)
    return go(console.base, f"{console.base}/c/{target.collection_path}",
              f"Deleted {len(deleted)} matching document(s).")
