"""What a console URL under ``/_/c/`` points at: a collection, a document, an action.

``/_/c/people`` is a collection, ``/_/c/people/ID`` one of its documents,
``/_/c/people/ID/notes`` the children of that document in its child field ``notes``,
``/_/c/people/ID/notes/CID`` one child, and so on. A final ``_new`` (after a
collection) or ``_delete`` (after a document, or after a collection: delete by query)
names the form that creates or deletes, and ``_edit`` (after a collection) the bulk edit
of ticked documents:
no user collection, field or id starts with ``_``, so these cannot be mistaken for one.
The collection objects are the ones ``/rest`` uses, with their read and write pipeline.
"""

from __future__ import annotations

from typing import Any, Literal
from urllib.parse import quote

from docbase.core.auth import Principal
from docbase.core.collection import Collection
from docbase.core.database import Database
from docbase.core.errors import NotFound

Action = Literal["view", "new", "delete", "edit"]
_ACTIONS: dict[str, Action] = {"_new": "new", "_delete": "delete", "_edit": "edit"}


class Target:
    """The collection (perhaps a child collection), document and action of a URL."""

    __slots__ = ("action", "document_id", "parts")

    def __init__(self, path: str) -> None:
        parts = [p for p in path.split("/") if p]
        self.action: Action = _ACTIONS.get(parts[-1], "view") if parts else "view"
        if self.action != "view":
            parts.pop()
        collection_level = len(parts) % 2 == 1
        if not parts or (self.action in ("new", "edit") and not collection_level):
            raise NotFound("no such console page")
        self.document_id: str | None = parts[-1] if len(parts) % 2 == 0 else None
        self.parts = parts
        """The path's segments, without the action."""

    @property
    def collection_parts(self) -> list[str]:
        """The segments naming the collection (the document id left out)."""
        return self.parts if self.document_id is None else self.parts[:-1]

    def collection(self, database: Database, principal: Principal) -> Collection:
        """The collection this URL is about, acting as ``principal``."""
        names = self.collection_parts
        collection = database.collection(names[0], principal)
        for index in range(1, len(names), 2):
            collection = collection.children(names[index], names[index + 1])
        return collection

    @property
    def collection_path(self) -> str:
        """The collection's path below ``/_/c/`` (and below ``/rest/``)."""
        return "/".join(quote(p, safe="") for p in self.collection_parts)

    @property
    def path(self) -> str:
        """The path below ``/_/c/`` of the collection or document, without the action."""
        return "/".join(quote(p, safe="") for p in self.parts)

    def crumbs(self) -> list[dict[str, Any]]:
        """Each level of the path with its own URL below ``/_/c/``, for the breadcrumb."""
        return [{"label": part, "path": "/".join(quote(p, safe="") for p in self.parts[:i + 1])}
                for i, part in enumerate(self.parts)]
