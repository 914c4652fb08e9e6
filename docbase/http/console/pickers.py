"""What a lookup, image or file field of the document editor offers to pick from.

An image or file field offers the newest files of the media archive (their id, shown
with the file name); a lookup field offers documents of its target collection (their
id, shown with the first text field). The browser lists them under the input as the
administrator types, matching the id or the label. Both are read as ``/rest`` and
``/media`` read them, as the signed-in administrator.
"""

from __future__ import annotations

from typing import Any

from docbase.core.query import Query
from docbase.core.schema.model import FieldSpec, FieldType
from docbase.http.console.guard import Console
from docbase.http.console.rendering import visible

CHOICES = 200
"""How many files or documents a picker offers."""


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
