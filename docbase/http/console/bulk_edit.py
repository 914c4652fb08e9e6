"""Bulk edit of the documents ticked in the collection's table: set or remove one field.

``GET /_/c/<collection>/_edit?ids=A&ids=B`` asks for a field and what to do with it: set
it to a value, or remove it. Where the collection's schema gives the field an input of
its own in the editor, the value is read as that input is
(:func:`~docbase.http.console.fields.typed`: a number field's ``3`` is a number); any
other value is JSON (``"done"``, ``3``, ``true``, ``["a"]``). The same URL with ``field``
is the confirmation page, which says how many of the ticked documents will change.
Its ``POST`` updates each of them like ``PUT /rest/<collection>/<id>`` with
``{"$set": {field: value}}`` (or ``$unset``), through the collection's write pipeline as
the signed-in administrator, all in one batch (:mod:`~docbase.http.console.batched`):
if one is refused (its schema validation, a unique field, a hook), nothing changes and
the page names that document and why.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import msgspec
from litestar import Response

from docbase.core.collection import Collection
from docbase.core.errors import DocbaseError, InvalidQuery, ValidationFailed
from docbase.core.update import parse_update
from docbase.http.console.batched import in_one_batch
from docbase.http.console.bulk import selected
from docbase.http.console.fields import form_specs, typed
from docbase.http.console.flash import go
from docbase.http.console.guard import Console
from docbase.http.console.rendering import render
from docbase.http.console.targets import Target
from docbase.http.errors import answer_for
from docbase.http.params import query_filter


class Edit(msgspec.Struct, frozen=True):
    """The change the form asks for, and the ``PUT`` body that makes it."""

    field: str
    remove: bool
    text: str
    """The value as typed."""
    body: dict[str, Any]

    @property
    def summary(self) -> str:
        """The change in words, for the confirmation page and the message after it."""
        if self.remove:
            return f"remove the field {self.field}"
        value = msgspec.json.encode(self.body["$set"][self.field]).decode()
        return f"set the field {self.field} to {value}"


def _text(form: Mapping[str, Any], name: str) -> str:
    value = form.get(name)
    return value if isinstance(value, str) else ""


async def _value(console: Console, collection: Collection, field: str, text: str) -> Any:
    schema = await console.database.schemas.get(collection.name)
    spec = next((s for s in form_specs(schema) if s.name == field), None)
    if spec is not None:
        return typed(spec, text.strip())
    try:
        return msgspec.json.decode(text.encode())
    except msgspec.DecodeError:
        raise ValueError(f"the value of {field} is read as JSON, and {text!r} is not JSON: "
                         "text goes in double quotes, \"done\"") from None


async def _edit(console: Console, collection: Collection, form: Mapping[str, Any]
                ) -> Edit | str:
    """The change the form asks for, or why it cannot be made."""
    try:
        return await _asked(console, collection, form)
    except ValueError as exc:
        return str(exc)
    except InvalidQuery as exc:
        return exc.message


async def _asked(console: Console, collection: Collection, form: Mapping[str, Any]) -> Edit:
    field = _text(form, "field").strip()
    if not field:
        raise ValueError("name the field to change")
    remove = _text(form, "op") == "remove"
    body: dict[str, Any] = {"$unset": {field: ""}} if remove else {
        "$set": {field: await _value(console, collection, field, _text(form, "value"))}}
    if not parse_update(body).ops:  # InvalidQuery: not a field path
        raise ValueError(f"{field} is a system field, which is not edited by hand")
    return Edit(field, remove, _text(form, "value"), body)


async def _fields(console: Console, collection: Collection) -> list[str]:
    schema = await console.database.schemas.get(collection.name)
    return [] if schema is None else [spec.name for spec in schema.fields]


async def _page(console: Console, target: Target, collection: Collection, ids: list[str],
                form: Mapping[str, Any], *, edit: Edit | None = None, status: int = 200,
                error: str = "", messages: list[str] | None = None) -> Response[str]:
    count = 0
    if edit is not None:
        ticked = query_filter({"q": [selected(ids)]}, console.database.limits)
        count = await collection.count(ticked)
    return render("bulk_edit.html", status, **console.page(
        title="Change the ticked documents" if edit is None else "Change these documents?",
        target=target, ids=ids, edit=edit, count=count, error=error,
        messages=messages or [], fields=await _fields(console, collection),
        field=_text(form, "field"), remove=_text(form, "op") == "remove",
        value=_text(form, "value")))


def _ticked(ids: list[str]) -> list[str]:
    if not ids:
        raise InvalidQuery("tick the documents to change in the table first")
    return ids


async def show(console: Console, target: Target, collection: Collection, ids: list[str],
               form: Mapping[str, Any]) -> Response[str]:
    """The form (without ``field``), else the confirmation page with the count."""
    ids = _ticked(ids)
    if "field" not in form:
        return await _page(console, target, collection, ids, form)
    edit = await _edit(console, collection, form)
    if isinstance(edit, str):
        return await _page(console, target, collection, ids, form, status=400, error=edit)
    return await _page(console, target, collection, ids, form, edit=edit)


async def apply(console: Console, target: Target, collection: Collection, ids: list[str],
                form: Mapping[str, Any]) -> Response[Any]:
    """Change every ticked document in one batch; back to the collection, or say why not."""
    ids = _ticked(ids)
    edit = await _edit(console, collection, form)
    if isinstance(edit, str):
        return await _page(console, target, collection, ids, form, status=400, error=edit)

    async def write(document_id: str) -> object:
        return await collection.update(document_id, edit.body)

    outcome = await in_one_batch(console.database, ids, write)
    done = f"Removed {edit.field} from" if edit.remove else f"Set {edit.field} on"
    if outcome.error is None:
        return go(console.base, f"{console.base}/c/{target.collection_path}",
                  outcome.message(done))
    return await _page(console, target, collection, ids, form, edit=edit,
                       status=answer_for(type(outcome.error)).status,
                       error=outcome.message(done), messages=_messages(outcome.error))


def _messages(error: DocbaseError) -> list[str]:
    """Each field's messages of a refused validation, ``field: message``."""
    if not isinstance(error, ValidationFailed):
        return []
    return [f"{f.field}: {m}" for f in error.fields for m in f.message]
