"""One document in the console: view and edit its JSON, create, duplicate, delete.

Every write goes through the collection's write pipeline like a ``/rest`` write, as
the signed-in administrator. Where the collection has a schema, its single-value fields
have inputs of their own (:mod:`~docbase.http.console.fields`) and the JSON box holds
the others. Saving an edited document sets each of its top-level
fields and unsets the fields the edit removed (one atomic update); a refusal of the
schema's validation (the 422 of ``/rest``) shows each field's messages next to the
editor, and nothing is stored. Deleting asks for confirmation on a page of its own.
"""

from __future__ import annotations

from typing import Any

import msgspec
from litestar import Response, get, post
from litestar.params import FromPath

from docbase.core.collection import Collection
from docbase.core.documents import SYSTEM_FIELDS
from docbase.core.errors import DocbaseError, ValidationFailed, VersionMismatch
from docbase.core.schema.model import FieldSpec
from docbase.core.update import SetOp, UnsetOp, Update
from docbase.http.console import bulk, bulk_edit, pickers
from docbase.http.console.browse import collection_page
from docbase.http.console.fields import form_specs, inputs, joined, split, submitted
from docbase.http.console.flash import go
from docbase.http.console.guard import Console, HttpRequest, console_paths, signed_in
from docbase.http.console.rendering import render, visible
from docbase.http.console.targets import Target
from docbase.http.errors import answer_for

TARGET = "/c/{target:path}"


def _pretty(document: dict[str, Any]) -> str:
    """The JSON the editor shows; bidi and control characters as escapes (valid JSON)."""
    return visible(msgspec.json.format(msgspec.json.encode(document), indent=2).decode())


def _editor(console: Console, target: Target, text: str, *, status: int = 200,
            error: str = "", fields: list[dict[str, Any]] | None = None,
            system: dict[str, Any] | None = None, children: list[str] | None = None,
            saved: bool = False, inputs: list[dict[str, Any]] | None = None,
            version: Any = None, conflict: dict[str, Any] | None = None) -> Response[str]:
    title = "New document" if target.document_id is None else target.document_id
    return render("document.html", status, **console.page(
        title=title, target=target, text=text, error=error, fields=fields or [],
        system=system or {}, children=children or [], saved=saved, inputs=inputs or [],
        version=version if isinstance(version, int) else "",
        conflict=_pretty(conflict) if conflict is not None else ""))


def _expected(value: Any) -> int | None:
    """The ``_version`` the edit started from (the form's ``version``), if it names one."""
    return int(value) if isinstance(value, str) and value.isdigit() else None


async def _specs(console: Console, collection: Collection) -> list[FieldSpec]:
    return form_specs(await console.database.schemas.get(collection.name))


def _user_fields(document: dict[str, Any]) -> dict[str, Any]:
    return {k: v for k, v in document.items() if k not in SYSTEM_FIELDS}


def _parsed(text: str) -> dict[str, Any]:
    try:
        value = msgspec.json.decode(text.encode())
    except msgspec.DecodeError as exc:
        raise ValueError(f"not valid JSON: {exc}") from None
    if not isinstance(value, dict):
        raise ValueError("a document is a JSON object: {...}")
    return {k: v for k, v in value.items() if k not in SYSTEM_FIELDS}


