"""``GET /rest/_openapi``: an OpenAPI 3.1 document generated from the current schemas.

One set of paths per collection with a schema (list and create, one document, its
``_meta``, and each child field's subcollection), the document's fields as JSON Schema
(what a write sends, ``<C>Input``, and what a read returns, ``<C>``), the error body
every failure answers with, and the four ways to authenticate. Error statuses are
described once, as each operation's ``default`` response. ``docs/schema.md`` shows how
to feed the document to client generators and API testers.
"""

from __future__ import annotations

from typing import Any

from docbase.core.schema.model import (
    ARRAY_TYPES,
    NUMBER_TYPES,
    STRING_TYPES,
    CollectionSchema,
    FieldSpec,
    FieldType,
)

OBJECT_ID = {"type": "string", "pattern": "^[0-9a-fA-F]{24}$"}
JSON_TEXT = {"type": "string", "description": "a JSON text"}
_SYSTEM = ("_created", "_changed", "_createdby", "_changedby")
_ERROR = {"$ref": "#/components/responses/Error"}


def _ref(name: str) -> dict[str, str]:
    return {"$ref": f"#/components/schemas/{name}"}


def _json(schema: dict[str, Any], description: str) -> dict[str, Any]:
    return {"description": description, "content": {"application/json": {"schema": schema}}}


def field_schema(spec: FieldSpec) -> dict[str, Any]:
    """The JSON Schema of one stored field's value."""
    kind = spec.type
    schema: dict[str, Any]
    match kind:
        case FieldType.NUMBER:
            schema = {"type": "integer"}
        case FieldType.FLOAT_NUMBER | FieldType.MONEY:
            schema = {"type": "number"}
        case FieldType.BOOL:
            schema = {"type": "boolean"}
        case FieldType.DATE | FieldType.DATETIME:
            schema = {"type": "string", "format": "date-time"}
        case FieldType.TIME:
            schema = {"type": "string", "pattern": "^[0-9]{2}:[0-9]{2}(:[0-9]{2}(\\.[0-9]+)?)?$"}
        case FieldType.EMAIL:
            schema = {"type": "string", "format": "email"}
        case FieldType.URL:
            schema = {"type": "string", "format": "uri"}
        case FieldType.JSON:
            schema = {}
        case FieldType.OPTION:
            schema = {"type": "string", "enum": list(spec.options or ())}
        case FieldType.TAGS:
            schema = {"type": "array", "items": {"type": "string"}}
        case FieldType.IMAGE | FieldType.FILE:
            schema = {"type": "array", "items": OBJECT_ID}
        case FieldType.LOOKUP:
            schema = {"type": "array", "items": {
                "type": "object", "required": ["_id"], "properties": {"_id": OBJECT_ID}}}
        case FieldType.PASSWORD:
            schema = {"type": "string", "writeOnly": True}
        case _:
            schema = {"type": "string"}
    _bounds(spec, schema)
    if spec.description:
        schema["description"] = spec.description
    return schema


def _bounds(spec: FieldSpec, schema: dict[str, Any]) -> None:
    kind = spec.type
    names = (("minimum", "maximum") if kind in NUMBER_TYPES else
             ("minLength", "maxLength") if kind in STRING_TYPES else
             ("minItems", "maxItems") if kind in ARRAY_TYPES else None)
    if names is None:
        return
    for name, bound in zip(names, (spec.min, spec.max), strict=True):
        if bound is not None:
            schema[name] = bound if kind in NUMBER_TYPES else int(bound)
    if spec.pattern is not None and kind in STRING_TYPES:
        schema["pattern"] = spec.pattern


def _input(schema: CollectionSchema, strict: bool) -> dict[str, Any]:
    fields = schema.stored_fields
    result: dict[str, Any] = {
        "type": "object",
        "properties": {f.name: field_schema(f) if f.required
                       else {"anyOf": [field_schema(f), {"type": "null"}]} for f in fields},
        "additionalProperties": not strict,
    }
    required = [f.name for f in fields if f.required and f.default is None]
    if required:
        result["required"] = required
    return result


