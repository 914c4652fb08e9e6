"""Capturing the writes made while an export copies: the change log, held on by a lease.

An export copies collection after collection while servers keep writing. To make the
archive one point in time it records the change log's position before the copy and
then applies what the log says changed meanwhile (:mod:`.replay`). The log, however,
is only written while someone consumes it (realtime or a webhook,
``docbase/core/changes/log.py``). So an export first stores a *capture lease*, a
document of :data:`CAPTURES_COLLECTION` valid until a time it keeps moving forward;
every process's change feed (its ``LogDemand``, ``docbase/core/changes/demand.py``) asks
:meth:`CaptureLeases.consuming_now` at most every tenth of a second, so once the export has
waited that long after storing its lease (``until_every_process_logs``), every committed
write of every process is logged. A killed export's lease simply expires.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import AsyncIterator
from datetime import UTC, datetime, timedelta

from docbase.core.auth.cache import Namespace, SystemCache
from docbase.core.changes.demand import until_every_process_logs
from docbase.core.documents import new_document
from docbase.core.ids import format_timestamp
from docbase.core.ports import DocumentStore
from docbase.core.query import Gt, Lt
from docbase.core.update import SetOp, Update

CAPTURES_COLLECTION = "_captures"
"""The system collection of capture leases (one per running export or migration)."""
LEASE_SECONDS = 60.0
"""How long a capture lease is valid after its last renewal."""
RENEW_EVERY = LEASE_SECONDS / 3
_RUNNING: Namespace[bool] = Namespace("portability.capturing")
"""Invalidated when this process takes or gives back a lease, so its change feed's demand
reads the leases again at once (``SystemCache.invalidations``); nothing is cached under it."""


class CaptureLeases:
    """The capture leases of one database, as the change feed's demand asks them."""

    def __init__(self, store: DocumentStore) -> None:
        self.store = store

    @property
    def cached_as(self) -> Namespace[bool]:
        """The system-cache namespace a lease taken or given back here invalidates."""
        return _RUNNING

    async def consuming_now(self) -> bool:
        """Tell whether an export or migration is capturing writes now (no cache).

        Raises:
            BackendError: the store failed.

        """
        now = format_timestamp(datetime.now(UTC))
        return await self.store.count(CAPTURES_COLLECTION, Gt(("until",), now)) > 0


def _until() -> str:
    return format_timestamp(datetime.now(UTC) + timedelta(seconds=LEASE_SECONDS))


@contextlib.asynccontextmanager
async def capturing(store: DocumentStore, cache: SystemCache) -> AsyncIterator[None]:
    """Hold a capture lease for the body; on entry, wait until every process sees it.

    Raises:
        BackendError: the store failed.

    """
    lease = new_document({"until": _until()}, "export")
    await store.insert(CAPTURES_COLLECTION, [lease])
    cache.invalidate(_RUNNING)
    renewing = asyncio.create_task(_renew(store, lease["_id"]))
    try:
        await until_every_process_logs()  # every other process's "no" read again
        yield
    finally:
        renewing.cancel()
        with contextlib.suppress(asyncio.CancelledError):
            await renewing
        await store.delete(CAPTURES_COLLECTION, [lease["_id"]])
        cache.invalidate(_RUNNING)
        await _forget_expired(store)


async def _renew(store: DocumentStore, lease_id: str) -> None:
    while True:
        await asyncio.sleep(RENEW_EVERY)
        await store.update(CAPTURES_COLLECTION, lease_id,
                           Update((SetOp(("until",), _until()),)), stamp={})


async def _forget_expired(store: DocumentStore) -> None:
    now = format_timestamp(datetime.now(UTC))
    await store.delete_where(CAPTURES_COLLECTION, Lt(("until",), now))


__all__ = ["CAPTURES_COLLECTION", "CaptureLeases", "capturing"]
