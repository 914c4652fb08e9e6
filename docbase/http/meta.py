"""``_meta`` answers: what is known of a database and its collections.

The bodies are built by :mod:`docbase.core.schema.meta`; ``PUT`` and ``DELETE`` of a
collection's ``_meta`` define and remove its schema (full-access key only).
"""

from __future__ import annotations

from typing import Any

from docbase.core.auth.decision import may_use
from docbase.core.schema import meta
from docbase.core.schema.openapi import openapi_document
from docbase.http.bodies import read_json
from docbase.http.context import RequestContext
from docbase.http.errors import MethodNotAllowed
from docbase.http.operations import HttpRequest


async def collection_meta(ctx: RequestContext, name: str) -> dict[str, Any]:
    """Describe collection ``name`` (an unknown one reads as empty, unless strict)."""
    return await meta.collection_meta(ctx.database, name)


async def database_meta(ctx: RequestContext) -> dict[str, Any]:
    """Describe the request's database and its collections."""
    return await meta.database_meta(ctx.database, ctx.database_name)


async def openapi(ctx: RequestContext) -> dict[str, Any]:
    """The OpenAPI document of the request's database, from its current schemas.

    It describes only the collections the request's principal may use: a scoped key
    or a token learns nothing of the others (not even their names).
    """
    db = ctx.database
    schemas = {name: schema for name, schema in (await db.schemas.all()).items()
               if may_use(ctx.principal, name)}
    return openapi_document(ctx.database_name, schemas,
                            strict=await db.schemas.mode() == "strict")


async def change_meta(request: HttpRequest, ctx: RequestContext, name: str) -> Any:
    """``PUT`` (define the schema, answer the new metadata) or ``DELETE`` (remove it)."""
    if ctx.method == "PUT":
        body = await read_json(request, ctx.database.limits)
        return await meta.define_collection(ctx.database, ctx.principal, name, body)
    if ctx.method == "DELETE":
        return {"result": await meta.undefine_collection(ctx.database, ctx.principal, name)}
    raise MethodNotAllowed(f"{ctx.method} is not allowed on {ctx.path}; send PUT or DELETE")
