"""``_meta``: what a database and its collections are, as clients read and change it.

A collection's metadata is its schema's fields (a child field among them, of type
``child``), its child fields (declared, or used by writes), and the store indexes its
schema asks for; ``children`` and ``indexes`` are derived, so what ``GET`` answers can be
sent back with ``PUT`` unchanged. Without a schema (schemaless mode)
``fields`` and ``indexes`` are empty. Defining or removing a schema needs a
full-access principal, in the library as over HTTP.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Protocol

from docbase.core.auth import Action, Principal, authorize
from docbase.core.names import check_collection_name
from docbase.core.schema.definition import parse_schema
from docbase.core.schema.model import CollectionSchema, FieldType
from docbase.core.schema.strict import undefined

if TYPE_CHECKING:
    from docbase.core.schema.stored_schemas import SchemaRegistry


class DescribedDatabase(Protocol):
    """What ``_meta`` reads of a database (a ``Database`` has it)."""

    @property
    def schemas(self) -> SchemaRegistry:
        """The schemas in ``_schemas``."""

    async def collections(self) -> list[str]:
        """The user collections holding documents, sorted."""

    async def child_fields(self, collection: str) -> list[str]:
        """The child fields recorded for a parent collection."""


def field_meta(field: dict[str, Any]) -> dict[str, Any]:
    """A field as ``_meta`` lists it: always ``required`` and ``unique``, then the rest."""
    return {"name": field["name"], "type": field["type"],
            "required": field.get("required", False), "unique": field.get("unique", False),
            **{k: v for k, v in field.items() if k not in ("name", "type", "required",
                                                           "unique")}}


async def collection_meta(db: DescribedDatabase, name: str) -> dict[str, Any]:
    """Describe collection ``name``.

    Raises:
        InvalidQuery: ``name`` is not a collection name.
        NotFound: the database is strict and defines no such collection.

    """
    check_collection_name(name)
    schema = await db.schemas.get(name)
    if schema is None and await db.schemas.mode() == "strict":
        raise undefined(name)
    return describe(schema or CollectionSchema(name), await db.child_fields(name))


def describe(schema: CollectionSchema, used_children: list[str]) -> dict[str, Any]:
    """The metadata of a collection with ``schema`` whose writes used ``used_children``."""
    fields = schema.to_json()["fields"]
    declared = [f["name"] for f in fields if f["type"] == FieldType.CHILD]
    children = [{"name": child, "type": "child", "collection": child}
                for child in [*declared, *(c for c in used_children if c not in declared)]]
    described = {
        "name": schema.name,
        "fields": [field_meta(f) for f in fields],
        "children": children,
        "indexes": [{"field": f.name, "unique": f.unique} for f in schema.stored_fields
                    if f.indexed],
    }
    if schema.access is not None:
        described["access"] = schema.to_json()["access"]
    return described


async def database_meta(db: DescribedDatabase, name: str) -> dict[str, Any]:
    """Describe database ``name``: its mode and each collection (defined or written)."""
    schemas = await db.schemas.all()
    mode = await db.schemas.mode()
    names = set(schemas)
    if mode == "schemaless":
        names.update(await db.collections())
    return {
        "name": name,
        "mode": mode,
        "collections": [describe(schemas.get(c) or CollectionSchema(c),
                                 await db.child_fields(c)) for c in sorted(names)],
    }


async def define_collection(db: DescribedDatabase, principal: Principal, name: str,
                            body: Any) -> dict[str, Any]:
    """Store the schema ``body`` of collection ``name``; return its new metadata.

    Raises:
        Forbidden: ``principal`` is not full-access.
        InvalidQuery: the body is not a schema object.
        ValidationFailed: the fields are malformed (each problem listed).
        Conflict: a field becomes unique over stored duplicates (listed).

    """
    authorize(principal, Action("PUT", f"/rest/{name}/_meta", system=True))
    await db.schemas.put(parse_schema(name, body))
    return await collection_meta(db, name)


async def undefine_collection(db: DescribedDatabase, principal: Principal, name: str) -> list[str]:
    """Remove the schema of collection ``name`` (its documents stay); return ``[name]``.

    Raises:
        Forbidden: ``principal`` is not full-access.
        NotFound: the collection has no schema.

    """
    authorize(principal, Action("DELETE", f"/rest/{name}/_meta", system=True))
    await db.schemas.delete(check_collection_name(name))
    return [name]
