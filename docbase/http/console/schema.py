"""The schema designer: one collection's fields and access rules, previewed and applied.

- ``GET /_/schema/<collection>``: the collection's fields as JSON (``{"fields": [...]}``,
  the format of ``_meta`` and schema files, ``docs/schema.md``), its access rules as
  typed inputs (:mod:`~docbase.http.console.access_form`, ``docs/access.md``) and the
  database's mode.
- ``POST /_/schema/<collection>``: with ``apply`` unset, the changes this would make
  (fields added, changed, removed, the access rules, the mode); with ``apply``, make
  them. Destructive changes (a field removed, a type changed) need the ``force`` box, as
  ``docbase schema apply`` needs ``--force``. A field becoming unique over stored
  duplicates is refused (409); an invalid field or access rule (422) lists its problems,
  each access problem beside its input; nothing changes then.

The fields and the rules make one schema definition, checked by ``parse_schema`` as
``PUT /rest/<collection>/_meta`` checks it; the plan and its application are those of
``docbase schema apply`` (:mod:`docbase.core.schema.files`): the designer writes a
one-collection schema file.
"""

from __future__ import annotations

from typing import Any

import msgspec
from litestar import Response, get, post
from litestar.params import FromPath

from docbase.core.access.rules import OPERATIONS
from docbase.core.errors import ConfigurationError, DocbaseError, FieldError, ValidationFailed
from docbase.core.names import check_collection_name
from docbase.core.schema.definition import parse_schema
from docbase.core.schema.files import MODE, Change, SchemaFile, apply_plan, parse_schema_file, plan
from docbase.http.console import access_form
from docbase.http.console.guard import Console, HttpRequest, console_paths, signed_in
from docbase.http.console.rendering import render
from docbase.http.errors import answer_for


async def _page(console: Console, name: str, text: str, mode: str, access: dict[str, Any],
                *, changes: list[Change] | None = None, applied: bool = False,
                error: str = "", problems: list[FieldError] | None = None,
                status: int = 200) -> Response[str]:
    placed, _ = access_form.by_input(problems or [])
    return render("schema.html", status, **console.page(
        title=f"Schema of {name}", collection=name, text=text, mode=mode,
        changes=[c.line() for c in changes or []], applied=applied, error=error,
        access=access, placed=placed, operations=OPERATIONS,
        problems=[{"field": p.field, "messages": list(p.message)} for p in problems or []]))


def _field_names(body: Any) -> list[str]:
    """The names of the fields a definition declares, as far as it can be read."""
    fields = body.get("fields") if isinstance(body, dict) else None
    return [f["name"] for f in fields or [] if isinstance(f, dict)
            and isinstance(f.get("name"), str)] if isinstance(fields, list) else []


@get(console_paths("/schema/{collection:str}"))
async def schema_page(request: HttpRequest, collection: FromPath[str]) -> Response[str]:
    """``GET /_/schema/<collection>``."""
    console = await signed_in(request)
    name = check_collection_name(collection)
    schema = await console.database.schemas.get(name)
    fields = schema.to_json()["fields"] if schema else []
    text = msgspec.json.format(msgspec.json.encode({"fields": fields}), indent=2).decode()
    access = access_form.stored(schema.access if schema else None, _field_names(
        {"fields": fields}))
    return await _page(console, name, text, await console.database.schemas.mode(), access)


def _definition(name: str, text: str, access: dict[str, Any]) -> dict[str, Any]:
    """The schema definition of the JSON box and the access inputs, checked.

    Raises:
        msgspec.DecodeError: the JSON box is not JSON.
        ValidationFailed: a field or an access rule is invalid, each problem named.
        DocbaseError: the JSON box is not a schema definition.

    """
    body: Any = msgspec.json.decode(text.encode())
    rules, problems = access_form.access_json(access)
    if isinstance(body, dict) and "access" in body:
        problems.append(FieldError("access", (
            "the access rules are set in their inputs below, not in the JSON",)))
    elif isinstance(body, dict) and rules is not None:
        body = {**body, "access": rules}
    try:
        parse_schema(name, body)
    except ValidationFailed as exc:
        problems.extend(exc.fields)
    if problems:
        raise ValidationFailed(f"the schema of {name!r} is invalid", problems)
    result: dict[str, Any] = body
    return result


@post(console_paths("/schema/{collection:str}"), status_code=200)
async def change_schema(request: HttpRequest, collection: FromPath[str]) -> Response[str]:
    """``POST /_/schema/<collection>``: preview, or apply with ``apply=1``."""
    form = await request.form()
    console = await signed_in(request, form=dict(form))
    database, name = console.database, check_collection_name(collection)
    text, mode = str(form.get("schema", "")), str(form.get("mode", "schemaless"))
    try:
        names = _field_names(msgspec.json.decode(text.encode()))
    except msgspec.DecodeError:
        names = []
    access = access_form.submitted(form, names)
    current = await database.schemas.all()
    try:
        body = _definition(name, text, access)
        wanted = parse_schema_file({"mode": mode, "collections": {name: body}}, "schema")
        schemas = {**current, name: wanted.schemas[name]}
        changes = [c for c in plan(current, await database.schemas.mode(),
                                   SchemaFile(schemas, mode))
                   if c.what == MODE or c.what.split(".")[0] == name]
        if form.get("apply") != "1" or not changes:
            return await _page(console, name, text, mode, access, changes=changes)
        if any(c.destructive for c in changes) and form.get("force") != "on":
            return await _page(console, name, text, mode, access, changes=changes,
                               status=409,
                               error="These changes are destructive: tick the box to "
                                     "apply them anyway.")
        await apply_plan(database, SchemaFile(schemas, mode), changes)
    except msgspec.DecodeError as exc:
        return await _page(console, name, text, mode, access,
                           error=f"not valid JSON: {exc}", status=400)
    except ValidationFailed as exc:
        said = "; ".join(f"{f.field}: {', '.join(f.message)}" for f in exc.fields)
        return await _page(console, name, text, mode, access, error=f"{exc.message}: {said}",
                           problems=list(exc.fields), status=422)
    except ConfigurationError as exc:
        return await _page(console, name, text, mode, access, error=exc.message, status=422)
    except DocbaseError as exc:
        return await _page(console, name, text, mode, access, error=exc.message,
                           status=answer_for(type(exc)).status)
    return await _page(console, name, text, mode, access, changes=changes, applied=True)


SCHEMA_HANDLERS = [schema_page, change_schema]
