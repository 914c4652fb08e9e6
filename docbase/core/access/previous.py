"""The documents an update or delete finds, kept for the subscribers of a ruled collection.

Who may hear of a change to a collection with access rules depends on the document:
a subscriber whose read scope held a document before an update, and not after it,
receives a ``delete`` of it; a ``delete`` reaches only the subscribers that could read
the deleted document (:mod:`docbase.core.changes.readable`). Both need the document as
it was, which only the write can know: :class:`RememberPrevious`, the write stage right
before the store, reads the documents an update or delete is about into
:attr:`~docbase.core.events.Write.previous` (only the fields the read scope reads), and
the change event carries them. Writes of collections without rules read nothing more.
"""

from __future__ import annotations

from docbase.core.access.rules import AccessRules
from docbase.core.access.scope import CREATOR
from docbase.core.access.visible import rules_of
from docbase.core.access.where import where_filter
from docbase.core.documents import Document
from docbase.core.errors import NotFound
from docbase.core.events import DeleteIds, DeleteWhere, Insert, UpdateDocument, WriteEvent
from docbase.core.parents import scoped
from docbase.core.ports import DocumentStore
from docbase.core.projection import project
from docbase.core.query import In, Path, Projection, Query
from docbase.core.schema.enforcing import filter_paths
from docbase.core.schema.stored_schemas import SchemaRegistry


class RememberPrevious:
    """The write stage keeping the documents an update or delete of a ruled collection finds."""

    name = "previous"

    def __init__(self, schemas: SchemaRegistry, store: DocumentStore) -> None:
        self.schemas = schemas
        self.store = store

    async def __call__(self, write: WriteEvent) -> None:
        """Read the documents ``write`` is about into ``write.previous``."""
        rules = None if isinstance(write, Insert) else await rules_of(self.schemas,
                                                                      write.collection)
        if rules is None:
            return
        projection = decisive_fields(rules)
        match write:
            case UpdateDocument() | DeleteIds() if len(write.ids) == 1:
                write.previous = await self._one(write, projection)
                return
            case UpdateDocument() | DeleteIds():
                filter = scoped(In(("_id",), tuple(write.ids)), write.parent)
            case DeleteWhere():
                filter = scoped(write.filter, write.parent)
        write.previous = await self.store.find(write.collection, Query(
            filter=filter, limit=None, projection=projection))

    async def _one(self, write: WriteEvent, projection: Projection | None) -> list[Document]:
        """The one document a write names, by the store's point read.

        (A find of one id cost an update of a ruled collection 10 ms on SQLite, ten times
        the rest of the write: its statement is built anew each time.)
        """
        try:
            document = await self.store.get(write.collection, write.ids[0])
        except NotFound:
            return []
        if write.parent is not None and not write.parent.holds(document):
            return []
        return [document if projection is None else project(document, projection)]


def decisive_fields(rules: AccessRules) -> Projection | None:
    """The fields the read scope of ``rules`` reads (``None``: all of them).

    Only these are kept of the documents before a write (``_id``, ``_createdby`` and the
    fields ``where.read`` names), so that a delete of many documents logs no more than
    the decision needs.
    """
    paths: set[Path] = {("_id",), CREATOR}
    if rules.where.read is not None:
        for path in filter_paths(where_filter(rules.where.read, None)):
            if path is None:  # a text search reads every field
                return None
            paths.add(path[:1])
    return Projection(tuple(sorted(paths)), True)
