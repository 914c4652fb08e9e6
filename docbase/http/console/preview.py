"""``GET /_/preview/<collection>?email=E``: a collection as one of the database's users reads it.

The administrator picks a user by email and sees a page of the collection's documents
as that user's login token would read them over ``/rest``: the same collection object
and read pipeline (roles per operation, ``private``, ``where.read``, field rules), with
the principal :func:`~docbase.core.auth.tokens.login_principal` builds for the user,
the one a request with their token carries. Nothing here decides access: a refusal
(403) is shown as what the user would be answered. The page is read-only and says so;
the ``q``, ``filter``, ``skip`` and ``max`` parameters work as on the browser.
"""

from __future__ import annotations

from typing import Any
from urllib.parse import urlencode

from litestar import Response, get
from litestar.params import FromPath

from docbase.core.auth.tokens import login_principal
from docbase.core.auth.users import find_user, list_users
from docbase.core.errors import Forbidden, InvalidQuery, NotFound
from docbase.core.query import parse_list_params
from docbase.http.console.browse import PAGE_SIZE
from docbase.http.console.columns import cell, shown_columns
from docbase.http.console.guard import Console, HttpRequest, console_paths, signed_in
from docbase.http.console.rendering import render
from docbase.http.console.targets import Target

PARAMS = ("q", "filter", "skip", "max")
"""The list parameters the preview passes on to the read."""
USERS_OFFERED = 200
"""How many users' emails the email box offers (any email may be typed)."""
NOTHING: dict[str, Any] = {"error": "", "refused": "", "roles": (), "hidden": (),
                           "columns": [], "total": 0, "rows": [], "skip": 0,
                           "size": PAGE_SIZE}
"""What the page shows before a user is picked."""


async def _read(console: Console, target: Target, email: str,
                params: dict[str, str]) -> dict[str, Any]:
    """The page's rows as the user ``email`` reads them, or why there are none."""
    try:
        found = await find_user(console.database, email)
    except InvalidQuery as exc:  # not an email
        return {**NOTHING, "error": exc.message}
    if found is None:
        return {**NOTHING, "error": f"no user with email {email!r}"}
    user = found[0]
    settings = await console.database.settings.load()
    principal = login_principal(console.database.name, user, settings)
    collection = target.collection(console.database, principal)
    try:
        await collection.require_parent()
        query, options = parse_list_params({k: [v] for k, v in params.items()},
                                           limits=console.database.limits)
        read = await collection.read(query, options)
        documents = read if isinstance(read, list) else []
        total = await collection.count(query.filter)
    except InvalidQuery as exc:
        return {**NOTHING, "error": exc.message}
    except (Forbidden, NotFound) as exc:  # what the user's token would be answered
        return {**NOTHING, "refused": exc.message, "roles": user.roles}
    schema = await console.database.schemas.get(collection.name)
    hidden = schema.access.hidden(user.roles, "read") if schema and schema.access else ()
    declared = [f.name for f in schema.fields if f.name not in hidden] if schema else []
    names = shown_columns([], declared, documents)
    return {**NOTHING, "roles": user.roles, "hidden": hidden, "columns": names, "total": total,
            "skip": query.skip, "size": query.limit or PAGE_SIZE,
            "rows": [{"id": d.get("_id", ""),
                      "cells": [cell(d[n]) if n in d else "" for n in names]}
                     for d in documents]}


@get(console_paths("/preview/{target:path}"))
async def preview(request: HttpRequest, target: FromPath[str]) -> Response[str]:
    """``GET /_/preview/<collection>``: pick a user; with ``email``, read as that user."""
    console = await signed_in(request)
    where = Target(target)
    if where.document_id is not None or where.action != "view":
        raise NotFound("a preview shows a collection")
    email = request.query_params.get("email", "").strip()
    params = {k: v for k in PARAMS if (v := request.query_params.get(k, "").strip())}
    params.setdefault("max", str(PAGE_SIZE))
    users = [u.email for u in (await list_users(console.database))[:USERS_OFFERED]]
    shown = await _read(console, where, email, params) if email else NOTHING
    status = 400 if shown["error"] else 200

    def url(skip: int) -> str:
        return "?" + urlencode({"email": email, **params, "skip": str(skip)})

    skip, size, rows = shown["skip"], shown["size"], shown["rows"]
    return render("preview.html", status, **console.page(
        title=f"{where.collection_parts[-1]} as a user sees it", target=where, email=email,
        users=users, params=params, shown=shown,
        first=skip + 1 if rows else 0, last=skip + len(rows),
        previous=url(max(skip - size, 0)) if skip > 0 else None,
        next=url(skip + size) if len(rows) >= size else None))


PREVIEW_HANDLERS = [preview]
