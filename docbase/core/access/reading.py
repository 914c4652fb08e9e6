"""The read stage of access rules: the read scope and hidden fields, put into the query.

:class:`ApplyAccessRules` runs last among the read stages (after the ``beforeGET``
hooks, so that no hook can widen it). For a principal the collection's rules limit
(:func:`~docbase.core.access.scope.limited`) it

- refuses (403) a principal none of whose roles may read the collection, and answers
  a child path whose parent document lies outside the parent collection's read scope
  as a missing parent (404);
- refuses (403) a query naming a field the principal may not read: in the filter, a
  sort (and so a cursor), ``$fields`` (which :func:`query_paths` leaves out: it shapes
  the answer once lookups are resolved), a group or an aggregate, or a text search
  (which reads every field);
- ANDs the read scope into a list read's filter and excludes the hidden fields in its
  projection, so the store itself selects and shapes: lists, counts, totals, groups,
  aggregates, cursors, exports and embedded children all follow;
- gives a read of one document the same filter and projection as
  :attr:`~docbase.core.events.ReadEvent.within`, which the read of that document
  applies (a document outside it is not found).
"""

from __future__ import annotations

import msgspec

from docbase.core.access.scope import limited, read_scope
from docbase.core.access.visible import read_view, rules_of
from docbase.core.auth.principal import Principal
from docbase.core.documents import Document
from docbase.core.errors import Forbidden, NotFound
from docbase.core.evaluate import matches
from docbase.core.events import ReadEvent
from docbase.core.parents import ParentRef
from docbase.core.ports import DocumentStore
from docbase.core.query import MATCH_ALL, And, Filter, Projection, Query
from docbase.core.reads.lookups import query_paths
from docbase.core.schema.stored_schemas import SchemaRegistry


async def require_readable_parent(schemas: SchemaRegistry, store: DocumentStore,
                                  principal: Principal, parent: ParentRef | None) -> None:
    """Refuse a child path whose parent document the principal may not read.

    Raises:
        Forbidden: the principal may not read the parent collection at all.
        NotFound: the parent lies outside its read scope (as a missing parent).

    """
    if parent is None or not limited(principal):
        return
    rules = await rules_of(schemas, parent.collection)
    if rules is None:
        return
    scope = read_scope(rules, principal, parent.collection)
    await stored_within(store, parent.collection, parent.document_id, scope)


async def stored_within(store: DocumentStore, collection: str, document_id: str,
                        scope: Filter) -> Document:
    """The stored document ``document_id``, if it lies within ``scope``.

    Read by id (the store's point read) and held up to the scope: compiling id AND
    scope into a store query cost 5 to 30 times the point read (docs/benchmarks.md).

    Raises:
        NotFound: no such document, or it lies outside ``scope``.

    """
    document = await store.get(collection, document_id)
    if scope != MATCH_ALL and not matches(scope, document):
        raise NotFound(f"no document {document_id} in {collection!r}")
    return document


def hidden_projection(projection: Projection | None,
                      hidden: tuple[str, ...]) -> Projection | None:
    """``projection`` leaving out the ``hidden`` fields too."""
    if not hidden or (projection is not None and projection.include):
        return projection
    paths = () if projection is None else projection.paths
    return Projection((*paths, *((name,) for name in hidden)), False)


def within(filter: Filter, scope: Filter) -> Filter:
    """``filter`` limited to ``scope``."""
    if scope == MATCH_ALL:
        return filter
    return scope if filter == MATCH_ALL else And((filter, scope))


def check_paths(query: Query, hidden: tuple[str, ...], collection: str) -> None:
    """Refuse a query that names (or text-searches) a field hidden from the principal.

    Raises:
        Forbidden: it does.

    """
    if not hidden:
        return
    shaped = () if query.projection is None else query.projection.paths
    for path in (*query_paths(query), *shaped):
        if path is None:
            raise Forbidden(f"a text search reads fields of {collection!r} this principal "
                            f"may not read; query named fields")
        if path and path[0] in hidden:
            raise Forbidden(f"the field {path[0]!r} of {collection!r} may not be read "
                            f"by this principal")


class ApplyAccessRules:
    """The read stage putting a collection's access rules into the read."""

    name = "access"

    def __init__(self, schemas: SchemaRegistry, store: DocumentStore) -> None:
        self.schemas = schemas
        self.store = store

    async def __call__(self, read: ReadEvent) -> None:
        """Limit ``read`` to what its principal may read, or refuse it (``Forbidden``)."""
        if not limited(read.principal):
            return
        await require_readable_parent(self.schemas, self.store, read.principal, read.parent)
        view = await read_view(self.schemas, read.principal, read.collection)
        if view is None:
            return
        scope, hidden = view
        if read.query is not None:
            check_paths(read.query, hidden, read.collection)
            read.query = msgspec.structs.replace(
                read.query, filter=within(read.query.filter, scope),
                projection=hidden_projection(read.query.projection, hidden))
        else:
            read.within = Query(filter=scope, limit=1,
                                projection=hidden_projection(None, hidden))
