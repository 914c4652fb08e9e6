"""The embeddable API: a :class:`Database` of collections and child subcollections.

The HTTP layer is a thin translation of requests into these calls. Every call runs on
behalf of a :class:`~docbase.core.auth.principal.Principal`, and writes pass through the
:class:`~docbase.core.hooks.HookRegistry`.
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Mapping, Sequence
from typing import Self

import msgspec

from docbase.core.documents import Document, change_stamp, new_document, read_shape
from docbase.core.errors import (
    Conflict,
    Forbidden,
    InvalidQuery,
    NotFound,
    PayloadTooLarge,
    VersionMismatch,
)
from docbase.core.hooks import HookRegistry, WriteEvent
from docbase.core.ids import check_object_id
from docbase.core.listing import group_documents, nest_rows, totals
from docbase.core.ports import BlobStore, DocumentStore, Mailer
from docbase.core.auth.principal import SYSTEM, Principal
from docbase.core.query import (
    DEFAULT_MAX,
    JSON,
    MATCH_ALL,
    And,
    Eq,
    Filter,
    In,
    Projection,
    Query,
    ReadOptions,
    parse_filter,
    parse_hints,
    split_path,
)
from docbase.core.settings import Limits
from docbase.core.update import Update, parse_update

_USER_COLLECTION = re.compile(r"[A-Za-z0-9][A-Za-z0-9_-]{0,63}")
RELATIONS = "_relations"
"""System collection recording which parent collections have which child fields."""


def check_collection_name(name: str) -> str:
    """Return ``name`` if it may name a user collection, else raise ``InvalidQuery``."""
    if not _USER_COLLECTION.fullmatch(name):
        raise InvalidQuery(
            f"invalid collection name {name!r}: use letters, digits, '_' and '-', "
            "starting with a letter or digit, at most 64 characters"
        )
    return name


class ParentRef(msgspec.Struct, frozen=True):
    """The parent a child collection view is bound to."""

    collection: str
    document_id: str
    field: str


class Database:
    """One database: collections on a document store, media on a blob store."""

    def __init__(
        self,
        store: DocumentStore,
        blobs: BlobStore | None = None,
        *,
        name: str = "docbase",
        limits: Limits | None = None,
        hooks: HookRegistry | None = None,
        mailer: Mailer | None = None,
    ) -> None:
        self.store = store
        self.blobs = blobs
        self.name = name
        self.limits = limits or Limits()
        self.hooks = hooks or HookRegistry()
        self.mailer = mailer
        self._known_relations: set[tuple[str, str]] = set()

    async def open(self) -> None:
        """Open the underlying stores."""
        await self.store.open()

    async def close(self) -> None:
        """Close the underlying stores."""
        await self.store.close()

    async def __aenter__(self) -> Self:
        await self.open()
        return self

    async def __aexit__(self, *exc_info: object) -> None:
        await self.close()

    def collection(self, name: str, principal: Principal = SYSTEM) -> Collection:
        """A view of the user collection ``name`` acting as ``principal``."""
        return Collection(self, check_collection_name(name), principal)

    def system_collection(self, name: str, principal: Principal = SYSTEM) -> Collection:
        """A view of a reserved system collection (keys, tokens, outbound mail, ...)."""
        return Collection(self, name, principal)

    async def collections(self) -> list[str]:
        """The user collections holding documents, sorted."""
        return [c for c in await self.store.collections() if _USER_COLLECTION.fullmatch(c)]

    async def child_fields(self, collection: str) -> list[str]:
        """The child fields (subcollections) recorded for a parent collection."""
        rows = await self.store.find(
            RELATIONS, Query(filter=Eq(("parent",), collection), limit=None)
        )
        return sorted(row["field"] for row in rows)

    async def _record_relation(self, parent: str, field: str) -> None:
        if (parent, field) in self._known_relations:
            return
        relation_id = hashlib.sha1(f"{parent}\0{field}".encode()).hexdigest()[:24]
        try:
            await self.store.get(RELATIONS, relation_id)
        except NotFound:
            relation = {"_id": relation_id, "parent": parent, "field": field}
            try:
                await self.store.insert(RELATIONS, [relation])
            except Conflict:  # another writer recorded it first
                await self.store.get(RELATIONS, relation_id)
        self._known_relations.add((parent, field))

    async def _delete_cascade(self, collection: str, ids: Sequence[str]) -> None:
        if not ids:
            return
        for field in await self.child_fields(collection):
            child_ids = await self.store.delete_where(
                field, And((In(("_parent_id",), tuple(ids)), Eq(("_parent_def",), collection)))
            )
            await self._delete_cascade(field, child_ids)


def _as_filter(q: Filter | Mapping[str, JSON] | None) -> Filter:
    if q is None:
        return MATCH_ALL
    if isinstance(q, Mapping):
        return parse_filter(dict(q))
    return q


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

    @property
    def _store(self) -> DocumentStore:
        return self.database.store

    def children(self, parent_id: str, field: str) -> Collection:
        """The child documents of ``parent_id`` in subcollection ``field``."""
        ref = ParentRef(self.name, check_object_id(parent_id), check_collection_name(field))
        return Collection(self.database, field, self.principal, ref)

    def _scope(self, filter: Filter) -> Filter:
        if self.parent is None:
            return filter
        scope = (Eq(("_parent_id",), self.parent.document_id),
                 Eq(("_parent_def",), self.parent.collection))
        return And(scope if filter == MATCH_ALL else (*scope, filter))

    def _in_scope(self, document: Document) -> bool:
        if self.parent is None:
            return True
        return (document.get("_parent_id") == self.parent.document_id
                and document.get("_parent_def") == self.parent.collection)

    # ------------------------------------------------------------------ writes

    async def insert(self, body: Mapping[str, JSON]) -> Document:
        """Create one document from ``body`` and return it with its system fields."""
        return (await self.insert_many([body]))[0]

    async def insert_many(self, bodies: Sequence[Mapping[str, JSON]]) -> list[Document]:
        """Create many documents, all or nothing.

        Raises:
            PayloadTooLarge: more documents than ``limits.max_bulk``.
            InvalidQuery: an element is not an object.
            NotFound: this is a child view and the parent does not exist.

        """
        if len(bodies) > self.database.limits.max_bulk:
            raise PayloadTooLarge(
                f"a bulk insert may hold at most {self.database.limits.max_bulk} documents"
            )
        if not all(isinstance(body, Mapping) for body in bodies):
            raise InvalidQuery("every document of a bulk insert must be a JSON object")
        parent = None
        if self.parent is not None:
            await self._store.get(self.parent.collection, self.parent.document_id)
            parent = (self.parent.document_id, self.parent.collection, self.parent.field)
        documents = [new_document(dict(b), self.principal.author, parent=parent) for b in bodies]
        event = WriteEvent(self.name, self.principal, documents=documents)
        await self.database.hooks.run("before_insert", event)
        if self.parent is not None:
            await self.database._record_relation(self.parent.collection, self.parent.field)
        if event.documents:
            await self._store.insert(self.name, event.documents)
        await self.database.hooks.run("after_insert", event)
        return event.documents

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
                                expected_version=expected_version)

    async def apply(
        self,
        document_id: str,
        update: Update,
        body: Mapping[str, JSON] | None = None,
        *,
        expected_version: int | None = None,
    ) -> Document:
        """Apply a parsed :class:`Update` atomically and return the whole document."""
        document_id = check_object_id(document_id)
        if self.parent is not None:
            await self.get(document_id)
        event = WriteEvent(self.name, self.principal, ids=[document_id],
                           body=dict(body) if body is not None else None)
        await self.database.hooks.run("before_update", event)
        document = await self._store.update(
            self.name, document_id, update,
            stamp=change_stamp(self.principal.author), expected_version=expected_version,
        )
        event.documents = [document]
        await self.database.hooks.run("after_update", event)
        return document

    async def delete(self, document_id: str, *, expected_version: int | None = None) -> list[str]:
        """Delete one document and its children; return ``[id]``.

        Raises:
            NotFound: no such document (in this parent's scope).
            VersionMismatch: ``expected_version`` differs from the stored one.

        """
        document = await self.get(document_id, metafields=True)
        if expected_version is not None and document["_version"] != expected_version:
            raise VersionMismatch(f"document {document_id} has changed (version "
                                  f"{document['_version']}, expected {expected_version})")
        deleted = await self._delete_ids([document["_id"]])
        if not deleted:
            raise NotFound(f"no document {document_id} in {self.name!r}")
        return deleted

    async def delete_many(self, document_ids: Sequence[str]) -> list[str]:
        """Delete these documents (and their children); return the ids actually deleted."""
        if not isinstance(document_ids, list | tuple) or not all(
            isinstance(i, str) for i in document_ids
        ):
            raise InvalidQuery("the body must be a JSON array of ids")
        if len(document_ids) > self.database.limits.max_bulk:
            raise PayloadTooLarge(
                f"a bulk delete may name at most {self.database.limits.max_bulk} ids"
            )
        ids = [check_object_id(i) for i in document_ids]
        if self.parent is not None:
            found = await self._store.find(
                self.name, Query(filter=self._scope(In(("_id",), tuple(ids))), limit=None)
            )
            ids = [d["_id"] for d in found]
        return await self._delete_ids(ids)

    async def delete_where(self, q: Filter | Mapping[str, JSON]) -> list[str]:
        """Delete every document matching ``q``; needs a full-access principal.

        Raises:
            Forbidden: the principal is not full-access.

        """
        if not self.principal.full_access and self.principal.kind != "hook":
            raise Forbidden("delete by query needs a full-access API key")
        filter = self._scope(_as_filter(q))
        event = WriteEvent(self.name, self.principal)
        await self.database.hooks.run("before_delete", event)
        matching = await self._store.find(  # only the ids, to cascade to the children
            self.name, Query(filter=filter, limit=None, projection=Projection((("_id",),), True))
        )
        await self.database._delete_cascade(self.name, [d["_id"] for d in matching])
        deleted = await self._store.delete_where(self.name, filter)
        event.ids = deleted
        await self.database.hooks.run("after_delete", event)
        return deleted

    async def _delete_ids(self, ids: Sequence[str]) -> list[str]:
        event = WriteEvent(self.name, self.principal, ids=list(ids))
        await self.database.hooks.run("before_delete", event)
        await self.database._delete_cascade(self.name, event.ids)
        deleted = await self._store.delete(self.name, event.ids)
        event.ids = deleted
        await self.database.hooks.run("after_delete", event)
        return deleted

    async def ensure_index(self, field: str, *, unique: bool = False) -> None:
        """Index ``field`` (a dot path); ``unique`` refuses repeated values."""
        await self._store.ensure_index(self.name, split_path(field), unique=unique)

    # ------------------------------------------------------------------ reads

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
        document = await self._store.get(self.name, document_id)
        if not self._in_scope(document):
            raise NotFound(f"no document {document_id} in {self.name!r}")
        if fetchchildren:
            await self._embed_children(
                [document], metafields if child_metafields is None else child_metafields
            )
        return read_shape(document, metafields=metafields)

    def _check_query(self, query: Query) -> Query:
        limit = self.database.limits.max_page
        if query.limit == DEFAULT_MAX and limit < DEFAULT_MAX:
            query = msgspec.structs.replace(query, limit=limit)
        if query.limit is not None and query.limit > limit:
            raise InvalidQuery(f"max may be at most {limit}")
        return msgspec.structs.replace(query, filter=self._scope(query.filter))

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
            query = Query(filter=_as_filter(q))
            if h is not None:
                query = parse_hints(dict(h), query)
        return await self._store.find(self.name, self._check_query(query))

    async def count(self, q: Filter | Mapping[str, JSON] | None = None) -> int:
        """Count the matching documents."""
        return await self._store.count(self.name, self._scope(_as_filter(q)))

    async def read(self, query: Query, options: ReadOptions | None = None) -> JSON:
        """Answer a list read as the REST API shapes it (array, totals, groups, aggregates)."""
        options = options or ReadOptions()
        query = self._check_query(query)
        if query.aggregates:
            return await self._read_aggregates(query)
        if options.count:
            total = await self._store.count(self.name, query.filter)
            return {"data": [], "totals": {**totals(0, total, query), "count": total}}
        documents = await self._store.find(self.name, query)
        if options.fetchchildren:
            await self._embed_children(documents, options.metafields)
        shaped = [read_shape(d, metafields=options.metafields) for d in documents]
        data = group_documents(shaped, query.groupby) if query.groupby else shaped
        if options.totals:
            total = await self._store.count(self.name, query.filter)
            return {"data": data, "totals": totals(len(shaped), total, query)}
        return data

    async def _read_aggregates(self, query: Query) -> JSON:
        rows = await self._store.aggregate(
            self.name, query.filter, query.groupby, query.aggregates
        )
        if not query.groupby:
            return dict(rows[0].values)
        result = nest_rows(rows)
        if query.grand_total:
            grand = await self._store.aggregate(self.name, query.filter, (), query.aggregates)
            result["$grand-total"] = dict(grand[0].values)
        return result

    async def _embed_children(self, documents: list[Document], metafields: bool) -> None:
        fields = await self.database.child_fields(self.name)
        if not fields or not documents:
            return
        ids = tuple(d["_id"] for d in documents)
        for field in fields:
            children = await self._store.find(field, Query(
                filter=And((In(("_parent_id",), ids), Eq(("_parent_def",), self.name))),
                limit=None,
            ))
            by_parent: dict[str, list[Document]] = {}
            for child in children:
                by_parent.setdefault(child["_parent_id"], []).append(
                    read_shape(child, metafields=metafields)
                )
            for document in documents:
                document[field] = by_parent.get(document["_id"], [])


__all__ = ["Collection", "Database", "ParentRef", "check_collection_name"]
