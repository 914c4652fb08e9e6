"""``_meta`` answers: what is known of a database and its collections.

Without a schema (schemaless mode) a collection's fields are unknown: ``fields`` and
``indexes`` are empty and ``children`` lists the child fields writes have used.
"""

from __future__ import annotations

from typing import Any

from docbase.http.context import RequestContext


async def collection_meta(ctx: RequestContext, name: str) -> dict[str, Any]:
    """Describe collection ``name`` (an unknown one reads as empty)."""
    ctx.collection(name)  # refuses an invalid collection name
    children = await ctx.database.child_fields(name)
    return {
        "name": name,
        "fields": [],
        "children": [{"name": field, "type": "child"} for field in children],
        "indexes": [],
    }


async def database_meta(ctx: RequestContext) -> dict[str, Any]:
    """Describe the request's database and its collections."""
    names = await ctx.database.collections()
    return {
        "name": ctx.database_name,
        "collections": [await collection_meta(ctx, name) for name in names],
    }
