"""The change feed as one principal may see it: one rule for every subscriber.

:class:`ReadableChanges` decides, for one principal, what it sees of each entry of the
change log; ``GET /realtime``, the console's stream and the library's principal feeds
(:class:`ReadableFeed`: ``db.changes_for(principal)``, ``collection.changes()``) all
ask it, so none of them reveals a collection another would hide:

- the events of a collection reach the principal when it may ``GET /rest/C`` (a system
  collection needs a full-access principal, as for ``/rest``), decided by
  :func:`~docbase.core.auth.authorize`;
- a collection whose read stages refuse a list read (strict mode without its schema, a
  ``beforeGET`` hook raising) sends nothing; a ``beforeGET`` hook that narrows the
  query narrows the ``post`` and ``put`` events to the documents its filter matches
  (``docbase.core.evaluate.matches``, the reference semantics every adapter is held
  to), shaped by its fields (projection) if it sets some. A ``delete`` carries ids
  only, so it is sent as it is;
- the access rules of a collection (:mod:`docbase.core.access`) narrow the same query
  (read scope, hidden fields); a change of a collection with rules carries the
  documents as they were before it (``previous``), so a ``delete`` reaches only those
  who could read a deleted document, and an update that takes a document out of the
  principal's scope reaches it as a ``delete`` of that id;
- the lookups of a ``post`` or ``put`` event are resolved for the principal, an item
  whose target it may not read being its bare ``_id`` (the
  :class:`~docbase.core.reads.ReadRoad`).

Each collection's answer is asked once per stream (the hooks run once, not per event).
The unscoped ``db.changes`` stays for system code: jobs, hooks, webhooks, exports.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Sequence
from typing import TYPE_CHECKING

import msgspec

from docbase.core.auth import Action, Principal, authorize
from docbase.core.changes.entries import EVENT_NAMES, Change
from docbase.core.documents import Document
from docbase.core.errors import Forbidden
from docbase.core.evaluate import matches
from docbase.core.events import Operation, ReadEvent
from docbase.core.names import is_user_collection
from docbase.core.projection import project
from docbase.core.query import MATCH_ALL, Query

if TYPE_CHECKING:
    from docbase.core.changes.feed import ChangeFeed
    from docbase.core.reads import ReadRoad


class ReadableChanges:
    """Each change as one principal may see it (see the module): decided once per collection.

    Without a ``road`` only the authorization is asked (the console's list of recent
    changes, which shows no documents).
    """

    def __init__(self, principal: Principal, origin: str | None,
                 road: ReadRoad | None = None) -> None:
        self.principal = principal
        self.origin = origin
        self.road = road
        self._decided: dict[str, bool] = {}
        self._narrowed: dict[str, Query | None] = {}

    def readable(self, collection: str) -> bool:
        """Tell whether the principal may read ``collection``'s events."""
        allowed = self._decided.get(collection)
        if allowed is None:
            try:
                authorize(self.principal, Action("GET", f"/rest/{collection}",
                                                 origin=self.origin,
                                                 system=not is_user_collection(collection)))
                allowed = True
            except Forbidden:
                allowed = False
            self._decided[collection] = allowed
        return allowed

    async def narrowing(self, road: ReadRoad, collection: str) -> Query | None:
        """The query the read stages leave of a list read of ``collection`` (``None``: refused)."""
        if collection not in self._narrowed:
            read = await road.admitted(ReadEvent(collection, self.principal,
                                                 query=Query(limit=None)))
            self._narrowed[collection] = None if read is None else read.query
        return self._narrowed[collection]

    async def __call__(self, change: Change) -> Change | None:
        """``change`` as the principal sees it, or ``None`` when it sees none of it."""
        if change.collection is None:
            return change
        if not self.readable(change.collection):
            return None
        if self.road is None:
            return change
        narrowing = await self.narrowing(self.road, change.collection)
        if narrowing is None:
            return None
        if change.previous:
            return await self._ruled(self.road, change, narrowing)
        if not change.documents:
            return change
        kept = (change.documents if narrowing.filter == MATCH_ALL
                else [d for d in change.documents if matches(narrowing.filter, d)])
        if not kept:
            return None
        return await self._shown(self.road, change, narrowing, kept)

    async def _ruled(self, road: ReadRoad, change: Change, narrowing: Query) -> Change | None:
        """A change of a collection with access rules, which carries the documents before.

        A ``delete`` keeps the ids the principal could read; a ``put`` of a document it
        could read before and not after is a ``delete`` of it; ``previous`` never leaves.
        """
        before = {d["_id"] for d in change.previous if matches(narrowing.filter, d)}
        if not change.documents:
            ids = tuple(i for i in change.ids if i in before)
            return msgspec.structs.replace(change, ids=ids, previous=()) if ids else None
        kept = [d for d in change.documents if matches(narrowing.filter, d)]
        if kept:
            return await self._shown(road, change, narrowing, kept)
        left = tuple(d["_id"] for d in change.documents if d["_id"] in before)
        if not left:
            return None
        return msgspec.structs.replace(change, event=EVENT_NAMES[Operation.DELETE],
                                       method="DELETE", ids=left, documents=(), previous=())

    async def _shown(self, road: ReadRoad, change: Change, narrowing: Query,
                     kept: Sequence[Document]) -> Change:
        """``change`` with only the ``kept`` documents, shaped for the principal."""
        documents = [dict(d) if narrowing.projection is None
                     else project(d, narrowing.projection) for d in kept]
        await road.shape(change.collection or "", self.principal, documents)
        if documents == list(change.documents) and not change.previous:
            return change  # the very object: its rendered events are shared
        ids = tuple(d["_id"] for d in kept)  # a post's and a put's ids are its documents'
        return msgspec.structs.replace(change, documents=tuple(documents), ids=ids,
                                       previous=())


class ReadableFeed:
    """``db.changes`` as one principal may see it, each entry through :class:`ReadableChanges`."""

    def __init__(self, feed: ChangeFeed, road: ReadRoad, principal: Principal,
                 origin: str | None = None) -> None:
        self.feed = feed
        self.road = road
        self.principal = principal
        self.origin = origin

    def __call__(self, collection: str | None = None, *,
                 since: int | None = None) -> AsyncIterator[Change]:
        """Iterate over the entries after ``since`` the principal may see (see ``db.changes``).

        Custom events (``POST /realtime``) reach every subscriber, as on ``/realtime``.

        Raises:
            BackendError: the store failed while catching up from ``since``.

        """
        return self._changes(collection, since)

    async def _changes(self, collection: str | None, since: int | None,
                       ) -> AsyncIterator[Change]:
        seen = ReadableChanges(self.principal, self.origin, self.road)
        async for change in self.feed(collection, since=since):
            shown = await seen(change)
            if shown is not None:
                yield shown
