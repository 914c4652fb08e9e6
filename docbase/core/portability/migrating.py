"""Migration: one database's content copied into another store, verified, then followed.

:func:`migrate` exports the source into an archive file (one point in time, see
:mod:`.exporting`), imports it into the target (resumable, see :mod:`.importing`) and
verifies each collection: the target's documents must have the archive's count and
content checksum (:class:`~.paging.ContentDigest`, independent of engine and order).
:func:`~.following.follow` then applies the source's change log to the target from the
archive's position, so the target keeps up with writes the source still takes until the
servers are switched over.
"""

from __future__ import annotations

import tempfile
from pathlib import Path

import msgspec

from docbase.core.portability.archive import members, open_archive, read_manifest
from docbase.core.portability.exporting import export_archive
from docbase.core.portability.format import CollectionEntry, Manifest
from docbase.core.portability.importing import import_archive
from docbase.core.portability.paging import ContentDigest, digest_collection
from docbase.core.portability.progress import Progress, Summary
from docbase.core.portability.source import PortableDatabase


class CollectionCheck(msgspec.Struct, frozen=True, kw_only=True):
    """One collection compared: the archive's count and checksum against the target's."""

    name: str
    expected: int
    found: int
    expected_sum: str
    found_sum: str

    @property
    def ok(self) -> bool:
        """Whether the target holds exactly the archive's documents."""
        return self.expected == self.found and self.expected_sum == self.found_sum


class Migration(msgspec.Struct, frozen=True, kw_only=True):
    """What :func:`migrate` did: the archive's manifest, a summary, each collection's check."""

    manifest: Manifest
    summary: Summary
    checks: list[CollectionCheck]

    @property
    def ok(self) -> bool:
        """Whether every collection arrived intact."""
        return all(check.ok for check in self.checks)


async def migrate(source: PortableDatabase, target: PortableDatabase, *,
                  progress: Progress | None = None) -> Migration:
    """Copy ``source`` into ``target`` through an archive (secrets included), then verify.

    Running it again after an interruption resumes (the import skips what is stored).

    Raises:
        ImportRefused: the target holds a different document under an archived ``_id``.
        BackendError: a store failed.

    """
    with tempfile.TemporaryDirectory(prefix="docbase-migrate-") as work:
        path = Path(work) / "migration.tar"
        manifest, summary = await export_archive(source, path, secrets=True,
                                                 progress=progress)
        await import_archive(target, path, progress=progress)
        checks = await verify(target, path, manifest.collections)
    return Migration(manifest=manifest, summary=summary, checks=checks)


def archive_digests(path: Path) -> dict[str, ContentDigest]:
    """The :class:`ContentDigest` of each collection member of an archive."""
    digests: dict[str, ContentDigest] = {}
    with open_archive(path) as tar:
        manifest = read_manifest(tar)
        names = {entry.member: entry.name for entry in manifest.collections}
        for member in members(tar):
            name = names.get(member.name)
            if name is None:
                continue
            digest = digests[name] = ContentDigest()
            for line in member.content:
                digest.add(line.rstrip(b"\n"))
    return digests


async def verify(target: PortableDatabase, path: Path,
                 entries: tuple[CollectionEntry, ...]) -> list[CollectionCheck]:
    """Compare each collection of the archive at ``path`` with ``target``'s.

    Raises:
        BackendError: the store failed.

    """
    expected = archive_digests(path)
    checks = []
    for entry in entries:
        found = await digest_collection(target.store, entry.name)
        want = expected.get(entry.name, ContentDigest())
        checks.append(CollectionCheck(name=entry.name, expected=want.count, found=found.count,
                                      expected_sum=want.hexdigest,
                                      found_sum=found.hexdigest))
    return checks
