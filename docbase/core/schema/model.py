"""The schema of a collection: typed fields with their constraints and indexes.

A :class:`CollectionSchema` is what ``PUT /rest/<c>/_meta``, ``docbase schema apply``
and ``db.schemas.put`` take, and what ``_meta`` answers. :func:`parse_schema` builds one
from JSON and refuses, listing every problem at once, a definition that could never be
satisfied (``docs/schema.md`` describes every field type and attribute).
"""

from __future__ import annotations

import enum
from typing import Any

import msgspec

from docbase.core.errors import FieldError, InvalidQuery, ValidationFailed
from docbase.core.names import is_user_collection
from docbase.core.query.regex import parse_regex


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
    """The declared fields of one collection, in their declared order."""

    name: str
    fields: tuple[FieldSpec, ...] = ()

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
        return result


def parse_schema(name: str, body: Any) -> CollectionSchema:
    """Build the schema of collection ``name`` from its JSON definition.

    ``body`` is ``{"fields": [...]}`` (a ``"name"``, when given, must be ``name``).

    Raises:
        InvalidQuery: ``name`` is not a user collection's name, or the body is not an
            object with a ``fields`` array.
        ValidationFailed: fields are malformed or contradictory; ``fields`` lists each
            problem under ``fields.<name>`` (or ``fields.<position>``).

    """
    if not is_user_collection(name):
        raise InvalidQuery(f"invalid collection name {name!r}")
    if not isinstance(body, dict) or not isinstance(body.get("fields", []), list):
        raise InvalidQuery("a schema is a JSON object with a \"fields\" array")
    if body.get("name", name) != name:
        raise InvalidQuery(f"the schema names {body['name']!r}, not {name!r}")
    unknown = set(body) - {"name", "fields"}
    if unknown:
        raise InvalidQuery(f"unknown schema key(s): {', '.join(sorted(unknown))}")
    problems: list[FieldError] = []
    fields: list[FieldSpec] = []
    for position, raw in enumerate(body.get("fields", [])):
        label = f"fields.{raw.get('name', position) if isinstance(raw, dict) else position}"
        try:
            spec = msgspec.convert(raw, FieldSpec)
        except msgspec.ValidationError as exc:
            problems.append(FieldError(label, (str(exc),)))
            continue
        messages = field_problems(spec)
        if any(f.name == spec.name for f in fields):
            messages.append("is declared twice")
        if messages:
            problems.append(FieldError(label, tuple(messages)))
        fields.append(spec)
    if problems:
        raise ValidationFailed(f"the schema of {name!r} is invalid", problems)
    return CollectionSchema(name, tuple(fields))


def field_problems(spec: FieldSpec) -> list[str]:
    """What is wrong with one field definition (empty when nothing is)."""
    kind = spec.type
    problems: list[str] = []
    if not spec.name or spec.name.startswith(("_", "$")) or "." in spec.name:
        problems.append("a field name may not be empty, start with '_' or '$', or hold '.'")
    if spec.unique and kind not in UNIQUE_TYPES:
        problems.append(f"a {kind} field cannot be unique")
    if (spec.min is not None or spec.max is not None) and kind not in (
            STRING_TYPES | NUMBER_TYPES | ARRAY_TYPES):
        problems.append(f"a {kind} field takes no min or max")
    if spec.min is not None and spec.max is not None and spec.min > spec.max:
        problems.append("min is greater than max")
    if spec.pattern is not None:
        if kind not in STRING_TYPES:
            problems.append(f"a {kind} field takes no pattern")
        else:
            try:
                parse_regex((spec.name,), spec.pattern, "")
            except InvalidQuery as exc:
                problems.append(f"pattern: {exc.message}")
    if kind is FieldType.OPTION and not spec.options:
        problems.append("an option field needs a non-empty options array")
    if kind is not FieldType.OPTION and spec.options is not None:
        problems.append(f"a {kind} field takes no options")
    if kind is FieldType.LOOKUP and not (spec.collection and is_user_collection(spec.collection)):
        problems.append("a lookup field needs the collection it refers to")
    if kind is FieldType.CHILD and spec.collection not in (None, spec.name):
        problems.append("a child field's subcollection is the collection named like the "
                        "field; collection may only repeat that name")
    if kind not in (FieldType.LOOKUP, FieldType.CHILD) and spec.collection is not None:
        problems.append(f"a {kind} field takes no collection")
    if kind in (FieldType.CHILD, FieldType.PASSWORD) and spec.default is not None:
        problems.append(f"a {kind} field takes no default")
    if kind is FieldType.CHILD and (spec.required or spec.index):
        problems.append("a child field cannot be required or indexed")
    return problems
