"""Receiving one uploaded file: its name made safe, its bytes counted, hashed and peeked.

The bytes pass through on their way to the blob store: nothing here keeps more than
the head (:data:`~docbase.core.media.sniffing.HEAD_BYTES`) that sniffing reads.
"""

from __future__ import annotations

import hashlib
import unicodedata
from collections.abc import AsyncIterable, AsyncIterator
from dataclasses import dataclass

from docbase.core.errors import PayloadTooLarge

_MAX_NAME = 255
_PIECE = 1024 * 1024
DEFAULT_NAME = "file"
"""The stored name of a file whose client gave none (or only path separators)."""


@dataclass(frozen=True)
class Upload:
    """One file to store: the client's name for it and its content.

    ``content`` is the bytes, or an async iterable of chunks (consumed once, in order;
    never held whole). ``field`` is the multipart field it came in (informational).
    """

    filename: str
    content: bytes | AsyncIterable[bytes]
    field: str = ""


def clean_filename(raw: str | None) -> str:
    r"""The client's file name without path components, control characters or NULs.

    ``C:\\photos\\..\\cat.png`` and ``../../cat.png`` both become ``cat.png``; a name
    that is empty afterwards (``..``) becomes :data:`DEFAULT_NAME`.
    """
    name = unicodedata.normalize("NFC", raw or "")
    name = "".join(c for c in name if c.isprintable() or c == " ")
    name = name.replace("\\", "/").rpartition("/")[2].strip()
    if name in ("", ".", ".."):
        return DEFAULT_NAME
    if len(name) > _MAX_NAME:
        _, dot, extension = name.rpartition(".")
        keep = extension if dot and len(extension) < 16 else ""
        name = name[:_MAX_NAME - len(keep) - 1] + "." + keep if keep else name[:_MAX_NAME]
    return name


class Budget:
    """The bytes one upload request may still carry over all its files."""

    def __init__(self, limit: int) -> None:
        self.limit = limit
        self.used = 0

    def spend(self, size: int) -> None:
        """Count ``size`` more bytes; raise ``PayloadTooLarge`` past the limit."""
        self.used += size
        if self.used > self.limit:
            raise PayloadTooLarge(f"the upload exceeds {self.limit} bytes "
                                  "(limits.max_upload_bytes)")


class Receiver:
    """Counts and hashes one file's bytes as they stream past, within its limits."""

    def __init__(self, filename: str, limit: int, budget: Budget) -> None:
        self.filename = filename
        self.limit = limit
        self.budget = budget
        self.size = 0
        self.digest = hashlib.sha256()

    async def stream(self, content: bytes | AsyncIterable[bytes]) -> AsyncIterator[bytes]:
        """Yield the content's chunks, counting and hashing them.

        Raises:
            PayloadTooLarge: the file (naming it) or the whole upload is over its limit.

        """
        async for chunk in _chunks(content):
            if not chunk:
                continue
            self.size += len(chunk)
            if self.size > self.limit:
                raise PayloadTooLarge(f"file {self.filename!r} exceeds {self.limit} bytes "
                                      "(limits.max_upload_file_bytes)")
            self.budget.spend(len(chunk))
            self.digest.update(chunk)
            yield chunk


async def peek(chunks: AsyncIterator[bytes], size: int) -> tuple[bytes, AsyncIterator[bytes]]:
    """Read at least ``size`` bytes (or all there are); return them and the whole stream.

    The returned stream yields the peeked bytes first, then the rest of ``chunks``.
    """
    parts: list[bytes] = []
    seen = 0
    async for chunk in chunks:
        parts.append(chunk)
        seen += len(chunk)
        if seen >= size:
            break
    head = b"".join(parts)

    async def whole() -> AsyncIterator[bytes]:
        if head:
            yield head
        async for chunk in chunks:
            yield chunk

    return head[:size], whole()


async def _chunks(content: bytes | AsyncIterable[bytes]) -> AsyncIterator[bytes]:
    if isinstance(content, bytes | bytearray | memoryview):
        view = memoryview(content)
        for start in range(0, len(view), _PIECE):
            yield bytes(view[start:start + _PIECE])
        return
    async for chunk in content:
        yield bytes(chunk)
