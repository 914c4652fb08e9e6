"""Parents and children: child views, their scope, relation records, embedding.

A child document is an ordinary document of the subcollection's collection carrying
``_parent_id``, ``_parent_def`` and ``_parent_field``. Which parent collections have
which child fields is recorded in the system collection :data:`RELATIONS`, so that
deleting a parent can find its children (the cascade) and ``fetchchildren`` can embed
them (:mod:`docbase.core.reads`, through the child collection's read stages), in every
process sharing the storage.
"""

from __future__ import annotations

import hashlib

from docbase.core.errors import Conflict, NotFound
from docbase.core.parents import ParentRef
from docbase.core.ports import DocumentStore
from docbase.core.query import Eq, Query

RELATIONS = "_relations"
"""System collection recording which parent collections have which child fields."""


def relation_id_of(parent: str, field: str) -> str:
    """The ``_id`` of the relation record of ``parent``'s child field ``field``."""
    return hashlib.sha1(f"{parent}\0{field}".encode()).hexdigest()[:24]


class Relations:
    """The relation records of one database, with a per-process memo of known ones."""

    def __init__(self, store: DocumentStore) -> None:
        self.store = store
        self._known: set[tuple[str, str]] = set()

    async def child_fields(self, collection: str) -> list[str]:
        """The child fields (subcollections) recorded for a parent collection."""
        rows = await self.store.find(
            RELATIONS, Query(filter=Eq(("parent",), collection), limit=None)
        )
        return sorted(row["field"] for row in rows)

    async def record(self, parent: ParentRef) -> None:
        """Record that ``parent.collection`` has the child field ``parent.field``.

        Raises:
            NotFound: the parent document does not exist.

        """
        await self.store.get(parent.collection, parent.document_id)
        pair = (parent.collection, parent.field)
        if pair in self._known:
            return
        relation_id = relation_id_of(*pair)
        try:
            await self.store.get(RELATIONS, relation_id)
        except NotFound:
            relation = {"_id": relation_id, "parent": pair[0], "field": pair[1]}
            try:
                await self.store.insert(RELATIONS, [relation])
            except Conflict:  # another writer recorded it first
                await self.store.get(RELATIONS, relation_id)
        self._known.add(pair)
