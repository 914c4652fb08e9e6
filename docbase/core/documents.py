"""The document model: system fields, stamping new and changed documents, read shapes."""

from __future__ import annotations

import copy
from typing import Any, TypeVar

from docbase.core.ids import new_object_id, utc_now

Document = dict[str, Any]
T = TypeVar("T")

_SCALARS = frozenset((str, int, float, bool, type(None)))

PARENT_FIELDS = ("_parent_id", "_parent_def", "_parent_field")
"""Fields that tie a child document to its parent; returned on every read of a child."""

META_FIELDS = ("_created", "_changed", "_createdby", "_changedby", "_version")
"""System fields returned only with ``metafields=true`` (and on every write)."""

SYSTEM_FIELDS = frozenset(("_id", *META_FIELDS, *PARENT_FIELDS))
"""Fields docbase owns; a body can never set them."""


def new_document(
    body: Document,
    author: str,
    *,
    parent: tuple[str, str, str] | None = None,
) -> Document:
    """Stamp a new document: a fresh ``_id``, timestamps, authors, ``_version`` 0.

    ``parent`` is ``(parent_id, parent_collection, child_field)`` for a child document.
    System fields in ``body`` are dropped.
    """
    now = utc_now()
    document: Document = {"_id": new_object_id()}
    document.update((k, v) for k, v in body.items() if k not in SYSTEM_FIELDS)
    document.update(_created=now, _changed=now, _createdby=author, _changedby=author,
                    _version=0)
    if parent is not None:
        document.update(zip(PARENT_FIELDS, parent, strict=True))
    return document


def change_stamp(author: str) -> Document:
    """The system fields an update sets (``_version`` is incremented by the store)."""
    return {"_changed": utc_now(), "_changedby": author}


def read_shape(document: Document, *, metafields: bool = False) -> Document:
    """Drop the meta fields from a stored document unless ``metafields`` is asked for."""
    if metafields:
        return document
    return {k: v for k, v in document.items() if k not in META_FIELDS}


def json_copy(value: T) -> T:
    """A deep copy of JSON data: new dicts and lists, the same (immutable) scalars.

    A third of :func:`copy.deepcopy`'s time on a document (2.0 against 6.7 µs for one
    of a dozen fields), since it keeps no memo of the objects it met: JSON data shares
    no containers. Any other value inside is copied by :func:`copy.deepcopy`.
    """
    kind = type(value)
    if kind is dict:
        return {key: json_copy(item) for key, item in value.items()}  # type: ignore[attr-defined,return-value]
    if kind is list:
        return [json_copy(item) for item in value]  # type: ignore[attr-defined,return-value]
    if kind in _SCALARS:
        return value
    return copy.deepcopy(value)
