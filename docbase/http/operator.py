"""``/_ops``: the operator commands over HTTP, for ``docbase ... --url`` (full-access key).

So that an operator needs no shell on the machine holding the data, the ``docbase
keys``, ``users``, ``schema``, ``export`` and ``import`` commands reach a served database with
``--url https://... --apikey KEY`` through these routes (``docs/client.md``). Each
calls the function the command calls on an open database:

- ``GET /_ops/keys``; ``POST /_ops/keys`` ``{"full", "paths", "methods", "origins",
  "expires", "description", "roles", "owner"}``: 201 ``{"key": raw, "record": {...}}``;
  ``DELETE /_ops/keys/<key, id or prefix>``: the revoked record.
- ``GET /_ops/users``; ``POST /_ops/users`` ``{"email", "password", "displayname",
  "image", "admin", "roles"}``: 201, the user; ``DELETE /_ops/users/<email>``.
- ``GET /_ops/export?collections=a,b&secrets=true``: the archive (``application/x-tar``).
- ``POST /_ops/import?mode=insert|upsert|skip&validate=false`` with the archive as the
  body: the summary.
- ``GET /_ops/schemas``: the stored schemas as a schema file; ``POST
  /_ops/schemas?force=true&dry_run=true`` with a schema file (JSON) as the body: its
  changes and whether they were applied or refused (``docbase schema apply``).

A key that is not full-access is refused (403), a request without one 401.
"""

from __future__ import annotations

import contextlib
import tempfile
from collections.abc import Awaitable, Callable, Iterator
from pathlib import Path
from typing import Any, get_args

import msgspec
from litestar import Request, Response, delete, get, post
from litestar.handlers import HTTPRouteHandler
from litestar.params import FromPath

from docbase.core import auth
from docbase.core.database import Database
from docbase.core.errors import ConfigurationError, Forbidden, InvalidQuery
from docbase.core.portability.exporting import export_archive
from docbase.core.portability.importing import ImportMode, import_archive
from docbase.core.query import last_param
from docbase.core.schema.file_runs import apply_schema_file, stored_schema_file
from docbase.core.schema.files import parse_schema_file
from docbase.http.auth import paths
from docbase.http.bodies import object_body, read_json
from docbase.http.context import ServerDependency, authenticate_request, route
from docbase.http.operations import json_response
from docbase.http.params import query_params

HttpRequest = Request[Any, Any, Any]
Reply = Response[bytes]

__all__ = ["OPERATOR_HANDLERS"]


async def _operator(server: ServerDependency, request: HttpRequest) -> Database:
    _, database, _ = route(server, request)
    caller = await authenticate_request(database, request)
    if caller.key is None or not caller.key.full_access:
        raise Forbidden("the operator routes (/_ops) need a full-access API key")
    return database


async def _answer(request: HttpRequest, server: ServerDependency,
                  work: Callable[[Database], Awaitable[Any]]) -> Reply:
    """Answer what ``work`` returns on the request's database, for an operator only."""
    database = await _operator(server, request)
    return json_response(request, msgspec.to_builtins(await work(database)))


def _strings(body: dict[str, Any], name: str) -> list[str]:
    value = body.get(name) or []
    if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
        raise InvalidQuery(f"{name} must be an array of strings")
    return value


@get(paths("/_ops/keys"))
async def list_keys(request: HttpRequest, docbase_server: ServerDependency) -> Reply:
    """``GET /_ops/keys``: every key (never its value)."""
    return await _answer(request, docbase_server, auth.list_keys)


@post(paths("/_ops/keys"), status_code=201)
async def create_key(request: HttpRequest, docbase_server: ServerDependency) -> Reply:
    """``POST /_ops/keys``: the new key, shown in this answer only."""
    database = await _operator(docbase_server, request)
    body = object_body(await read_json(request, database.limits))
    raw, key = await auth.create_key(
        database, full_access=True if body.get("full") else None,
        paths=_strings(body, "paths"), methods=_strings(body, "methods"),
        origins=_strings(body, "origins"), expires=body.get("expires"),
        description=str(body.get("description") or ""), roles=_strings(body, "roles"),
        owner=body.get("owner"))
    return json_response(request, {"key": raw, "record": msgspec.to_builtins(key)}, 201)