def _output(schema: CollectionSchema) -> dict[str, Any]:
    properties: dict[str, Any] = {"_id": OBJECT_ID}
    for spec in schema.stored_fields:
        if spec.type is not FieldType.PASSWORD:
            properties[spec.name] = {}  # values stored before the schema may differ
    properties.update({name: {"type": "string"} for name in _SYSTEM})
    properties["_version"] = {"type": "integer"}
    return {"type": "object", "required": ["_id"], "properties": properties}


def _operation(name: str, operation_id: str, status: str, answer: dict[str, Any],
               description: str, *, body: dict[str, Any] | None = None,
               **extra: Any) -> dict[str, Any]:
    """One operation: its answer on success, the error body otherwise."""
    operation: dict[str, Any] = {"tags": [name], "operationId": operation_id, **extra,
                                 "responses": {status: _json(answer, description),
                                               "default": _ERROR}}
    if body is not None:
        operation["requestBody"] = {"required": True,
                                    "content": {"application/json": {"schema": body}}}
    return operation


def _collection_paths(schema: CollectionSchema) -> dict[str, Any]:
    name = schema.name
    document, body = _ref(name), _ref(f"{name}Input")
    listing = {"anyOf": [{"type": "array", "items": document}, {"type": "object"}]}
    some = {"type": "object"}
    paths: dict[str, Any] = {
        f"/rest/{name}": {
            "get": _operation(name, f"list_{name}", "200", listing, "the documents",
                              parameters=_list_parameters()),
            "post": _operation(name, f"create_{name}", "201",
                               {"anyOf": [document, {"type": "array", "items": document}]},
                               "created",
                               body={"anyOf": [body, {"type": "array", "items": body}]}),
        },
        f"/rest/{name}/{{id}}": {
            "parameters": [_id_parameter("id")],
            "get": _operation(name, f"get_{name}", "200", document, "the document"),
            "put": _operation(name, f"put_{name}", "200", document, "updated", body=some),
            "patch": _operation(name, f"patch_{name}", "200", document, "updated", body=some),
            "delete": _operation(name, f"delete_{name}", "200", _ref("Result"), "deleted"),
        },
        f"/rest/{name}/_meta": {
            "get": _operation(name, f"meta_{name}", "200", _ref("CollectionMeta"),
                              "the metadata"),
        },
    }
    for child in schema.of_type(FieldType.CHILD):
        paths[f"/rest/{name}/{{id}}/{child.name}"] = {
            "parameters": [_id_parameter("id")],
            "get": _operation(name, f"list_{name}_{child.name}", "200", listing,
                              "the children"),
            "post": _operation(name, f"create_{name}_{child.name}", "201", {}, "created",
                               body=some),
        }
    return paths


def _id_parameter(name: str) -> dict[str, Any]:
    return {"name": name, "in": "path", "required": True, "schema": OBJECT_ID}


def _list_parameters() -> list[dict[str, Any]]:
    flags = ("totals", "count", "metafields", "fetchchildren")
    return [
        {"name": "q", "in": "query", "schema": JSON_TEXT, "description": "a query object"},
        {"name": "h", "in": "query", "schema": JSON_TEXT, "description": "a hints object"},
        {"name": "filter", "in": "query", "schema": {"type": "string"}},
        {"name": "max", "in": "query", "schema": {"type": "integer", "minimum": 0}},
        {"name": "skip", "in": "query", "schema": {"type": "integer", "minimum": 0}},
        {"name": "sort", "in": "query", "schema": {"type": "string"}},
        {"name": "dir", "in": "query", "schema": {"type": "integer", "enum": [1, -1]}},
        *({"name": flag, "in": "query", "schema": {"type": "boolean"}} for flag in flags),
    ]


