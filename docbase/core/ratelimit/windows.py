"""Fixed-window counters every process of a database shares, in a system collection.

One document of :data:`COUNTERS_COLLECTION` counts one subject (a key, an address)
during one window of ``window`` seconds; the window's number is part of its ``_id``,
so a new window starts a new count without anything being reset. A hit is one atomic
``$inc`` through the ``DocumentStore`` port, whose contract is that concurrent updates
never lose each other's changes, so workers and servers sharing the storage count
together. The first hit of a window inserts the document (a process that loses that
race increments the winner's) and removes the counters of windows that are over.
"""

from __future__ import annotations

import contextlib
import hashlib
import math
import time
from typing import TYPE_CHECKING, NamedTuple

from docbase.core.documents import new_document
from docbase.core.errors import Conflict, NotFound
from docbase.core.query import Lt
from docbase.core.update import IncOp, Update

if TYPE_CHECKING:
    from docbase.core.ports import DocumentStore

COUNTERS_COLLECTION = "_rate_counters"
"""The system collection of the rate-limit counters."""

_INCREMENT = Update((IncOp(("count",), 1),))


class Window(NamedTuple):
    """The count of one subject in the current window, and when (Unix time) it ends."""

    hits: int
    ends: float

    @property
    def retry_after(self) -> int:
        """Whole seconds until the window ends (``Retry-After``), at least one."""
        return max(1, math.ceil(self.ends - time.time()))

    @property
    def over(self) -> bool:
        """Tell whether the window has ended (its count no longer applies)."""
        return self.ends <= time.time()


def counter_id(kind: str, subject: str, index: int) -> str:
    """The ``_id`` of ``subject``'s counter of kind ``kind`` in window ``index`` (24 hex)."""
    return hashlib.sha256(f"{kind}\0{subject}\0{index}".encode()).hexdigest()[:24]


def _current(window: float) -> tuple[int, float]:
    index = int(time.time() // window)
    return index, (index + 1) * window


async def hit(store: DocumentStore, kind: str, subject: str, window: float) -> Window:
    """Count one event of ``subject`` in the current window; return the new count."""
    index, ends = _current(window)
    ident = counter_id(kind, subject, index)
    try:
        stored = await store.update(COUNTERS_COLLECTION, ident, _INCREMENT, stamp={})
    except NotFound:
        document = new_document({}, "system")
        document.update(_id=ident, count=1, ends=ends)
        try:
            await store.insert(COUNTERS_COLLECTION, [document])
        except Conflict:  # another process started this window's count meanwhile
            stored = await store.update(COUNTERS_COLLECTION, ident, _INCREMENT, stamp={})
        else:
            with contextlib.suppress(NotFound):
                await store.delete_where(COUNTERS_COLLECTION, Lt(("ends",), time.time()))
            return Window(1, ends)
    return Window(int(stored["count"]), ends)


async def peek(store: DocumentStore, kind: str, subject: str, window: float) -> Window:
    """Return ``subject``'s count in the current window without counting."""
    index, ends = _current(window)
    try:
        stored = await store.get(COUNTERS_COLLECTION, counter_id(kind, subject, index))
    except NotFound:
        return Window(0, ends)
    return Window(int(stored["count"]), ends)
