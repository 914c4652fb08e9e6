"""Reading a schema definition: :func:`parse_schema` and what makes a field impossible.

A definition that could never be satisfied is refused with every problem listed at
once: contradictory attributes, a pattern that does not compile, a default that does
not fit its own field.
"""

from __future__ import annotations

from typing import Any

import msgspec

from docbase.core.access.rules import parse_access
from docbase.core.errors import FieldError, InvalidQuery, ValidationFailed
from docbase.core.names import is_user_collection
from docbase.core.query.regex import parse_regex
from docbase.core.schema.model import (
    ARRAY_TYPES,
    NUMBER_TYPES,
    STRING_TYPES,
    UNIQUE_TYPES,
    CollectionSchema,
    FieldSpec,
    FieldType,
)
from docbase.core.schema.values import BadValue, coerce

DERIVED_KEYS = ("children", "indexes")
"""Keys of ``_meta`` that the fields determine: a definition may carry them, unread."""


def parse_schema(name: str, body: Any) -> CollectionSchema:
    """Build the schema of collection ``name`` from its JSON definition.

    ``body`` is ``{"fields": [...]}`` (a ``"name"``, when given, must be ``name``), with
    optional ``"access"`` rules (:func:`~docbase.core.access.parse_access`). The
    keys ``_meta`` derives from the fields (``children``, ``indexes``) are accepted and
    ignored, so that metadata read with ``GET`` can be written back as it is.

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
    unknown = set(body) - {"name", "fields", "access", *DERIVED_KEYS}
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
    access = None
    if body.get("access") is not None:
        try:
            access = parse_access(body["access"])
        except ValidationFailed as exc:
            problems.extend(exc.fields)
    if problems:
        raise ValidationFailed(f"the schema of {name!r} is invalid", problems)
    return CollectionSchema(name, tuple(fields), access)


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
    if spec.default is not None and not problems:
        try:
            coerce(spec, spec.default)
        except BadValue as exc:
            problems.extend(f"default {message}" for message in exc.messages)
    return problems
