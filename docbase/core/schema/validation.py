"""The validator the write pipeline runs: every write checked against its schema.

:class:`SchemaValidator` is one of ``db.validators``, so the validate stage runs it for
every insert (one, bulk, child), PUT and PATCH, from HTTP or the library. It refuses a
write with :class:`~docbase.core.errors.ValidationFailed` listing every failing field at
once (``"<index>.<field>"`` for an item of a bulk insert), normalises what it accepts
(:mod:`.values`), applies defaults, stores lookups as their ids only (``{_id}`` objects,
whatever a writer sent; resolved when read: ``docbase.core.reads``),
checks that media ids exist in ``_media`` and hashes password fields.

In strict mode (the stored setting ``schema.mode``) a write to a collection no schema
defines is refused as ``NotFound``, and an undeclared field as invalid. A bulk insert
with ``validate=false`` skips the field checks but still hashes passwords (uniqueness is
the store's, :mod:`.enforcing`).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from docbase.core.auth.passwords import MAX_PASSWORD_LENGTH, hash_password
from docbase.core.documents import SYSTEM_FIELDS, Document
from docbase.core.errors import FieldError, ValidationFailed
from docbase.core.events import Insert, UpdateDocument, WriteEvent
from docbase.core.media.records import MEDIA_COLLECTION
from docbase.core.ports import DocumentStore
from docbase.core.projection import ID_ONLY
from docbase.core.query import In, Query
from docbase.core.schema.model import (
    ARRAY_TYPES,
    MEDIA_TYPES,
    NUMBER_TYPES,
    CollectionSchema,
    FieldSpec,
    FieldType,
)
from docbase.core.schema.stored_schemas import SchemaRegistry
from docbase.core.schema.strict import check_child_field, governed, undefined
from docbase.core.schema.values import BadValue, child_message, coerce, is_empty
from docbase.core.update import (
    IncOp,
    PullOp,
    PushOp,
    SetOp,
    UnsetOp,
    Update,
    UpdateOp,
    apply_update,
)

Problems = dict[str, list[str]]


class SchemaValidator:
    """Checks and normalises writes of collections that have a schema."""

    name = "schema"

    def __init__(self, schemas: SchemaRegistry, store: DocumentStore,
                 documents: DocumentStore) -> None:
        """``store`` is the raw store; ``documents`` the one lookups read (no secrets)."""
        self.schemas = schemas
        self.store = store
        self.documents = documents

    async def __call__(self, write: WriteEvent) -> None:
        """Refuse or normalise ``write``; deletes and cascades pass unchecked."""
        if not governed(write.collection) or write.cause is not None:
            return
        schema = await self.schemas.get(write.collection)
        strict = await self.schemas.mode() == "strict"
        if schema is None and strict:
            raise undefined(write.collection)
        if write.parent is not None:
            check_child_field(write.parent, await self.schemas.get(write.parent.collection),
                              strict)
        if schema is None:
            return
        match write:
            case Insert():
                await self._insert(write, schema, strict)
            case UpdateDocument():
                await self._update(write, schema, strict)
            case _:  # deletes carry no values to check
                pass

    # ------------------------------------------------------------------ inserts

    async def _insert(self, write: Insert, schema: CollectionSchema, strict: bool) -> None:
        errors: list[FieldError] = []
        for step in ("check", "hash"):  # hashing is costly: only once all documents fit
            for index, document in enumerate(write.documents):
                problems: Problems = {}
                if step == "hash":
                    await self._hash(schema, document, problems)
                elif write.validate:
                    check_fields(document, schema, strict, problems)
                    await self._relations(schema, document, problems)
                prefix = f"{index}." if write.bulk else ""
                errors.extend(FieldError(prefix + name, tuple(messages))
                              for name, messages in problems.items())
            if errors:
                raise ValidationFailed(_summary(write.collection, errors), errors)

    async def _relations(self, schema: CollectionSchema, document: Document,
                         problems: Problems) -> None:
        for spec in schema.of_type(FieldType.LOOKUP, *MEDIA_TYPES):
            value = document.get(spec.name)
            if spec.name in problems or not isinstance(value, list) or not value:
                continue
            try:
                document[spec.name] = await self._resolve(spec, value)
            except BadValue as exc:
                problems[spec.name] = list(exc.messages)

    async def _resolve(self, spec: FieldSpec, value: list[Any]) -> list[Any]:
        """Embed the documents a lookup names; check that media ids exist."""
        if spec.type is FieldType.LOOKUP:  # only the ids are stored
            ids = [item["_id"] for item in value]
            target = spec.collection or ""
            found = {d["_id"] for d in await self.documents.find(target, Query(
                filter=In(("_id",), tuple(ids)), limit=None, projection=ID_ONLY))}
            missing = [i for i in ids if i not in found]
            if missing:
                raise BadValue(*(f"no document {i} in {target!r}" for i in missing))
            return [{"_id": i} for i in ids]
        stored = {d["_id"] for d in await self.store.find(MEDIA_COLLECTION, Query(
            filter=In(("_id",), tuple(value)), limit=None))}
        missing = [i for i in value if i not in stored]
        if missing:
            raise BadValue(*(f"no media {i}" for i in missing))
        return value

    async def _hash(self, schema: CollectionSchema, document: Document,
                    problems: Problems) -> None:
        for spec in schema.of_type(FieldType.LOOKUP):  # unchecked (validate=false) too
            if spec.name not in problems and document.get(spec.name) is not None:
                try:
                    document[spec.name] = coerce(spec, document[spec.name])
                except BadValue as exc:
                    problems[spec.name] = list(exc.messages)
        for spec in schema.of_type(FieldType.PASSWORD):
            value = document.get(spec.name)
            if spec.name in problems or is_empty(value):
                document.pop(spec.name, None)
            elif not isinstance(value, str) or len(value) > MAX_PASSWORD_LENGTH:
                problems[spec.name] = [f"must be a string of at most {MAX_PASSWORD_LENGTH} "
                                       "characters"]
            else:
                document[spec.name] = await hash_password(value)

    # ------------------------------------------------------------------ updates

    async def _update(self, write: UpdateDocument, schema: CollectionSchema,
                      strict: bool) -> None:
        problems: Problems = {}
        ops: list[UpdateOp] = []
        predicted: set[str] = set()
        for op in write.update.ops:
            name = op.path[0]
            spec = schema.field(name)
            if spec is None:
                if strict:
                    problems[name] = [f"is not a field of {schema.name!r}"]
                ops.append(op)
                continue
            try:
                changed = await self._operation(op, spec)
            except BadValue as exc:
                problems.setdefault(name, []).extend(exc.messages)
                continue
            if isinstance(op, IncOp | PushOp | PullOp):
                predicted.add(name)
            ops.append(changed)
        update = Update(tuple(ops))
        if predicted and not problems:
            current = await self.store.get(write.collection, write.ids[0])
            result = apply_update(current, update)
            for name in predicted:
                spec = schema.field(name)
                assert spec is not None
                try:
                    coerce(spec, result.get(name))
                except BadValue as exc:
                    problems[name] = [f"would become invalid: {m}" for m in exc.messages]
        if problems:
            errors = [FieldError(name, tuple(messages)) for name, messages in problems.items()]
            raise ValidationFailed(_summary(write.collection, errors), errors)
        write.update = update

    async def _operation(self, op: UpdateOp, spec: FieldSpec) -> UpdateOp:
        """Check one update operation on a declared field; return it normalised."""
        kind = spec.type
        if kind is FieldType.CHILD:
            raise BadValue(child_message(spec))
        if isinstance(op, UnsetOp) and len(op.path) > 1 and kind is not FieldType.JSON:
            raise BadValue(f"a {kind} field is changed as a whole, not in parts")
        if isinstance(op, UnsetOp) or (isinstance(op, SetOp) and len(op.path) == 1
                                       and is_empty(op.value)):
            if spec.required:
                raise BadValue("is required")
            return op
        if isinstance(op, SetOp):
            if len(op.path) > 1:
                if kind is not FieldType.JSON:
                    raise BadValue(f"a {kind} field is set as a whole, not in parts")
                return op
            value = coerce(spec, op.value)
            if kind in (FieldType.LOOKUP, *MEDIA_TYPES):
                value = await self._resolve(spec, value)
            elif kind is FieldType.PASSWORD:
                value = await hash_password(value)
            return SetOp(op.path, value)
        if len(op.path) > 1 and kind is not FieldType.JSON:
            raise BadValue(f"a {kind} field is changed as a whole, not in parts")
        if isinstance(op, IncOp):
            if kind not in NUMBER_TYPES and kind is not FieldType.JSON:
                raise BadValue(f"a {kind} field cannot be incremented")
            return op
        if kind is FieldType.JSON:
            return op
        if kind not in ARRAY_TYPES:
            raise BadValue(f"a {kind} field is not an array")
        (element,) = coerce(spec, [op.value])
        if kind in (FieldType.LOOKUP, *MEDIA_TYPES) and isinstance(op, PushOp):
            (element,) = await self._resolve(spec, [element])
        return type(op)(op.path, element)


def check_fields(document: Document, schema: CollectionSchema, strict: bool,
                 problems: Problems) -> None:
    """Check ``document``'s fields against ``schema``, normalising it; collect ``problems``.

    Applies defaults and coerces values in place; in a ``strict`` database a field the
    schema does not declare is a problem too. Lookups and passwords are not touched.
    """
    for spec in schema.fields:
        if spec.type is FieldType.CHILD:
            if spec.name in document:
                problems[spec.name] = [child_message(spec)]
            continue
        if spec.name not in document and spec.default is not None:
            document[spec.name] = spec.default
        try:
            value = coerce(spec, document.get(spec.name))
        except BadValue as exc:
            problems[spec.name] = list(exc.messages)
            continue
        if value is None and spec.required:
            problems[spec.name] = ["is required"]
        elif spec.name in document:
            document[spec.name] = value
    if strict:
        for name in document:
            if name not in SYSTEM_FIELDS and schema.field(name) is None:
                problems[name] = [f"is not a field of {schema.name!r}"]


def _summary(collection: str, errors: Sequence[FieldError]) -> str:
    names = ", ".join(e.field for e in errors)
    return f"the document does not fit the schema of {collection!r} ({names})"
