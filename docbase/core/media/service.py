"""``db.media``: the media archive of one database, over its blob store.

An upload streams each file to the blob store (counted, hashed and sniffed on the way,
see ``receiving.py`` and ``sniffing.py``), reads an image's header, and only when every
file is stored writes all their records to ``_media`` in one insert through the write
pipeline. Whatever fails on the way, the bytes stored so far are deleted again: a
failed upload leaves neither bytes nor metadata. Reading the bytes needs no
credential; metadata, uploads and deletes are authorized as their ``/media`` paths
and then read and written on the requester's behalf (``on_behalf_of``).
"""

from __future__ import annotations

import asyncio
import contextlib
import io
import logging
import uuid
from collections.abc import AsyncIterable, AsyncIterator, Callable, Iterable, Sequence
from functools import partial
from typing import IO, TYPE_CHECKING, Any

import msgspec

from docbase.core.auth import Action, authorize
from docbase.core.auth.cache import Namespace
from docbase.core.auth.principal import SYSTEM, Principal, on_behalf_of
from docbase.core.collection import Collection
from docbase.core.documents import Document
from docbase.core.errors import ConfigurationError, InvalidQuery, NotFound, PayloadTooLarge
from docbase.core.events import WriteEvent
from docbase.core.ids import check_object_id, is_object_id, new_object_id
from docbase.core.media import images
from docbase.core.media.blobfile import open_blob
from docbase.core.media.derivatives import (
    ORIGINAL,
    WIDTHS,
    KeyedLocks,
    all_blob_keys,
    blob_key,
    parse_size,
)
from docbase.core.media.files import MediaFile
from docbase.core.media.receiving import Budget, Receiver, Upload, clean_filename, peek
from docbase.core.media.records import MEDIA_COLLECTION, content_tag, media_record
from docbase.core.media.sniffing import HEAD_BYTES, RASTER_TYPES, sniff
from docbase.core.ports import BlobInfo, BlobStore
from docbase.core.query import JSON, In, Query

if TYPE_CHECKING:
    from docbase.core.database import Database

logger = logging.getLogger("docbase.media")

OPENED: Namespace[MediaFile] = Namespace("media files")
"""What :meth:`Media.open` found, by (id or name, size), in the database's SystemCache."""
SMALL_CONTENT = 32 * 1024
"""Content up to this size is kept with what ``open`` found (thumbnails, small files)."""


class Uploaded(msgspec.Struct, frozen=True):
    """The answer to an upload: its id and the media id of each file, in upload order."""

    uploadid: str
    ids: list[str]


