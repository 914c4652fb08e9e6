"""A :class:`~docbase.core.ports.BlobStore` on GridFS.

Each ``put`` uploads a new GridFS file named by the key, chunk by chunk as the content
arrives, and only then deletes the older files of that key: readers see the old blob
or the new one, never a mix, and of two concurrent puts the later upload wins.
Range reads fetch only the chunks they need, a few per round trip.

A file's ``_id`` is an ObjectID made when its put began, so it dates the put:
:meth:`MongoBlobStore.keys` lists files by it, and :meth:`MongoBlobStore.delete_unfinished`
finds the chunks of puts that never wrote their file document (a killed process).
Publishing counts the file's chunks, so a put whose chunks were swept meanwhile fails
instead of leaving a file with holes.
"""

from __future__ import annotations

import contextlib
from collections.abc import AsyncIterable, AsyncIterator
from datetime import UTC, datetime
from typing import Any

from bson import Binary, ObjectId
from gridfs.asynchronous import AsyncGridFSBucket
from gridfs.errors import NoFile
from pymongo import AsyncMongoClient
from pymongo.asynchronous.collection import AsyncCollection
from pymongo.errors import PyMongoError

from docbase.adapters.mongo.errors import translated
from docbase.core.chunks import ChunkBuffer
from docbase.core.errors import Conflict, NotFound
from docbase.core.ports import BlobInfo

Raw = dict[str, Any]
DEFAULT_BUCKET = "blobs"
_CHUNK_SIZE = 255 * 1024  # GridFS's default
_BATCH = 8  # chunks per round trip of a write or a read: about 2 MiB
_DEFAULT_TYPE = "application/octet-stream"


