"""Fields the read stages hide stay hidden from queries, not only from the documents.

A ``beforeGET`` hook hides fields by giving the read a projection that leaves them out
(``docs/hooks.md``). The documents then come without them, but a query could still
reach their values another way: sorted by a hidden field, a page's cursor carries its
value (``docbase.core.paging``); an aggregate (``MAX:salary``), a group, a filter (``q``)
or a count answers or narrows by it. :class:`RefuseHiddenFields` wraps the hook stage:
when the stages changed the projection, a query that names, in its filter, sort, cursor,
groups or aggregates, a field the resulting projection hides is refused as
:class:`~docbase.core.errors.Forbidden` (403, as for a field a principal may not read).
A text search, which reads every field, is refused too. What the hooks themselves add
(a filter on the hidden field, say) is theirs and stays. Password fields are refused in
queries by the store (:mod:`docbase.core.schema.enforcing`) and never stored readable.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Iterator

from docbase.core.errors import Forbidden
from docbase.core.events import ReadEvent
from docbase.core.query import Path, Projection, Query
from docbase.core.reads.lookups import query_paths


def _overlap(path: Path, other: Path) -> bool:
    """Whether one path lies inside the other (a sort by ``a`` reads ``a.b`` too)."""
    common = min(len(path), len(other))
    return path[:common] == other[:common]


def hides(projection: Projection | None, path: Path) -> bool:
    """Whether the answer shaped by ``projection`` leaves out (part of) ``path``."""
    if projection is None or not path or path[0] == "_id":
        return False
    if projection.include:
        return not any(_overlap(path, shown) and len(shown) <= len(path)
                       for shown in projection.paths)
    return any(_overlap(path, dropped) for dropped in projection.paths)


def asked_paths(query: Query) -> Iterator[Path | None]:
    """Every path a query names to filter, order, page, group or aggregate by."""
    yield from query_paths(query)
    if query.after is not None:
        yield from (key.path for key in query.after.sort)


class RefuseHiddenFields:
    """The ``beforeGET`` hook stage, refusing a query by a field the hooks hide."""

    def __init__(self, hooks: Callable[[ReadEvent], Awaitable[None]], name: str) -> None:
        self.hooks = hooks
        self.name = name

    async def __call__(self, read: ReadEvent) -> None:
        """Run the hooks; raise ``Forbidden`` when the asked query names what they hide."""
        asked = read.query
        await self.hooks(read)
        answered = read.query
        if asked is None or answered is None or answered.projection == asked.projection:
            return
        for path in asked_paths(asked):
            if path is None:
                raise Forbidden(f"a text search is not available on {read.collection!r}: "
                                "it would read fields this read hides")
            if hides(answered.projection, path):
                raise Forbidden(f"the field {'.'.join(path)!r} is hidden from this read: "
                                "it cannot be queried, sorted, grouped or aggregated")
