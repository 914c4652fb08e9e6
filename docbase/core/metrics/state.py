"""What every process of a deployment shares, read from the store when metrics are scraped.

A worker counts what it did (:mod:`docbase.core.metrics`); the change feed's position,
the outbound mail queue, the webhooks' backlog and the media bytes stored are facts of
the storage, the same whichever worker is asked, so they are read afresh at each
scrape with a few cheap queries instead of being counted in any process. The same
queries tell whether the backend answers at all, which is what the readiness check
(``GET /health/ready``) asks too: :func:`check_store`.
"""

from __future__ import annotations

import asyncio
from typing import TYPE_CHECKING

import msgspec

from docbase.core.changes.sequence import COUNTERS_COLLECTION
from docbase.core.errors import DocbaseError
from docbase.core.mail.outbound import OUTBOUND_COLLECTION, Status
from docbase.core.media.records import MEDIA_COLLECTION
from docbase.core.query import MATCH_ALL, Aggregate, Exists, In

if TYPE_CHECKING:
    from docbase.core.changes.log import ChangeLog
    from docbase.core.ports import DocumentStore
    from docbase.core.webhooks.stored_webhooks import WebhookRegistry

CHECK_TIMEOUT = 3.0
"""Seconds a readiness check or a scrape's queries may take before the store counts as down."""

_WAITING = In(("status",), (Status.QUEUED.value, Status.SENDING.value))
_FILES = Exists(("origname",), True)  # a media record, not a sweep's tombstone
_BYTES = Aggregate("SUM", "filesize")


class StoreState(msgspec.Struct, frozen=True, kw_only=True):
    """The shared state of one database, as one scrape read it."""

    up: bool
    """Whether the store answered; when not, the other figures are zero."""
    change_position: int = 0
    """The sequence number of the last change taken in the change log."""
    mail_queued: int = 0
    """Outbound mail waiting to be sent (``queued`` or ``sending``)."""
    webhook_backlog: int = 0
    """Changes the enabled webhooks have yet to handle, added up."""
    media_bytes: int = 0
    """Bytes of the stored media originals (derivatives not counted)."""
    failure: str | None = None
    """Why the store counts as down."""


async def check_store(store: DocumentStore, within: float = CHECK_TIMEOUT) -> str | None:
    """Ask the store one cheap real query; return ``None`` if it answered, else why not.

    A query that fails is asked once more, within the same ``within``: a pooled
    connection the backend dropped while it was away fails its first use and is then
    replaced (SQLAlchemy discards the pool's connections of that age), so a process
    whose backend has returned is ready at its first check rather than its second. A
    backend that is still down fails the second query as it failed the first.
    """
    try:
        await asyncio.wait_for(_count_retried(store), within)
    except TimeoutError:
        return f"the store did not answer within {within:g} s"
    except DocbaseError as exc:
        return f"{type(exc).__name__}: {exc.message}"
    return None


async def _count_retried(store: DocumentStore) -> None:
    try:
        await store.count(COUNTERS_COLLECTION, MATCH_ALL)
    except DocbaseError:
        await store.count(COUNTERS_COLLECTION, MATCH_ALL)  # on a fresh connection


async def read_state(store: DocumentStore, log: ChangeLog, webhooks: WebhookRegistry,
                     within: float = CHECK_TIMEOUT) -> StoreState:
    """Read one database's shared state; a store that fails or is slow is ``up=False``."""
    try:
        return await asyncio.wait_for(_read(store, log, webhooks), within)
    except TimeoutError:
        return StoreState(up=False, failure=f"no answer within {within:g} s")
    except DocbaseError as exc:
        return StoreState(up=False, failure=f"{type(exc).__name__}: {exc.message}")


async def _read(store: DocumentStore, log: ChangeLog, webhooks: WebhookRegistry) -> StoreState:
    position = (await log.state())[0]
    backlog = sum(max(0, position - hook.cursor)
                  for hook in await webhooks.find(enabled_only=True))
    media = await store.aggregate(MEDIA_COLLECTION, _FILES, (), (_BYTES,))
    total = media[0].values.get(_BYTES.key) if media else None
    return StoreState(
        up=True,
        change_position=position,
        mail_queued=await store.count(OUTBOUND_COLLECTION, _WAITING),
        webhook_backlog=backlog,
        media_bytes=int(total) if isinstance(total, int | float) else 0,
    )
