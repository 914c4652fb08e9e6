"""A :class:`~docbase.core.ports.BlobStore` on GridFS.

Each ``put`` uploads a new GridFS file named by the key, chunk by chunk as the content
arrives, and only then deletes the older files of that key: readers see the old blob
or the new one, never a mix, and of two concurrent puts the later upload wins.
Range reads seek to the first chunk they need.
"""

from __future__ import annotations

import contextlib
from collections.abc import AsyncIterable, AsyncIterator
from typing import Any

from gridfs.asynchronous import AsyncGridFSBucket
from gridfs.errors import NoFile
from pymongo import AsyncMongoClient
from pymongo.asynchronous.collection import AsyncCollection
from pymongo.errors import PyMongoError

from docbase.adapters.mongo.errors import translated
from docbase.core.errors import NotFound
from docbase.core.ports import BlobInfo

Raw = dict[str, Any]
DEFAULT_BUCKET = "blobs"
_READ_SIZE = 255 * 1024  # GridFS's default chunk size
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

    def _bucket(self) -> AsyncGridFSBucket:
        return AsyncGridFSBucket(self._db, bucket_name=self._bucket_name)

    async def put(self, key: str, chunks: AsyncIterable[bytes], content_type: str) -> BlobInfo:
        """Upload ``chunks`` as a new GridFS file, then delete older ones of ``key``."""
        bucket = self._bucket()
        with translated(f"store blob {key!r}"):
            upload = bucket.open_upload_stream(key, metadata={"contentType": content_type})
            size = 0
            try:
                async for chunk in chunks:
                    await upload.write(bytes(chunk))
                    size += len(chunk)
            except BaseException:
                with contextlib.suppress(PyMongoError):
                    await upload.abort()
                raise
            await upload.close()
            await self._delete_older(bucket, key, upload._id)
        return BlobInfo(key, size, content_type)

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
        """Stream bytes ``start`` to ``end`` of the newest file of ``key``."""
        latest = await self._latest(key)
        if latest is None:
            raise NotFound(f"no blob {key!r}")
        stop = latest["length"] if end is None else min(end, latest["length"])
        position = max(start, 0)
        if position >= stop:
            return
        with translated(f"read blob {key!r}"):
            stream = await self._bucket().open_download_stream(latest["_id"])
            await stream.seek(position)
        try:
            while position < stop:
                with translated(f"read blob {key!r}"):
                    data = await stream.read(min(_READ_SIZE, stop - position))
                if not data:
                    break
                position += len(data)
                yield data
        finally:
            await stream.close()

    async def delete(self, key: str) -> bool:
        """Delete every file of ``key``; return whether there was one."""
        bucket = self._bucket()
        with translated(f"delete blob {key!r}"):
            files = [file["_id"] async for file in self._files.find({"filename": key}, {"_id": 1})]
            for file_id in files:
                with contextlib.suppress(NoFile):
                    await bucket.delete(file_id)
        return bool(files)


def _info(key: str, file: Raw) -> BlobInfo:
    metadata = file.get("metadata") or {}
    return BlobInfo(key, file["length"], metadata.get("contentType", _DEFAULT_TYPE))
