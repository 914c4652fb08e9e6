"""The orphan sweep: bytes in the blob store that no ``_media`` record owns are deleted.

Bytes are stored before their metadata (``uploading.py``), so a process killed between
the two, or a failed metadata write whose clean-up failed too, leaves a blob no record
owns; a process killed in the middle of a put leaves chunks no blob owns; one killed
in the middle of a delete leaves derivatives without their original. None of them is
ever served, and :func:`sweep` removes them: every blob whose put began more than the
grace (``media.orphan_grace``) ago and whose media id has no record is deleted, with
every derivative of that id, and the blob store deletes what unfinished puts begun
before then left behind.

A concurrent upload is never robbed. Its commit is the insert of its records into
``_media``; before deleting an id's bytes the sweep inserts a tombstone record with that
id straight into the store (as a job takes its lease), and the store refuses the second
of the two inserts: the sweep skips an id whose record got there first, and an upload
whose id the sweep claimed first fails (``Conflict``). The sweep deletes the original
first and the tombstone last; an upload committing after that finds its original gone
(it looks after its commit) and takes its records back. A tombstone that a killed sweep
left is finished by a later sweep once older than the grace.

:func:`sweep_job` runs the sweep every hour in ``docbase serve``, once per tick among all
processes sharing the storage (a job lease, ``docs/hooks.md``).
"""

from __future__ import annotations

import logging
from collections.abc import Sequence
from datetime import UTC, datetime, timedelta
from typing import TYPE_CHECKING, NamedTuple, Protocol

import msgspec

from docbase.core.auth.signing import parse_duration
from docbase.core.documents import new_document
from docbase.core.errors import Conflict
from docbase.core.hooks.context import JobContext
from docbase.core.hooks.jobs import Job
from docbase.core.ids import format_timestamp
from docbase.core.media.derivatives import all_blob_keys, media_id_of
from docbase.core.media.records import MEDIA_COLLECTION, TOMBSTONE, is_tombstone
from docbase.core.query import In, Lt, Query

if TYPE_CHECKING:
    from docbase.core.ports import BlobStore, DocumentStore
    from docbase.core.system_data import SettingsSource

logger = logging.getLogger("docbase.media")

SWEEP_JOB = "docbase.media.sweep"
"""The name of the sweep's job (its leases, its hook log entries)."""
SWEEP_SCHEDULE = "7 * * * *"
"""When ``docbase serve`` sweeps: hourly, at seven minutes past."""
_BATCH = 500
"""Media ids looked up in ``_media`` per query."""


class Swept(msgspec.Struct, frozen=True):
    """What one sweep removed: blob keys, and how many unfinished puts' chunks."""

    blobs: list[str]
    unfinished: int


class MediaStores(NamedTuple):
    """What the sweep reads and deletes: the ``_media`` records and the bytes."""

    store: DocumentStore
    blobs: BlobStore


class Sweeper(Protocol):
    """The media archive as the sweep job runs it (``db.media``)."""

    async def sweep(self, grace: timedelta | None = None) -> Swept:
        """Sweep with ``grace``, by default the ``media.orphan_grace`` setting."""


class SweptDatabase(Protocol):
    """A database whose media archive the sweep job sweeps."""

    @property
    def media(self) -> Sweeper:
        """The media archive."""


async def orphan_grace(settings: SettingsSource) -> timedelta:
    """The database's ``media.orphan_grace``.

    Raises:
        InvalidQuery: the stored value is not a duration.

    """
    setting = (await settings.load()).media.orphan_grace
    return timedelta(seconds=parse_duration(setting, "media.orphan_grace"))


async def sweep(stores: MediaStores, grace: timedelta) -> Swept:
    """Delete the blobs begun more than ``grace`` ago that no ``_media`` record owns.

    Raises:
        BackendError: a store failed (what was deleted so far stays deleted).

    """
    blobs = stores.blobs
    cutoff = datetime.now(UTC) - grace
    unfinished = await blobs.delete_unfinished(cutoff)
    deleted = await _finish_tombstones(stores, cutoff)
    pending: dict[str, None] = {}
    async for key in blobs.keys(cutoff):
        media_id = media_id_of(key)
        if media_id is not None:
            pending[media_id] = None
        if len(pending) >= _BATCH:
            deleted += await _sweep_ids(stores, list(pending))
            pending.clear()
    deleted += await _sweep_ids(stores, list(pending))
    if deleted or unfinished:
        logger.info("media sweep: deleted %d orphaned blob(s) and %d unfinished put(s)",
                    len(deleted), unfinished)
    return Swept(deleted, unfinished)


def sweep_job(database: SweptDatabase) -> Job:
    """The job sweeping ``database`` hourly with its ``media.orphan_grace``."""
    async def sweep_media(_context: JobContext) -> None:
        await database.media.sweep()

    return Job(SWEEP_SCHEDULE, sweep_media, name=SWEEP_JOB)


async def _sweep_ids(stores: MediaStores, media_ids: Sequence[str]) -> list[str]:
    if not media_ids:
        return []
    found = await stores.store.find(MEDIA_COLLECTION, Query(
        filter=In(("_id",), tuple(media_ids)), limit=None))
    owned = {str(record["_id"]) for record in found}
    deleted: list[str] = []
    for media_id in media_ids:
        if media_id not in owned:
            deleted += await _claim_and_delete(stores, media_id)
    return deleted


async def _claim_and_delete(stores: MediaStores, media_id: str) -> list[str]:
    tombstone = new_document({TOMBSTONE: format_timestamp(datetime.now(UTC))}, "sweep")
    tombstone["_id"] = media_id
    try:
        await stores.store.insert(MEDIA_COLLECTION, [tombstone])
    except Conflict:  # its record (or another sweep's tombstone) got there first
        return []
    return await _delete_claimed(stores, media_id)


async def _delete_claimed(stores: MediaStores, media_id: str) -> list[str]:
    """Delete an id's original first, then its derivatives, then the tombstone."""
    deleted = [key for key in all_blob_keys(media_id) if await stores.blobs.delete(key)]
    await stores.store.delete(MEDIA_COLLECTION, [media_id])
    return deleted


async def _finish_tombstones(stores: MediaStores, cutoff: datetime) -> list[str]:
    left = await stores.store.find(MEDIA_COLLECTION, Query(
        filter=Lt((TOMBSTONE,), format_timestamp(cutoff)), limit=None))
    deleted: list[str] = []
    for record in left:
        if is_tombstone(record):
            deleted += await _delete_claimed(stores, str(record["_id"]))
    return deleted
