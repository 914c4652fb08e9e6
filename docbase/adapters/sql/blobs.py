"""A :class:`~docbase.core.ports.BlobStore` on SQL: fixed-size chunks, streamed both ways.

Each upload writes its chunks under a fresh ``blob_id`` in short transactions (a few
chunks each, one commit per MiB) as the bytes arrive (never the whole file in memory,
never a write lock held while waiting for the client), then swaps the blob's row to
the new ``blob_id`` and deletes the old chunks in one transaction, so readers see the
old or the new content, never a mix. Reads fetch only the chunks that overlap the
requested range, a few per query.

A ``blob_id`` is an ObjectID, so it tells when its put began: :meth:`SqlBlobStore.keys`
lists blobs by it, and :meth:`SqlBlobStore.delete_unfinished` finds the chunks a killed
process left under a ``blob_id`` no blob row points to. Publishing counts the chunks it
switches to, so a put whose chunks were swept meanwhile fails instead of publishing a
blob with holes. Blobs of an older docbase have a random 32-digit ``blob_id``: they
count as begun long ago, and their unfinished chunks are left alone.
"""

from __future__ import annotations

from collections.abc import AsyncIterable, AsyncIterator
from datetime import datetime
from typing import TYPE_CHECKING

import sqlalchemy as sa
from sqlalchemy.dialects import sqlite

from docbase.adapters.sql.backend import AnyEngine, SqlBackend
from docbase.adapters.sql.schema import blob_chunks, blobs
from docbase.core.chunks import ChunkBuffer
from docbase.core.errors import Conflict, NotFound
from docbase.core.ids import new_object_id
from docbase.core.plugins import lazy_module
from docbase.core.ports import BlobInfo

if TYPE_CHECKING:
    from sqlalchemy.dialects import postgresql
else:  # imported for a PostgreSQL store only (~2 MiB per process)
    postgresql = lazy_module("sqlalchemy.dialects.postgresql")

CHUNK_SIZE = 256 * 1024
CHUNKS_PER_WRITE = 4
"""Chunks written per transaction (one commit per MiB rather than per chunk), and read
per query."""
KEYS_PER_QUERY = 1000
_TIMED_ID = 24
"""The length of a ``blob_id`` that is an ObjectID (its first 8 digits the start time)."""


