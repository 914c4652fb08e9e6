"""The schema of a collection: typed fields with their constraints and indexes.

A :class:`CollectionSchema` is what ``PUT /rest/<c>/_meta``, ``docbase schema apply``
and ``db.schemas.put`` take, and what ``_meta`` answers;
:func:`docbase.core.schema.definition.parse_schema` builds one from JSON
(``docs/schema.md`` describes every field type and attribute).
"""

from __future__ import annotations

import enum
from typing import Any

import msgspec

from docbase.core.access.rules import AccessRules


class FieldType(enum.StrEnum):
    """The field types of the REST API."""

    TEXT = "text"
    TEXTAREA = "textarea"
    NUMBER = "number"
    FLOAT_NUMBER = "float_number"
    MONEY = "money"
    BOOL = "bool"
    DATE = "date"
    DATETIME = "datetime"
    TIME = "time"
    EMAIL = "email"
    URL = "url"
    JSON = "json"
    OPTION = "option"
    TAGS = "tags"
    IMAGE = "image"
    FILE = "file"
    CHILD = "child"
    LOOKUP = "lookup"
    PASSWORD = "password"


STRING_TYPES = frozenset({FieldType.TEXT, FieldType.TEXTAREA, FieldType.EMAIL, FieldType.URL,
                          FieldType.PASSWORD})
"""Types whose ``min``/``max`` bound the length and that may carry a ``pattern``."""
NUMBER_TYPES = frozenset({FieldType.NUMBER, FieldType.FLOAT_NUMBER, FieldType.MONEY})
"""Types whose ``min``/``max`` bound the value."""
ARRAY_TYPES = frozenset({FieldType.TAGS, FieldType.IMAGE, FieldType.FILE, FieldType.LOOKUP})
"""Types stored as arrays; ``min``/``max`` bound the number of elements."""
MEDIA_TYPES = frozenset({FieldType.IMAGE, FieldType.FILE})
"""Types holding ids of the media archive."""
UNIQUE_TYPES = frozenset({
    FieldType.TEXT, FieldType.TEXTAREA, FieldType.NUMBER, FieldType.FLOAT_NUMBER,
    FieldType.MONEY, FieldType.DATE, FieldType.DATETIME, FieldType.TIME, FieldType.EMAIL,
    FieldType.URL, FieldType.OPTION,
})
"""Types of single values, which may be ``unique``."""


class FieldSpec(msgspec.Struct, frozen=True, forbid_unknown_fields=True, omit_defaults=True):
    """One field of a collection.

    ``min``/``max`` bound a number's value, a string's length or an array's length;
    ``collection`` names the target of a lookup (the subcollection of a child field is
    the collection named like the field); ``index`` asks for a store index on the field
    (``unique`` implies one).
    """

    name: str
    type: FieldType
    required: bool = False
    unique: bool = False
    index: bool = False
    default: Any = None
    min: float | None = None
    max: float | None = None
    pattern: str | None = None
    options: tuple[str, ...] | None = None
    collection: str | None = None
    description: str | None = None

    @property
    def indexed(self) -> bool:
        """Whether the store keeps an index on this field."""
        return self.index or self.unique


class CollectionSchema(msgspec.Struct, frozen=True, forbid_unknown_fields=True):
    """The declared fields of one collection, in their declared order.

    ``access`` holds its access rules (``docs/access.md``); ``None``: none, token
    holders are limited by their path scope only.
    """

    name: str
    fields: tuple[FieldSpec, ...] = ()
    access: AccessRules | None = None

    def field(self, name: str) -> FieldSpec | None:
        """The field called ``name``, if declared."""
        return next((f for f in self.fields if f.name == name), None)

    def of_type(self, *types: FieldType) -> list[FieldSpec]:
        """The fields of the given types, in declared order."""
        return [f for f in self.fields if f.type in types]

    @property
    def stored_fields(self) -> list[FieldSpec]:
        """The fields a document holds (every field but children)."""
        return [f for f in self.fields if f.type is not FieldType.CHILD]

    def to_json(self) -> dict[str, Any]:
        """The schema as the JSON object ``_meta`` and schema files use."""
        result: dict[str, Any] = msgspec.json.decode(msgspec.json.encode(self))
        if self.access is None:  # a collection without rules reads as it did before them
            del result["access"]
        return result
