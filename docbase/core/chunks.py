"""Cutting a stream of bytes into the fixed-size chunks a blob store keeps.

A blob store that keeps content as numbered chunks (the SQL adapter's chunk table,
MongoDB's GridFS) feeds each arriving piece to a :class:`ChunkBuffer` and writes the
chunks it hands back, a batch at a time: the store holds at most about one batch in
memory, whatever the size of the blob.
"""

from __future__ import annotations


class ChunkBuffer:
    """Collects bytes and hands them out as whole chunks of ``chunk_size``, ``batch`` at a time."""

    def __init__(self, chunk_size: int, batch: int) -> None:
        if chunk_size < 1 or batch < 1:
            raise ValueError("chunks and batches hold at least one byte and one chunk")
        self.chunk_size = chunk_size
        self.batch = batch
        self.size = 0
        """Bytes added so far."""
        self._pending = bytearray()

    def add(self, data: bytes) -> list[bytes]:
        """Take ``data``; return a batch of whole chunks once there is one, else ``[]``."""
        self._pending += data
        self.size += len(data)
        if len(self._pending) < self.chunk_size * self.batch:
            return []
        return self._take(len(self._pending) // self.chunk_size * self.chunk_size)

    def rest(self) -> list[bytes]:
        """Return everything still held: whole chunks, then a shorter last one."""
        return self._take(len(self._pending))

    def _take(self, length: int) -> list[bytes]:
        size = self.chunk_size
        chunks = [bytes(self._pending[start:min(start + size, length)])
                  for start in range(0, length, size)]
        del self._pending[:length]
        return chunks
