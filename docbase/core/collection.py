"""A collection, or the children of one parent document: the library's entry points.

Each method builds the :class:`~docbase.core.events.WriteEvent` or
:class:`~docbase.core.events.ReadEvent` of one operation and hands it to the
database's :class:`~docbase.core.pipeline.Pipeline`; none of them authorizes, hooks,
validates or publishes by itself. The reads are written in
:mod:`docbase.core.collection_reads`, the base class of :class:`Collection`.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from docbase.core.auth.decision import Action, authorize
from docbase.core.collection_reads import CollectionReads
from docbase.core.documents import Document, new_document
from docbase.core.errors import (
    Conflict,
    DocbaseError,
    InvalidQuery,
    PayloadTooLarge,
    ValidationFailed,
)
from docbase.core.events import DeleteIds, DeleteWhere, Insert, UpdateDocument, WriteEvent
from docbase.core.ids import check_object_id
from docbase.core.names import check_collection_name
from docbase.core.parents import ParentRef
from docbase.core.query import JSON, Filter, split_path
from docbase.core.request_schemas import reads_schemas_once
from docbase.core.update import Update, parse_update


class Collection(CollectionReads):
    """A collection, or the children of one parent document in a subcollection.

    The reads (:meth:`get`, :meth:`find`, :meth:`count`, :meth:`read`) are written in
    :class:`~docbase.core.collection_reads.CollectionReads`; the writes here.
    """

    def children(self, parent_id: str, field: str) -> Collection:
        """The child documents of ``parent_id`` in subcollection ``field``."""
        ref = ParentRef(self.name, check_object_id(parent_id), check_collection_name(field))
        return Collection(self.database, field, self.principal, ref)

    async def _write(self, write: WriteEvent) -> WriteEvent:
        return await self.database.pipeline.write(write)

    @reads_schemas_once
    async def insert(self, body: Mapping[str, JSON], *, validate: bool = True) -> Document:
        """Create one document from ``body`` and return it with its system fields.

        ``validate=False`` (``POST ?validate=false``) skips the schema's field checks;
        uniqueness still holds and passwords are still hashed.

        Raises:
            ValidationFailed: the document does not fit the collection's schema.
            Conflict: a unique field repeats a stored value.
            NotFound: this is a child view and the parent does not exist, or the
                database is strict and defines no such collection.

        """
        return (await self._insert([body], bulk=False, validate=validate))[0]

    @reads_schemas_once
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

    @reads_schemas_once
    async def insert_each(
        self, bodies: Sequence[Mapping[str, JSON]], *, validate: bool = True
    ) -> list[Document | DocbaseError]:
        """Create each document on its own (:meth:`insert`), not all or nothing.

        ``POST ?validate=false`` with an array: each item is its own write; the result
        holds, in order, each created document or the error that refused that item.

        Raises:
            PayloadTooLarge: more documents than ``limits.max_bulk``.
            InvalidQuery: an element is not an object.

        """
        self._check_bulk(bodies)
        results: list[Document | DocbaseError] = []
        for body in bodies:
            try:
                results.append(await self.insert(body, validate=validate))
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
        write = await self._write(Insert(collection=self.name, principal=self.principal,
                                         documents=documents, parent=self.parent, bulk=bulk,
                                         validate=validate,
                                         new_ids=frozenset(d["_id"] for d in documents)))
        return await self.database.reads.shaped(self.name, self.principal, write.documents,
                                               self.parent)

    @reads_schemas_once
    async def update(
        self, document_id: str, body: Mapping[str, JSON], *, expected_version: int | None = None
    ) -> Document:
        """PUT: merge the top-level fields of ``body`` and apply its update operators."""
        return await self.apply(document_id, parse_update(dict(body), "put"), body,
                                expected_version=expected_version)

    @reads_schemas_once
    async def patch(
        self, document_id: str, body: Mapping[str, JSON], *, expected_version: int | None = None
    ) -> Document:
        """PATCH: set only the given properties (dot paths allowed)."""
        return await self.apply(document_id, parse_update(dict(body), "patch"), body,
                                expected_version=expected_version, method="PATCH")

    @reads_schemas_once
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
        write = await self._write(UpdateDocument(
            collection=self.name, principal=self.principal, method=method,
            ids=[check_object_id(document_id)], body=None if body is None else dict(body),
            update=update, expected_version=expected_version, parent=self.parent,
        ))
        return (await self.database.reads.shaped(self.name, self.principal,
                                                 write.documents, self.parent))[0]

    @reads_schemas_once
    async def delete(self, document_id: str, *, expected_version: int | None = None) -> list[str]:
        """Delete one document and its children; return ``[id]``.

        Raises:
            NotFound: no such document (in this parent's scope).
            VersionMismatch: ``expected_version`` differs from the stored one.

        """
        write = await self._write(DeleteIds(
            collection=self.name, principal=self.principal,
            ids=[check_object_id(document_id)], expected_version=expected_version,
            parent=self.parent,
        ))
        return write.ids

    @reads_schemas_once
    async def delete_many(self, document_ids: Sequence[str]) -> list[str]:
        """Delete these documents (and their children); return the ids actually deleted."""
        if not isinstance(document_ids, list | tuple) or not all(
            isinstance(i, str) for i in document_ids
        ):
            raise InvalidQuery("the body must be a JSON array of ids")
        limit = self.database.limits.max_bulk
        if len(document_ids) > limit:
            raise PayloadTooLarge(f"a bulk delete may name at most {limit} ids")
        write = await self._write(DeleteIds(
            collection=self.name, principal=self.principal,
            ids=[check_object_id(i) for i in document_ids], parent=self.parent, bulk=True,
        ))
        return write.ids

    @reads_schemas_once
    async def delete_where(self, q: Filter | Mapping[str, JSON]) -> list[str]:
        """Delete every document matching ``q`` (and their children); return their ids.

        Raises:
            Forbidden: the principal is neither full-access nor a hook.

        """
        write = await self._write(DeleteWhere(
            collection=self.name, principal=self.principal, filter=self._filter(q),
            parent=self.parent,
        ))
        return write.ids

    async def ensure_index(self, field: str, *, unique: bool = False) -> None:
        """Index ``field`` (a dot path); ``unique`` refuses repeated values.

        Raises:
            Forbidden: the principal is not full-access (as for changing ``_meta``).

        """
        authorize(self.principal, Action("PUT", f"/rest/{self.name}/_meta", system=True))
        await self.database.documents.ensure_index(self.name, split_path(field),
                                                   unique=unique)
