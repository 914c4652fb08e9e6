"""One upload: every file received into the blob store, then all records in one write.

Each file streams to the blob store through a :class:`~docbase.core.media.receiving.
Receiver` (counted against its limits, hashed), its head sniffed on the way; a raster
image then has its header read in the image threads. Only when every file is stored
are all their records written to ``_media`` in one insert through the write pipeline.
Whatever fails on the way, the bytes stored so far are deleted again, unless their
records were committed after all (an after-hook failed), so a failed upload leaves
neither bytes nor metadata, and no record is left without its bytes.

An upload that takes longer than ``media.orphan_grace`` may meet the orphan sweep
(``sweeping.py``): its commit is refused when the sweep claimed one of its ids first,
and when the sweep deleted an original before the commit, the upload finds it gone
right after and takes its records back. Either way it fails with ``Conflict`` naming
the file, and nothing of it stays.
"""

from __future__ import annotations

import contextlib
import logging
import uuid
from collections.abc import AsyncIterable, AsyncIterator, Iterable, Sequence
from typing import TYPE_CHECKING

import msgspec

from docbase.core.auth.principal import Principal, on_behalf_of
from docbase.core.documents import Document
from docbase.core.errors import Conflict, InvalidQuery, NotFound, PayloadTooLarge
from docbase.core.events import Insert
from docbase.core.ids import new_object_id
from docbase.core.media import images
from docbase.core.media.blobfile import image_source
from docbase.core.media.derivatives import all_blob_keys, blob_key
from docbase.core.media.receiving import Budget, Receiver, Upload, clean_filename, peek
from docbase.core.media.records import MEDIA_COLLECTION, is_tombstone, media_record
from docbase.core.media.sniffing import HEAD_BYTES, RASTER_TYPES, sniff
from docbase.core.ports import BlobStore, DocumentStore

if TYPE_CHECKING:
    from docbase.core.collection_views import CollectionViews

logger = logging.getLogger("docbase.media")


class Uploaded(msgspec.Struct, frozen=True):
    """The answer to an upload: its id and the media id of each file, in upload order."""

    uploadid: str
    ids: list[str]


class UploadRun:
    """Stores the files of one upload for ``principal`` (already authorized)."""

    def __init__(self, views: CollectionViews, store: DocumentStore, blobs: BlobStore,
                 principal: Principal) -> None:
        self.views = views
        self.system_store = store
        self.blobs = blobs
        self.principal = principal
        self.limits = views.limits
        self.uploadid = uuid.uuid4().hex
        self.budget = Budget(self.limits.max_upload_bytes)

    async def store(self, files: Iterable[Upload] | AsyncIterable[Upload]) -> Uploaded:
        """Store every file, then their records; all or nothing."""
        records: list[Document] = []
        try:
            async for file in _each(files):
                if len(records) >= self.limits.max_upload_files:
                    raise PayloadTooLarge(f"an upload may hold at most "
                                          f"{self.limits.max_upload_files} files "
                                          "(limits.max_upload_files)")
                records.append(await self._receive(file))
            if not records:
                raise InvalidQuery("the upload holds no file")
            await self._commit(records)
        except BaseException:
            await self._discard(records)
            raise
        return Uploaded(self.uploadid, [str(r["_id"]) for r in records])

    async def _commit(self, records: list[Document]) -> None:
        """Write the records through the pipeline; refuse what the orphan sweep took."""
        try:
            await self.views.pipeline.write(Insert(
                collection=MEDIA_COLLECTION, principal=on_behalf_of(self.principal),
                documents=records))
        except Conflict as exc:
            claimed = await self._claimed(records)
            if claimed is None:
                raise
            raise Conflict(_swept(claimed)) from exc
        for record in records:
            try:
                await self.blobs.stat(blob_key(str(record["_id"])))
            except NotFound:  # swept before the commit: take the records back
                await self.system_store.delete(MEDIA_COLLECTION,
                                              [str(r["_id"]) for r in records])
                raise Conflict(_swept(record)) from None

    async def _claimed(self, records: Sequence[Document]) -> Document | None:
        """The first record whose id the orphan sweep holds a tombstone for."""
        for record in records:
            with contextlib.suppress(NotFound):
                if is_tombstone(await self.system_store.get(MEDIA_COLLECTION,
                                                           str(record["_id"]))):
                    return record
        return None

    async def _receive(self, file: Upload) -> Document:
        name = clean_filename(file.filename)
        receiver = Receiver(name, self.limits.max_upload_file_bytes, self.budget)
        head, content = await peek(receiver.stream(file.content), HEAD_BYTES)
        mimetype = sniff(head)
        media_id = new_object_id()
        await self.blobs.put(blob_key(media_id), content, mimetype)
        try:
            facts = None
            if mimetype in RASTER_TYPES:
                whole = head if receiver.size <= len(head) else None
                source = image_source(self.blobs, blob_key(media_id), receiver.size, whole)
                max_pixels = self.limits.max_image_pixels
                facts = await images.in_image_thread(
                    lambda deadline: images.describe(source(deadline), max_pixels),
                    name, self.limits.image_timeout)
                mimetype = facts.mimetype
        except BaseException:
            await self._discard([{"_id": media_id}])
            raise
        return media_record(media_id, origname=name, size=receiver.size, mimetype=mimetype,
                            sha256=receiver.digest.hexdigest(), uploadid=self.uploadid,
                            image=facts, author=self.principal.author)

    async def _discard(self, records: Sequence[Document]) -> None:
        """Delete the blobs of ``records`` unless their metadata was stored after all."""
        if not records:
            return
        with contextlib.suppress(NotFound):
            stored = await self.system_store.get(MEDIA_COLLECTION, str(records[0]["_id"]))
            if stored.get("uploadid") == self.uploadid:
                return  # committed (an after-hook failed): the bytes stay with their records
        for record in records:
            for key in all_blob_keys(str(record["_id"])):
                try:
                    await self.blobs.delete(key)
                except Exception:
                    logger.exception("could not delete blob %r of a failed upload", key)


def _swept(record: Document) -> str:
    return (f"file {record['origname']!r} was removed by the orphan sweep: the upload took "
            "longer than media.orphan_grace; upload it again")


async def _each(files: Iterable[Upload] | AsyncIterable[Upload]) -> AsyncIterator[Upload]:
    if isinstance(files, AsyncIterable):
        async for file in files:
            yield file
    else:
        for file in files:
            yield file
