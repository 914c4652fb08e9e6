"""Import: an archive into any store, in batches that are each all or nothing.

Documents are restored as stored (their ``_id``, system fields and password hashes
kept), so an import is not a client's write: it runs no hooks and publishes no change
events. It does pass the schema's field checks (:func:`check_fields`, the validate
stage's own) unless ``validate`` is false, and user collections are written through
``db.documents``, which claims unique values. A refused document stops the import with
an :class:`ImportRefused` naming its collection and line; the batches before it stay.

**Running it again** after an interruption (Ctrl-C, ``kill -9``) ends as one clean run
would: ids come from the archive, so a batch already stored collides on its ``_id``s,
and a collision with a document equal to the archived one is skipped. ``mode`` says
what a collision with a *different* document does: ``insert`` refuses it, ``skip``
keeps the stored one, ``upsert`` replaces it with the archived one.
"""

from __future__ import annotations

import copy
import hashlib
import time
from collections.abc import Sequence
from pathlib import Path
from typing import IO, Literal

import msgspec

from docbase.core.auth.keys import KEYS_COLLECTION
from docbase.core.auth.revocation import REVOKED_COLLECTION
from docbase.core.documents import Document
from docbase.core.errors import Conflict, DocbaseError
from docbase.core.evaluate import json_equal
from docbase.core.media.records import MEDIA_COLLECTION, is_tombstone
from docbase.core.names import is_user_collection
from docbase.core.portability.archive import (
    InvalidArchive,
    chunks_of,
    members,
    open_archive,
    read_manifest,
)
from docbase.core.portability.format import (
    MEDIA_PREFIX,
    SYSTEM_ORDER,
    CollectionEntry,
    Manifest,
)
from docbase.core.portability.progress import Progress, QuietProgress, Summary
from docbase.core.portability.source import PortableDatabase
from docbase.core.query import In, Query
from docbase.core.schema.validation import Problems, check_fields
from docbase.core.settings.store import SETTINGS_COLLECTION

ImportMode = Literal["insert", "upsert", "skip"]
BATCH = 1000
"""Documents stored per store call."""


class ImportRefused(DocbaseError):
    """A document of the archive was refused; ``collection`` and ``line`` name it."""

    def __init__(self, collection: str, line: int, reason: str) -> None:
        super().__init__(f"collection {collection!r}, line {line}: {reason}")
        self.collection = collection
        self.line = line


def _size(path: Path) -> int:
    return path.stat().st_size