class Media:
    """The media archive of one database (``db.media``)."""

    def __init__(self, database: Database) -> None:
        self.database = database
        self._deriving = KeyedLocks()
        self._indexed = False

    @property
    def blobs(self) -> BlobStore:
        """The database's blob store.

        Raises:
            ConfigurationError: the database was built without one.

        """
        if self.database.blobs is None:
            raise ConfigurationError("this database has no blob store: build it with "
                                     "docbase.connect")
        return self.database.blobs

    def records(self, principal: Principal = SYSTEM) -> Collection:
        """The ``_media`` collection, read and written on behalf of ``principal``."""
        return self.database.system_collection(MEDIA_COLLECTION, on_behalf_of(principal))

    async def _ensure_index(self) -> None:
        if not self._indexed:
            await self.records().ensure_index("origname")
            self._indexed = True

    # ------------------------------------------------------------------ upload

    async def upload(self, files: Iterable[Upload] | AsyncIterable[Upload], *,
                     principal: Principal = SYSTEM) -> Uploaded:
        """Store files and their metadata, all or nothing.

        Raises:
            Forbidden: ``principal`` may not ``POST /media``.
            InvalidQuery: there is no file.
            PayloadTooLarge: a file (named), all files together, or their number is over
                its limit (``limits.max_upload_*``).
            InvalidImage: a file sniffed as an image cannot be read, or is too large.

        """
        authorize(principal, Action("POST", "/media"))
        limits = self.database.limits
        budget = Budget(limits.max_upload_bytes)
        uploadid = uuid.uuid4().hex
        records: list[Document] = []
        try:
            async for file in _each(files):
                if len(records) >= limits.max_upload_files:
                    raise PayloadTooLarge(f"an upload may hold at most {limits.max_upload_files}"
                                          " files (limits.max_upload_files)")
                records.append(await self._receive(file, uploadid, budget, principal))
            if not records:
                raise InvalidQuery("the upload holds no file")
            await self._ensure_index()
            await self.database.pipeline.write(WriteEvent(
                MEDIA_COLLECTION, on_behalf_of(principal), documents=records))
        except BaseException:
            await self._discard(records)
            raise
        finally:
            self.database.auth_cache.invalidate(OPENED)  # a name may now mean a newer file
        return Uploaded(uploadid, [str(r["_id"]) for r in records])

    async def _receive(self, file: Upload, uploadid: str, budget: Budget,
                       principal: Principal) -> Document:
        name = clean_filename(file.filename)
        receiver = Receiver(name, self.database.limits.max_upload_file_bytes, budget)
        head, content = await peek(receiver.stream(file.content), HEAD_BYTES)
        mimetype = sniff(head)
        media_id = new_object_id()
        await self.blobs.put(blob_key(media_id), content, mimetype)
        try:
            facts = None
            if mimetype in RASTER_TYPES:
                whole = receiver.size <= len(head)
                facts = await self._read_image(media_id, name, receiver.size,
                                               head if whole else None)
                mimetype = facts.mimetype
        except BaseException:
            await self._discard([{"_id": media_id}])
            raise
        return media_record(media_id, origname=name, size=receiver.size, mimetype=mimetype,
                            sha256=receiver.digest.hexdigest(), uploadid=uploadid,
                            image=facts, author=principal.author)

    async def _read_image(self, media_id: str, name: str, size: int,
                          data: bytes | None) -> images.ImageFacts:
        max_pixels = self.database.limits.max_image_pixels
        opener = self._opener(blob_key(media_id), size, data)
        return await images.in_image_thread(
            lambda deadline: images.describe(opener(deadline), max_pixels),
            name, self.database.limits.image_timeout)

    def _opener(self, key: str, size: int, data: bytes | None,
                ) -> Callable[[float], IO[bytes]]:
        if data is not None:
            return lambda _deadline: io.BytesIO(data)
        return partial(open_blob, self.blobs, key, size, asyncio.get_running_loop())

    async def _discard(self, records: Sequence[Document]) -> None:
        """Delete the blobs of ``records`` unless their metadata was stored after all."""
        if not records:
            return
        with contextlib.suppress(NotFound):
            await self.database.store.get(MEDIA_COLLECTION, str(records[0]["_id"]))
            return  # committed (an after-hook failed): the bytes stay with their records
        for record in records:
            for key in all_blob_keys(str(record["_id"])):
                try:
                    await self.blobs.delete(key)
                except Exception:
                    logger.exception("could not delete blob %r of a failed upload", key)

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
        return await self.records(principal).get(media_id)

    async def find(self, q: Any = None, h: dict[str, JSON] | None = None, *,
                   query: Query | None = None, principal: Principal = SYSTEM,
                   ) -> list[Document]:
        """The metadata records matching ``q``/``h`` (or a parsed ``query``), as ``/rest``.

        Raises:
            Forbidden: ``principal`` may not ``GET /media/*/meta``.
            InvalidQuery: ``q`` or ``h`` is malformed.

        """
        authorize(principal, Action("GET", "/media/*/meta"))
        return await self.records(principal).find(q, h, query=query)

    async def find_ids(self, ids: Sequence[str], *, principal: Principal = SYSTEM,
                       ) -> list[Document]:
        """The records of ``ids`` in that order; unknown ids are left out.

        Raises:
            InvalidId: an id is not an ObjectID.
            Forbidden: ``principal`` may not ``GET /media/*/meta``.

        """
        wanted = [check_object_id(i) for i in ids]
        if len(wanted) > self.database.limits.max_page:
            raise InvalidQuery(f"ids may name at most {self.database.limits.max_page} files")
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
                return await self.records().get(ref)
        await self._ensure_index()
        newest = await self.records().find({"origname": ref},
                                           {"$orderby": {"_created": -1, "_id": -1}, "$max": 1})
        if not newest:
            raise NotFound(f"no media file {ref!r}")
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
        return await self.database.auth_cache.fetch(OPENED, (ref, size),
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
        max_pixels = self.database.limits.max_image_pixels
        opener = self._opener(blob_key(media_id), int(record["filesize"]), None)
        made = await images.in_image_thread(
            lambda deadline: images.derive(opener(deadline), WIDTHS[size], max_pixels),
            name, self.database.limits.image_timeout)
        info = await self.blobs.put(key, _single(made.data), made.mimetype)
        try:
            await self.database.store.get(MEDIA_COLLECTION, media_id)
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
            self.database.auth_cache.invalidate(OPENED)
        return deleted


async def _each(files: Iterable[Upload] | AsyncIterable[Upload]) -> AsyncIterator[Upload]:
    if isinstance(files, AsyncIterable):
        async for file in files:
            yield file
    else:
        for file in files:
            yield file


async def _single(data: bytes) -> AsyncIterator[bytes]:
    yield data

