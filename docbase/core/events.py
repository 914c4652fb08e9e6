"""What travels through the pipelines: a write or a read in flight, and its change.

A :class:`WriteEvent` is created by a :class:`~docbase.core.collection.Collection`
entry point and handed from stage to stage (``docs/architecture.md``, "The write
pipeline"): hooks may change its ``documents`` or ``body`` before the store stage, the
store stage fills in what was stored, and a :class:`ChangeEvent` describing the
committed write is published last.
"""

from __future__ import annotations

import enum
from typing import Any

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


class WriteEvent(msgspec.Struct):
    """One write as the stages and hooks see it.

    ``method`` is the HTTP verb the write stands for (``POST``, ``PUT``, ``PATCH``,
    ``DELETE``), whether it came over HTTP or from the library. ``parent`` is set for a
    write through a child view. ``bulk`` marks an insert of an array, or a delete of
    several ids (an unknown id is skipped); a delete that is neither ``bulk`` nor has a
    ``filter`` deletes one document that must exist. ``cause`` names the write that
    caused this one (a cascade delete of children); such a write was authorized with its
    cause. ``validate`` false (``POST ?validate=false``) skips the schema's field checks.
    """

    collection: str
    principal: Principal
    operation: Operation = Operation.INSERT
    method: str = "POST"
    documents: list[dict[str, Any]] = msgspec.field(default_factory=list)
    ids: list[str] = msgspec.field(default_factory=list)
    body: dict[str, Any] | None = None
    update: Update | None = None
    expected_version: int | None = None
    filter: Filter | None = None
    parent: ParentRef | None = None
    bulk: bool = False
    cause: str | None = None
    validate: bool = True


class ReadEvent(msgspec.Struct):
    """One read as the read stages and before-read hooks see it.

    ``document_id`` is set for a read of one document; ``query`` for a list read, and
    a before-read hook may replace it.
    """

    collection: str
    principal: Principal
    document_id: str | None = None
    query: Query | None = None
    parent: ParentRef | None = None


class ChangeEvent(msgspec.Struct, frozen=True):
    """A committed write, as subscribers of the change feed receive it.

    ``documents`` holds the stored documents of an insert or update; ``ids`` the ids
    written (for a delete: the ids actually deleted).
    """

    collection: str
    operation: Operation
    method: str
    ids: tuple[str, ...]
    documents: tuple[dict[str, Any], ...] = ()
    author: str = "api"
    cause: str | None = None