@delete(paths("/_ops/keys/{key:str}"), status_code=200)
async def revoke_key(request: HttpRequest, docbase_server: ServerDependency,
                     key: FromPath[str]) -> Reply:
    """``DELETE /_ops/keys/<key>``: revoke it; the revoked record."""
    return await _answer(request, docbase_server, lambda db: auth.revoke_key(db, key))


@get(paths("/_ops/users"))
async def list_users(request: HttpRequest, docbase_server: ServerDependency) -> Reply:
    """``GET /_ops/users``: every user (never a password)."""
    return await _answer(request, docbase_server, auth.list_users)


@post(paths("/_ops/users"), status_code=201)
async def create_user(request: HttpRequest, docbase_server: ServerDependency) -> Reply:
    """``POST /_ops/users``: the new user."""
    database = await _operator(docbase_server, request)
    body = object_body(await read_json(request, database.limits))
    user = await auth.create_user(
        database, str(body.get("email") or ""), str(body.get("password") or ""),
        displayname=str(body.get("displayname") or ""), image=str(body.get("image") or ""),
        admin=bool(body.get("admin")), roles=_strings(body, "roles"))
    return json_response(request, msgspec.to_builtins(user), 201)


@delete(paths("/_ops/users/{email:str}"), status_code=200)
async def delete_user(request: HttpRequest, docbase_server: ServerDependency,
                      email: FromPath[str]) -> Reply:
    """``DELETE /_ops/users/<email>``: the deleted user."""
    return await _answer(request, docbase_server, lambda db: auth.delete_user(db, email))


@contextlib.contextmanager
def _scratch() -> Iterator[Path]:
    with tempfile.TemporaryDirectory(prefix="docbase-ops-") as directory:
        yield Path(directory) / "archive.tar"


@get(paths("/_ops/export"))
async def export(request: HttpRequest, docbase_server: ServerDependency) -> Response[bytes]:
    """``GET /_ops/export``: the archive of the database (or of ``collections``)."""
    database = await _operator(docbase_server, request)
    params = query_params(request)
    chosen = last_param(params, "collections")
    with _scratch() as out:
        await export_archive(database, out, secrets=last_param(params, "secrets") == "true",
                             collections=None if chosen is None
                             else [c for c in chosen.split(",") if c])
        content = out.read_bytes()
    return Response(content, media_type="application/x-tar")


@post(paths("/_ops/import"), status_code=200)
async def import_(request: HttpRequest, docbase_server: ServerDependency) -> Reply:
    """``POST /_ops/import``: import the archive of the body; what was imported."""
    database = await _operator(docbase_server, request)
    params = query_params(request)
    mode = last_param(params, "mode") or "insert"
    if mode not in get_args(ImportMode):
        raise InvalidQuery(f"mode must be one of {', '.join(get_args(ImportMode))}")
    chosen: ImportMode = mode  # type: ignore[assignment]  # checked just above
    with _scratch() as archive:
        with archive.open("wb") as file:
            async for chunk in request.stream():
                file.write(chunk)
        _, summary = await import_archive(database, archive, mode=chosen,
                                          validate=last_param(params, "validate") != "false")
    return json_response(request, msgspec.to_builtins(summary))


@get(paths("/_ops/schemas"))
async def schemas(request: HttpRequest, docbase_server: ServerDependency) -> Reply:
    """``GET /_ops/schemas``: the stored schemas and mode, as a schema file."""
    return await _answer(request, docbase_server, stored_schema_file)


@post(paths("/_ops/schemas"), status_code=200)
async def apply_schemas(request: HttpRequest, docbase_server: ServerDependency) -> Reply:
    """``POST /_ops/schemas?force=true&dry_run=true``: apply the schema file of the body."""
    database = await _operator(docbase_server, request)
    params = query_params(request)
    try:
        wanted = parse_schema_file(await read_json(request, database.limits), "the body")
    except ConfigurationError as exc:  # the caller's file, not the server's settings
        raise InvalidQuery(exc.message) from None
    run = await apply_schema_file(database, wanted, force=last_param(params, "force") == "true",
                                  dry_run=last_param(params, "dry_run") == "true")
    return json_response(request, msgspec.to_builtins(run))


OPERATOR_HANDLERS: list[HTTPRouteHandler] = [
    list_keys, create_key, revoke_key, list_users, create_user, delete_user, export, import_,
    schemas, apply_schemas,
]
"""The ``/_ops`` handlers; they need the ``docbase_server`` dependency."""