class Importer:
    """Imports one archive's collections and media into ``db``."""

    def __init__(self, db: PortableDatabase, *, mode: ImportMode = "insert",
                 validate: bool = True, batch: int = BATCH,
                 progress: Progress | None = None) -> None:
        self.db = db
        self.mode = mode
        self.validate = validate
        self.batch = batch
        self.progress = progress or QuietProgress()
        self.mimetypes: dict[str, str] = {}

    async def run(self, path: Path) -> tuple[Manifest, Summary]:
        """Import the archive at ``path``.

        Raises:
            InvalidArchive: the file is no archive, or a member is damaged.
            ImportRefused: a document was refused (the earlier batches are stored).
            BackendError: the store failed.

        """
        began = time.monotonic()
        summary = Summary()
        with open_archive(path) as tar:
            manifest = read_manifest(tar)
            entries = {entry.member: entry for entry in manifest.collections}
            for member in members(tar):
                if member.name.startswith(MEDIA_PREFIX):
                    summary.media += await self._blob(member.name[len(MEDIA_PREFIX):],
                                                      member.content)
                    continue
                entry = entries.get(member.name)
                if entry is None:
                    raise InvalidArchive(f"unexpected archive member {member.name!r}")
                await self._collection(entry, member.content)
                summary.collections += 1
                summary.documents += entry.count
        summary.bytes = _size(path)
        summary.seconds = time.monotonic() - began
        return manifest, summary

    async def _collection(self, entry: CollectionEntry, content: IO[bytes]) -> None:
        self.progress.begin(entry.name, entry.count)
        digest = hashlib.sha256()
        batch: list[tuple[int, Document]] = []
        for number, raw in enumerate(content, start=1):
            digest.update(raw)
            try:
                batch.append((number, msgspec.json.decode(raw)))
            except msgspec.DecodeError:
                raise ImportRefused(entry.name, number, "not a JSON document") from None
            if len(batch) == self.batch:
                await self._store(entry.name, batch)
                self.progress.advance(len(batch))
                batch = []
        if batch:
            await self._store(entry.name, batch)
            self.progress.advance(len(batch))
        self.progress.end()
        if digest.hexdigest() != entry.sha256:
            raise InvalidArchive(f"archive member {entry.member!r} is damaged "
                                 "(its SHA-256 differs from the manifest's)")
        if not is_user_collection(entry.name):
            self.db.auth_cache.clear()  # schemas, settings, keys: read afresh from now on

    async def _store(self, name: str, batch: list[tuple[int, Document]]) -> None:
        if name == MEDIA_COLLECTION:
            self.mimetypes.update((str(d["_id"]), str(d.get("mimetype") or ""))
                                  for _, d in batch if not is_tombstone(d))
        if self.validate and is_user_collection(name):
            await self._check(name, batch)
        target = self.db.documents if is_user_collection(name) else self.db.store
        documents = [document for _, document in batch]
        try:
            await target.insert(name, documents)  # a refused insert changes none of them
        except Conflict as exc:
            await self._collided(name, batch, exc)

    async def _check(self, name: str, batch: list[tuple[int, Document]]) -> None:
        schema = await self.db.schemas.get(name)
        if schema is None:
            return
        strict = await self.db.schemas.mode() == "strict"
        for number, document in batch:
            problems: Problems = {}
            check_fields(copy.deepcopy(document), schema, strict, problems)
            if problems:
                fields = "; ".join(f"{field}: {', '.join(messages)}"
                                   for field, messages in problems.items())
                raise ImportRefused(name, number, f"does not fit the schema ({fields})")

    async def _collided(self, name: str, batch: list[tuple[int, Document]],
                        error: Conflict) -> None:
        """Store what of a colliding batch is not stored yet, as ``mode`` says."""
        ids = tuple(str(document["_id"]) for _, document in batch)
        stored = {d["_id"]: d for d in await self.db.store.find(
            name, Query(filter=In(("_id",), ids), limit=None))}
        fresh: list[Document] = []
        replaced: list[str] = []
        for number, document in batch:
            held = stored.get(document["_id"])
            if held is None:
                fresh.append(document)
            elif json_equal(held, document):
                continue
            elif self.mode == "upsert":
                replaced.append(str(document["_id"]))
                fresh.append(document)
            elif self.mode == "insert":
                raise ImportRefused(name, number, f"a different document with _id "
                                                  f"{document['_id']} is stored already")
        if not stored:
            first = batch[0][0]
            raise ImportRefused(name, first, f"(batch of lines {first}-{batch[-1][0]}) "
                                             f"{error.message}")
        target = self.db.documents if is_user_collection(name) else self.db.store
        if replaced:
            await target.delete(name, replaced)
        if fresh:
            try:
                await target.insert(name, fresh)
            except Conflict as exc:
                raise ImportRefused(name, batch[0][0], exc.message) from None

    async def _blob(self, media_id: str, content: IO[bytes]) -> int:
        if self.db.blobs is None:
            raise InvalidArchive("the archive holds media and this database has no media "
                                 "storage")
        await self.db.blobs.put(media_id, chunks_of(content),
                                self.mimetypes.get(media_id) or "application/octet-stream")
        return 1


async def import_archive(db: PortableDatabase, path: Path, *, mode: ImportMode = "insert",
                         validate: bool = True, progress: Progress | None = None,
                         ) -> tuple[Manifest, Summary]:
    """Import the archive at ``path`` into ``db`` (see :class:`Importer`).

    Raises:
        InvalidArchive: the file is no archive, or a member is damaged.
        ImportRefused: a document was refused (the earlier batches are stored).
        BackendError: the store failed.

    """
    return await Importer(db, mode=mode, validate=validate, progress=progress).run(path)


FRESH = frozenset({KEYS_COLLECTION, SETTINGS_COLLECTION, REVOKED_COLLECTION})
"""System collections a database that was never used may hold (a first key, settings)."""


async def restore_blockers(db: PortableDatabase) -> Sequence[str]:
    """The collections that make ``db`` not empty enough to restore into.

    A database just created by ``docbase serve`` or ``docbase db create`` has an API key
    and maybe settings; those do not count (a restore adds the archive's keys beside
    them and replaces the settings). Any user collection or other system data does.
    """
    names = await db.store.collections()
    return [n for n in names
            if is_user_collection(n) or (n in SYSTEM_ORDER and n not in FRESH)]
