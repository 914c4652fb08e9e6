"""Strict mode on the read side: a collection no schema defines does not exist.

In a database whose stored setting ``schema.mode`` is ``strict``, reading a collection
(or the subcollection of a field that is not a child field) that no schema defines
answers ``NotFound``, as writing it does (:mod:`.validation`). In schemaless mode, the
default, an unknown collection reads as empty.
"""

from __future__ import annotations

from docbase.core.auth.decision import FULL_ACCESS_COLLECTIONS
from docbase.core.errors import NotFound
from docbase.core.events import ReadEvent
from docbase.core.names import is_user_collection
from docbase.core.parents import ParentRef
from docbase.core.schema.model import CollectionSchema, FieldType
from docbase.core.schema.stored_schemas import SchemaRegistry


def governed(collection: str) -> bool:
    """Whether schemas apply to ``collection`` (user collections but the mail log)."""
    return is_user_collection(collection) and collection not in FULL_ACCESS_COLLECTIONS


def undefined(collection: str) -> NotFound:
    """The error of a strict database asked for a collection it does not define."""
    return NotFound(f"no collection {collection!r}: this database is in strict mode and "
                    "its schema does not define it")


def check_child_field(parent: ParentRef, schema: CollectionSchema | None,
                      strict: bool) -> None:
    """Refuse a subcollection the parent's schema does not declare as a child field.

    Raises:
        NotFound: the parent's schema gives the field another type, or (strict mode)
            does not declare it.

    """
    spec = None if schema is None else schema.field(parent.field)
    if (spec is not None and spec.type is not FieldType.CHILD) or (strict and spec is None):
        raise NotFound(f"{parent.field!r} is not a child field of {parent.collection!r}")


class RequireDefinedCollection:
    """The read stage refusing, in strict mode, collections no schema defines."""

    name = "schema"

    def __init__(self, schemas: SchemaRegistry) -> None:
        self.schemas = schemas

    async def __call__(self, read: ReadEvent) -> None:
        """Raise ``NotFound`` for an undefined collection of a strict database."""
        if not governed(read.collection) or await self.schemas.mode() != "strict":
            return
        if await self.schemas.get(read.collection) is None:
            raise undefined(read.collection)
        if read.parent is not None:
            check_child_field(read.parent, await self.schemas.get(read.parent.collection),
                              strict=True)
