"""The schema designer: one collection's fields, previewed and applied like a schema file.

- ``GET /_/schema/<collection>``: the collection's fields as JSON (``{"fields": [...]}``,
  the format of ``_meta`` and schema files, ``docs/schema.md``) and the database's mode.
- ``POST /_/schema/<collection>``: with ``apply`` unset, the changes this would make
  (fields added, changed, removed, the mode); with ``apply``, make them. Destructive
  changes (a field removed, a type changed) need the ``force`` box, as
  ``docbase schema apply`` needs ``--force``. A field becoming unique over stored
  duplicates is refused (409) and an invalid field (422) lists its problems; nothing
  changes then.

The plan and its application are those of ``docbase schema apply``
(:mod:`docbase.core.schema.files`): the designer writes a one-collection schema file.
"""

from __future__ import annotations

from typing import Any

import msgspec
from litestar import Response, get, post
from litestar.params import FromPath

from docbase.core.errors import ConfigurationError, DocbaseError
from docbase.core.names import check_collection_name
from docbase.core.schema.files import MODE, Change, SchemaFile, apply_plan, parse_schema_file, plan
from docbase.http.console.guard import Console, HttpRequest, console_paths, signed_in
from docbase.http.console.rendering import render
from docbase.http.errors import answer_for


async def _page(console: Console, name: str, text: str, mode: str, *,
                changes: list[Change] | None = None, applied: bool = False,
                error: str = "", status: int = 200) -> Response[str]:
    return render("schema.html", status, **console.page(
        title=f"Schema of {name}", collection=name, text=text, mode=mode,
        changes=[c.line() for c in changes or []], applied=applied, error=error))


@get(console_paths("/schema/{collection:str}"))
async def schema_page(request: HttpRequest, collection: FromPath[str]) -> Response[str]:
    """``GET /_/schema/<collection>``."""
    console = await signed_in(request)
    name = check_collection_name(collection)
    schema = await console.database.schemas.get(name)
    fields = schema.to_json()["fields"] if schema else []
    text = msgspec.json.format(msgspec.json.encode({"fields": fields}), indent=2).decode()
    return await _page(console, name, text, await console.database.schemas.mode())


@post(console_paths("/schema/{collection:str}"), status_code=200)
async def change_schema(request: HttpRequest, collection: FromPath[str]) -> Response[str]:
    """``POST /_/schema/<collection>``: preview, or apply with ``apply=1``."""
    form = await request.form()
    console = await signed_in(request, form=dict(form))
    database, name = console.database, check_collection_name(collection)
    text, mode = str(form.get("schema", "")), str(form.get("mode", "schemaless"))
    current = await database.schemas.all()
    try:
        body: Any = msgspec.json.decode(text.encode())
        wanted = parse_schema_file({"mode": mode, "collections": {name: body}}, "schema")
        schemas = {**current, name: wanted.schemas[name]}
        changes = [c for c in plan(current, await database.schemas.mode(),
                                   SchemaFile(schemas, mode))
                   if c.what == MODE or c.what.split(".")[0] == name]
        if form.get("apply") != "1" or not changes:
            return await _page(console, name, text, mode, changes=changes)
        if any(c.destructive for c in changes) and form.get("force") != "on":
            return await _page(console, name, text, mode, changes=changes, status=409,
                               error="These changes are destructive: tick the box to "
                                     "apply them anyway.")
        await apply_plan(database, SchemaFile(schemas, mode), changes)
    except msgspec.DecodeError as exc:
        return await _page(console, name, text, mode, error=f"not valid JSON: {exc}",
                           status=400)
    except ConfigurationError as exc:
        return await _page(console, name, text, mode, error=exc.message, status=422)
    except DocbaseError as exc:
        return await _page(console, name, text, mode, error=exc.message,
                           status=answer_for(type(exc)).status)
    return await _page(console, name, text, mode, changes=changes, applied=True)


SCHEMA_HANDLERS = [schema_page, change_schema]
