"""A collection of a remote database: the embedded collection's calls, as ``/rest`` requests.

:class:`RemoteCollection` answers the calls of
:class:`~docbase.core.collection.Collection` (``docs/embedding.md``) with the requests
of ``docs/http.md``: the same arguments, the same documents, the same exceptions. It
acts as the credential the database was opened with; the principal and the in-process
parts of an embedded handle (hooks, the unscoped feed) stay on the server.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Mapping, Sequence
from typing import TYPE_CHECKING, Any

import msgspec

from docbase.client.batch import Finish, current_batch
from docbase.client.changes import RemoteChange, follow
from docbase.client.errors import error_from_body, is_error_body
from docbase.client.pending import PendingDocument, PendingList, Reference
from docbase.client.query_params import encode_filter, list_params
from docbase.core.documents import Document
from docbase.core.errors import Conflict, DocbaseError, InvalidQuery, ValidationFailed
from docbase.core.query import JSON, Filter, Query, ReadOptions

if TYPE_CHECKING:
    from docbase.client.transport import Transport

__all__ = ["RemoteCollection"]


def _json(value: JSON) -> str:
    return msgspec.json.encode(value).decode()


def _q(q: Filter | Mapping[str, JSON] | None) -> str:
    if q is None:
        return "{}"
    return _json(dict(q) if isinstance(q, Mapping) else encode_filter(q))


def _if_match(document_id: str, expected_version: int | None) -> dict[str, str]:
    if expected_version is None:
        return {}
    if isinstance(document_id, Reference) or isinstance(expected_version, Reference):
        raise InvalidQuery("If-Match cannot hold a value of a batch not sent yet: give "
                           "expected_version with an id known before the block")
    return {"if-match": f'"{document_id}-{expected_version}"'}


def _as_is(answer: Any) -> Any:
    return answer


def _ids(answer: Any) -> list[str]:
    return list(answer["result"])


def _each(answer: Any) -> list[Document | DocbaseError]:
    return [error_from_body(int(item["status"]), item) if is_error_body(item) else item
            for item in answer]


class RemoteCollection:
    """A collection, or the children of one parent document, of a remote database."""

    def __init__(self, transport: Transport, name: str, path: str | None = None) -> None:
        self.transport = transport
        self.name = name
        self.path = path or f"/rest/{name}"
        """Where its documents are: ``/rest/<c>`` or ``/rest/<c>/<id>/<field>``."""

    def children(self, parent_id: str, field: str) -> RemoteCollection:
        """The child documents of ``parent_id`` in subcollection ``field``."""
        return RemoteCollection(self.transport, field, f"/rest/{self.name}/{parent_id}/{field}")

    def _item(self, document_id: str) -> str:
        return f"{self.path}/{document_id}"

    async def _call(self, method: str, path: str, kind: type[PendingDocument | PendingList],
                    finish: Finish = _as_is, prefix: tuple[str, ...] = (),
                    **options: Any) -> Any:
        """Send one request and return ``finish(answer)``.

        Inside ``db.batch()`` queue it instead, and return the pending answer
        (:mod:`docbase.client.batch`).
        """
        batch = current_batch(self.transport)
        if batch is not None:
            return batch.add(method, path, kind=kind, finish=finish, prefix=prefix, **options)
        return finish(await self.transport.request(method, path, keyed=method != "GET",
                                                   **options))

    def _not_in_a_batch(self, call: str) -> None:
        if current_batch(self.transport) is not None:
            raise InvalidQuery(f"{call}() cannot be queued in a remote batch: call it "
                               "before or after the block (docs/client.md)")

    # ------------------------------------------------------------------------ reads

    async def get(self, document_id: str, *, metafields: bool = True,
                  fetchchildren: bool = False, child_metafields: bool | None = None,
                  ) -> Document:
        """``GET /rest/<c>/<id>``: one document (system fields unless ``metafields=False``)."""
        params = {"metafields": str(metafields).lower()}
        if fetchchildren:
            params["fetchchildren"] = "true"
        document: Document = await self._call("GET", self._item(document_id), PendingDocument,
                                              params=params)
        return document

    async def find(self, q: Filter | Mapping[str, JSON] | None = None,
                   h: Mapping[str, JSON] | None = None, *, query: Query | None = None,
                   ) -> list[Document]:
        """``GET /rest/<c>?q&h``: matching documents with their system fields."""
        if query is not None:
            params = list_params(query, ReadOptions(metafields=True))
        else:
            params = {"q": _q(q), "metafields": "true"}
            if h is not None:
                params["h"] = _json(dict(h))
        found: list[Document] = await self._call("GET", self.path, PendingList, params=params)
        return found

    async def count(self, q: Filter | Mapping[str, JSON] | None = None) -> int:
        """The number of matching documents (``totals=true&count=true``)."""
        self._not_in_a_batch("count")
        answer = await self.transport.request("GET", self.path, params={
            "q": _q(q), "totals": "true", "count": "true"})
        return int(answer["totals"]["total"])

    async def read(self, query: Query, options: ReadOptions | None = None) -> JSON:
        """A list read shaped as the REST API answers it (totals, groups, aggregates)."""
        self._not_in_a_batch("read")
        return await self.transport.request("GET", self.path,
                                            params=list_params(query, options))

    async def changes(self, *, since: int | None = None) -> AsyncIterator[RemoteChange]:
        """The collection's changes after ``since``, from ``GET /realtime`` (SSE)."""
        async for change in follow(self.transport, last_event_id=since):
            if change.collection == self.name:
                yield change

    # ------------------------------------------------------------------------ writes

    async def insert(self, body: Mapping[str, JSON], *, validate: bool = True) -> Document:
        """``POST /rest/<c>``: create one document, return it with its system fields."""
        params = {} if validate else {"validate": "false"}
        created: Document = await self._call("POST", self.path, PendingDocument,
                                             json=dict(body), params=params)
        return created

    async def insert_many(self, bodies: Sequence[Mapping[str, JSON]]) -> list[Document]:
        """``POST /rest/<c>`` with an array: all or nothing."""
        created: list[Document] = await self._call(
            "POST", self.path, PendingList,
            json=[dict(b) if isinstance(b, Mapping) else b for b in bodies])
        return created

    async def insert_each(self, bodies: Sequence[Mapping[str, JSON]], *,
                          validate: bool = True) -> list[Document | DocbaseError]:
        """Create each document on its own, not all or nothing: each one or its error.

        With ``validate=False`` one ``POST ?validate=false`` of the array; else one
        ``POST`` per document, as the embedded call does.
        """
        if validate:
            self._not_in_a_batch("insert_each")
            results: list[Document | DocbaseError] = []
            for body in bodies:
                try:
                    results.append(await self.insert(body))
                except (Conflict, ValidationFailed) as exc:
                    results.append(exc)
            return results
        each: list[Document | DocbaseError] = await self._call(
            "POST", self.path, PendingList, _each, params={"validate": "false"},
            json=[dict(b) for b in bodies])
        return each

    async def update(self, document_id: str, body: Mapping[str, JSON], *,
                     expected_version: int | None = None) -> Document:
        """``PUT``: merge top-level fields, apply update operators (``If-Match``)."""
        return await self._change("PUT", document_id, body, expected_version)

    async def patch(self, document_id: str, body: Mapping[str, JSON], *,
                    expected_version: int | None = None) -> Document:
        """``PATCH``: set only the given properties (dot paths allowed; ``If-Match``)."""
        return await self._change("PATCH", document_id, body, expected_version)

    async def _change(self, method: str, document_id: str, body: Mapping[str, JSON],
                      expected_version: int | None) -> Document:
        changed: Document = await self._call(
            method, self._item(document_id), PendingDocument, json=dict(body),
            headers=_if_match(document_id, expected_version))
        return changed

    async def delete(self, document_id: str, *, expected_version: int | None = None,
                     ) -> list[str]:
        """``DELETE /rest/<c>/<id>``: delete one document and its children; ``[id]``."""
        deleted: list[str] = await self._call(
            "DELETE", self._item(document_id), PendingList, _ids, ("result",),
            headers=_if_match(document_id, expected_version))
        return deleted

    async def delete_many(self, document_ids: Sequence[str]) -> list[str]:
        """``DELETE /rest/<c>/*`` with the ids: the ids actually deleted."""
        deleted: list[str] = await self._call("DELETE", f"{self.path}/*", PendingList, _ids,
                                              ("result",), json=list(document_ids))
        return deleted

    async def delete_where(self, q: Filter | Mapping[str, JSON]) -> list[str]:
        """``DELETE /rest/<c>/*?q=``: delete every match (full-access credential only)."""
        deleted: list[str] = await self._call("DELETE", f"{self.path}/*", PendingList, _ids,
                                              ("result",), params={"q": _q(q)})
        return deleted

    async def meta(self) -> dict[str, Any]:
        """``GET /rest/<c>/_meta``: the collection's fields, children and indexes."""
        self._not_in_a_batch("meta")
        meta: dict[str, Any] = await self.transport.request("GET", f"{self.path}/_meta")
        return meta
