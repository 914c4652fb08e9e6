"""Lookup fields on the read side: which fields name which collection, and how they are queried.

A lookup field stores only the ids it names; the documents are resolved when read, for
the reader (:mod:`.resolving`). So a filter, sort, group or aggregate can read a lookup
by its ids (``buyer._id``) and nothing else: anything deeper (``buyer.name``) would be
answered from storage, which holds no names, and :class:`GuardLookupQueries` refuses it
as an :class:`~docbase.core.errors.InvalidQuery` naming the field. A projection may
reach inside (``$fields: {"buyer.name": 1}``): it shapes the resolved documents. A text
search reads every stored field, so a document stored before lookups kept only ids may
still hold a copy there: it needs the target collection as a list (``GET
/rest/<target>``), as it always did.
"""

from __future__ import annotations

from collections.abc import Iterator

from docbase.core.auth.decision import Action, authorize
from docbase.core.errors import Forbidden, InvalidQuery
from docbase.core.events import ReadEvent
from docbase.core.names import is_user_collection
from docbase.core.query import Path, Query
from docbase.core.schema.enforcing import filter_paths
from docbase.core.schema.model import FieldType
from docbase.core.schema.stored_schemas import SchemaRegistry


async def lookup_targets(schemas: SchemaRegistry, collection: str) -> list[tuple[str, str]]:
    """The ``(field, target collection)`` of each lookup field of ``collection``."""
    if not is_user_collection(collection):
        return []
    schema = await schemas.get(collection)
    if schema is None:
        return []
    return [(spec.name, spec.collection or "") for spec in schema.of_type(FieldType.LOOKUP)]


def query_paths(query: Query) -> Iterator[Path | None]:
    """Every path a query matches, orders or counts by (``None`` for a text search).

    Not the projection's, which shapes the answer after the lookups are resolved.
    """
    yield from filter_paths(query.filter)
    yield from (key.path for key in query.sort)
    yield from query.groupby
    yield from (tuple(a.field.split(".")) for a in query.aggregates if a.field)


def reads_inside(path: Path, field: str) -> bool:
    """Whether ``path`` reads lookup ``field`` beyond its ids (what storage does not hold)."""
    return path[0] == field and len(path) > 1 and path != (field, "_id")


class GuardLookupQueries:
    """The read stage refusing a query into a lookup beyond its ids (see the module)."""

    name = "lookups"

    def __init__(self, schemas: SchemaRegistry) -> None:
        self.schemas = schemas

    async def __call__(self, read: ReadEvent) -> None:
        """Raise ``InvalidQuery`` or ``Forbidden`` for a list read the lookups cannot answer."""
        if read.query is None:
            return
        targets = await lookup_targets(self.schemas, read.collection)
        if not targets:
            return
        paths = list(query_paths(read.query))
        for field, target in targets:
            if any(path is not None and reads_inside(path, field) for path in paths):
                raise InvalidQuery(f"the lookup field {field!r} stores only ids: query it "
                                   f"by {field}._id, or query {target!r} itself")
            if None not in paths:
                continue
            try:
                authorize(read.principal, Action("GET", f"/rest/{target}"))
            except Forbidden:
                raise Forbidden(f"a text search over the lookup field {field!r} needs GET "
                                f"/rest/{target}") from None
