"""The store user collections are read and written through: schemas enforced underneath.

:class:`SchemaEnforcingStore` keeps the :class:`~docbase.core.ports.DocumentStore`
contract and adds, for a collection whose schema asks for it:

- **unique fields**: each write claims its values first (:mod:`.uniqueness`), so a
  duplicate is refused with ``Conflict`` on every engine, by every process;
- **password fields**: stored hashed (the validate stage hashed them) and never handed
  back: documents read, returned by an update, or just inserted lose them, so neither
  an answer, a hook after the write, nor a change event carries a hash; a query that
  filters, sorts, groups or aggregates by one, or searches the text of such a
  collection (``filter=``), is refused, since its answers would reveal the hash.

System collections (names starting with ``_``) pass straight through.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from contextlib import AbstractAsyncContextManager
from typing import Any

import msgspec

from docbase.core.documents import Document
from docbase.core.errors import Conflict, InvalidQuery, VersionMismatch
from docbase.core.lifecycle import AsyncResource
from docbase.core.names import is_user_collection
from docbase.core.ports import ChangeSignal, DeletesByGroups, Deletion, DocumentStore
from docbase.core.query import (
    Aggregate,
    AggregateRow,
    And,
    ElemMatch,
    Filter,
    In,
    Not,
    Or,
    Path,
    Query,
    Text,
)
from docbase.core.schema.model import CollectionSchema, FieldType
from docbase.core.schema.stored_schemas import SchemaRegistry
from docbase.core.schema.uniqueness import claims_of
from docbase.core.update import Update, apply_update

_UPDATE_ATTEMPTS = 100


def filter_paths(filter: Filter) -> Iterator[Path | None]:
    """Every path a filter reads (``None`` for a text search, which reads them all)."""
    match filter:
        case And(operands=operands) | Or(operands=operands):
            for operand in operands:
                yield from filter_paths(operand)
        case Not(operand=operand):
            yield from filter_paths(operand)
        case ElemMatch(path=path, query=inner):
            yield path
            for step in filter_paths(inner):  # the conditions on its elements
                yield None if step is None else (*path, *step)
        case Text():
            yield None
        case _:
            yield filter.path


def _secret(schema: CollectionSchema | None) -> frozenset[str]:
    if schema is None:
        return frozenset()
    return frozenset(f.name for f in schema.of_type(FieldType.PASSWORD))


def _unique(schema: CollectionSchema | None) -> list[str]:
    return [] if schema is None else [f.name for f in schema.fields if f.unique]


def withhold(document: Document, secret: frozenset[str]) -> Document:
    """Remove the secret fields from ``document`` (in place); return it."""
    for name in secret:
        document.pop(name, None)
    return document


class SchemaEnforcingStore(DeletesByGroups, AsyncResource):
    """A :class:`DocumentStore` enforcing unique fields and withholding password fields."""

    def __init__(self, store: DocumentStore, schemas: SchemaRegistry) -> None:
        self.inner = store
        self.schemas = schemas
        self.claims = schemas.claims
        self.transactional = store.transactional
        """Whether :meth:`delete_all` is one transaction: as the store underneath."""

    async def open(self) -> None:
        """Open the store underneath."""
        await self.inner.open()

    async def close(self) -> None:
        """Close the store underneath."""
        await self.inner.close()

    def change_signal(self) -> ChangeSignal | None:
        """The store underneath's push for the change log."""
        return self.inner.change_signal()

    def transaction(self) -> AbstractAsyncContextManager[None]:
        """The store underneath's transaction (claims of unique values join it)."""
        return self.inner.transaction()

    async def _schema(self, collection: str) -> CollectionSchema | None:
        if not is_user_collection(collection):
            return None
        return await self.schemas.get(collection)

    async def _secret(self, collection: str) -> frozenset[str]:
        return _secret(await self._schema(collection))

    async def _check_reads(self, collection: str,
                           paths: Sequence[Path | None]) -> frozenset[str]:
        """Refuse reads by a password field; return the collection's password fields."""
        secret = await self._secret(collection)
        if not secret:
            return secret
        for path in paths:
            if path is None:
                raise InvalidQuery(f"text search (filter=) is not available on "
                                   f"{collection!r}: it has password fields")
            if path and path[0] in secret:
                raise InvalidQuery(f"the password field {path[0]!r} cannot be queried, "
                                   "sorted, grouped or aggregated")
        return secret

    # ------------------------------------------------------------------ writes

    async def insert(self, collection: str, documents: Sequence[Document], *,
                     new_ids: bool = False) -> None:
        """Claim the unique values, insert, and withhold the password fields."""
        schema = await self._schema(collection)
        unique = _unique(schema)
        claims = [c for d in documents for c in claims_of(collection, unique, d)]
        await self.claims.claim(claims)
        try:
            await self.inner.insert(collection, documents, new_ids=new_ids)
        except BaseException:
            await self.claims.release(claims)
            raise
        secret = _secret(schema)
        for document in documents:
            withhold(document, secret)

    async def update(
        self,
        collection: str,
        document_id: str,
        update: Update,
        *,
        stamp: dict[str, Any],
        expected_version: int | None = None,
    ) -> Document:
        """Claim the unique values the update brings, update, release the ones it drops."""
        schema = await self._schema(collection)
        unique, secret = _unique(schema), _secret(schema)
        touched = {op.path[0] for op in update.ops}
        if not touched & set(unique):
            document = await self.inner.update(collection, document_id, update, stamp=stamp,
                                               expected_version=expected_version)
            return withhold(document, secret)
        for _ in range(_UPDATE_ATTEMPTS):
            current = await self.inner.get(collection, document_id)
            version = current.get("_version", 0)
            if expected_version is not None and version != expected_version:
                raise VersionMismatch(f"document {document_id} is at version {version}, "
                                      f"not {expected_version}")
            before = {c["_id"]: c for c in claims_of(collection, unique, current)}
            after = {c["_id"]: c for c in claims_of(collection, unique,
                                                    apply_update(current, update))}
            gained = [c for key, c in after.items() if key not in before]
            await self.claims.claim(gained)
            try:
                document = await self.inner.update(collection, document_id, update,
                                                   stamp=stamp, expected_version=version)
            except VersionMismatch:  # changed meanwhile: predict again from the new one
                await self.claims.release(gained)
                continue
            except BaseException:
                await self.claims.release(gained)
                raise
            await self.claims.release([c for key, c in before.items() if key not in after])
            return withhold(document, secret)
        raise Conflict(f"document {document_id} kept changing while being updated")

    async def delete_all(self, deletions: Sequence[Deletion]) -> list[list[str]]:
        """Delete every group, then release the claims of the deleted documents."""
        doomed: dict[int, tuple[list[str], list[Document]]] = {}
        for index, group in enumerate(deletions):
            unique = _unique(await self._schema(group.collection))
            if unique:
                doomed[index] = (unique, await self.inner.find(
                    group.collection, Query(filter=In(("_id",), group.ids), limit=None)))
        deleted = await self.inner.delete_all(deletions)
        for index, (unique, documents) in doomed.items():
            await self._release(deletions[index].collection, unique, documents, deleted[index])
        return deleted

    async def delete_where(self, collection: str, filter: Filter) -> list[str]:
        """Delete the matches, then release the claims of the deleted documents."""
        unique = _unique(await self._schema(collection))
        if not unique:
            return await self.inner.delete_where(collection, filter)
        doomed = await self.inner.find(collection, Query(filter=filter, limit=None))
        deleted = await self.inner.delete_where(collection, filter)
        await self._release(collection, unique, doomed, deleted)
        return deleted

    async def _release(self, collection: str, unique: list[str], doomed: list[Document],
                       deleted: list[str]) -> None:
        gone = set(deleted)
        await self.claims.release([c for d in doomed if d["_id"] in gone
                                   for c in claims_of(collection, unique, d)])

    # ------------------------------------------------------------------ reads

    async def get(self, collection: str, document_id: str) -> Document:
        """Read one document without its password fields."""
        document = await self.inner.get(collection, document_id)
        return withhold(document, await self._secret(collection))

    async def find(self, collection: str, query: Query) -> list[Document]:
        """Find documents (their password fields withheld)."""
        secret = await self._check_reads(collection, [
            *filter_paths(query.filter), *(key.path for key in query.sort)])
        return [withhold(d, secret) for d in await self.inner.find(collection, query)]

    async def find_encoded(
        self, collection: str, query: Query, *, hide: Sequence[str]
    ) -> list[msgspec.Raw]:
        """Find documents as JSON text, their password fields hidden with ``hide``.

        The store underneath answers with its stored texts where it keeps them.
        """
        secret = await self._check_reads(collection, [
            *filter_paths(query.filter), *(key.path for key in query.sort)])
        hidden = (*hide, *secret)
        return await self.inner.find_encoded(collection, query, hide=hidden)

    async def count(self, collection: str, filter: Filter) -> int:
        """Count matching documents."""
        await self._check_reads(collection, list(filter_paths(filter)))
        return await self.inner.count(collection, filter)

    async def aggregate(
        self,
        collection: str,
        filter: Filter,
        groupby: Sequence[Path],
        aggregates: Sequence[Aggregate],
    ) -> list[AggregateRow]:
        """Group and aggregate, never by a password field."""
        await self._check_reads(collection, [*filter_paths(filter), *groupby,
                                             *(a.path for a in aggregates)])
        return await self.inner.aggregate(collection, filter, groupby, aggregates)

    # ------------------------------------------------------------------ collections

    async def collections(self) -> list[str]:
        """The collections holding documents."""
        return await self.inner.collections()

    async def drop(self, collection: str) -> None:
        """Drop a collection."""
        await self.inner.drop(collection)

    async def ensure_index(self, collection: str, path: Path, *, unique: bool = False) -> None:
        """Create an index in the store underneath."""
        await self.inner.ensure_index(collection, path, unique=unique)
