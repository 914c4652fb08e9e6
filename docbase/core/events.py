"""What travels through the pipelines: a write or a read in flight, and its change.

A write is one of four operations (:data:`WriteEvent`: :class:`Insert`,
:class:`UpdateDocument`, :class:`DeleteIds`, :class:`DeleteWhere`), created by a
:class:`~docbase.core.collection.Collection` entry point and handed from stage to stage
(``docs/architecture.md``, "The write pipeline"), which tell them apart with ``match``:
hooks may change its ``documents`` or ``body`` before the store stage, the store stage
fills in what was stored, and a :class:`ChangeEvent` describing the committed write is
published last.
"""

from __future__ import annotations

import enum
from typing import Any, ClassVar, TypeAlias

import msgspec

from docbase.core.auth.principal import Principal
from docbase.core.parents import ParentRef
from docbase.core.query import Filter, Query
from docbase.core.update import Update


class Operation(enum.StrEnum):
    """What a write does to its collection."""

    INSERT = "insert"
    UPDATE = "update"
    DELETE = "delete"


class Write(msgspec.Struct, kw_only=True):
    """What every write carries, whatever its operation (the base of the four below).

    ``method`` is the HTTP verb the write stands for (``POST``, ``PUT``, ``PATCH``,
    ``DELETE``), whether it came over HTTP or from the library. ``parent`` is set for a
    write through a child view. ``cause`` names the write that caused this one (a
    cascade delete of children); such a write was authorized with its cause.
    ``documents`` and ``ids`` are what the write is about and, once stored, what it
    stored: the new documents of an insert (before-hooks may change them), the document
    an update stored, the ids a delete deleted. ``previous`` holds, for a collection with
    access rules, the documents an update or delete finds before the store stage
    (:mod:`docbase.core.access.previous`): its change event carries them, so that a
    subscriber that could read a document before hears of its leaving.
    """

    operation: ClassVar[Operation]
    collection: str
    principal: Principal
    method: str
    parent: ParentRef | None = None
    cause: str | None = None
    documents: list[dict[str, Any]] = msgspec.field(default_factory=list)
    ids: list[str] = msgspec.field(default_factory=list)
    previous: list[dict[str, Any]] = msgspec.field(default_factory=list)


class Insert(Write, kw_only=True):
    """Insert ``documents``. ``bulk``: they came as an array (errors name their index).

    ``validate`` false (``POST ?validate=false``) skips the schema's field checks;
    uniqueness still holds and passwords are still hashed.
    """

    operation: ClassVar[Operation] = Operation.INSERT
    method: str = "POST"
    bulk: bool = False
    validate: bool = True
    new_ids: frozenset[str] = frozenset()
    """The ``_id`` s made for ``documents`` (``new_document``); the store stage tells the
    store they are new when the documents still carry exactly those."""


class UpdateDocument(Write, kw_only=True):
    """Apply ``update`` to the one document ``ids[0]``, at ``expected_version`` if set.

    ``body`` is the PUT or PATCH body it was parsed from (a before-hook may change it,
    and the update is parsed again).
    """

    operation: ClassVar[Operation] = Operation.UPDATE
    update: Update
    body: dict[str, Any] | None = None
    expected_version: int | None = None


class DeleteIds(Write, kw_only=True):
    """Delete the documents ``ids`` and their children.

    Without ``bulk`` it deletes one document, which must exist (at ``expected_version``
    if set); with ``bulk`` (``DELETE /rest/c/*`` with ids) an unknown id is skipped.
    """

    operation: ClassVar[Operation] = Operation.DELETE
    method: str = "DELETE"
    bulk: bool = False
    expected_version: int | None = None


class DeleteWhere(Write, kw_only=True):
    """Delete every document matching ``filter`` and their children (``?q=``)."""

    operation: ClassVar[Operation] = Operation.DELETE
    method: str = "DELETE"
    filter: Filter


WriteEvent: TypeAlias = Insert | UpdateDocument | DeleteIds | DeleteWhere
"""One write as the stages and hooks see it: its operation is its type, matched with
``match``. Hooks may change ``documents`` (insert) or ``body`` (update) before the store
stage; the store stage fills in what was stored."""


class ReadEvent(msgspec.Struct):
    """One read as the read stages and before-read hooks see it.

    ``document_id`` is set for a read of one document; ``query`` for a list read, and
    a before-read hook may replace it. ``within`` is set by the access stage
    (:mod:`docbase.core.access.reading`) for a read of one document that the
    collection's rules limit: the document is read only when it matches its filter, and
    shaped by its projection.
    """

    collection: str
    principal: Principal
    document_id: str | None = None
    query: Query | None = None
    parent: ParentRef | None = None
    within: Query | None = None


class ChangeEvent(msgspec.Struct, frozen=True):
    """A committed write, as subscribers of the change feed receive it.

    ``documents`` holds the stored documents of an insert or update; ``ids`` the ids
    written (for a delete: the ids actually deleted); ``previous`` the documents before an
    update or delete of a collection with access rules (:attr:`Write.previous`).
    """

    collection: str
    operation: Operation
    method: str
    ids: tuple[str, ...]
    documents: tuple[dict[str, Any], ...] = ()
    author: str = "api"
    cause: str | None = None
    previous: tuple[dict[str, Any], ...] = ()
    batch: str | None = None
    """The id of the ``POST /batch`` (or ``db.batch()``) the write belongs to, if any."""
