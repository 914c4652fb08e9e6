"""``db.media``: the media archive of one database, over its blob store.

Uploads are all or nothing (``uploading.py``). Content is found by media id or by file
name (the newest upload of that name); a derivative is made the first time it is asked
for and kept in the blob store (``derivatives.py``). Reading the bytes needs no
credential; metadata, uploads and deletes are authorized as their ``/media`` paths
and then read and written on the requester's behalf (``on_behalf_of``).
"""

from __future__ import annotations

import contextlib
from collections.abc import AsyncIterable, AsyncIterator, Iterable, Sequence
from datetime import timedelta
from typing import TYPE_CHECKING, Any

from docbase.core.auth import Action, authorize
from docbase.core.auth.cache import Namespace
from docbase.core.auth.principal import SYSTEM, Principal, on_behalf_of
from docbase.core.collection import Collection
from docbase.core.documents import Document
from docbase.core.errors import ConfigurationError, InvalidQuery, NotFound
from docbase.core.ids import check_object_id, is_object_id
from docbase.core.media import images
from docbase.core.media.blobfile import image_source
from docbase.core.media.derivatives import (
    ORIGINAL,
    WIDTHS,
    KeyedLocks,
    all_blob_keys,
    blob_key,
    parse_size,
)
from docbase.core.media.files import MediaFile
from docbase.core.media.receiving import Upload
from docbase.core.media.records import MEDIA_COLLECTION, content_tag, is_tombstone
from docbase.core.media.sniffing import RASTER_TYPES
from docbase.core.media.sweeping import MediaStores, Swept, orphan_grace, sweep
from docbase.core.media.uploading import Uploaded, UploadRun
from docbase.core.ports import BlobInfo, BlobStore, DocumentStore
from docbase.core.query import JSON, In, Query

if TYPE_CHECKING:
    from docbase.core.auth.cache import SystemCache
    from docbase.core.collection_views import CollectionViews
    from docbase.core.system_data import SettingsSource

OPENED: Namespace[MediaFile] = Namespace("media files")
"""What :meth:`Media.open` found, by (id or name, size), in the database's SystemCache."""
SMALL_CONTENT = 32 * 1024
"""Content up to this size is kept with what ``open`` found (thumbnails, small files)."""



def no_media_file(ref: str) -> NotFound:
    """The refusal of a media file that does not exist (by id or by name)."""
    return NotFound(f"no media file {ref!r}")

