"""``db.changes``: the change bus of the pipeline, the durable log behind it, and reading it.

:class:`ChangeFeed` is the database's :class:`~.bus.ChangeBus` (the pipeline's
``PublishChange`` stage publishes every committed write to it, and in-process
subscribers still ``subscribe``), whose first subscriber is the durable
:class:`~.log.ChangeLog`. Reading goes through the log, so it sees the writes of
every process sharing the storage and can resume where it stopped::

    async for change in db.changes("orders", since=last_seen):
        print(change.seq, change.event, change.ids)

Delivery is at least once and in sequence order; ``since`` resumes after that
sequence number within the log's retention (``docs/realtime.md``).
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Sequence
from typing import Any

from docbase.core.changes.bus import ChangeBus, logger
from docbase.core.changes.demand import LogDemand
from docbase.core.changes.entries import Change
from docbase.core.changes.fanout import Fanout, Subscription
from docbase.core.changes.log import ChangeLog
from docbase.core.events import ChangeEvent
from docbase.core.names import is_user_collection
from docbase.core.settings.in_force import LimitsInForce


class ChangeFeed(ChangeBus):
    """The committed writes of one database: published here, logged, read back."""

    def __init__(self, log: ChangeLog, limits: LimitsInForce, demand: LogDemand) -> None:
        """Log what is published while ``demand`` says someone consumes the log."""
        super().__init__()
        self.log = log
        self.demand = demand
        self._recorder = self._record
        self.subscribe(self._recorder)
        self.fanout = Fanout(self.log, limits.server)  # its limits are the server's alone

    async def _record(self, event: ChangeEvent) -> None:
        if is_user_collection(event.collection) and await self.demand():
            await self.log.record(event)

    async def publish_all(self, events: Sequence[ChangeEvent]) -> None:
        """Log ``events`` together, then hand each to the other subscribers.

        The log numbers them with one ``$inc`` and stores them with one insert; a
        failure is logged only, as :meth:`publish` does.
        """
        if len(events) < 2 or self._subscribers[:1] != [self._recorder]:
            await super().publish_all(events)
            return
        try:
            if await self.demand():
                await self.log.record_all(events)
        except Exception:
            logger.exception("change subscriber %r failed on %d events of a batch",
                             self._recorder, len(events))
        for event in events:
            for subscriber in list(self._subscribers):
                if subscriber is self._recorder:
                    continue
                try:
                    await subscriber(event)
                except Exception:
                    logger.exception("change subscriber %r failed on %s of %s",
                                     subscriber, event.operation, event.collection)

    def subscription(self, since: int | None = None) -> Subscription:
        """A position in the log after ``since`` (``None``: from now), in ``async with``."""
        return Subscription(self.fanout, since)

    def __call__(self, collection: str | None = None, *,
                 since: int | None = None) -> AsyncIterator[Change]:
        """Iterate over the entries after ``since`` (of ``collection`` only, if given).

        Entries are logged while realtime is on (``realtime.global``) or a webhook is
        configured. The iteration waits for new entries for as long as it runs.

        Raises:
            BackendError: the store failed while catching up from ``since``.

        """
        return self._changes(collection, since)

    async def _changes(self, collection: str | None, since: int | None,
                       ) -> AsyncIterator[Change]:
        async with self.subscription(since) as subscription:
            while True:
                for change in await subscription.next(None):
                    if collection is None or change.collection == collection:
                        yield change

    async def publish_custom(self, event: str, data: Any, *, author: str) -> Change:
        """Append a custom event for every subscriber (``POST /realtime``).

        Raises:
            BackendError: the store failed.

        """
        return await self.log.publish(event, data, author=author)

    async def close(self) -> None:
        """Stop reading the log in this process."""
        await self.fanout.close()
