"""The parent a child document belongs to, and the filters that select children.

A child document is an ordinary document of the subcollection's collection carrying
``_parent_id``, ``_parent_def`` and ``_parent_field``. :class:`ParentRef` names one
parent (a child view is bound to it, a write through that view carries it); the
relation records and embedding that use it live in :mod:`docbase.core.relations`.
"""

from __future__ import annotations

from collections.abc import Sequence

import msgspec

from docbase.core.documents import Document
from docbase.core.query import MATCH_ALL, And, Eq, Filter, In


class ParentRef(msgspec.Struct, frozen=True):
    """The parent a child collection view is bound to."""

    collection: str
    document_id: str
    field: str

    def scope(self, filter: Filter = MATCH_ALL) -> Filter:
        """``filter`` limited to the children of this parent."""
        own = (Eq(("_parent_id",), self.document_id), Eq(("_parent_def",), self.collection))
        return And(own if filter == MATCH_ALL else (*own, filter))

    def holds(self, document: Document) -> bool:
        """Tell whether ``document`` is a child of this parent."""
        return (document.get("_parent_id") == self.document_id
                and document.get("_parent_def") == self.collection)

    def stamp(self) -> tuple[str, str, str]:
        """The ``(_parent_id, _parent_def, _parent_field)`` a new child carries."""
        return self.document_id, self.collection, self.field


def scoped(filter: Filter, parent: ParentRef | None) -> Filter:
    """``filter`` limited to ``parent``'s children (unchanged without a parent)."""
    return filter if parent is None else parent.scope(filter)


def children_of(collection: str, ids: Sequence[str]) -> Filter:
    """The filter selecting the children of documents ``ids`` of ``collection``."""
    return And((In(("_parent_id",), tuple(ids)), Eq(("_parent_def",), collection)))


def rest_path(collection: str, parent: ParentRef | None, *tail: str) -> str:
    """The ``/rest`` path (relative to the base URL) an operation stands for."""
    base = (f"/rest/{collection}" if parent is None
            else f"/rest/{parent.collection}/{parent.document_id}/{parent.field}")
    return "/".join((base, *tail))


def where_stored(parent: ParentRef | None) -> tuple[ParentRef | None, ...]:
    """The parents an operation is authorized under: a child path's, then none.

    The documents of a child path live in the child collection, so an operation there
    is also the same operation in that collection (``/rest/<child>``, ``/rest/<child>/ID``).
    """
    return (None,) if parent is None else (parent, None)