class SqlBlobStore:
    """Blobs in ``docbase_blobs`` (one row each) and ``docbase_blob_chunks``."""

    def __init__(self, engine: AnyEngine, *, chunk_size: int = CHUNK_SIZE) -> None:
        self.backend = SqlBackend.for_engine(engine)
        self.chunk_size = chunk_size

    async def _write_chunks(self, blob_id: str, seq: int, chunks: list[bytes]) -> int:
        """Write ``chunks`` as numbers ``seq``, ``seq + 1``, ... in one transaction."""
        if chunks:
            rows = [{"blob_id": blob_id, "seq": seq + n, "data": data}
                    for n, data in enumerate(chunks)]
            await self.backend.run(lambda conn: conn.execute(sa.insert(blob_chunks), rows),
                                   write=True)
        return seq + len(chunks)

    async def put(self, key: str, chunks: AsyncIterable[bytes], content_type: str) -> BlobInfo:
        """Store the chunks under a fresh blob id, then switch ``key`` over to it."""
        blob_id = new_object_id()
        buffer = ChunkBuffer(self.chunk_size, CHUNKS_PER_WRITE)
        seq = 0
        try:
            async for chunk in chunks:
                seq = await self._write_chunks(blob_id, seq, buffer.add(chunk))
            rest = buffer.rest()
            seq = await self._write_chunks(blob_id, seq, rest if rest or seq else [b""])
            await self.backend.run(
                lambda conn: self._publish(conn, key, blob_id, chunks=seq, size=buffer.size,
                                           content_type=content_type),
                write=True)
        except BaseException:
            await self.backend.run(lambda conn: self._discard(conn, blob_id), write=True)
            raise
        return BlobInfo(key, buffer.size, content_type)

    def _publish(self, conn: sa.Connection, key: str, blob_id: str, *, chunks: int,
                 size: int, content_type: str) -> None:
        stored = conn.execute(sa.select(sa.func.count()).select_from(blob_chunks)
                              .where(blob_chunks.c.blob_id == blob_id)).scalar()
        if stored != chunks:
            raise Conflict(f"blob {key!r} lost chunks while being stored: the put took "
                           "longer than the orphan grace and was swept; store it again")
        old = conn.execute(sa.select(blobs.c.blob_id).where(blobs.c.key == key)).scalar()
        insert = postgresql.insert if self.backend.dialect.name == "postgresql" else sqlite.insert
        row = {"blob_id": blob_id, "size": size, "content_type": content_type,
               "chunk_size": self.chunk_size}
        conn.execute(insert(blobs).values(key=key, **row)
                           .on_conflict_do_update(index_elements=["key"], set_=row))
        if old is not None:
            self._discard(conn, old)

    def _discard(self, conn: sa.Connection, blob_id: str) -> None:
        conn.execute(sa.delete(blob_chunks).where(blob_chunks.c.blob_id == blob_id))

    async def _row(self, key: str) -> tuple[str, int, str, int]:
        def work(conn: sa.Connection) -> tuple[str, int, str, int] | None:
            found = conn.execute(sa.select(blobs.c.blob_id, blobs.c.size,
                                                 blobs.c.content_type, blobs.c.chunk_size)
                                       .where(blobs.c.key == key))
            row = found.first()
            return None if row is None else (str(row[0]), int(row[1]), str(row[2]), int(row[3]))

        row = await self.backend.run(work, write=False)
        if row is None:
            raise NotFound(f"no blob {key!r}")
        return row

    async def stat(self, key: str) -> BlobInfo:
        """Describe a blob; raise NotFound when absent."""
        _blob_id, size, content_type, _chunk_size = await self._row(key)
        return BlobInfo(key, size, content_type)

    async def read(self, key: str, start: int = 0, end: int | None = None) -> AsyncIterator[bytes]:
        """Stream the bytes ``start`` to ``end``, a few stored chunks per query."""
        blob_id, size, _content_type, chunk_size = await self._row(key)
        stop = size if end is None else min(end, size)
        position = max(start, 0)
        while position < stop:
            first, offset = divmod(position, chunk_size)
            last = min((stop - 1) // chunk_size, first + CHUNKS_PER_WRITE - 1)
            for data in await self._chunks(key, blob_id, first, last):
                piece = data[offset:min(len(data), offset + stop - position)]
                if not piece:
                    raise NotFound(f"blob {key!r} was replaced or deleted while being read")
                yield piece
                position += len(piece)
                offset = 0

    async def _chunks(self, key: str, blob_id: str, first: int, last: int) -> list[bytes]:
        def work(conn: sa.Connection) -> list[bytes]:
            found = conn.execute(sa.select(blob_chunks.c.data).where(
                blob_chunks.c.blob_id == blob_id, blob_chunks.c.seq.between(first, last))
                .order_by(blob_chunks.c.seq))
            return [bytes(row[0]) for row in found]

        data = await self.backend.run(work, write=False)
        if len(data) != last - first + 1:
            raise NotFound(f"blob {key!r} was replaced or deleted while being read")
        return data

    async def delete(self, key: str) -> bool:
        """Delete a blob and its chunks; return whether it existed."""
        def work(conn: sa.Connection) -> bool:
            gone = conn.execute(sa.delete(blobs).where(blobs.c.key == key)
                                      .returning(blobs.c.blob_id))
            blob_id = gone.scalar()
            if blob_id is None:
                return False
            self._discard(conn, blob_id)
            return True

        return await self.backend.run(work, write=True)

    async def keys(self, started_before: datetime) -> AsyncIterator[str]:
        """Stream the keys of blobs whose ``blob_id`` began before ``started_before``."""
        cutoff = _id_prefix(started_before)
        after = ""
        while True:
            def work(conn: sa.Connection, after: str = after) -> list[str]:
                begun = sa.or_(sa.func.length(blobs.c.blob_id) != _TIMED_ID,
                               blobs.c.blob_id < cutoff)
                found = conn.execute(sa.select(blobs.c.key)
                                     .where(blobs.c.key > after, begun)
                                     .order_by(blobs.c.key).limit(KEYS_PER_QUERY))
                return [str(row[0]) for row in found]

            page = await self.backend.run(work, write=False)
            for key in page:
                yield key
            if len(page) < KEYS_PER_QUERY:
                return
            after = page[-1]

    async def delete_unfinished(self, started_before: datetime) -> int:
        """Delete the chunks of puts begun before ``started_before`` that no blob points to."""
        cutoff = _id_prefix(started_before)

        def work(conn: sa.Connection) -> int:
            first = blob_chunks.c
            unpublished = ~sa.exists().where(blobs.c.blob_id == first.blob_id)
            found = conn.execute(sa.select(first.blob_id).where(
                first.seq == 0, sa.func.length(first.blob_id) == _TIMED_ID,
                first.blob_id < cutoff, unpublished))
            left = [str(row[0]) for row in found]
            for blob_id in left:
                self._discard(conn, blob_id)
            return len(left)

        return await self.backend.run(work, write=True)


def _id_prefix(moment: datetime) -> str:
    """The ObjectIDs below this string began before ``moment`` (a whole second)."""
    return f"{int(moment.timestamp()):08x}"
