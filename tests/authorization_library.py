"""The drawn requests of the authorization property, through the library.

:func:`principal_of` is the library principal of a drawn one; :func:`library_answer`
makes the call a request kind stands for on a principal-scoped handle and answers
``(status, answer)`` as HTTP would (an error's status), so that the same reference
judges both roads.
"""

from __future__ import annotations

from typing import Any

from docbase import Conflict, Database, Forbidden, InvalidQuery, NotFound, ValidationFailed
from docbase.core.auth import Principal, Scope
from docbase.core.query import Aggregate, Projection, Query, ReadOptions, SortKey
from tests.authorization_model import PARENT
from tests.authorization_requests import Asked, Drawn

STATUS = {Forbidden: 403, NotFound: 404, ValidationFailed: 422, InvalidQuery: 400,
          Conflict: 409}
READ_QUERIES = {
    "groups": Query(groupby=(("title",),)),
    "aggregate": Query(aggregates=(Aggregate("COUNT", "title"),)),
    "hidden_sort": Query(sort=(SortKey(("salary",), 1),), limit=1),
    "hidden_aggregate": Query(aggregates=(Aggregate("MAX", "salary"),)),
    "hidden_group": Query(groupby=(("salary",),)),
}


def principal_of(drawn: Drawn) -> Principal:
    if drawn.kind == "full":
        return Principal(kind="key", full_access=True)
    if drawn.kind == "key":
        return Principal(kind="key", full_access=False, roles=drawn.roles,
                         scope=Scope(drawn.paths, drawn.methods))
    return Principal(author=drawn.email, kind="user", full_access=False, roles=drawn.roles)


async def _call(db: Database, principal: Principal, request: Asked, target: str,
                parent: str, body: Any) -> tuple[int, Any]:
    handle = db.collection(request.collection, principal)
    public = db.collection(PARENT, principal)
    children = public.children(parent, request.child)
    match request.kind:
        case "list" | "ndjson" | "csv":
            return 200, await handle.find()
        case "count":
            return 200, {"totals": {"count": await handle.count()}}
        case "totals":
            return 200, await handle.read(Query(limit=1), ReadOptions(totals=True))
        case "hidden_query":
            return 200, await handle.count({"salary": {"$gte": 0}})
        case "lookup_projection":
            return 200, await public.read(Query(projection=Projection(
                (("owner", "_id"), ("note", "_id")), include=False)))
        case "get":
            return 200, await handle.get(target)
        case "children":
            return 200, await children.find()
        case "child_get":
            return 200, await children.get(target)
        case "fetchchildren":
            return 200, await public.get(parent, fetchchildren=True)
        case "post":
            return 201, await handle.insert(body)
        case "post_child":
            return 201, await children.insert(body)
        case "put" | "patch":
            return 200, await (handle.update if request.kind == "put" else handle.patch)(
                target, body)
        case "delete":
            return 200, await handle.delete(target)
        case "delete_query":
            return 200, {"result": await handle.delete_where({"_id": target})}
        case "unset_lookup" | "set_lookup":
            return 200, await public.update(parent, body)
        case "smuggle_lookup":
            return 201, await public.insert(body)
    return 200, await handle.read(READ_QUERIES[request.kind])


async def library_answer(db: Database, principal: Principal, request: Asked, target: str,
                         parent: str, body: Any) -> tuple[int, Any]:
    """``(status, answer)`` of ``request`` made through the library as ``principal``."""
    try:
        return await _call(db, principal, request, target, parent, body)
    except tuple(STATUS) as error:
        return STATUS[type(error)], str(error)
