"""The reads of a collection handle: one document, lists, counts and list answers.

:class:`CollectionReads` is the base of :class:`~docbase.core.collection.Collection`,
which adds the writes. Each read builds the :class:`~docbase.core.events.ReadEvent` of
one operation and hands it to the database's :class:`~docbase.core.pipeline.Pipeline`
(authorize, strict mode, before-read hooks) before the store is asked; documents of
other collections in the answer (embedded children, lookups) pass theirs on the
database's :class:`~docbase.core.reads.ReadRoad`.

A handle acts as one principal, so it is built on :class:`CollectionServices`, which
has no raw store: only the store user collections are read through (password fields
withheld and refused in queries), behind the read stages. System code (the auth
package, jobs, the media service) reaches the raw ``DocumentStore`` through
``Database.store``; the two are different types, so handing a handle the raw one fails
type checking.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Mapping
from typing import TYPE_CHECKING, Protocol

import msgspec

from docbase.core.auth.principal import SYSTEM, Principal
from docbase.core.documents import Document, read_shape
from docbase.core.errors import InvalidQuery, NotFound
from docbase.core.evaluate import matches
from docbase.core.events import ReadEvent
from docbase.core.ids import check_object_id
from docbase.core.listing import ListReader
from docbase.core.paging import ListAnswer
from docbase.core.parents import ParentRef, scoped
from docbase.core.projection import project
from docbase.core.query import (
    DEFAULT_MAX,
    JSON,
    MATCH_ALL,
    Filter,
    Query,
    ReadOptions,
    parse_filter,
    parse_hints,
)
from docbase.core.request_schemas import reads_schemas_once

if TYPE_CHECKING:  # the collections' features import this module: no cycle at run time
    from docbase.core.changes.entries import Change
    from docbase.core.changes.readable import ReadableFeed
    from docbase.core.pipeline import Pipeline
    from docbase.core.reads import ReadRoad
    from docbase.core.schema.enforcing import SchemaEnforcingStore
    from docbase.core.settings.limits import Limits


class CollectionServices(Protocol):
    """What a collection handle is built on (a ``Database`` is one): no raw store."""

    @property
    def limits(self) -> Limits:
        """The query, page and bulk limits."""

    @property
    def pipeline(self) -> Pipeline:
        """The write and read pipelines."""

    @property
    def documents(self) -> SchemaEnforcingStore:
        """The store user collections are read and written through."""

    @property
    def reads(self) -> ReadRoad:
        """The read stages of the collections an answer embeds."""

    def changes_for(self, principal: Principal) -> ReadableFeed:
        """The change feed as ``principal`` may see it (never the unscoped one)."""


class CollectionReads:
    """What a collection, or the children of one parent document, answers to reads."""

    def __init__(
        self,
        database: CollectionServices,
        name: str,
        principal: Principal = SYSTEM,
        parent: ParentRef | None = None,
    ) -> None:
        self.database = database
        self.name = name
        self.principal = principal
        self.parent = parent

    @property
    def schema_owner(self) -> object:
        """The registry whose schemas one call reads once (:func:`reads_schemas_once`)."""
        return self.database.documents.schemas

    def _filter(self, q: Filter | Mapping[str, JSON] | None) -> Filter:
        if q is None:
            return MATCH_ALL
        if isinstance(q, Mapping):
            return parse_filter(dict(q), limits=self.database.limits)
        return q

    async def _read(self, read: ReadEvent) -> ReadEvent:
        return await self.database.pipeline.read(read)

    @reads_schemas_once
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
        read = await self._read(ReadEvent(self.name, self.principal, document_id=document_id,
                                          parent=self.parent))
        document = (await self._stored(document_id) if read.within is None
                    else await self._stored_within(document_id, read.within))
        reads = self.database.reads
        await reads.shape(self.name, self.principal, [document])
        if fetchchildren:
            await reads.embed_children(self.name, self.principal, [document],
                                       metafields if child_metafields is None
                                       else child_metafields)
        return read_shape(document, metafields=metafields)

    async def _stored(self, document_id: str) -> Document:
        document = await self.database.documents.get(self.name, document_id)
        if self.parent is not None and not self.parent.holds(document):
            raise NotFound(f"no document {document_id} in {self.name!r}")
        return document

    async def _stored_within(self, document_id: str, within: Query) -> Document:
        """The document, if it matches ``within`` (access rules), shaped by its projection.

        Read by id as any get (the store's point read), then held up to the one filter
        the list reads push into the store: compiling that filter into a store query
        for one document cost 5 to 30 times the get (docs/benchmarks.md).
        """
        document = await self._stored(document_id)
        if within.filter != MATCH_ALL and not matches(within.filter, document):
            raise NotFound(f"no document {document_id} in {self.name!r}")
        return document if within.projection is None else project(document,
                                                                   within.projection)

    @reads_schemas_once
    async def current_version(self, document_id: str) -> int:
        """The stored ``_version`` of a document, as a precondition of a write.

        It is read without the read stages: the write it guards is authorized itself.

        Raises:
            NotFound: no such document (in this parent's scope).

        """
        return int((await self._stored(check_object_id(document_id)))["_version"])

    @reads_schemas_once
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

    @reads_schemas_once
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
        query = await self._list_query(query)
        reads = self.database.reads
        stored = await reads.stored_projection(self.name, query.projection)
        found = await self.database.documents.find(
            self.name, msgspec.structs.replace(query, projection=stored))
        await reads.shape(self.name, self.principal, found)
        if stored != query.projection:
            found = [project(d, query.projection) for d in found]
        return found

    @reads_schemas_once
    async def count(self, q: Filter | Mapping[str, JSON] | None = None) -> int:
        """Count the matching documents."""
        query = await self._list_query(Query(filter=self._filter(q), limit=None))
        return await self.database.documents.count(self.name, query.filter)

    async def changes(self, *, since: int | None = None) -> AsyncIterator[Change]:
        """Iterate over the collection's change-log entries after ``since`` the principal may see.

        The feed of ``GET /realtime`` for one collection (``docs/realtime.md``): ``post``
        and ``put`` entries narrowed by the ``beforeGET`` hooks, unreadable lookups as
        bare ids. A list read of the collection is asked first, so a principal that may
        not read it is refused as :meth:`find` refuses it.

        Raises:
            Forbidden: the principal may not read the collection.
            InvalidQuery: this is a child view (the log is kept per collection: read
                the changes of the child collection itself).

        """
        if self.parent is not None:
            raise InvalidQuery(f"the change feed is read per collection: use "
                               f"collection({self.name!r}).changes()")
        await self._read(ReadEvent(self.name, self.principal, query=Query(limit=None)))
        async for change in self.database.changes_for(self.principal)(self.name, since=since):
            yield change

    @reads_schemas_once
    async def read(
        self, query: Query, options: ReadOptions | None = None, *, encoded: bool = False
    ) -> JSON:
        """Answer a list read as the REST API shapes it (array, totals, groups, aggregates).

        With ``encoded``, documents may come as ``msgspec.Raw`` JSON text, ready for
        ``msgspec.json.encode`` (what the HTTP layer does), instead of ``dict`` objects.
        """
        return (await self.read_page(query, options, encoded=encoded)).body

    @reads_schemas_once
    async def read_page(
        self, query: Query, options: ReadOptions | None = None, *, encoded: bool = False
    ) -> ListAnswer:
        """As :meth:`read`, with the cursor of the next page (``docs/query.md``)."""
        reader = ListReader(self.database.reads, self.name, self.principal)
        return await reader.page(await self._list_query(query), options or ReadOptions(),
                                 encoded=encoded)
