"""Automatic indexes: a path that queries keep needing gets the index ``index: true`` gives.

An equality sorted on another path gets a composite index of the two (:mod:`.indexes`);
an equality on a path that meets arrays, an item index (:mod:`.item_indexes`).

A find with a limit whose equality or range condition (or, without one, whose order)
rests on a path without an index parses every document of the collection. :class:`AutoIndexer`
counts such finds per collection and path (:meth:`AutoIndexer.unserved`, called on the
event loop after the find). When ``AutoIndexing.queries`` of them come within
``AutoIndexing.window`` seconds, a background task (never the request's) creates the
path's indexes with the store's own ``ensure_index`` (:mod:`.indexes`), one at a time
per store:

- only a collection of at most ``AutoIndexing.max_documents`` documents: building the
  index holds SQLite's write lock (on PostgreSQL, the table's writes) until it is done;
  above the cap the log asks for ``index: true`` instead;
- the count is per process, the index is in the database: the registry
  (``docbase_indexes``) and ``ensure_index``'s check make a second process's attempt a
  no-op, and a race between two (a registry row inserted twice) ends with the index
  made by one of them;
- :class:`.IndexedPaths` of this store forgets what it knew at once; other processes
  see the index within its ``FRESH_SECONDS``.

A line is logged per index made (collection and path, never values).
"""

from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import Awaitable, Callable

from docbase.adapters.sql.indexes import Composite, Indexed, Items
from docbase.adapters.sql.pages import compared_paths, equal_paths, seek_equality
from docbase.core.query import Query
from docbase.core.settings import AutoIndexing

logger = logging.getLogger("docbase.sql")

_TRACKED = 10_000  # counters kept at most (all dropped when full)


def wanted_paths(query: Query) -> list[Indexed]:
    """The paths (and composites) an index would serve ``query`` on, the most useful first.

    The paths of its equality and range conditions (an index seeks to the matches),
    then its leading sort (an index walks the order), then, for an equality on another
    path than the sort's, the :class:`.Composite` of the two (a page of the matches is
    read in order, :mod:`.pages`). ``_id`` is the table's key and never wanted alone;
    the other fields docbase sets (``_created``, ``_createdby``, ...) are stored in the
    body like any field, and newest-first or per-owner lists need them. Only finds with
    a limit count: a whole-collection read gains little from an index.
    """
    if query.limit is None:
        return []
    compared = compared_paths(query.filter)
    paths = [*compared, *([query.sort[0].path] if query.sort else [])]
    wanted: list[Indexed] = [path for path in dict.fromkeys(paths)
                             if path and path != ("_id",)]
    equal = seek_equality(query.filter, compared)
    if query.sort and equal is not None and equal != query.sort[0].path:
        wanted.append(Composite(equal, query.sort[0].path, query.sort[0].direction == -1))
    # last: made only where the path meets arrays (.item_indexes), else tried again later
    wanted.extend(Items(path) for path in dict.fromkeys(equal_paths(query.filter))
                  if path != ("_id",))
    return wanted


class AutoIndexer:
    """Counts unserved finds per collection and path; indexes a path past the threshold."""

    def __init__(self, policy: AutoIndexing,
                 size: Callable[[str], Awaitable[int]],
                 create: Callable[[str, Indexed], Awaitable[bool]],
                 created: Callable[[], None]) -> None:
        """Index by ``policy``; ``size`` counts a collection, ``create`` indexes a path.

        ``create`` says whether it made the index (not: another process had);
        ``created`` is called after each attempt (the store's indexed-path cache forgets).
        """
        self.policy = policy
        self._size = size
        self._create = create
        self._created = created
        self._counts: dict[tuple[str, Indexed], tuple[float, int]] = {}
        self._settled: dict[tuple[str, Indexed], float] = {}  # made, or found too large
        self._lock = asyncio.Lock()  # one index at a time
        self._tasks: set[asyncio.Task[None]] = set()

    def unserved(self, collection: str, path: Indexed) -> None:
        """Count a find on ``path`` that no index served; index it past the threshold."""
        key = (collection, path)
        now = time.monotonic()
        settled = self._settled.get(key)
        if settled is not None and now - settled < self.policy.window:
            return
        start, count = self._counts.get(key, (now, 0))
        if now - start > self.policy.window:
            start, count = now, 0
        count += 1
        if count < self.policy.queries:
            if len(self._counts) >= _TRACKED:
                self._counts.clear()
            self._counts[key] = (start, count)
            return
        self._counts.pop(key, None)
        if len(self._settled) >= _TRACKED:
            self._settled.clear()
        self._settled[key] = now  # no second task while this one runs
        task = asyncio.get_running_loop().create_task(self._index(collection, path))
        self._tasks.add(task)
        task.add_done_callback(self._tasks.discard)

    async def _index(self, collection: str, path: Indexed) -> None:
        field = str(path) if isinstance(path, Composite | Items) else ".".join(path)
        async with self._lock:
            try:
                size = await self._size(collection)
                if size > self.policy.max_documents:
                    logger.warning(
                        "collection %r is often queried by %r without an index, but holds "
                        "%d documents (over limits.auto_index_max_documents, %d): declare "
                        "the field with index: true", collection, field, size,
                        self.policy.max_documents)
                else:
                    began = time.monotonic()
                    if await self._create(collection, path):
                        logger.info("created an index on %r of collection %r automatically "
                                    "(%.2f s, %d documents)", field, collection,
                                    time.monotonic() - began, size)
                self._settled[(collection, path)] = time.monotonic()
            except Exception:  # e.g. the database is unavailable; later finds count again
                logger.exception("could not index %r of collection %r automatically",
                                 field, collection)
                self._settled.pop((collection, path), None)
            finally:
                self._created()

    def forget(self, collection: str) -> None:
        """Start afresh on ``collection`` (it was dropped, its indexes with it)."""
        for known in (self._counts, self._settled):
            for key in [key for key in known if key[0] == collection]:
                del known[key]

    async def idle(self) -> None:
        """Wait until the indexes being made are done (for tests and for closing)."""
        while self._tasks:
            await asyncio.gather(*self._tasks, return_exceptions=True)
