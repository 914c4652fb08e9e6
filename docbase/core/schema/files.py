"""Schema files: every collection's schema (and the mode) declared at once, applied by diff.

A file is JSON or TOML (chosen by its ``.toml`` suffix)::

    mode = "strict"                      # optional: "schemaless" or "strict"

    [collections.people]
    fields = [
      { name = "name", type = "text", required = true },
      { name = "email", type = "email", unique = true },
    ]

Applying one is declarative and idempotent: :func:`plan` lists what differs between the
stored schemas and the file (applying the same file twice changes nothing the second
time), and :func:`apply_plan` makes them equal. Removing a collection's schema, removing
a field or changing a field's type are *destructive* (documents written for the old
definition may no longer fit it) and are only applied when forced.
"""

from __future__ import annotations

import json
import tomllib
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal, Protocol

import msgspec

from docbase.core.errors import ConfigurationError, DocbaseError, ValidationFailed
from docbase.core.schema.definition import parse_schema
from docbase.core.schema.model import CollectionSchema, FieldSpec

if TYPE_CHECKING:
    from docbase.core.schema.stored_schemas import SchemaRegistry
    from docbase.core.system_data import SettingsSource

_MODES = ("schemaless", "strict")
MODE = "schema.mode"
"""What the change of the database's mode is called in a plan."""


class SchemaFile(msgspec.Struct, frozen=True):
    """What a schema file declares: the schemas by collection, and the mode if given."""

    schemas: dict[str, CollectionSchema]
    mode: str | None = None


class Change(msgspec.Struct, frozen=True):
    """One difference between the stored schemas and a file."""

    sign: Literal["+", "-", "~"]
    what: str
    detail: str = ""
    destructive: bool = False

    def line(self) -> str:
        """The change as one line of the printed diff."""
        tail = f": {self.detail}" if self.detail else ""
        mark = "  (destructive)" if self.destructive else ""
        return f"{self.sign} {self.what}{tail}{mark}"


def read_schema_file(path: Path) -> SchemaFile:
    """Read and check a schema file.

    Raises:
        ConfigurationError: it cannot be read, is not valid JSON or TOML, or declares
            something invalid (the message says what, and where).

    """
    return parse_schema_file(read_raw_schema_file(path), str(path))


def read_raw_schema_file(path: Path) -> Any:
    """The JSON or TOML content of a schema file, not yet checked.

    Raises:
        ConfigurationError: it cannot be read, or is not valid JSON or TOML.

    """
    try:
        text = path.read_text(encoding="utf-8")
        return tomllib.loads(text) if path.suffix == ".toml" else json.loads(text)
    except (OSError, UnicodeDecodeError, ValueError) as exc:
        raise ConfigurationError(f"cannot read schema file {path}: {exc}") from None


def parse_schema_file(raw: Any, source: str = "schema file") -> SchemaFile:
    """Check the parsed content of a schema file.

    Raises:
        ConfigurationError: the content declares something invalid.

    """
    if not isinstance(raw, dict) or set(raw) - {"mode", "collections"}:
        raise ConfigurationError(f"{source}: expected an object with 'collections' (and "
                                 "optionally 'mode')")
    mode = raw.get("mode")
    if mode is not None and mode not in _MODES:
        raise ConfigurationError(f"{source}: mode must be 'schemaless' or 'strict'")
    collections = raw.get("collections", {})
    if not isinstance(collections, dict):
        raise ConfigurationError(f"{source}: 'collections' maps collection names to schemas")
    schemas: dict[str, CollectionSchema] = {}
    for name, body in collections.items():
        try:
            schemas[name] = parse_schema(name, body)
        except ValidationFailed as exc:
            problems = "; ".join(f"{f.field}: {', '.join(f.message)}" for f in exc.fields)
            raise ConfigurationError(f"{source}: collection {name!r}: {problems}") from None
        except DocbaseError as exc:
            raise ConfigurationError(f"{source}: collection {name!r}: {exc.message}") from None
    return SchemaFile(schemas, mode)


def _fields(schema: CollectionSchema) -> dict[str, FieldSpec]:
    return {f.name: f for f in schema.fields}


def _attributes(spec: FieldSpec) -> dict[str, Any]:
    result: dict[str, Any] = msgspec.to_builtins(spec)
    return result


def plan(current: dict[str, CollectionSchema], current_mode: str,
         wanted: SchemaFile) -> list[Change]:
    """What applying ``wanted`` over ``current`` changes, collection by collection."""
    changes: list[Change] = []
    if wanted.mode is not None and wanted.mode != current_mode:
        changes.append(Change("~", MODE, f"{current_mode} -> {wanted.mode}"))
    for name in sorted(set(current) | set(wanted.schemas)):
        old, new = current.get(name), wanted.schemas.get(name)
        if new is None:
            changes.append(Change("-", name, "schema removed (its documents stay)", True))
        elif old is None:
            rules = ", access rules" if new.access is not None else ""
            changes.append(Change("+", name, f"{len(new.fields)} field(s){rules}"))
        else:
            changes.extend(_field_changes(name, old, new))
    return changes


def _field_changes(name: str, old: CollectionSchema, new: CollectionSchema) -> list[Change]:
    changes: list[Change] = []
    before, after = _fields(old), _fields(new)
    for field in [*before, *(f for f in after if f not in before)]:
        what = f"{name}.{field}"
        if field not in after:
            changes.append(Change("-", what, before[field].type, True))
        elif field not in before:
            changes.append(Change("+", what, after[field].type))
        elif before[field] != after[field]:
            was, now = _attributes(before[field]), _attributes(after[field])
            detail = ", ".join(f"{key} {was.get(key)!r} -> {now.get(key)!r}"
                               for key in sorted(set(was) | set(now))
                               if was.get(key) != now.get(key))
            changes.append(Change("~", what, detail, was["type"] != now["type"]))
    if not changes and [f.name for f in old.fields] != [f.name for f in new.fields]:
        changes.append(Change("~", name, "field order"))
    if old.access != new.access:
        what = "added" if old.access is None else "removed" if new.access is None else "changed"
        changes.append(Change("~", name, f"access rules {what}"))
    return changes


class SchemaHolder(Protocol):
    """A database's schemas and stored settings (a ``Database`` has both)."""

    @property
    def schemas(self) -> SchemaRegistry:
        """The schemas in ``_schemas``."""

    @property
    def settings(self) -> SettingsSource:
        """The stored settings (``schema.mode``)."""


async def apply_plan(db: SchemaHolder, wanted: SchemaFile, changes: list[Change]) -> None:
    """Make the stored schemas (and mode) what ``wanted`` declares.

    Every field becoming unique is checked first, so that stored duplicates refuse the
    whole file before anything changes.

    Raises:
        Conflict: a field becomes unique over stored duplicates (listed).

    """
    current = await db.schemas.all()
    for name, wanted_schema in wanted.schemas.items():
        before = current.get(name)
        was_unique = {f.name for f in before.fields if f.unique} if before else set()
        for spec in wanted_schema.fields:
            if spec.unique and spec.name not in was_unique:
                await db.schemas.claims.check_unique(name, spec.name)
    if wanted.mode is not None and any(change.what == MODE for change in changes):
        await db.settings.set(MODE, wanted.mode)
    touched = {change.what.split(".")[0] for change in changes if change.what != MODE}
    for name in sorted(touched):
        schema = wanted.schemas.get(name)
        if schema is None:
            await db.schemas.delete(name)
        else:
            await db.schemas.put(schema)