class Media:
    """The media archive of one database (``db.media``)."""

    def __init__(self, views: CollectionViews, store: DocumentStore, blobs: BlobStore | None,
                 settings: SettingsSource, cache: SystemCache) -> None:
        """Keep bytes in ``blobs``, metadata in ``_media`` (written through ``views``).

        ``store`` is the raw store: the sweep's tombstones and the checks that a record
        still exists are system records, not a principal's reads.
        """
        self.views = views
        self.store = store
        self._blobs = blobs
        self.settings = settings
        self.cache = cache
        self.limits = views.limits
        self._deriving = KeyedLocks()
        self._indexed = False

    @property
    def blobs(self) -> BlobStore:
        """The database's blob store.

        Raises:
            ConfigurationError: the database was built without one.

        """
        if self._blobs is None:
            raise ConfigurationError("this database has no blob store: build it with "
                                     "docbase.connect")
        return self._blobs

    def records(self, principal: Principal = SYSTEM) -> Collection:
        """The ``_media`` collection, read and written on behalf of ``principal``."""
        return self.views.system_collection(MEDIA_COLLECTION, on_behalf_of(principal))

    async def _ensure_index(self) -> None:
        if not self._indexed:
            await self.records().ensure_index("origname")
            self._indexed = True

    # ------------------------------------------------------------------ upload

    async def upload(self, files: Iterable[Upload] | AsyncIterable[Upload], *,
                     principal: Principal = SYSTEM) -> Uploaded:
        """Store files and their metadata, all or nothing (``uploading.py``).

        Raises:
            Forbidden: ``principal`` may not ``POST /media``.
            InvalidQuery: there is no file.
            PayloadTooLarge: a file (named), all files together, or their number is over
                its limit (``limits.max_upload_*``).
            InvalidImage: a file sniffed as an image cannot be read, or is too large.

        """
        authorize(principal, Action("POST", "/media"))
        await self._ensure_index()
        try:
            return await UploadRun(self.views, self.store, self.blobs, principal).store(files)
        finally:
            self.cache.invalidate(OPENED)  # a name may now mean a newer file

    # ------------------------------------------------------------------ metadata

    async def meta(self, media_id: str, *, principal: Principal = SYSTEM) -> Document:
        """The metadata record of one media file.

        Raises:
            InvalidId: ``media_id`` is not an ObjectID.
            Forbidden: ``principal`` may not ``GET /media/ID/meta``.
            NotFound: there is no such media file.

        """
        media_id = check_object_id(media_id)
        authorize(principal, Action("GET", f"/media/{media_id}/meta"))
        return _existing(await self.records(principal).get(media_id))

    async def find(self, q: Any = None, h: dict[str, JSON] | None = None, *,
                   query: Query | None = None, principal: Principal = SYSTEM,
                   ) -> list[Document]:
        """The metadata records matching ``q``/``h`` (or a parsed ``query``), as ``/rest``.

        Raises:
            Forbidden: ``principal`` may not ``GET /media/*/meta``.
            InvalidQuery: ``q`` or ``h`` is malformed.

        """
        authorize(principal, Action("GET", "/media/*/meta"))
        found = await self.records(principal).find(q, h, query=query)
        return [record for record in found if not is_tombstone(record)]

    async def find_ids(self, ids: Sequence[str], *, principal: Principal = SYSTEM,
                       ) -> list[Document]:
        """The records of ``ids`` in that order; unknown ids are left out.

        Raises:
            InvalidId: an id is not an ObjectID.
            Forbidden: ``principal`` may not ``GET /media/*/meta``.

        """
        wanted = [check_object_id(i) for i in ids]
        if len(wanted) > self.limits.max_page:
            raise InvalidQuery(f"ids may name at most {self.limits.max_page} files")
        found = await self.find(query=Query(filter=In(("_id",), tuple(wanted)), limit=None),
                                principal=principal)
        by_id = {str(record["_id"]): record for record in found}
        return [by_id[i] for i in dict.fromkeys(wanted) if i in by_id]

    # ------------------------------------------------------------------ content

    async def resolve(self, ref: str) -> Document:
        """The record ``ref`` names: a media id, else a file name (the newest upload).

        Raises:
            NotFound: neither a media id nor a stored file name.

        """
        if is_object_id(ref):
            with contextlib.suppress(NotFound):
                return _existing(await self.records().get(ref))
        await self._ensure_index()
        newest = await self.records().find({"origname": ref},
                                           {"$orderby": {"_created": -1, "_id": -1}, "$max": 1})
        if not newest:
            raise no_media_file(ref)
        return newest[0]

    async def open(self, ref: str, size: str | None = ORIGINAL) -> MediaFile:
        """The content of a media file (by id or name), original or a derivative.

        ``size`` is ``o``, ``t`` (128 px wide) or ``w`` (640 px wide); it is ignored for
        files that are not raster images. Needs no credential, as ``GET /media/ID``.
        What one process found is trusted for a second (``SystemCache``), content of at
        most :data:`SMALL_CONTENT` bytes with it, so a thumbnail shown again and again
        costs no storage round trip; an upload or delete through this process is seen at
        once, one through another process within that second.

        Raises:
            InvalidQuery: an unknown ``size``.
            NotFound: no such media file.
            InvalidImage: the derivative cannot be made (corrupt or truncated image).

        """
        size = parse_size(size)
        return await self.cache.fetch(OPENED, (ref, size),
                                                    lambda: self._open(ref, size))

    async def _open(self, ref: str, size: str) -> MediaFile:
        record = await self.resolve(ref)
        if size == ORIGINAL or record.get("mimetype") not in RASTER_TYPES:
            size = ORIGINAL
            key = blob_key(str(record["_id"]))
            content_type, length = str(record["mimetype"]), int(record["filesize"])
        else:
            key = blob_key(str(record["_id"]), size)
            try:
                info = await self.blobs.stat(key)
            except NotFound:
                async with self._deriving.hold(key):
                    info = await self._derived(record, size, key)
            content_type, length = info.content_type, info.size
        file = MediaFile(self.blobs, record, key, content_type=content_type, size=length,
                         etag=content_tag(record, size))
        if length <= SMALL_CONTENT:
            file.data = await file.read()
        return file

    async def _derived(self, record: Document, size: str, key: str) -> BlobInfo:
        with contextlib.suppress(NotFound):  # made while this request waited its turn
            return await self.blobs.stat(key)
        media_id, name = str(record["_id"]), str(record["origname"])
        max_pixels = self.limits.max_image_pixels
        opener = image_source(self.blobs, blob_key(media_id), int(record["filesize"]))
        made = await images.in_image_thread(
            lambda deadline: images.derive(opener(deadline), WIDTHS[size], max_pixels),
            name, self.limits.image_timeout)
        info = await self.blobs.put(key, _single(made.data), made.mimetype)
        try:
            await self.store.get(MEDIA_COLLECTION, media_id)
        except NotFound:  # deleted meanwhile: take the derivative with it
            await self.blobs.delete(key)
            raise
        return info

    # ------------------------------------------------------------------ delete

    async def delete(self, media_id: str, *, principal: Principal = SYSTEM) -> list[str]:
        """Delete a media file: its metadata (through the pipeline), bytes and derivatives.

        Raises:
            InvalidId: ``media_id`` is not an ObjectID.
            Forbidden: ``principal`` may not ``DELETE /media/ID``.
            NotFound: there is no such media file.

        """
        media_id = check_object_id(media_id)
        authorize(principal, Action("DELETE", f"/media/{media_id}"))
        try:
            deleted = await self.records(principal).delete(media_id)
            for key in all_blob_keys(media_id):
                await self.blobs.delete(key)
        finally:
            self.cache.invalidate(OPENED)
        return deleted


    # ------------------------------------------------------------------ sweep

    async def sweep(self, grace: timedelta | None = None) -> Swept:
        """Delete stored bytes that no metadata owns, begun more than ``grace`` ago.

        ``grace`` defaults to the ``media.orphan_grace`` setting (1 hour); an upload in
        progress is never robbed (``sweeping.py``). ``docbase serve`` sweeps hourly.

        Raises:
            InvalidQuery: the stored ``media.orphan_grace`` is not a duration.

        """
        if grace is None:
            grace = await orphan_grace(self.settings)
        try:
            return await sweep(MediaStores(self.store, self.blobs), grace)
        finally:
            self.cache.invalidate(OPENED)


async def _single(data: bytes) -> AsyncIterator[bytes]:
    yield data


def _existing(record: Document) -> Document:
    if is_tombstone(record):
        raise NotFound(f"no media file {record['_id']}")
    return record

