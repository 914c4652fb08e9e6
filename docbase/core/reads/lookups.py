"""Lookup fields on the read side: which fields embed which collection, and who may query them.

A lookup field stores a copy of the documents it names (``docs/schema.md``). The copy is
shaped for each principal on the way out (:class:`~docbase.core.reads.road.ReadRoad`),
but a query can read it too: a filter, sort, group, aggregate, projection or text search
that looks inside ``buyer`` (anything but ``buyer._id``) would answer with, or be
ordered and counted by, what the copy holds. :class:`GuardLookupQueries` is the read
stage that lets such a query through only for a principal that may read the target
collection as a list (``GET /rest/<target>``).
"""

from __future__ import annotations

from collections.abc import Iterator

from docbase.core.auth.decision import Action, authorize
from docbase.core.errors import Forbidden
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
    """Every path a query reads (``None`` for a text search, which reads them all)."""
    yield from filter_paths(query.filter)
    yield from (key.path for key in query.sort)
    yield from query.groupby
    yield from (tuple(a.field.split(".")) for a in query.aggregates if a.field)
    if query.projection is not None:
        yield from query.projection.paths


def reads_inside(path: Path | None, field: str) -> bool:
    """Whether ``path`` reads the embedded copy of lookup ``field`` (not just its ids)."""
    return path is None or (path[0] == field and path != (field, "_id"))


class GuardLookupQueries:
    """The read stage refusing a query into a lookup copy the principal may not read."""

    name = "lookups"

    def __init__(self, schemas: SchemaRegistry) -> None:
        self.schemas = schemas

    async def __call__(self, read: ReadEvent) -> None:
        """Raise ``Forbidden`` for a list read whose query reads an unreadable lookup."""
        if read.query is None:
            return
        targets = await lookup_targets(self.schemas, read.collection)
        if not targets:
            return
        paths = list(query_paths(read.query))
        for field, target in targets:
            if not any(reads_inside(path, field) for path in paths):
                continue
            try:
                authorize(read.principal, Action("GET", f"/rest/{target}"))
            except Forbidden:
                raise Forbidden(f"a query into the lookup field {field!r} needs GET "
                                f"/rest/{target}; query it by {field}._id only") from None
