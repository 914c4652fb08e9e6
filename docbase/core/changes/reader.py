"""Reading the change log in sequence order without ever stepping over a late entry.

A writer takes its sequence number (:mod:`.sequence`) and then stores its entry, so
entries become visible out of order: number 7 may be stored while number 6, taken a
moment earlier by another writer, is still on its way. A reader that moved its
position past 7 would never see 6. A :class:`LogReader` therefore only moves its
position over consecutive numbers. When the next number is missing (a *gap*) it
delivers nothing beyond it and waits, reading again, until either

- the entry appears (the usual case: its writer stores it within milliseconds), or
- the number is known pruned (at most the counter's ``pruned`` mark), or
- ``grace`` seconds (``limits.change_gap_grace``) have passed since this reader first
  saw the gap: the writer failed or died between taking the number and storing the
  entry, and the number is skipped.

So every entry stored within ``grace`` seconds of taking its number is delivered, in
sequence order, exactly once per reader; an entry stored later than that is skipped by
readers that passed it (a warning is logged).
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable

from docbase.core.changes.entries import Change
from docbase.core.changes.log import ChangeLog

logger = logging.getLogger("docbase.changes")

BATCH = 500
"""Most entries read from the store at once."""


class LogReader:
    """A position in the change log, moved only over entries read or given up on."""

    def __init__(self, log: ChangeLog, position: int, *, grace: float,
                 clock: Callable[[], float] = time.monotonic) -> None:
        self.log = log
        self.position = position
        """The sequence number of the last entry delivered (or skipped)."""
        self.grace = grace
        self._clock = clock
        self._gap: tuple[int, float] | None = None  # (missing number, first seen)

    async def read(self) -> list[Change]:
        """The entries after the position, up to the first gap still in its grace time.

        Raises:
            BackendError: the store failed (the position has not moved).

        """
        entries = await self.log.read(self.position, BATCH)
        delivered: list[Change] = []
        pruned: int | None = None
        for entry in entries:
            if entry.seq != self.position + 1:
                if pruned is None:
                    pruned = (await self.log.state())[1]
                self.position = max(self.position, min(pruned, entry.seq - 1))
                if entry.seq != self.position + 1 and not self._give_up(self.position + 1,
                                                                         entry.seq):
                    break
            delivered.append(entry)
            self.position = entry.seq
        if not entries or self.position == entries[-1].seq:
            self._gap = None
        return delivered

    def _give_up(self, missing: int, present: int) -> bool:
        now = self._clock()
        if self._gap is None or self._gap[0] != missing:
            self._gap = (missing, now)
        if now - self._gap[1] < self.grace:
            return False
        logger.warning("change log: entries %d to %d never appeared within %.1f s; "
                       "skipped", missing, present - 1, self.grace)
        self._gap = None
        return True
