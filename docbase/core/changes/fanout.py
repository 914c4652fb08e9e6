"""Handing the change log to many subscribers of one process with one reader.

A :class:`Fanout` runs one :class:`~.reader.LogReader` per database and process while
anyone is subscribed: it reads the log when the store's signal wakes it, or every
``limits.change_poll_interval`` seconds, and keeps the newest entries in memory. A
:class:`Subscription` takes its entries from there, so a thousand open
``GET /realtime`` streams cost one store read per poll, not a thousand. A subscription
that starts further back than that memory (a resume by ``Last-Event-ID``) first
catches up with its own reader from the store, then joins.
"""

from __future__ import annotations

import asyncio
import bisect
import contextlib
import logging
from types import TracebackType

from docbase.core.changes.entries import Change
from docbase.core.changes.log import ChangeLog
from docbase.core.changes.reader import BATCH, LogReader
from docbase.core.errors import DocbaseError
from docbase.core.lifecycle import stop_task
from docbase.core.metrics import instruments
from docbase.core.settings.limits import Limits

logger = logging.getLogger("docbase.changes")

KEPT = 4096
"""Entries a fan-out keeps in memory for its subscriptions (twice that at most)."""


class Fanout:
    """The newest entries of the log, read once for every subscription of this process."""

    def __init__(self, log: ChangeLog, limits: Limits) -> None:
        self.log = log
        self.limits = limits
        self.floor = 0
        """Every entry above this number that the reader delivered is held here."""
        self._entries: list[Change] = []
        self._seqs: list[int] = []
        self._reader: LogReader | None = None
        self._grown = asyncio.Event()
        self._ready = asyncio.Event()
        self._task: asyncio.Task[None] | None = None
        self._subscribers = 0

    @property
    def position(self) -> int:
        """The last entry read (the subscriptions' "now")."""
        return self._reader.position if self._reader is not None else self.floor

    def after(self, position: int) -> list[Change]:
        """The held entries numbered above ``position`` (at most a batch)."""
        start = bisect.bisect_right(self._seqs, position)
        return self._entries[start:start + BATCH]

    async def grown(self, within: float | None) -> None:
        """Wait until new entries are held, or ``within`` seconds (``None``: no limit)."""
        # asyncio.timeout, not wait_for: no task per wait, which counts with 1,000 streams
        with contextlib.suppress(TimeoutError):
            async with asyncio.timeout(within):
                await self._grown.wait()

    async def attach(self) -> None:
        """Count a subscription; start reading if it is the first. Waits until ready."""
        self._subscribers += 1
        if self._task is None:
            self._ready, self._grown = asyncio.Event(), asyncio.Event()
            self._task = asyncio.create_task(self._run(), name="docbase change fan-out")
        await self._ready.wait()

    async def detach(self) -> None:
        """Forget a subscription; stop reading after the last one."""
        self._subscribers -= 1
        if self._subscribers == 0:
            await self.close()

    async def close(self) -> None:
        """Stop reading and forget what is held.

        Forgotten before the reader has stopped: a subscription may attach while it
        stops, and the reader it starts must begin afresh, not inherit this one's
        position (which would hide what lies between) nor have its entries cleared.
        """
        task, self._task = self._task, None
        self._entries, self._seqs, self._reader = [], [], None
        await stop_task(task)

    async def _run(self) -> None:
        interval = self.limits.change_poll_interval
        while True:
            try:
                start = (await self.log.state())[0]
                break
            except DocbaseError as exc:
                logger.error("change log unreadable, trying again: %s", exc.message)
                await asyncio.sleep(interval)
        reader = LogReader(self.log, start, grace=self.limits.change_gap_grace)
        self.floor, self._reader = start, reader
        self._ready.set()
        seen = -1
        while True:
            try:
                batch = await reader.read()
            except DocbaseError as exc:
                logger.error("change log unreadable, trying again: %s", exc.message)
                batch = []
            if batch:
                self._hold(batch)
                if len(batch) == BATCH:
                    continue
            seen = await self.log.wait(seen, interval)

    def _hold(self, batch: list[Change]) -> None:
        self._entries.extend(batch)
        self._seqs.extend(change.seq for change in batch)
        if len(self._entries) > 2 * KEPT:
            dropped = len(self._entries) - KEPT
            self.floor = self._seqs[dropped - 1]
            del self._entries[:dropped], self._seqs[:dropped]
        grown, self._grown = self._grown, asyncio.Event()
        grown.set()


class Subscription:
    """One subscriber's position in the log: ``async with feed.subscription(since):``."""

    def __init__(self, fanout: Fanout, since: int | None) -> None:
        self.fanout = fanout
        self.since = since
        self.position = 0
        """The number of the last entry handed out (the ``id`` to resume from)."""
        self._catching_up: LogReader | None = None

    async def __aenter__(self) -> Subscription:
        await self.fanout.attach()
        instruments().subscribers(+1)
        try:
            if self.since is None:
                self.position = self.fanout.position
            else:  # a number from the future would hide entries until the log reached it
                self.position = min(self.since, (await self.fanout.log.state())[0])
        except BaseException:
            instruments().subscribers(-1)
            await self.fanout.detach()
            raise
        return self

    async def __aexit__(self, kind: type[BaseException] | None, error: BaseException | None,
                        traceback: TracebackType | None) -> None:
        instruments().subscribers(-1)
        await self.fanout.detach()

    async def next(self, within: float | None) -> list[Change]:
        """The next entries after the position, waiting at most ``within`` seconds.

        Returns:
            The entries, in sequence order; empty when the time ran out.

        Raises:
            BackendError: catching up from the store failed (the position has not moved).

        """
        loop = asyncio.get_running_loop()
        deadline = None if within is None else loop.time() + within
        while True:
            behind = self.position < self.fanout.floor
            batch = await self._catch_up() if behind else self.fanout.after(self.position)
            if batch:
                self.position = batch[-1].seq
                return batch
            remaining = None if deadline is None else deadline - loop.time()
            if remaining is not None and remaining <= 0:
                return []
            if behind:  # a gap before the fan-out's entries: read the store again soon
                interval = self.fanout.limits.change_poll_interval
                await asyncio.sleep(interval if remaining is None else min(remaining, interval))
            else:
                await self.fanout.grown(remaining)

    async def _catch_up(self) -> list[Change]:
        reader = self._catching_up
        if reader is None or reader.position != self.position:
            reader = self._catching_up = LogReader(
                self.fanout.log, self.position, grace=self.fanout.limits.change_gap_grace)
        return await reader.read()
