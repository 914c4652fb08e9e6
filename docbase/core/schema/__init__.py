"""Schemas: typed fields, validation in the write pipeline, ``_meta`` and OpenAPI.

``docs/schema.md`` is the user's guide; each module holds one part: the model
(:mod:`.model`) and reading a definition (:mod:`.definition`), one value checked and
normalised (:mod:`.values`), the validator of the write pipeline (:mod:`.validation`)
and strict mode's read stage (:mod:`.strict`), storage of the schemas (:mod:`.registry`),
unique values on every engine (:mod:`.uniqueness`) and the store that enforces them and
withholds passwords (:mod:`.enforcing`), ``_meta`` (:mod:`.meta`), schema files
(:mod:`.files`) and the OpenAPI document (:mod:`.openapi`).
"""

from __future__ import annotations

from docbase.core.schema.definition import parse_schema
from docbase.core.schema.model import CollectionSchema, FieldSpec, FieldType
from docbase.core.schema.stored_schemas import SCHEMAS_COLLECTION, SchemaRegistry

__all__ = [
    "SCHEMAS_COLLECTION",
    "CollectionSchema",
    "FieldSpec",
    "FieldType",
    "SchemaRegistry",
    "parse_schema",
]
