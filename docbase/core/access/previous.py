"""The documents an update or delete finds, kept for the subscribers of a ruled collection.

Who may hear of a change to a collection with access rules depends on the document:
a subscriber whose read scope held a document before an update, and not after it,
receives a ``delete`` of it; a ``delete`` reaches only the subscribers that could read
the deleted document (:mod:`docbase.core.changes.readable`). Both need the document as
it was, which only the write can know: :class:`RememberPrevious`, the write stage right
before the store, reads the documents an update or delete is about into
:attr:`~docbase.core.events.Write.previous`, and the change event carries them. Writes
of collections without rules read nothing more.
"""

from __future__ import annotations

from docbase.core.access.reading import rules_of
from docbase.core.events import DeleteIds, DeleteWhere, Insert, UpdateDocument, WriteEvent
from docbase.core.parents import scoped
from docbase.core.ports import DocumentStore
from docbase.core.query import In, Query
from docbase.core.schema.stored_schemas import SchemaRegistry


class RememberPrevious:
    """The write stage keeping the documents an update or delete of a ruled collection finds."""

    name = "previous"

    def __init__(self, schemas: SchemaRegistry, store: DocumentStore) -> None:
        self.schemas = schemas
        self.store = store

    async def __call__(self, write: WriteEvent) -> None:
        """Read the documents ``write`` is about into ``write.previous``."""
        if isinstance(write, Insert) or await rules_of(self.schemas, write.collection) is None:
            return
        match write:
            case UpdateDocument() | DeleteIds():
                filter = scoped(In(("_id",), tuple(write.ids)), write.parent)
            case DeleteWhere():
                filter = scoped(write.filter, write.parent)
        write.previous = await self.store.find(write.collection,
                                               Query(filter=filter, limit=None))