class MongoBlobStore:
    """Blobs in the GridFS bucket ``bucket`` of one MongoDB database."""

    def __init__(
        self,
        client: AsyncMongoClient[Raw],
        database: str,
        *,
        bucket: str = DEFAULT_BUCKET,
    ) -> None:
        """Store blobs in ``<bucket>.files``/``<bucket>.chunks`` of ``database``."""
        self._db = client[database]
        self._bucket_name = bucket
        self._files: AsyncCollection[Raw] = self._db[f"{bucket}.files"]
        self._chunks: AsyncCollection[Raw] = self._db[f"{bucket}.chunks"]

    def _bucket(self) -> AsyncGridFSBucket:
        return AsyncGridFSBucket(self._db, bucket_name=self._bucket_name)

    async def put(self, key: str, chunks: AsyncIterable[bytes], content_type: str) -> BlobInfo:
        """Write ``chunks`` as a new GridFS file, then delete older ones of ``key``.

        The chunks are inserted :data:`_BATCH` at a time as they arrive and the file's
        document last, as GridFS lays a file out (the driver's own upload stream would
        buffer up to 48 MB before writing).
        """
        file_id = ObjectId()
        buffer = ChunkBuffer(_CHUNK_SIZE, _BATCH)
        written = 0
        try:
            with translated(f"store blob {key!r}"):
                async for chunk in chunks:
                    written = await self._insert_chunks(file_id, written, buffer.add(chunk))
                written = await self._insert_chunks(file_id, written, buffer.rest())
                await self._files.insert_one({
                    "_id": file_id, "length": buffer.size, "chunkSize": _CHUNK_SIZE,
                    "uploadDate": datetime.now(UTC), "filename": key,
                    "metadata": {"contentType": content_type}})
                if await self._chunks.count_documents({"files_id": file_id}) != written:
                    await self._files.delete_one({"_id": file_id})
                    raise Conflict(f"blob {key!r} lost chunks while being stored: the put "
                                   "took longer than the orphan grace and was swept; store "
                                   "it again")
        except BaseException:
            with contextlib.suppress(PyMongoError):
                await self._chunks.delete_many({"files_id": file_id})
            raise
        with translated(f"store blob {key!r}"):
            await self._delete_older(self._bucket(), key, file_id)
        return BlobInfo(key, buffer.size, content_type)

    async def _insert_chunks(self, file_id: ObjectId, first: int, chunks: list[bytes]) -> int:
        if chunks:
            await self._chunks.insert_many(
                [{"files_id": file_id, "n": first + n, "data": Binary(data)}
                 for n, data in enumerate(chunks)], ordered=True)
        return first + len(chunks)

    async def _delete_older(self, bucket: AsyncGridFSBucket, key: str, newest: Any) -> None:
        mine = await self._files.find_one({"_id": newest})
        if mine is None:  # a concurrent put already replaced it
            return
        older = {"filename": key, "$or": [
            {"uploadDate": {"$lt": mine["uploadDate"]}},
            {"uploadDate": mine["uploadDate"], "_id": {"$lt": newest}},
        ]}
        async for file in self._files.find(older, {"_id": 1}):
            with contextlib.suppress(NoFile):
                await bucket.delete(file["_id"])

    async def _latest(self, key: str) -> Raw | None:
        with translated(f"find blob {key!r}"):
            return await self._files.find_one({"filename": key},
                                              sort=[("uploadDate", -1), ("_id", -1)])

    async def stat(self, key: str) -> BlobInfo:
        """Describe the newest file of ``key``."""
        latest = await self._latest(key)
        if latest is None:
            raise NotFound(f"no blob {key!r}")
        return _info(key, latest)

    async def read(self, key: str, start: int = 0, end: int | None = None) -> AsyncIterator[bytes]:
        """Stream bytes ``start`` to ``end`` of the newest file of ``key``.

        The chunks are read straight from ``<bucket>.chunks`` (GridFS's documented
        layout), :data:`_BATCH` at a time, so a download holds a few chunks in memory
        rather than a driver batch of up to 16 MB.
        """
        latest = await self._latest(key)
        if latest is None:
            raise NotFound(f"no blob {key!r}")
        size, chunk_size = int(latest["length"]), int(latest["chunkSize"])
        stop = size if end is None else min(end, size)
        position = max(start, 0)
        if position >= stop:
            return
        first, last = position // chunk_size, (stop - 1) // chunk_size
        cursor = self._chunks.find(
            {"files_id": latest["_id"], "n": {"$gte": first, "$lte": last}},
            {"n": 1, "data": 1}, sort=[("n", 1)], batch_size=_BATCH)
        try:
            expected = first
            while position < stop:
                with translated(f"read blob {key!r}"):
                    chunk = await anext(cursor, None)
                if chunk is None or chunk["n"] != expected:
                    raise NotFound(f"blob {key!r} was replaced or deleted while being read")
                offset = position - expected * chunk_size
                piece = bytes(chunk["data"])[offset:offset + stop - position]
                position += len(piece)
                expected += 1
                yield piece
        finally:
            await cursor.close()

    async def delete(self, key: str) -> bool:
        """Delete every file of ``key``; return whether there was one."""
        bucket = self._bucket()
        with translated(f"delete blob {key!r}"):
            files = [file["_id"] async for file in self._files.find({"filename": key}, {"_id": 1})]
            for file_id in files:
                with contextlib.suppress(NoFile):
                    await bucket.delete(file_id)
        return bool(files)

    async def keys(self, started_before: datetime) -> AsyncIterator[str]:
        """Stream the keys of the files whose put began before ``started_before``."""
        begun = {"_id": {"$lt": ObjectId.from_datetime(started_before)}}
        with translated("list blobs"):
            async for file in self._files.find(begun, {"filename": 1}, batch_size=1000):
                yield str(file["filename"])

    async def delete_unfinished(self, started_before: datetime) -> int:
        """Delete the chunks of puts begun before ``started_before`` that wrote no file."""
        begun = {"n": 0, "files_id": {"$lt": ObjectId.from_datetime(started_before)}}
        removed = 0
        with translated("delete unfinished blobs"):
            batch: list[Any] = []
            async for chunk in self._chunks.find(begun, {"files_id": 1}, batch_size=1000):
                batch.append(chunk["files_id"])
                if len(batch) == 1000:
                    removed += await self._delete_fileless(batch)
                    batch = []
            removed += await self._delete_fileless(batch)
        return removed

    async def _delete_fileless(self, file_ids: list[Any]) -> int:
        if not file_ids:
            return 0
        found = {f["_id"] async for f in self._files.find({"_id": {"$in": file_ids}}, {"_id": 1})}
        fileless = [file_id for file_id in file_ids if file_id not in found]
        if fileless:
            await self._chunks.delete_many({"files_id": {"$in": fileless}})
        return len(fileless)


def _info(key: str, file: Raw) -> BlobInfo:
    metadata = file.get("metadata") or {}
    return BlobInfo(key, file["length"], metadata.get("contentType", _DEFAULT_TYPE))
