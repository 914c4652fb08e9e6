"""Export: a whole database (or some collections) into one archive, at one point in time.

The copy runs while servers write. Consistency comes from the change log (not an
engine snapshot, so it is the same on every adapter): :func:`export_archive`

1. holds a capture lease (:mod:`.capture`), so every process logs its writes;
2. records the log's last number (the *start*), then copies each collection page by
   page (:mod:`.paging`) into a spool file next to the output;
3. records the last number again (the *end*) and reads the entries in between
   (:mod:`.replay`), replacing each written document by its state at the end
   position, or dropping it when it was deleted;
4. writes the archive (:mod:`.format`): the manifest, the collections, the media bytes.

The user collections in the archive are therefore exactly the store at the end
position: every write acknowledged before the export began is in it. System
collections (keys, users, schemas, settings, webhooks, media metadata) are not in the
change log; they are copied as they are when read. Memory stays constant in the
database's size (two pages: one written, the next read meanwhile; plus the documents
written during the export).
"""

from __future__ import annotations

import os
import tempfile
import time
from collections.abc import Sequence
from pathlib import Path

import msgspec

from docbase.core.documents import Document
from docbase.core.errors import NotFound
from docbase.core.ids import utc_now
from docbase.core.media.records import MEDIA_COLLECTION, is_tombstone
from docbase.core.names import is_user_collection
from docbase.core.portability.archive import ArchiveWriter, Spool
from docbase.core.portability.capture import capturing
from docbase.core.portability.format import (
    SYSTEM_ORDER,
    CollectionEntry,
    Manifest,
    MediaEntry,
    member_of,
    redact_settings,
)
from docbase.core.portability.paging import document_id, pages
from docbase.core.portability.progress import Progress, QuietProgress, Summary
from docbase.core.portability.replay import changes_between
from docbase.core.portability.source import PortableDatabase
from docbase.core.query import MATCH_ALL
from docbase.core.schema.model import FieldType
from docbase.core.settings.store import SETTINGS_COLLECTION

_encode = msgspec.json.Encoder().encode


async def export_archive(db: PortableDatabase, out: Path, *,
                         collections: Sequence[str] | None = None, secrets: bool = False,
                         progress: Progress | None = None) -> tuple[Manifest, Summary]:
    """Write ``db`` (or its ``collections``) to the archive file ``out``.

    The file appears complete or not at all (written beside it, then renamed).

    Raises:
        BackendError: a store failed; no archive is written.

    """
    progress = progress or QuietProgress()
    began = time.monotonic()
    out = _absolute(out)
    with tempfile.TemporaryDirectory(dir=out.parent, prefix=".docbase-export-") as spool_dir:
        async with capturing(db.store, db.auth_cache):
            log = db.changes.log
            start = (await log.state())[0]
            names = await _chosen(db, collections)
            spools = {name: await _copy(db, name, Path(spool_dir), progress) for name in names}
            end = (await log.state())[0]
            changed = await changes_between(
                log, start, end, grace=db.limits.change_gap_grace,
                only=None if collections is None else set(collections))
        for name in changed:
            if name not in spools:
                names.append(name)
                spools[name] = Spool(Path(spool_dir), name)
        entries = []
        for name in names:
            secret = await _secret_fields(db, name)
            final = await _finish(db, spools[name], changed.get(name, {}), secret, secrets)
            entries.append((final, CollectionEntry(name=name, member=member_of(name),
                                                   count=final.count, bytes=final.size,
                                                   sha256=final.sha256)))
        media = _media_ids(spools.get(MEDIA_COLLECTION)) if collections is None else []
        sizes = await _media_sizes(db, media)
        manifest = Manifest(created=utc_now(), database=db.name, position=end,
                            consistency="change-log", secrets=secrets,
                            collections=tuple(entry for _, entry in entries),
                            media=MediaEntry(count=len(sizes), bytes=sum(sizes.values())))
        part = out.with_name(out.name + ".part")
        with ArchiveWriter(part, manifest) as writer:
            for final, entry in entries:
                writer.add_spool(entry.member, final)
            progress.begin("media", len(sizes))
            for media_id in sizes:
                await writer.add_blob(db.blobs, media_id)  # type: ignore[arg-type]
                progress.advance(1, sizes[media_id])
            progress.end()
        os.replace(part, out)
    return manifest, Summary(collections=len(entries), documents=manifest.documents,
                             media=len(sizes), bytes=_size(out),
                             seconds=time.monotonic() - began)


def _absolute(path: Path) -> Path:
    return path.resolve()


def _size(path: Path) -> int:
    return path.stat().st_size


async def _chosen(db: PortableDatabase, collections: Sequence[str] | None) -> list[str]:
    stored = set(await db.store.collections())
    if collections is not None:
        return [c for c in collections if c in stored]
    system = [c for c in SYSTEM_ORDER if c in stored]
    return system + sorted(c for c in stored if is_user_collection(c))


async def _copy(db: PortableDatabase, name: str, directory: Path, progress: Progress) -> Spool:
    spool = Spool(directory, name)
    progress.begin(name, await db.store.count(name, MATCH_ALL))
    async for lines in pages(db.store, name):
        progress.advance(len(lines), spool.write_lines(lines))
    progress.end()
    spool.close()
    return spool


async def _secret_fields(db: PortableDatabase, name: str) -> list[str]:
    if not is_user_collection(name):
        return []
    schema = await db.schemas.get(name)
    return [] if schema is None else [f.name for f in schema.of_type(FieldType.PASSWORD)]


async def _finish(db: PortableDatabase, copied: Spool, changed: dict[str, Document | None],
                  secret: list[str], secrets: bool) -> Spool:
    """The collection's final member: the copy with the changed documents replaced."""
    if not changed and (copied.name != SETTINGS_COLLECTION or secrets):
        return copied
    final = Spool(copied.directory, copied.name + ".final")
    for line in copied.read_lines():
        if changed and document_id(line) in changed:
            continue
        if copied.name == SETTINGS_COLLECTION and not secrets:
            final.write_lines([_encode(redact_settings(msgspec.json.decode(line)))])
        else:
            final.write_lines([line])
    for document_id_, document in changed.items():
        if document is None:
            continue
        if secret:  # the log never carries password hashes: take them from the store
            final.write_lines([_encode(await _with_secrets(db, copied.name, document_id_,
                                                           document, secret))])
        else:
            final.write_lines([_encode(document)])
    final.close()
    return final


async def _with_secrets(db: PortableDatabase, name: str, document_id_: str,
                        document: Document, secret: list[str]) -> Document:
    try:
        stored = await db.store.get(name, document_id_)
    except NotFound:
        return document
    return document | {field: stored[field] for field in secret if field in stored}


def _media_ids(spool: Spool | None) -> list[str]:
    if spool is None:
        return []
    records = (msgspec.json.decode(line) for line in spool.read_lines())
    return [str(r["_id"]) for r in records if not is_tombstone(r)]


async def _media_sizes(db: PortableDatabase, media_ids: list[str]) -> dict[str, int]:
    sizes: dict[str, int] = {}
    if db.blobs is None:
        return sizes
    for media_id in media_ids:
        try:
            sizes[media_id] = (await db.blobs.stat(media_id)).size
        except NotFound:  # metadata whose bytes are gone: the record alone is exported
            continue
    return sizes


__all__ = ["export_archive"]
