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

So may an image or file field's first :data:`CHOICES` files: its search box asks ``GET
/_/pick-media/<image|file>?text=T`` (:func:`search_media`), which reads the media
archive as ``GET /media?q=`` does, for the files whose original name contains ``T``
(case-insensitively) or whose media id it is, newest first; an image field only for
images (their sniffed ``mediatype``). It answers as the lookup search does.
"""

from __future__ import annotations

import re
from typing import Any

from litestar import Response, get
from litestar.params import FromPath

from docbase.core.errors import NotFound
from docbase.core.names import check_collection_name
from docbase.core.query import And, Eq, Filter, Or, Query, SortKey, Text, parse_regex
from docbase.core.schema.model import FieldSpec, FieldType
from docbase.http.console.fields import MEDIA_FIELDS
from docbase.http.console.guard import Console, HttpRequest, console_paths, signed_in
from docbase.http.console.rendering import CONSOLE_HEADERS, visible

CHOICES = 200
"""How many files or documents a picker offers."""
FOUND = 50
"""How many documents a search answers at most."""
LONGEST_TEXT = 200
"""The longest search text read (the rest is ignored)."""
MEDIA_KINDS = {kind: field for field, kind in MEDIA_FIELDS.items()}
"""The field type of each media search: ``/_/pick-media/<kind>``."""
NEWEST_FIRST = (SortKey(("_created",), -1), SortKey(("_id",), -1))


def _searched(request: HttpRequest) -> str:
    return request.query_params.get("text", "").strip()[:LONGEST_TEXT]


def _answer(found: list[dict[str, str]]) -> Response[Any]:
    return Response(found, media_type="application/json", headers=dict(CONSOLE_HEADERS))


def _media_filter(kind: FieldType, text: str | None = None) -> Filter:
    """The files an image (images only) or file field offers, holding ``text`` if given."""
    images = Eq(("mediatype",), "image")
    if text is None:
        return images if kind == FieldType.IMAGE else And()
    # re.escape: the name is matched as typed, on every backend (docs/query.md's subset)
    named = Or((Eq(("_id",), text), parse_regex(("origname",), re.escape(text), "i")))
    return And((named, images)) if kind == FieldType.IMAGE else named


def _media_choices(records: list[dict[str, Any]]) -> list[tuple[str, str]]:
    return [(str(r["_id"]), visible(str(r.get("origname", ""))[:80])) for r in records]


def _label(document: dict[str, Any]) -> str:
    text = next((v for k, v in document.items() if not k.startswith("_")
                 and isinstance(v, str)), "")
    return visible(text[:80])


async def choices(console: Console, specs: list[FieldSpec]) -> dict[str, list[tuple[str, str]]]:
    """``{field: [(id, label), ...]}`` for the lookup, image and file fields of ``specs``."""
    found: dict[str, list[tuple[str, str]]] = {}
    media: dict[FieldType, list[tuple[str, str]]] = {}
    for spec in specs:
        if spec.type in (FieldType.IMAGE, FieldType.FILE):
            if spec.type not in media:
                media[spec.type] = _media_choices(await console.database.media.find(
                    query=Query(filter=_media_filter(spec.type), sort=NEWEST_FIRST,
                                limit=CHOICES), principal=console.principal))
            found[spec.name] = media[spec.type]
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
    text = _searched(request)
    found = []
    if text:
        documents = await target.find(query=Query(
            filter=Or((Eq(("_id",), text), Text(text))), limit=FOUND))
        found = [{"id": str(d["_id"]), "label": _label(d)} for d in documents]
    return _answer(found)


@get(console_paths("/pick-media/{kind:str}"))
async def search_media(request: HttpRequest, kind: FromPath[str]) -> Response[Any]:
    """``GET /_/pick-media/<image|file>?text=T``: media files to pick, as JSON."""
    console = await signed_in(request)
    if kind not in MEDIA_KINDS:
        raise NotFound(f"no media search {kind!r}: image or file")
    text = _searched(request)
    found: list[tuple[str, str]] = []
    if text:
        found = _media_choices(await console.database.media.find(
            query=Query(filter=_media_filter(MEDIA_KINDS[kind], text), sort=NEWEST_FIRST,
                        limit=FOUND), principal=console.principal))
    return _answer([{"id": i, "label": label} for i, label in found])


PICKER_HANDLERS = [search, search_media]
