"""A :class:`~docbase.core.ports.DocumentStore` on MongoDB, through ``AsyncMongoClient``.

A docbase collection is a MongoDB collection, a document a BSON document with an
ObjectId ``_id``. Queries, sorts, paging and aggregations run on the server as
compiled by :mod:`.filters`, :mod:`.sorting` and :mod:`.grouping`; the few parts no
server evaluates like core does (regexes with engine-specific constructs, sorting or
aggregating by object or array values) are finished here with
:mod:`docbase.core.evaluate` over the documents the server selected. Updates are
native and atomic when :mod:`.updates` can prove them exact, otherwise read, applied
with core's ``apply_update`` and replaced under a ``_version`` check, so concurrent
writers never lose each other's changes either way.

A bulk insert that fails half-way deletes what it inserted (transactions need a
replica set, and MongoDB users also run standalone servers), so a concurrent reader
may briefly see part of a batch that is then withdrawn.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import msgspec
from bson import ObjectId
from pymongo import ReturnDocument
from pymongo.asynchronous.collection import AsyncCollection
from pymongo.errors import BulkWriteError

from docbase.adapters.mongo import keyset
from docbase.adapters.mongo.codec import (
    SEARCH_FIELD,
    collection_name,
    decode_document,
    docbase_name,
    encode_document,
    object_id,
)
from docbase.adapters.mongo.connection import MongoConnection, Raw
from docbase.adapters.mongo.filters import CompiledFilter, compile_filter
from docbase.adapters.mongo.grouping import decode_rows
from docbase.adapters.mongo.indexes import ensure_index
from docbase.adapters.mongo.keys import MONGO_KEYS
from docbase.adapters.mongo.reads import group_pipeline, page_pipeline, unsortable_pipeline
from docbase.adapters.mongo.sorting import sortable_on_server
from docbase.adapters.mongo.updates import compile_update
from docbase.core import evaluate, grouping, projection
from docbase.core.documents import Document
from docbase.core.errors import BackendError, InvalidId, NotFound
from docbase.core.field_name_encoding import encode_names, encode_path
from docbase.core.ports import DeletesByGroups, Deletion, EncodesFound
from docbase.core.query import MATCH_ALL, Aggregate, AggregateRow, Filter, Path, Query
from docbase.core.query.deadline import within
from docbase.core.update import Update
from docbase.core.versioning import check_version, updated_document, versioned_id

_UPDATE_ATTEMPTS = 1000  # optimistic retries of one read-apply-replace update
_UNSEARCHED = {SEARCH_FIELD: 0}


class MongoDocumentStore(DeletesByGroups, EncodesFound, MongoConnection):
    """Collections of documents in one MongoDB database."""

    transactional = False  # a standalone server has none; delete_all goes group by group

    # ---------------------------------------------------------------- writes

    async def insert(self, collection: str, documents: Sequence[Document], *,
                     new_ids: bool = False) -> None:
        """Insert in order, all or nothing (a failed batch deletes what it inserted)."""
        if not documents:
            return
        for document in documents:
            if object_id(document["_id"]) is None:
                raise InvalidId(f"{document['_id']!r} is not a stored ObjectID")
        encoded = [encode_document(document) for document in documents]
        target = self._collection(collection)
        with self._bounded(f"insert into {collection!r}"):
            try:
                await target.insert_many(encoded, ordered=True)
            except BulkWriteError as exc:
                done = encoded[: exc.details.get("nInserted", 0)]
                if done:
                    await target.delete_many({"_id": {"$in": [d["_id"] for d in done]}})
                raise

    async def update(
        self,
        collection: str,
        document_id: str,
        update: Update,
        *,
        stamp: dict[str, Any],
        expected_version: int | None = None,
    ) -> Document:
        """Update natively and atomically when exact, else read-apply-replace by version."""
        oid = object_id(document_id)
        if oid is None:
            raise NotFound(f"no document {document_id} in {collection!r}")
        target = self._collection(collection)
        native = compile_update(encode_names(update, MONGO_KEYS), stamp)
        if native is not None:
            selector: Raw = {"_id": oid}
            if expected_version is not None:
                selector["_version"] = expected_version
            if native.guard is not None:
                selector["$expr"] = native.guard
            with self._bounded(f"update {document_id} in {collection!r}"):
                raw = await target.find_one_and_update(
                    selector, native.document, projection=_UNSEARCHED,
                    return_document=ReturnDocument.AFTER)
            if raw is not None:
                return decode_document(raw)
        for _ in range(_UPDATE_ATTEMPTS):
            changed = await self._replace(target, oid, update, stamp, expected_version)
            if changed is not None:
                return changed
        raise BackendError(f"document {document_id} changed {_UPDATE_ATTEMPTS} times while "
                           "being updated")

    async def _replace(
        self,
        target: AsyncCollection[Raw],
        oid: Any,
        update: Update,
        stamp: dict[str, Any],
        expected_version: int | None,
    ) -> Document | None:
        """Read, apply core's update, replace if unchanged meanwhile (else ``None``)."""
        with self._bounded(f"read {oid} for an update"):
            raw = await target.find_one({"_id": oid}, _UNSEARCHED)
        if raw is None:
            raise NotFound(f"no document {oid} in {target.name!r}")
        current = decode_document(raw)
        changed = updated_document(str(oid), current, update, stamp, expected_version)
        with self._bounded(f"update {oid}"):
            # a document stored without _version (null matches missing) counts as 0
            result = await target.replace_one({"_id": oid,
                                               "_version": current.get("_version")},
                                              encode_document(changed))
        return changed if result.matched_count else None

    async def _delete(self, deletion: Deletion) -> list[str]:
        """Delete the stored documents among ``deletion.ids``; return those ids.

        At an expected version one ``delete_one`` selects by ``_id`` and ``_version``.
        """
        collection, expected_version = deletion.collection, deletion.expected_version
        versioned = versioned_id(deletion.ids, expected_version)
        oids = [oid for oid in (object_id(i) for i in dict.fromkeys(deletion.ids)) if oid]
        if not oids:
            return []
        target = self._collection(collection)
        if versioned is not None:
            with self._bounded(f"delete {versioned} from {collection!r}"):
                result = await target.delete_one({"_id": oids[0], "_version": expected_version})
                if result.deleted_count:
                    return [versioned]
                stored = await target.find_one({"_id": oids[0]}, {"_version": 1})
            if stored is not None:
                check_version(versioned, stored.get("_version", 0), expected_version)
            return []
        with self._bounded(f"delete from {collection!r}"):
            found = {raw["_id"] async for raw in target.find({"_id": {"$in": oids}}, {"_id": 1})}
            if found:
                await target.delete_many({"_id": {"$in": list(found)}})
        return [str(oid) for oid in oids if oid in found]

    async def delete_all(self, deletions: Sequence[Deletion]) -> list[list[str]]:
        """Delete group after group, in order (no transactions on a standalone server)."""
        for deletion in deletions:  # refuse a bad group before deleting anything
            versioned_id(deletion.ids, deletion.expected_version)
        return [await self._delete(deletion) for deletion in deletions]

    async def delete_where(self, collection: str, filter: Filter) -> list[str]:
        """Delete the matching documents with one ``delete_many``; return their ids."""
        compiled = compile_filter(filter)
        target = self._collection(collection)
        if compiled.residual is None:
            with self._bounded(f"select in {collection!r}", query=True):
                oids = [raw["_id"] async for raw in target.find(compiled.query, {"_id": 1})]
        else:
            oids = [ObjectId(d["_id"]) for d in await self._candidates(collection, compiled)]
        if not oids:
            return []
        with self._bounded(f"delete from {collection!r}"):
            # one deletion; the filter again, so a document changed meanwhile is spared
            result = await target.delete_many({"$and": [compiled.query,
                                                        {"_id": {"$in": oids}}]})
            if result.deleted_count != len(oids):
                spared = {raw["_id"] async for raw in
                          target.find({"_id": {"$in": oids}}, {"_id": 1})}
                oids = [oid for oid in oids if oid not in spared]
        return [str(oid) for oid in oids]

    # ---------------------------------------------------------------- reads

    async def get(self, collection: str, document_id: str) -> Document:
        """Return the stored document with this ``_id``."""
        oid = object_id(document_id)
        raw = None
        if oid is not None:
            with self._bounded(f"read {document_id} in {collection!r}"):
                raw = await self._collection(collection).find_one({"_id": oid}, _UNSEARCHED)
        if raw is None:
            raise NotFound(f"no document {document_id} in {collection!r}")
        return decode_document(raw)

    async def find(self, collection: str, query: Query) -> list[Document]:
        """Filter, sort, page on the server; finish with core only what it cannot."""
        if query.limit == 0:
            return []
        compiled = compile_filter(query.filter)
        if (compiled.residual is None and sortable_on_server(query.sort)
                and keyset.on_server(query)):
            found = await self._find_on_server(collection, compiled.query, query)
            if found is not None:
                return [projection.project(document, query.projection) for document in found]
        candidates = await self._candidates(collection, compiled)
        return evaluate.run_query(candidates, msgspec.structs.replace(query, filter=MATCH_ALL))

    async def _find_on_server(
        self, collection: str, match: Raw, query: Query
    ) -> list[Document] | None:
        """Filter, sort and page on the server; ``None`` if the sort needs core."""
        target = self._collection(collection)
        query = encode_names(query, MONGO_KEYS)  # the sort and projection name stored fields
        with self._bounded(f"query {collection!r}", query=True):
            if query.sort and await self._run(target, unsortable_pipeline(match, query.sort)):
                return None
            page = await self._run(target, page_pipeline(match, query))
        return [decode_document(raw) for raw in page]

    async def _candidates(self, collection: str, compiled: CompiledFilter) -> list[Document]:
        """Fetch the documents matching ``compiled``, its residual checked with core."""
        with self._bounded(f"query {collection!r}", query=True):
            cursor = self._collection(collection).find(compiled.query, _UNSEARCHED)
            documents = [decode_document(raw) async for raw in cursor]
        residual = compiled.residual
        if residual is None:
            return documents
        with within(self.query_timeout):
            return [doc for doc in documents if evaluate.matches(residual, doc)]

    async def count(self, collection: str, filter: Filter) -> int:
        """Count the matching documents (on the server unless a residual remains)."""
        compiled = compile_filter(filter)
        if compiled.residual is not None:
            return len(await self._candidates(collection, compiled))
        with self._bounded(f"count in {collection!r}", query=True):
            return await self._collection(collection).count_documents(compiled.query)

    async def aggregate(
        self,
        collection: str,
        filter: Filter,
        groupby: Sequence[Path],
        aggregates: Sequence[Aggregate],
    ) -> list[AggregateRow]:
        """Group and aggregate in one ``$group`` stage, or with core when it must."""
        compiled = compile_filter(filter)
        if compiled.residual is None:
            pipeline = group_pipeline(compiled.query,
                                      [encode_path(path, MONGO_KEYS) for path in groupby],
                                      [encode_names(spec, MONGO_KEYS) for spec in aggregates])
            with self._bounded(f"aggregate {collection!r}", query=True):
                raw = await self._run(self._collection(collection), pipeline)
            rows = decode_rows(raw, groupby, aggregates)
            if rows is not None:
                return rows
        matching = await self._candidates(collection, compiled)
        matching.sort(key=lambda document: document["_id"])  # as the pipeline: _id order
        return grouping.aggregate(matching, groupby, aggregates)

    # ---------------------------------------------------------------- collections

    async def collections(self) -> list[str]:
        """Name the docbase collections that hold documents, sorted."""
        names = []
        with self._bounded("list collections"):
            for stored in await self._db.list_collection_names():
                name = docbase_name(stored)
                if name is not None and await self._db[stored].find_one({}, {"_id": 1}):
                    names.append(name)
        return sorted(names)

    async def drop(self, collection: str) -> None:
        """Drop the collection and its indexes."""
        with self._bounded(f"drop {collection!r}"):
            await self._db.drop_collection(collection_name(collection))

    async def ensure_index(self, collection: str, path: Path, *, unique: bool = False) -> None:
        """Create an ascending index; unique ones leave missing and null alone."""
        with self._bounded(f"index {'.'.join(path)!r} of {collection!r}"):
            await ensure_index(self._collection(collection), encode_path(path, MONGO_KEYS),
                               unique=unique)

    def change_signal(self) -> None:
        """No push: change streams need a replica set, so readers poll the change log."""
        return None
