"""Importing a CSV or NDJSON file into one collection from the console's Data page.

``POST /_/data/rows`` takes a ``multipart/form-data`` upload, a ``collection`` and a
``mode``. The file is read by the code of ``POST /rest/<collection>`` with
``Content-Type: text/csv`` or ``application/x-ndjson``
(:mod:`docbase.core.portability.tables`: a header row, empty cells left out, the schema
typing the text), and its documents are written through the collection's write
pipeline as the signed-in administrator (validation, unique fields, hooks, the change
feed), as new documents with ids of their own:

- ``all`` (the default): all or nothing, like a bulk ``POST``; one refused row stores
  none, and the page names its line;
- ``each``: every row on its own, like ``POST ?validate=false`` with an array but with
  the schema's checks; the rows that fit are stored and the message lists the lines
  refused.

The file is limited by ``limits.max_upload_bytes`` and, for ``all``, its rows by
``limits.max_bulk``; ``each`` writes in runs of ``max_bulk``.
"""

from __future__ import annotations

from typing import Any

from litestar import Response, post

from docbase.core.collection import Collection
from docbase.core.errors import (
    Conflict,
    DocbaseError,
    InvalidQuery,
    NotFound,
    PayloadTooLarge,
    ValidationFailed,
)
from docbase.core.names import check_collection_name
from docbase.core.portability.tables import csv_documents, ndjson_documents
from docbase.http.console.data import ROW_MODES, data_page
from docbase.http.console.flash import go
from docbase.http.console.guard import Console, HttpRequest, console_paths
from docbase.http.console.uploads import chosen_file, upload_form
from docbase.http.tabular import by_line

LISTED, SAID = 10, 200
"""At most ``LISTED`` refused lines are named, each in ``SAID`` characters, so the message
fits the flash cookie; it counts the rest."""
Numbered = list[tuple[int, dict[str, Any]]]


def read_rows(name: str, body: bytes, max_depth: int) -> Numbered:
    """The documents of a file, with their line numbers, by its name (``.csv`` or not).

    Raises:
        InvalidQuery: the file is not CSV or NDJSON (the first line that is not).

    """
    lower = name.lower()
    if lower.endswith(".csv"):
        return csv_documents(body, max_depth)
    if lower.endswith((".ndjson", ".jsonl", ".json")):
        return ndjson_documents(body, max_depth)
    raise InvalidQuery(f"{name!r} is neither .csv nor .ndjson (.jsonl)")


def refusal_text(error: DocbaseError) -> str:
    """A refusal: the message and each field's (each line's, for a bulk insert)."""
    fields = "; ".join(f"{f.field}: {f.message}" for f in getattr(error, "fields", ()))
    return error.message + (f" ({fields})" if fields else "")


async def all_or_nothing(collection: Collection, rows: Numbered) -> int:
    """Insert every row in one write, or none; the count stored."""
    try:
        return len(await collection.insert_many([document for _, document in rows]))
    except ValidationFailed as exc:
        raise by_line(exc, [number for number, _ in rows]) from None


async def each_alone(collection: Collection, rows: Numbered, run: int
                     ) -> tuple[int, list[str]]:
    """Insert each row on its own; the count stored and the refused lines."""
    stored, refused = 0, []
    for start in range(0, len(rows), run):
        part = rows[start:start + run]
        results = await collection.insert_each([document for _, document in part])
        for (number, _), result in zip(part, results, strict=True):
            if isinstance(result, DocbaseError):
                refused.append(f"line {number}: {refusal_text(result)}")
            else:
                stored += 1
    return stored, refused


def _cut(text: str) -> str:
    return text if len(text) <= SAID else text[:SAID - 1] + "…"


def each_message(stored: int, total: int, where: str, refused: list[str]) -> str:
    """What the page says after an ``each`` import."""
    message = f"Imported {stored} of {total} row(s) {where}."
    if refused:
        more = len(refused) - LISTED
        named = "; ".join(_cut(r) for r in refused[:LISTED])
        rest = f"; and {more} more" if more > 0 else ""
        message += f" Refused {len(refused)}, nothing stored for them: {named}{rest}."
    return message


async def _refused(request: HttpRequest, console: Console, message: str,
                   status: int) -> Response[str]:
    return await data_page(request, console, error=f"Import refused: {message}",
                           status=status)


@post(console_paths("/data/rows"), status_code=303, request_max_body_size=None)
async def import_rows(request: HttpRequest) -> Response[Any]:
    """``POST /_/data/rows``: the CSV or NDJSON file into the form's collection."""
    console, form = await upload_form(request)
    limits = console.database.limits
    upload, mode = chosen_file(form.get("rows")), str(form.get("mode", "all"))
    if upload is None:
        return await data_page(request, console, error="Choose a CSV or NDJSON file.",
                               status=400)
    if mode not in ROW_MODES:
        return await data_page(request, console, error=f"Unknown mode {mode!r}.", status=400)
    name = upload.filename or ""
    try:
        target = check_collection_name(str(form.get("collection", "")).strip())
        rows = read_rows(name, await upload.read(), limits.max_body_depth)
        if mode == "all" and len(rows) > limits.max_bulk:
            raise PayloadTooLarge(f"{len(rows)} rows; one all-or-nothing import takes at "
                                  f"most {limits.max_bulk} (limits.max_bulk): choose "
                                  "'store the rows that fit', or split the file")
        collection = console.database.collection(target, console.principal)
        where = f"from {name} into {target!r}"
        if mode == "each":
            stored, refused = await each_alone(collection, rows, limits.max_bulk)
            return go(console.base, console.base + "/data",
                      each_message(stored, len(rows), where, refused))
        stored = await all_or_nothing(collection, rows)
    except (InvalidQuery, PayloadTooLarge, NotFound) as exc:
        return await _refused(request, console, f"{exc.message}. Nothing was imported.", 400)
    except (ValidationFailed, Conflict) as exc:
        return await _refused(request, console,
                              f"{refusal_text(exc)}. Nothing was imported.", 422)
    finally:
        await upload.close()
    return go(console.base, console.base + "/data", f"Imported {stored} document(s) {where}.")



ROW_HANDLERS = [import_rows]
