"""A collection, or the children of one parent document: the library's entry points.

Each method builds the :class:`~docbase.core.events.WriteEvent` or
:class:`~docbase.core.events.ReadEvent` of one operation and hands it to the
database's :class:`~docbase.core.pipeline.Pipeline`; none of them authorizes, hooks,
validates or publishes by itself.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING

import msgspec

from docbase.core.auth.principal import SYSTEM, Principal
from docbase.core.documents import Document, new_document, read_shape
from docbase.core.errors import (
    Conflict,
    DocbaseError,
    InvalidQuery,
    NotFound,
    PayloadTooLarge,
    ValidationFailed,
)
from docbase.core.events import Operation, ReadEvent, WriteEvent
from docbase.core.ids import check_object_id
from docbase.core.listing import ListReader
from docbase.core.names import check_collection_name
from docbase.core.query import (
    DEFAULT_MAX,
    JSON,
    MATCH_ALL,
    Filter,
    Query,
    ReadOptions,
    parse_filter,
    parse_hints,
    split_path,
)
from docbase.core.relations import ParentRef, scoped
from docbase.core.update import Update, parse_update

if TYPE_CHECKING:
    from docbase.core.database import Database


class Collection:
    """A collection, or the children of one parent document in a subcollection."""

    def __init__(
        self,
        database: Database,
        name: str,
        principal: Principal = SYSTEM,
        parent: ParentRef | None = None,
    ) -> None:
        self.database = database
        self.name = name
        self.principal = principal
        self.parent = parent

    def children(self, parent_id: str, field: str) -> Collection:
        """The child documents of ``parent_id`` in subcollection ``field``."""
        ref = ParentRef(self.name, check_object_id(parent_id), check_collection_name(field))
        return Collection(self.database, field, self.principal, ref)

    def _filter(self, q: Filter | Mapping[str, JSON] | None) -> Filter:
        if q is None:
            return MATCH_ALL
        if isinstance(q, Mapping):
            return parse_filter(dict(q), limits=self.database.limits)
        return q

    async def _write(self, write: WriteEvent) -> WriteEvent:
        return await self.database.pipeline.write(write)

    # ------------------------------------------------------------------ writes

    async def insert(self, body: Mapping[str, JSON]) -> Document:
        """Create one document from ``body`` and return it with its system fields.

        Raises:
            ValidationFailed: the document does not fit the collection's schema.
            Conflict: a unique field repeats a stored value.
            NotFound: this is a child view and the parent does not exist, or the
                database is strict and defines no such collection.

        """
        return (await self._insert([body], bulk=False))[0]

    async def insert_many(self, bodies: Sequence[Mapping[str, JSON]]) -> list[Document]:
        """Create many documents, all or nothing.

        Raises:
            PayloadTooLarge: more documents than ``limits.max_bulk``.
            InvalidQuery: an element is not an object.
            ValidationFailed: documents do not fit the schema (``"<index>.<field>"``).
            Conflict: a unique field repeats a value.
            NotFound: this is a child view and the parent does not exist.

        """
        return await self._insert(bodies, bulk=True)

    async def insert_unvalidated(
        self, bodies: Sequence[Mapping[str, JSON]]
    ) -> list[Document | DocbaseError]:
        """Create each document on its own, skipping the schema's field checks.

        ``POST ?validate=false``: uniqueness still holds and passwords are still hashed.
        Each item is its own write; the result holds, in order, each created document
        or the error that refused that item.

        Raises:
            PayloadTooLarge: more documents than ``limits.max_bulk``.
            InvalidQuery: an element is not an object.

        """
        self._check_bulk(bodies)
        results: list[Document | DocbaseError] = []
        for body in bodies:
            try:
                results.append((await self._insert([body], bulk=False, validate=False))[0])
            except (Conflict, ValidationFailed) as exc:
                results.append(exc)
        return results

    def _check_bulk(self, bodies: Sequence[Mapping[str, JSON]]) -> None:
        limit = self.database.limits.max_bulk
        if len(bodies) > limit:
            raise PayloadTooLarge(f"a bulk insert may hold at most {limit} documents")
        if not all(isinstance(body, Mapping) for body in bodies):
            raise InvalidQuery("every document of a bulk insert must be a JSON object")

    async def _insert(self, bodies: Sequence[Mapping[str, JSON]], *, bulk: bool,
                      validate: bool = True) -> list[Document]:
        self._check_bulk(bodies)
        stamp = None if self.parent is None else self.parent.stamp()
        documents = [new_document(dict(b), self.principal.author, parent=stamp) for b in bodies]
        write = await self._write(WriteEvent(self.name, self.principal, documents=documents,
                                             parent=self.parent, bulk=bulk,
                                             validate=validate))
        return write.documents

    async def update(
        self, document_id: str, body: Mapping[str, JSON], *, expected_version: int | None = None
    ) -> Document:
        """PUT: merge the top-level fields of ``body`` and apply its update operators."""
        return await self.apply(document_id, parse_update(dict(body), "put"), body,
                                expected_version=expected_version)

    async def patch(
        self, document_id: str, body: Mapping[str, JSON], *, expected_version: int | None = None
    ) -> Document:
        """PATCH: set only the given properties (dot paths allowed)."""
        return await self.apply(document_id, parse_update(dict(body), "patch"), body,
                                expected_version=expected_version, method="PATCH")

    async def apply(
        self,
        document_id: str,
        update: Update,
        body: Mapping[str, JSON] | None = None,
        *,
        expected_version: int | None = None,
        method: str = "PUT",
    ) -> Document:
        """Apply a parsed :class:`Update` atomically and return the whole document.

        Raises:
            NotFound: no such document (in this parent's scope).
            VersionMismatch: ``expected_version`` differs from the stored one.

        """
        write = await self._write(WriteEvent(
            self.name, self.principal, Operation.UPDATE, method,
            ids=[check_object_id(document_id)], body=None if body is None else dict(body),
            update=update, expected_version=expected_version, parent=self.parent,
        ))
        return write.documents[0]

    async def delete(self, document_id: str, *, expected_version: int | None = None) -> list[str]:
        """Delete one document and its children; return ``[id]``.

        Raises:
            NotFound: no such document (in this parent's scope).
            VersionMismatch: ``expected_version`` differs from the stored one.

        """
        write = await self._write(WriteEvent(
            self.name, self.principal, Operation.DELETE, "DELETE",
            ids=[check_object_id(document_id)], expected_version=expected_version,
            parent=self.parent,
        ))
        return write.ids

    async def delete_many(self, document_ids: Sequence[str]) -> list[str]:
        """Delete these documents (and their children); return the ids actually deleted."""
        if not isinstance(document_ids, list | tuple) or not all(
            isinstance(i, str) for i in document_ids
        ):
            raise InvalidQuery("the body must be a JSON array of ids")
        limit = self.database.limits.max_bulk
        if len(document_ids) > limit:
            raise PayloadTooLarge(f"a bulk delete may name at most {limit} ids")
        write = await self._write(WriteEvent(
            self.name, self.principal, Operation.DELETE, "DELETE",
            ids=[check_object_id(i) for i in document_ids], parent=self.parent, bulk=True,
        ))
        return write.ids

    async def delete_where(self, q: Filter | Mapping[str, JSON]) -> list[str]:
        """Delete every document matching ``q`` (and their children); return their ids.

        Raises:
            Forbidden: the principal is neither full-access nor a hook.

        """
        write = await self._write(WriteEvent(
            self.name, self.principal, Operation.DELETE, "DELETE",
            filter=self._filter(q), parent=self.parent,
        ))
        return write.ids

    async def ensure_index(self, field: str, *, unique: bool = False) -> None:
        """Index ``field`` (a dot path); ``unique`` refuses repeated values."""
        await self.database.store.ensure_index(self.name, split_path(field), unique=unique)

    # ------------------------------------------------------------------ reads

    async def _read(self, read: ReadEvent) -> ReadEvent:
        return await self.database.pipeline.read(read)

    async def get(
        self,
        document_id: str,
        *,
        metafields: bool = True,
        fetchchildren: bool = False,
        child_metafields: bool | None = None,
    ) -> Document:
        """Return one document (system fields included unless ``metafields=False``).

        Embedded children (``fetchchildren``) carry system fields when
        ``child_metafields`` is true (default: as ``metafields``).

        Raises:
            InvalidId: ``document_id`` is not an ObjectID.
            NotFound: no such document in this collection (or parent scope).

        """
        document_id = check_object_id(document_id)
        await self._read(ReadEvent(self.name, self.principal, document_id=document_id,
                                   parent=self.parent))
        document = await self._stored(document_id)
        if fetchchildren:
            await self.database.relations.embed_children(
                self.name, [document], metafields if child_metafields is None
                else child_metafields)
        return read_shape(document, metafields=metafields)

    async def _stored(self, document_id: str) -> Document:
        document = await self.database.documents.get(self.name, document_id)
        if self.parent is not None and not self.parent.holds(document):
            raise NotFound(f"no document {document_id} in {self.name!r}")
        return document

    async def current_version(self, document_id: str) -> int:
        """The stored ``_version`` of a document, as a precondition of a write.

        It is read without the read stages: the write it guards is authorized itself.

        Raises:
            NotFound: no such document (in this parent's scope).

        """
        return int((await self._stored(check_object_id(document_id)))["_version"])

    async def require_parent(self) -> None:
        """Check that this child view's parent document exists.

        Raises:
            NotFound: it does not.

        """
        if self.parent is not None:
            await self.database.documents.get(self.parent.collection, self.parent.document_id)

    def _limited(self, query: Query) -> Query:
        limit = self.database.limits.max_page
        if query.limit == DEFAULT_MAX and limit < DEFAULT_MAX:
            query = msgspec.structs.replace(query, limit=limit)
        if query.limit is not None and query.limit > limit:
            raise InvalidQuery(f"max may be at most {limit}")
        return query

    async def _list_query(self, query: Query) -> Query:
        read = await self._read(ReadEvent(self.name, self.principal,
                                          query=self._limited(query), parent=self.parent))
        assert read.query is not None, "a list read keeps a query"
        return msgspec.structs.replace(read.query, filter=scoped(read.query.filter, self.parent))

    async def find(
        self,
        q: Filter | Mapping[str, JSON] | None = None,
        h: Mapping[str, JSON] | None = None,
        *,
        query: Query | None = None,
    ) -> list[Document]:
        """Return matching documents with their system fields.

        Give either ``q``/``h`` as JSON-like objects (parsed here) or a parsed ``query``.
        """
        if query is None:
            query = Query(filter=self._filter(q))
            if h is not None:
                query = parse_hints(dict(h), query, limits=self.database.limits)
        return await self.database.documents.find(self.name, await self._list_query(query))

    async def count(self, q: Filter | Mapping[str, JSON] | None = None) -> int:
        """Count the matching documents."""
        query = await self._list_query(Query(filter=self._filter(q), limit=None))
        return await self.database.store.count(self.name, query.filter)

    async def read(
        self, query: Query, options: ReadOptions | None = None, *, encoded: bool = False
    ) -> JSON:
        """Answer a list read as the REST API shapes it (array, totals, groups, aggregates).

        With ``encoded``, documents may come as ``msgspec.Raw`` JSON text, ready for
        ``msgspec.json.encode`` (what the HTTP layer does), instead of ``dict`` objects.
        """
        reader = ListReader(self.database.documents, self.database.relations, self.name)
        return await reader.read(await self._list_query(query), options or ReadOptions(),
                                 encoded=encoded)
