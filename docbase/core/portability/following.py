"""Following a source's change log into a target store, until told to stop.

After ``docbase migrate`` copied a database (:mod:`.migrating`), :func:`follow` applies
each write the source logs from the archive's position on to the target, so the target
keeps up while servers still write to the source. Each pass reads the source log's last
number *before* reading entries, so when the reader has reached that number the target
holds every write acknowledged before the pass began: :func:`follow` reports this as
*caught up* (with the pass's position and time), which is how an operator knows the
switch-over lost nothing. Once ``stop`` is set, it goes on until it has caught up with
the log as it stood at that moment, then returns; writes acknowledged before ``stop``
was set are therefore all applied.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import Callable, Iterable

from docbase.core.changes.entries import Change
from docbase.core.changes.reader import LogReader
from docbase.core.documents import Document
from docbase.core.errors import Conflict, DocbaseError, NotFound
from docbase.core.ids import utc_now
from docbase.core.names import is_user_collection
from docbase.core.portability.capture import capturing
from docbase.core.portability.source import PortableDatabase
from docbase.core.query import In, Query
from docbase.core.relations import RELATIONS, relation_id_of

POLL_SECONDS = 0.2

CaughtUp = Callable[[int, str], None]
"""Told the position reached and the time (UTC, as stamped) the source's log was read at."""


class FollowOverrun(DocbaseError):
    """The source's change log was pruned past what the target has been given."""


async def follow(source: PortableDatabase, target: PortableDatabase, position: int, *,
                 stop: asyncio.Event | None = None,
                 applied: Callable[[Change], None] | None = None,
                 caught_up: CaughtUp | None = None) -> int:
    """Apply the source's writes after ``position`` to ``target`` until ``stop`` is set.

    Returns the position reached: the source log's last number when ``stop`` was seen,
    every write up to it applied. Without ``stop`` it runs until cancelled (a cancel
    may land between an entry's delete and insert on the target: set ``stop`` instead).

    The source logs writes only while a capture lease is held: hold one
    (:func:`~.capture.capturing`) from before the export that gave ``position``, so no
    write between the export and this call goes unlogged (``docbase migrate --follow``
    does). This call holds its own too, for as long as it runs.

    Raises:
        FollowOverrun: the source's log was pruned past the position reached (more
            writes behind than ``limits.change_max_entries``); migrate again.
        BackendError: a store failed.

    """
    stop = stop or asyncio.Event()
    relations = RelationCopier(source, target)
    log = source.changes.log
    async with capturing(source.store, source.auth_cache):
        reader = LogReader(log, position, grace=source.limits.change_gap_grace)
        while True:
            stopping = stop.is_set()
            read_at = utc_now()
            before = reader.position
            entries = await reader.read()
            # asked after the read: a prune landing before it or during it shows here
            last, pruned = await log.state()
            if pruned > before and not _read_through(entries, before, pruned):
                raise FollowOverrun(
                    f"the source's change log was pruned up to {pruned} while the target "
                    f"stood at {before}: run the migration again")
            for entry in entries:
                if entry.collection is not None and is_user_collection(entry.collection):
                    await apply_change(source, target, entry, relations)
                    if applied is not None:
                        applied(entry)
            if reader.position >= last:
                if caught_up is not None:
                    caught_up(reader.position, read_at)
                if stopping:
                    return reader.position
            if not entries:
                with contextlib.suppress(TimeoutError):
                    await asyncio.wait_for(stop.wait(), POLL_SECONDS)


def _read_through(entries: list[Change], before: int, pruned: int) -> bool:
    """Whether ``entries`` hold every number after ``before`` up to ``pruned``.

    The reader steps over numbers it finds pruned (as every reader of the log may); for
    follow each of them may be a write the target never gets.
    """
    wanted = pruned - before
    return [entry.seq for entry in entries[:wanted]] == list(range(before + 1, pruned + 1))


async def apply_change(source: PortableDatabase, target: PortableDatabase, entry: Change,
                       relations: RelationCopier | None = None) -> None:
    """Make ``target`` hold what one logged write of the source left.

    The written documents are read from the source's store in one find (the log never
    carries password hashes), and those still there replace the target's copies. The
    relation record of a child's field is copied the first time one is written.
    """
    assert entry.collection is not None
    name = entry.collection
    await target.documents.delete(name, list(entry.ids))
    if entry.event == "delete":
        return
    ids = tuple(str(document["_id"]) for document in entry.documents)
    documents = await source.store.find(name, Query(filter=In(("_id",), ids), limit=None))
    if documents:
        if relations is not None:
            await relations.copy(documents)
        await target.documents.insert(name, documents)


class RelationCopier:
    """Copies the source's relation record of each child field a followed write uses.

    A child field that first appears while following has its relation record
    (``_relations``, which the cascade and ``fetchchildren`` read) only in the source;
    without a copy the target would not delete its children with their parent.
    """

    def __init__(self, source: PortableDatabase, target: PortableDatabase) -> None:
        self.source = source
        self.target = target
        self._known: set[str] = set()

    async def copy(self, documents: Iterable[Document]) -> None:
        """Make sure the target has the relation record of each child among ``documents``.

        Raises:
            BackendError: a store failed.

        """
        for document in documents:
            parent, field = document.get("_parent_def"), document.get("_parent_field")
            if not isinstance(parent, str) or not isinstance(field, str):
                continue
            relation_id = relation_id_of(parent, field)
            if relation_id in self._known:
                continue
            try:
                await self.target.store.get(RELATIONS, relation_id)
            except NotFound:
                with contextlib.suppress(Conflict, NotFound):
                    await self.target.store.insert(RELATIONS, [
                        await self.source.store.get(RELATIONS, relation_id)])
            self._known.add(relation_id)


__all__ = ["FollowOverrun", "apply_change", "follow"]