def _components(schemas: dict[str, CollectionSchema], strict: bool) -> dict[str, Any]:
    components: dict[str, Any] = {
        "Error": {"type": "object", "required": ["name", "message", "status"], "properties": {
            "name": {"type": "string"}, "message": {"type": "string"},
            "status": {"type": "integer"},
            "list": {"type": "array", "items": {
                "type": "object", "required": ["field", "message"], "properties": {
                    "field": {"type": "string"},
                    "message": {"type": "array", "items": {"type": "string"}}}}}}},
        "Result": {"type": "object", "required": ["result"], "properties": {
            "result": {"type": "array", "items": {"type": "string"}}}},
        "CollectionMeta": {"type": "object", "required": ["name", "fields", "children",
                                                          "indexes"], "properties": {
            "name": {"type": "string"}, "fields": {"type": "array"},
            "children": {"type": "array"}, "indexes": {"type": "array"}}},
        "DatabaseMeta": {"type": "object", "required": ["name", "collections"], "properties": {
            "name": {"type": "string"}, "mode": {"type": "string"},
            "collections": {"type": "array", "items": _ref("CollectionMeta")}}},
    }
    for name, schema in schemas.items():
        components[name] = _output(schema)
        components[f"{name}Input"] = _input(schema, strict)
    return components


def _batch_path() -> dict[str, Any]:
    """``POST /batch`` (docs/batch.md): requests of /rest run in one, all or nothing."""
    request = {"type": "object", "required": ["method", "path"], "properties": {
        "method": {"type": "string", "enum": ["GET", "POST", "PUT", "PATCH", "DELETE"]},
        "path": {"type": "string", "pattern": "^/rest/"},
        "body": {},
        "headers": {"type": "object", "additionalProperties": {"type": "string"}}}}
    answer = {"type": "object", "required": ["status"], "properties": {
        "status": {"type": "integer"}, "body": {}}}
    answers = {"type": "array", "items": answer}
    return {"post": {
        "tags": ["batch"], "operationId": "batch",
        "description": "Runs the requests in order with the batch's credential; "
                       "`{N.field}` in a path and `{\"$ref\": \"N.field\"}` in a body "
                       "stand for a value of an earlier answer.",
        "requestBody": {"required": True, "content": {"application/json": {"schema": {
            "type": "object", "required": ["requests"], "properties": {
                "requests": {"type": "array", "items": request},
                "atomic": {"type": "boolean", "default": True}}}}}},
        "responses": {
            "200": {"description": "every request ran; one answer each, in order",
                    "headers": {"X-Batch-Id": {"schema": {"type": "string"}}},
                    "content": {"application/json": {"schema": {
                        "type": "object", "required": ["responses"],
                        "properties": {"responses": answers}}}}},
            "default": {"description": "the batch was refused, or (atomic) request "
                                       "`index` failed and nothing was stored",
                        "content": {"application/json": {"schema": {"allOf": [
                            _ref("Error"), {"type": "object", "properties": {
                                "index": {"type": "integer"},
                                "responses": answers}}]}}}}}}}


def openapi_document(database: str, schemas: dict[str, CollectionSchema], *,
                     strict: bool = False) -> dict[str, Any]:
    """The OpenAPI 3.1 document of a database whose collections have ``schemas``."""
    paths: dict[str, Any] = {
        "/rest/_meta": {"get": {"tags": ["metadata"], "operationId": "database_meta",
                                "responses": {"200": _json(_ref("DatabaseMeta"), "metadata"),
                                              "default": _ERROR}}},
        "/rest/_openapi": {"get": {"tags": ["metadata"], "operationId": "openapi",
                                   "responses": {"200": _json({"type": "object"}, "this"),
                                                 "default": _ERROR}}},
    }
    paths["/batch"] = _batch_path()
    for name in sorted(schemas):
        paths.update(_collection_paths(schemas[name]))
    return {
        "openapi": "3.1.0",
        "info": {"title": f"docbase database {database}", "version": "1",
                 "description": "Generated from the current schemas of the database."},
        "paths": paths,
        "components": {
            "schemas": _components(schemas, strict),
            "responses": {"Error": _json(_ref("Error"), "an error (see its status)")},
            "securitySchemes": {
                "apikey": {"type": "apiKey", "in": "header", "name": "x-apikey"},
                "apikeyQuery": {"type": "apiKey", "in": "query", "name": "apikey"},
                "bearer": {"type": "http", "scheme": "bearer", "bearerFormat": "JWT"},
                "jwtQuery": {"type": "apiKey", "in": "query", "name": "jwt"},
            },
        },
        "security": [{"apikey": []}, {"apikeyQuery": []}, {"bearer": []}, {"jwtQuery": []}],
    }
