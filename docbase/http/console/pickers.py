"""What a lookup, image or file field of the document editor offers to pick from.

An image or file field offers the newest files of the media archive (their id, shown
with the file name); a lookup field offers documents of its target collection (their
id, shown with the first text field). The browser lists them under the input as the
administrator types, matching the id or the label. Both are read as ``/rest`` and
``/media`` read them, as the signed-in administrator.

A lookup field's first :data:`CHOICES` documents may not hold the one wanted: its
search box asks ``GET /_/pick/<collection>?text=T`` (:func:`search`), which reads the
target collection through its read pipeline with ``T`` as the text ``filter`` of
``GET /rest/<collection>`` (any string value containing it, case-insensitively) or as
an ``_id``, and answers at most :data:`FOUND` documents as JSON ``[{"id", "label"}]``.
"""

from __future__ import annotations

from typing import Any

from litestar import Response, get
from litestar.params import FromPath

from docbase.core.names import check_collection_name
from docbase.core.query import Eq, Or, Query, Text
from docbase.core.schema.model import FieldSpec, FieldType
from docbase.http.console.guard import Console, HttpRequest, console_paths, signed_in
from docbase.http.console.rendering import CONSOLE_HEADERS, visible

CHOICES = 200
"""How many files or documents a picker offers."""
FOUND = 50
"""How many documents a search answers at most."""
LONGEST_TEXT = 200
"""The longest search text read (the rest is ignored)."""


def _label(document: dict[str, Any]) -> str:
    text = next((v for k, v in document.items() if not k.startswith("_")
                 and isinstance(v, str)), "")
    return visible(text[:80])


async def choices(console: Console, specs: list[FieldSpec]) -> dict[str, list[tuple[str, str]]]:
    """``{field: [(id, label), ...]}`` for the lookup, image and file fields of ``specs``."""
    found: dict[str, list[tuple[str, str]]] = {}
    media: list[tuple[str, str]] | None = None
    for spec in specs:
        if spec.type in (FieldType.IMAGE, FieldType.FILE):
            if media is None:
                records = await console.database.media.find(
                    None, {"$orderby": {"_created": -1}, "$max": CHOICES},
                    principal=console.principal)
                media = [(str(r["_id"]), visible(r.get("origname", ""))) for r in records]
            found[spec.name] = media
        elif spec.type == FieldType.LOOKUP and spec.collection:
            target = console.database.collection(spec.collection, console.principal)
            documents = await target.find(query=Query(limit=CHOICES))
            found[spec.name] = [(str(d["_id"]), _label(d)) for d in documents]
    return found


@get(console_paths("/pick/{collection:str}"))
async def search(request: HttpRequest, collection: FromPath[str]) -> Response[Any]:
    """``GET /_/pick/<collection>?text=T``: documents to pick for a lookup, as JSON."""
    console = await signed_in(request)
    target = console.database.collection(check_collection_name(collection), console.principal)
    text = request.query_params.get("text", "").strip()[:LONGEST_TEXT]
    found = []
    if text:
        documents = await target.find(query=Query(
            filter=Or((Eq(("_id",), text), Text(text))), limit=FOUND))
        found = [{"id": str(d["_id"]), "label": _label(d)} for d in documents]
    return Response(found, media_type="application/json", headers=dict(CONSOLE_HEADERS))


PICKER_HANDLERS = [search]
