"""The overview and the collection browser.

The browser reads a page of documents the way ``GET /rest/<collection>`` does: the same
URL parameters (``q``, ``h``, ``filter``, ``sort``, ``dir``, ``skip``, ``max``) parsed
by the same core function, and :meth:`~docbase.core.collection.Collection.read` of the
same collection, so the read pipeline applies unchanged. The page shows the equivalent
``/rest`` URL and how many documents the query matches (one count of its filter, the
count ``GET /rest/<collection>?q=...&totals=true`` makes). The columns and cells are
chosen by :mod:`~docbase.http.console.columns`.
"""

from __future__ import annotations

from importlib.metadata import PackageNotFoundError, version
from typing import Any
from urllib.parse import urlencode

from litestar import Response, get
from litestar.response import Redirect

from docbase.core.changes.entries import Change
from docbase.core.changes.readable import ReadableChanges
from docbase.core.errors import InvalidQuery
from docbase.core.names import check_collection_name
from docbase.core.query import parse_list_params
from docbase.http.console.columns import cell, known_fields, shown_columns
from docbase.http.console.guard import Console, HttpRequest, console_paths, signed_in
from docbase.http.console.rendering import CONSOLE_HEADERS, render
from docbase.http.console.targets import Target

LIST_PARAMS = ("q", "h", "filter", "sort", "dir", "skip", "max")
"""The ``/rest`` list parameters the browser passes on."""
PAGE_SIZE = 25


def _version() -> str:
    try:
        return version("docbase")
    except PackageNotFoundError:  # pragma: no cover - run from a source tree
        return "unknown"


RECENT_CHANGES = 10


async def recent_changes(console: Console) -> list[Change]:
    """The newest entries of the change log that the administrator may read."""
    log = console.database.changes.log
    last, _ = await log.state()
    readable = ReadableChanges(console.principal, None)
    changes = await log.read(max(last - RECENT_CHANGES, 0), RECENT_CHANGES)
    return [c for c in reversed(changes)
            if not c.custom and c.collection is not None and readable.readable(c.collection)]


@get(console_paths("/"))
async def overview(request: HttpRequest) -> Response[str]:
    """``GET /_/``: collections and counts, engine, version, the newest changes."""
    console = await signed_in(request)
    database = console.database
    names = await database.collections()
    counts = [(name, await database.collection(name, console.principal).count())
              for name in names]
    settings = await database.settings.load()
    return render("overview.html", **console.page(
        title="Overview", counts=counts, engine=type(database.store).__name__,
        version=_version(), realtime=settings.realtime.enabled,
        changes=await recent_changes(console)))


@get(console_paths("/c"))
async def open_collection(request: HttpRequest) -> Redirect:
    """``GET /_/c?name=N``: go to a collection by name (a new one opens its create form)."""
    console = await signed_in(request)
    name = check_collection_name(request.query_params.get("name", "").strip())
    return Redirect(f"{console.base}/c/{name}", status_code=303, headers=dict(CONSOLE_HEADERS))


def list_params(request: HttpRequest) -> dict[str, str]:
    """The list parameters the page was asked with (blank ones left out)."""
    return {k: v for k in LIST_PARAMS if (v := request.query_params.get(k, "").strip())}


async def collection_page(request: HttpRequest, console: Console,
                          target: Target) -> Response[str]:
    """The browser of one collection (or child collection): a page of its documents."""
    collection = target.collection(console.database, console.principal)
    await collection.require_parent()
    params = list_params(request)
    params.setdefault("max", str(PAGE_SIZE))
    error, documents, skip, size, total = "", [], 0, PAGE_SIZE, 0
    try:
        query, options = parse_list_params({k: [v] for k, v in params.items()},
                                           limits=console.database.limits)
        skip, size = query.skip, query.limit or PAGE_SIZE
        read = await collection.read(query, options)
        documents = read if isinstance(read, list) else []
        total = await collection.count(query.filter)
    except InvalidQuery as exc:
        error = exc.message
    schema = await console.database.schemas.get(collection.name)
    schema_fields = [f.name for f in schema.fields] if schema else []
    chosen = request.query_params.getall("cols", [])
    names = shown_columns(chosen, schema_fields, documents)
    rows = [{"id": d.get("_id", ""), "cells": [cell(d[n]) if n in d else "" for n in names]}
            for d in documents]
    kept = [("cols", c) for c in names] if chosen else []

    def url(**changed: Any) -> str:
        pairs = {**params, **{k: str(v) for k, v in changed.items()}}
        return "?" + urlencode([*pairs.items(), *kept])

    sorted_by, direction = params.get("sort"), params.get("dir", "1")
    headers = [{"name": n, "url": url(sort=n, dir=-1 if (n == sorted_by and direction == "1")
                                      else 1, skip=0),
                "sorted": ("ascending" if direction == "1" else "descending")
                if n == sorted_by else "none"} for n in names]
    rest_url = f"{console.rest_base}/{target.collection_path}"
    if params:
        rest_url += "?" + urlencode(params)
    return render("collection.html", 400 if error else 200, **console.page(
        title=target.collection_parts[-1], target=target, params=params, error=error,
        live=(await console.database.settings.load()).realtime.enabled,
        headers=headers, rows=rows, rest_url=rest_url, collection=collection.name,
        previous=url(skip=max(skip - size, 0)) if skip > 0 else None,
        next=url(skip=skip + size) if len(documents) >= size else None,
        first=skip + 1 if documents else 0, last=skip + len(documents), total=total,
        fields=known_fields(schema_fields, documents), shown=names,
        collections=await console.database.collections()))
