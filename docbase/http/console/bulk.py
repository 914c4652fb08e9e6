"""Delete many documents from the console: the ticked ones, or what a query matches.

``GET /_/c/<collection>/_delete?ids=A&ids=B`` (the documents ticked in the table) or
``?q=...`` counts the documents (through the collection's read pipeline, like
``GET /rest/<collection>?q=...&count=true``) and asks for confirmation. Its ``POST``
deletes the ticked documents one by one (children included) in one batch
(:mod:`~docbase.http.console.batched`): all of them, or, when one is refused, none. A
``q`` filter is deleted with
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
from docbase.http.console.batched import in_one_batch
from docbase.http.console.flash import go
from docbase.http.console.guard import Console
from docbase.http.console.rendering import render
from docbase.http.console.targets import Target
from docbase.http.errors import answer_for
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
                  ids: list[str], q: Any, *, status: int = 200,
                  error: str = "") -> Response[str]:
    """The confirmation page, with the number of documents ticked or matching."""
    text, parsed = _filter(console, selected(ids) if ids else q)
    return render("delete_many.html", status, **console.page(
        title="Delete the ticked documents?" if ids else "Delete matching documents?",
        target=target, q=text, ids=ids, error=error,
        count=await collection.count(parsed)))


async def delete(console: Console, target: Target, collection: Collection,
                 ids: list[str], q: Any) -> Response[Any]:
    """Delete the ticked documents (one batch) or what ``q`` matches; back to the list."""
    listing = f"{console.base}/c/{target.collection_path}"
    if ids:
        outcome = await in_one_batch(console.database, ids, collection.delete)
        if outcome.error is None:
            return go(console.base, listing, outcome.message("Deleted"))
        return await preview(console, target, collection, ids, None,
                             status=answer_for(type(outcome.error)).status,
                             error=outcome.message("Deleted"))
    _, parsed = _filter(console, q)
    deleted = await collection.delete_where(parsed)
    return go(console.base, listing, f"Deleted {len(deleted)} matching document(s).")
