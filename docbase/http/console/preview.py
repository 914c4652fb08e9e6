"""``GET /_/preview/<collection>``: a collection as a user or a scoped key reads it.

The administrator picks who to read as, and sees a page of the collection's documents
as that caller's requests would read them over ``/rest``: the same collection object
and read pipeline (the key's paths and methods, roles per operation, ``private``,
``where.read``, field rules), with the principal the caller's credential carries:

- ``email=E`` of a stored user: :func:`~docbase.core.auth.tokens.login_principal`, as
  with the user's login token;
- ``email=E&provider=on&roles=R`` of no stored user: a user of the identity provider,
  whose token claims roles ``R`` (comma-separated, may be none):
  :func:`~docbase.core.auth.tokens.provider_principal`;
- ``key=ID``: the API key of that id (:meth:`~docbase.core.auth.keys.ApiKey.principal`).

Nothing here decides access: a refusal (403) is shown as what the caller would be
answered. The page is read-only and says so; the ``q``, ``filter``, ``skip`` and
``max`` parameters work as on the browser.
"""

from __future__ import annotations

from typing import Any
from urllib.parse import urlencode

import msgspec
from litestar import Response, get
from litestar.params import FromPath

from docbase.core.auth.keys import ApiKey, list_keys
from docbase.core.auth.principal import Principal, check_roles, split_roles
from docbase.core.auth.tokens import login_principal, provider_principal
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
WHO = ("email", "provider", "roles", "key")
"""The parameters that say who the preview reads as."""
USERS_OFFERED = 200
"""How many users' emails the email box offers (any email may be typed)."""
NOTHING: dict[str, Any] = {"error": "", "refused": "", "roles": (), "hidden": (),
                           "columns": [], "total": 0, "rows": [], "skip": 0,
                           "size": PAGE_SIZE, "who": ""}
"""What the page shows before a user or key is picked."""


class Viewer(msgspec.Struct, frozen=True):
    """Who the preview reads as: their principal and how the page names them."""

    principal: Principal
    who: str
    """``ann@example.com``, ``ann@example.com (identity provider)``, ``key ab12cd34… audit``."""


def _usable(key: ApiKey) -> bool:
    return key.revoked is None and not key.is_expired()


async def _viewer(console: Console, who: dict[str, str],
                  usable: list[ApiKey]) -> Viewer | str:
    """The caller ``who`` names (a key among ``usable``), or why there is none."""
    if key_id := who.get("key"):
        key = next((k for k in usable if k.id == key_id), None)
        if key is None:
            return f"no usable API key with id {key_id!r}"
        return Viewer(key.principal(), f"key {key.prefix}… {key.description}".strip())
    email = who.get("email", "")
    settings = await console.database.settings.load()
    try:
        found = await find_user(console.database, email)
        if found is not None:
            return Viewer(login_principal(console.database.name, found[0], settings), email)
        if who.get("provider") != "on":
            return (f"no user with email {email!r} (for a user of the identity provider, "
                    "tick that box)")
        roles = check_roles(split_roles(who.get("roles", "")))
    except InvalidQuery as exc:  # not an email, or not a role
        return exc.message
    return Viewer(provider_principal(email, roles, settings),
                  f"{email} (identity provider)")


async def _read(console: Console, target: Target, viewer: Viewer,
                params: dict[str, str]) -> dict[str, Any]:
    """The page's rows as ``viewer`` reads them, or why there are none."""
    roles = viewer.principal.roles
    collection = target.collection(console.database, viewer.principal)
    try:
        await collection.require_parent()
        query, options = parse_list_params({k: [v] for k, v in params.items()},
                                           limits=console.database.limits)
        read = await collection.read(query, options)
        documents = read if isinstance(read, list) else []
        total = await collection.count(query.filter)
    except InvalidQuery as exc:
        return {**NOTHING, "error": exc.message}
    except (Forbidden, NotFound) as exc:  # what the caller would be answered
        return {**NOTHING, "refused": exc.message, "roles": roles, "who": viewer.who}
    schema = await console.database.schemas.get(collection.name)
    hidden = schema.access.hidden(roles, "read") if schema and schema.access else ()
    declared = [f.name for f in schema.fields if f.name not in hidden] if schema else []
    names = shown_columns([], declared, documents)
    return {**NOTHING, "roles": roles, "hidden": hidden, "columns": names, "total": total,
            "skip": query.skip, "size": query.limit or PAGE_SIZE, "who": viewer.who,
            "rows": [{"id": d.get("_id", ""),
                      "cells": [cell(d[n]) if n in d else "" for n in names]}
                     for d in documents]}


@get(console_paths("/preview/{target:path}"))
async def preview(request: HttpRequest, target: FromPath[str]) -> Response[str]:
    """``GET /_/preview/<collection>``: pick a user or key; with one, read as them."""
    console = await signed_in(request)
    where = Target(target)
    if where.document_id is not None or where.action != "view":
        raise NotFound("a preview shows a collection")
    who = {k: v for k in WHO if (v := request.query_params.get(k, "").strip())}
    params = {k: v for k in PARAMS if (v := request.query_params.get(k, "").strip())}
    params.setdefault("max", str(PAGE_SIZE))
    users = [u.email for u in (await list_users(console.database))[:USERS_OFFERED]]
    usable = [k for k in await list_keys(console.database) if _usable(k)]
    keys = [k for k in usable if not k.full_access]  # the ones worth offering
    shown = NOTHING
    if who.get("email") or who.get("key"):
        viewer = await _viewer(console, who, usable)
        shown = ({**NOTHING, "error": viewer} if isinstance(viewer, str)
                 else await _read(console, where, viewer, params))
    status = 400 if shown["error"] else 200

    def url(skip: int) -> str:
        return "?" + urlencode({**who, **params, "skip": str(skip)})

    skip, size, rows = shown["skip"], shown["size"], shown["rows"]
    return render("preview.html", status, **console.page(
        title=f"{where.collection_parts[-1]} as a user sees it", target=where, who=who,
        users=users, keys=keys, params=params, shown=shown,
        first=skip + 1 if rows else 0, last=skip + len(rows),
        previous=url(max(skip - size, 0)) if skip > 0 else None,
        next=url(skip + size) if len(rows) >= size else None))


PREVIEW_HANDLERS = [preview]