@get(console_paths(TARGET))
async def show(request: HttpRequest, target: FromPath[str]) -> Response[str]:
    """``GET /_/c/...``: a collection's browser, a document, or a create/delete form."""
    console = await signed_in(request)
    where = Target(target)
    if where.document_id is None and where.action == "view":
        return await collection_page(request, console, where)
    collection = where.collection(console.database, console.principal)
    ids = request.query_params.getall("ids", [])
    if where.action == "edit":
        return await bulk_edit.show(console, where, collection, ids, request.query_params)
    if where.action == "delete" and where.document_id is None:
        return await bulk.preview(console, where, collection, ids,
                                  request.query_params.get("q"))
    specs = await _specs(console, collection)
    picks = await pickers.choices(console, specs)
    if where.action == "new":
        source = request.query_params.get("from")
        values, rest = split(specs, _user_fields(await collection.get(source))
                             if source else {})
        return _editor(console, where, _pretty(rest), inputs=inputs(specs, values, (), picks))
    assert where.document_id is not None, "a document URL"
    document = await collection.get(where.document_id)
    if where.action == "delete":
        return render("delete.html", **console.page(title="Delete?", target=where))
    children = [] if len(where.parts) > 2 else \
        await console.database.child_fields(collection.name)
    values, rest = split(specs, _user_fields(document))
    return _editor(console, where, _pretty(rest), inputs=inputs(specs, values, (), picks),
                   system={k: v for k, v in document.items() if k in SYSTEM_FIELDS},
                   children=children, saved=request.query_params.get("saved") == "1",
                   version=document.get("_version"))


@post(console_paths(TARGET), status_code=303)
async def change(request: HttpRequest, target: FromPath[str]) -> Response[Any]:
    """``POST /_/c/...``: save a document, create one, delete one; change or delete many."""
    submitted_form = await request.form()
    form = dict(submitted_form)
    console = await signed_in(request, form=form)
    where = Target(target)
    collection = where.collection(console.database, console.principal)
    listing = f"{console.base}/c/{where.collection_path}"
    ids = submitted_form.getall("ids", [])
    if where.action == "edit":
        return await bulk_edit.apply(console, where, collection, ids, form)
    if where.action == "delete" and where.document_id is None:
        return await bulk.delete(console, where, collection, ids, form.get("q"))
    if where.action == "delete" and where.document_id is not None:
        await collection.delete(where.document_id)
        return go(console.base, listing, f"Deleted document {where.document_id}.")
    text = form.get("document")
    text = text if isinstance(text, str) else ""
    specs = await _specs(console, collection)
    picks = await pickers.choices(console, specs)
    texts = submitted(specs, form)
    try:
        body = joined(specs, texts, _parsed(text))
        if where.action == "new":
            created = await collection.insert(body)
            return go(console.base, f"{listing}/{created['_id']}?saved=1")
        if where.document_id is None:
            raise ValueError("a collection is changed through its documents")
        stored = _user_fields(await collection.get(where.document_id))
        update = Update(tuple([SetOp((k,), v) for k, v in body.items()]
                              + [UnsetOp((k,)) for k in stored if k not in body]))
        await collection.apply(where.document_id, update, body,
                               expected_version=_expected(form.get("version")))
        return go(console.base, f"{console.base}/c/{where.path}?saved=1")
    except ValueError as exc:
        return _editor(console, where, text, status=400, error=str(exc),
                       inputs=inputs(specs, texts, (), picks),
                       version=_expected(form.get("version")))
    except ValidationFailed as exc:
        fields = [{"field": f.field, "messages": list(f.message)} for f in exc.fields]
        return _editor(console, where, text, status=422, error=exc.message, fields=fields,
                       inputs=inputs(specs, texts, tuple(exc.fields), picks),
                       version=_expected(form.get("version")))
    except VersionMismatch:
        assert where.document_id is not None, "only a stored document has a version"
        current = await collection.get(where.document_id)
        return _editor(console, where, text, status=409, inputs=inputs(specs, texts, (), picks),
                       error="This document was changed by someone else since you opened "
                             "it. Reload it (your edit is lost) or overwrite their change "
                             "with yours.",
                       version=current.get("_version"), conflict=_user_fields(current))
    except DocbaseError as exc:
        return _editor(console, where, text, status=answer_for(type(exc)).status,
                       error=exc.message, inputs=inputs(specs, texts, (), picks),
                       version=_expected(form.get("version")))


DOCUMENT_HANDLERS = [show, change]
