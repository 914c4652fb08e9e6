"""The write stages of access rules: roles, the read scope and ``where.write``.

Two stages of the one write pipeline (:mod:`docbase.core.pipeline.assembly`), for a
principal the collection's rules limit (:func:`~docbase.core.access.scope.limited`); a
cascaded write was decided with the write that caused it.

- :class:`AuthorizeAccessWrite`, right after authorization: the operation must be
  granted to one of the principal's roles (else 403 on the whole collection); a
  document updated or deleted must lie in the principal's read scope (else 404, as a
  missing one), and where only ``@owner`` (or ``private``) grants the operation, be the
  principal's (else 403). ``DELETE /rest/c/*`` with ids skips documents outside that
  scope; a delete by query is limited to it. A write through a child path whose parent
  document lies outside the parent collection's read scope is 404, as for a missing
  parent.
- :class:`CheckAccessWrite`, after validation and the before-hooks, on what would be
  stored: no field the principal may not write is written, and each created document,
  or the document as the update leaves it, matches ``where.write`` (and with
  ``private`` is the principal's). Else 403, and nothing is stored: the update is then
  stored only at the version checked, so a write landing in between is a conflict.
"""

from __future__ import annotations

from typing import Any

from docbase.core.access.reading import require_readable_parent, stored_within, within
from docbase.core.access.rules import AccessRules
from docbase.core.access.scope import CREATOR, Grant, granted, limited, owned, read_scope
from docbase.core.access.visible import rules_of
from docbase.core.access.where import where_filter
from docbase.core.documents import json_copy
from docbase.core.errors import Forbidden
from docbase.core.evaluate import matches
from docbase.core.events import DeleteIds, DeleteWhere, Insert, UpdateDocument, WriteEvent
from docbase.core.ports import DocumentStore
from docbase.core.projection import ID_ONLY
from docbase.core.query import Filter, In, Query
from docbase.core.schema.stored_schemas import SchemaRegistry
from docbase.core.update import apply_update


def changeable(rules: AccessRules, write: WriteEvent, operation: str) -> Filter:
    """The documents ``write``'s principal may ``operation`` (update, delete).

    Its read scope, and only its own documents there where ``@owner`` alone grants it.
    """
    principal = write.principal
    scope = read_scope(rules, principal, write.collection)
    if granted(rules, principal, operation, write.collection) is Grant.OWNED:
        return within(owned(principal), scope)
    return scope


class AccessStage:
    """What both stages share: the schemas and the store, and whose write they limit."""

    def __init__(self, schemas: SchemaRegistry, store: DocumentStore) -> None:
        self.schemas = schemas
        self.store = store

    async def rules(self, write: WriteEvent) -> AccessRules | None:
        """The rules limiting ``write`` (``None``: not limited by rules)."""
        if write.cause is not None or not limited(write.principal):
            return None
        return await rules_of(self.schemas, write.collection)


class AuthorizeAccessWrite(AccessStage):
    """The write stage deciding roles and scope before anything else is done."""

    name = "access"

    async def __call__(self, write: WriteEvent) -> None:
        """Raise ``Forbidden`` or ``NotFound``, or narrow a bulk delete, per the rules."""
        if write.cause is None:
            await require_readable_parent(self.schemas, self.store, write.principal,
                                          write.parent)
        rules = await self.rules(write)
        if rules is None:
            return
        match write:
            case Insert():
                granted(rules, write.principal, "create", write.collection)
            case UpdateDocument() | DeleteIds(bulk=False):
                operation = "update" if isinstance(write, UpdateDocument) else "delete"
                only_owned = granted(rules, write.principal, operation,
                                     write.collection) is Grant.OWNED
                found = await stored_within(
                    self.store, write.collection, write.ids[0],
                    read_scope(rules, write.principal, write.collection))
                if only_owned and found.get(CREATOR[0]) != write.principal.author:
                    raise Forbidden(f"the access rules of {write.collection!r} let only "
                                    f"its owner {operation} this document")
            case DeleteIds():
                kept = await self._matching(write.collection, In(("_id",), tuple(write.ids)),
                                            changeable(rules, write, "delete"))
                write.ids = [i for i in write.ids if i in kept]
            case DeleteWhere():
                write.filter = within(write.filter, changeable(rules, write, "delete"))

    async def _matching(self, collection: str, selected: Filter, scope: Filter) -> set[str]:
        query = Query(filter=within(selected, scope), limit=None, projection=ID_ONLY)
        return {d["_id"] for d in await self.store.find(collection, query)}


class CheckAccessWrite(AccessStage):
    """The write stage checking what would be stored against field rules and ``where``."""

    name = "access-check"

    async def __call__(self, write: WriteEvent) -> None:
        """Raise ``Forbidden`` when the write names a hidden field or leaves the rules."""
        rules = await self.rules(write)
        if rules is None:
            return
        hidden = rules.hidden(write.principal.roles, "write")
        match write:
            case Insert():
                for document in write.documents:
                    _refuse_fields(hidden, document, write.collection)
                    self._check(rules, write, document)
            case UpdateDocument():
                _refuse_fields(hidden, {op.path[0]: None for op in write.update.ops
                                        if op.path}, write.collection)
                stored = await self.store.get(write.collection, write.ids[0])
                self._check(rules, write, apply_update(json_copy(stored), write.update))
                if write.expected_version is None:
                    write.expected_version = int(stored.get("_version", 0))

    @staticmethod
    def _check(rules: AccessRules, write: WriteEvent, document: dict[str, Any]) -> None:
        principal = write.principal
        if rules.private and document.get(CREATOR[0]) != principal.author:
            raise Forbidden(f"{write.collection!r} is private: a document there is its "
                            f"creator's")
        if rules.where.write is not None and not matches(
                where_filter(rules.where.write, principal), document):
            raise Forbidden(f"the document does not match the write rule of "
                            f"{write.collection!r}")


def _refuse_fields(hidden: tuple[str, ...], document: dict[str, Any], collection: str) -> None:
    for name in hidden:
        if name in document:
            raise Forbidden(f"the field {name!r} of {collection!r} may not be written by "
                            f"this principal")



