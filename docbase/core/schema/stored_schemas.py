"""Where the schemas of a database live: the system collection ``_schemas``.

One document per collection (its ``_id`` derived from the collection's name), read
through the database's :class:`~docbase.core.auth.cache.SystemCache`: a process
trusts what it read for at most the cache's lifetime (one second), so a schema changed
by another process (``docbase schema apply`` while servers run) applies to this one's
writes within that second, and a change made through this process at once.

Changing a schema also prepares the store: every indexed field gets a store index, and
a field that becomes ``unique`` gets its claims (:mod:`.uniqueness`) for the documents
already stored, which fails, listing them, when stored documents repeat a value.
"""

from __future__ import annotations

import hashlib
from typing import TYPE_CHECKING

import msgspec

from docbase.core.auth.cache import Namespace, SystemCache
from docbase.core.errors import Conflict, NotFound
from docbase.core.query import Query
from docbase.core.request_schemas import current_snapshot
from docbase.core.schema.model import CollectionSchema
from docbase.core.schema.uniqueness import UniqueClaims
from docbase.core.settings.store import SettingsStore
from docbase.core.settings.stored import SchemaMode
from docbase.core.update import SetOp, UnsetOp, Update

if TYPE_CHECKING:
    from docbase.core.ports import DocumentStore

SCHEMAS_COLLECTION = "_schemas"
"""The system collection holding one schema document per collection."""
_ALL: Namespace[dict[str, CollectionSchema]] = Namespace("schemas")


def schema_id(collection: str) -> str:
    """The ``_id`` of the schema document of ``collection``."""
    return hashlib.sha1(f"schema\0{collection}".encode()).hexdigest()[:24]


class SchemaRegistry:
    """The schemas of one database, shared by every process through its store."""

    def __init__(self, store: DocumentStore, cache: SystemCache,
                 settings: SettingsStore) -> None:
        self.store = store
        self.cache = cache
        self.settings = settings
        self.claims = UniqueClaims(store)

    async def all(self) -> dict[str, CollectionSchema]:
        """Every schema, by collection name (read at most once per cache lifetime).

        Inside :class:`~docbase.core.request_schemas.OneSchemaRead` (a request), read
        once and reused by the rest of the request.
        """
        snapshot = current_snapshot(self)
        if snapshot is not None and snapshot.schemas is not None:
            return snapshot.schemas
        schemas = self.cache.get(_ALL, None)  # a hit needs no closure nor coroutine
        if schemas is None:
            schemas = await self.cache.fetch(_ALL, None, self._read)
        if snapshot is not None:
            snapshot.schemas = schemas
        return schemas

    async def _read(self) -> dict[str, CollectionSchema]:
        rows = await self.store.find(SCHEMAS_COLLECTION, Query(limit=None))
        schemas = (msgspec.convert({"name": r["name"], "fields": r["fields"],
                                    "access": r.get("access")},
                                   CollectionSchema) for r in rows)
        return {s.name: s for s in schemas}

    async def get(self, collection: str) -> CollectionSchema | None:
        """The schema of ``collection``, or ``None`` when it has none."""
        return (await self.all()).get(collection)

    async def mode(self) -> SchemaMode:
        """``"schemaless"`` (the default) or ``"strict"``: the stored ``schema.mode``."""
        return (await self.settings.load()).schema.mode

    async def put(self, schema: CollectionSchema) -> CollectionSchema | None:
        """Store ``schema``, replacing the collection's previous one; return that one.

        Indexes are created first and claims made for newly unique fields, so that a
        refused change leaves the stored schema as it was.

        Raises:
            Conflict: a field becomes unique but stored documents repeat a value; the
                message lists them.

        """
        previous = await self.get(schema.name)
        was_unique = {f.name for f in previous.fields if f.unique} if previous else set()
        for spec in schema.stored_fields:
            if spec.indexed:
                await self.store.ensure_index(schema.name, (spec.name,))
        for spec in schema.stored_fields:
            if spec.unique and spec.name not in was_unique:
                await self.claims.claim_existing(schema.name, spec.name)
        await self._write(schema)
        for name in was_unique - {f.name for f in schema.fields if f.unique}:
            await self.claims.release_field(schema.name, name)
        return previous

    async def _write(self, schema: CollectionSchema) -> None:
        stored = schema.to_json()
        # a schema without rules leaves none behind: the update replaces, key by key
        gone = (UnsetOp(("access",)),) if schema.access is None else ()
        update = Update((*(SetOp((key,), value) for key, value in stored.items()), *gone))
        try:
            await self.store.update(SCHEMAS_COLLECTION, schema_id(schema.name), update,
                                    stamp={})
        except NotFound:
            try:
                await self.store.insert(SCHEMAS_COLLECTION,
                                        [{"_id": schema_id(schema.name), **stored,
                                          "_version": 0}])
            except Conflict:  # another process stored it first: this one replaces it
                await self.store.update(SCHEMAS_COLLECTION, schema_id(schema.name), update,
                                        stamp={})
        finally:
            self._changed()

    def _changed(self) -> None:
        """Forget what this process read: the cache's entry and the request's snapshot."""
        self.cache.invalidate(_ALL)
        snapshot = current_snapshot(self)
        if snapshot is not None:
            snapshot.schemas = None

    async def delete(self, collection: str) -> CollectionSchema:
        """Remove the schema of ``collection`` (its documents stay); return it.

        Raises:
            NotFound: the collection has no schema.

        """
        previous = await self.get(collection)
        deleted = await self.store.delete(SCHEMAS_COLLECTION, [schema_id(collection)])
        self._changed()
        if previous is None or not deleted:
            raise NotFound(f"collection {collection!r} has no schema")
        for spec in previous.fields:
            if spec.unique:
                await self.claims.release_field(collection, spec.name)
        return previous
