"""Reading and writing the tar archive of :mod:`.format`, in constant memory.

A :class:`Spool` is a collection's NDJSON on disk while an export prepares it (counted
and hashed as written); :class:`ArchiveWriter` puts the manifest and then each spool
and each media file into the tar; :func:`read_archive` streams the members back in
order, checking each collection member against the manifest's count and SHA-256.
"""

from __future__ import annotations

import hashlib
import io
import tarfile
import tempfile
import time
from collections.abc import AsyncIterator, Iterator, Sequence
from pathlib import Path
from types import TracebackType
from typing import IO, Self

import msgspec

from docbase.core.errors import InvalidQuery
from docbase.core.portability.format import (
    FORMAT_NAME,
    FORMAT_VERSION,
    MANIFEST_MEMBER,
    MEDIA_PREFIX,
    Manifest,
)
from docbase.core.portability.paging import Line
from docbase.core.ports import BlobStore

CHUNK = 1 << 16


class InvalidArchive(InvalidQuery):
    """The file is not an archive this docbase can read, or it is damaged."""


class Spool:
    """NDJSON lines in a file of ``directory``: counted, sized and hashed as written."""

    def __init__(self, directory: Path, name: str) -> None:
        self.directory = directory
        self.name = name
        self.path = directory / f"{len(list(directory.iterdir()))}.ndjson"
        self._file: IO[bytes] | None = self.path.open("wb")
        self._hash = hashlib.sha256()
        self.count = 0
        self.size = 0

    def write_lines(self, lines: Sequence[Line]) -> int:
        """Append documents given as JSON text, one a line; return the bytes written."""
        assert self._file is not None
        if not lines:
            return 0
        data = b"\n".join([*lines, b""])  # one copy of the page, newline-terminated
        self._file.write(data)
        self._hash.update(data)
        self.size += len(data)
        self.count += len(lines)
        return len(data)

    def close(self) -> None:
        """Finish writing."""
        if self._file is not None:
            self._file.close()
            self._file = None

    def read_lines(self) -> Iterator[bytes]:
        """The lines written, without their newline."""
        self.close()
        with self.path.open("rb") as lines:
            for line in lines:
                yield line.rstrip(b"\n")

    @property
    def sha256(self) -> str:
        """The SHA-256 of the bytes written, hex."""
        return self._hash.hexdigest()


class ArchiveWriter:
    """Writes an archive: the manifest on entry, then members in the order added."""

    def __init__(self, path: Path, manifest: Manifest) -> None:
        if path.name.removesuffix(".part").endswith(".gz"):
            self._tar = tarfile.open(path, "w:gz", format=tarfile.PAX_FORMAT)  # noqa: SIM115
        else:
            self._tar = tarfile.open(path, "w", format=tarfile.PAX_FORMAT)  # noqa: SIM115
        data = msgspec.json.format(msgspec.json.encode(manifest))
        self._add(MANIFEST_MEMBER, io.BytesIO(data), len(data))

    def __enter__(self) -> Self:
        return self

    def __exit__(self, kind: type[BaseException] | None, error: BaseException | None,
                 traceback: TracebackType | None) -> None:
        self._tar.close()

    def _add(self, name: str, content: IO[bytes], size: int) -> None:
        info = tarfile.TarInfo(name)
        info.size = size
        info.mtime = int(time.time())
        info.mode = 0o644
        self._tar.addfile(info, content)

    def add_spool(self, member: str, spool: Spool) -> None:
        """Add a collection's member from its spool."""
        spool.close()
        with spool.path.open("rb") as content:
            self._add(member, content, spool.size)

    async def add_blob(self, blobs: BlobStore, media_id: str) -> None:
        """Add a media file's original bytes (spooled to disk first: tar needs the size)."""
        with tempfile.TemporaryFile() as content:
            async for chunk in blobs.read(media_id):
                content.write(chunk)
            size = content.tell()
            content.seek(0)
            self._add(MEDIA_PREFIX + media_id, content, size)


class Member(msgspec.Struct, frozen=True):
    """One member read back: its name and a stream of its bytes."""

    name: str
    content: IO[bytes]


def read_manifest(tar: tarfile.TarFile) -> Manifest:
    """Read and check the manifest, which must be the first member.

    Raises:
        InvalidArchive: there is none, or it has another format or version.

    """
    first = tar.next()
    if first is None or first.name != MANIFEST_MEMBER:
        raise InvalidArchive(f"not a docbase archive: it does not start with {MANIFEST_MEMBER}")
    content = tar.extractfile(first)
    assert content is not None
    try:
        manifest = msgspec.json.decode(content.read(), type=Manifest)
    except msgspec.ValidationError as exc:
        raise InvalidArchive(f"damaged manifest: {exc}") from None
    if manifest.format != FORMAT_NAME or manifest.version > FORMAT_VERSION:
        raise InvalidArchive(f"archive format {manifest.format!r} version {manifest.version} "
                             f"is not readable here (version {FORMAT_VERSION} is)")
    return manifest


def open_archive(path: Path) -> tarfile.TarFile:
    """Open an archive for streaming its members in order.

    Raises:
        InvalidArchive: the file is not a tar file.

    """
    try:
        return tarfile.open(path, "r|*")
    except (tarfile.TarError, OSError) as exc:
        raise InvalidArchive(f"cannot read archive {str(path)!r}: {exc}") from None


def members(tar: tarfile.TarFile) -> Iterator[Member]:
    """The members after the manifest, in archive order."""
    for info in tar:
        content = tar.extractfile(info)
        if content is not None and info.name != MANIFEST_MEMBER:
            yield Member(info.name, content)


async def chunks_of(content: IO[bytes]) -> AsyncIterator[bytes]:
    """A member's bytes as the async chunks a blob store's ``put`` consumes."""
    while chunk := content.read(CHUNK):
        yield chunk
