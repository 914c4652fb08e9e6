"""One run of ``docbase schema apply`` or ``show``, wherever the command runs.

:func:`apply_schema_file` plans a schema file against a database's stored schemas and
applies it unless told to only print or unless it is destructive and not forced;
:func:`stored_schema_file` is what ``show`` prints. The ``docbase schema`` command calls
them on an open database, and the operator routes (``/_ops/schemas``) for a command
given ``--url``, so both say and do the same.
"""

from __future__ import annotations

from typing import Any

import msgspec

from docbase.core.schema.files import SchemaFile, SchemaHolder, apply_plan, plan


class SchemaRun(msgspec.Struct, frozen=True):
    """What applying a schema file did: its changes (diff lines) and the outcome."""

    changes: list[str]
    applied: bool = False
    refused: bool = False
    """Destructive changes were refused (not forced): nothing changed."""


async def apply_schema_file(db: SchemaHolder, wanted: SchemaFile, *, force: bool = False,
                            dry_run: bool = False) -> SchemaRun:
    """Plan ``wanted`` against the stored schemas and apply it (see the module).

    Raises:
        Conflict: a field becomes unique over stored duplicates (nothing changes).

    """
    changes = plan(await db.schemas.all(), await db.schemas.mode(), wanted)
    lines = [change.line() for change in changes]
    if not changes or dry_run:
        return SchemaRun(lines)
    if any(change.destructive for change in changes) and not force:
        return SchemaRun(lines, refused=True)
    await apply_plan(db, wanted, changes)
    return SchemaRun(lines, applied=True)


async def stored_schema_file(db: SchemaHolder) -> dict[str, Any]:
    """The stored schemas and mode as a schema file that ``apply`` takes back."""
    schemas = await db.schemas.all()
    return {"mode": await db.schemas.mode(), "collections": {
        name: {"fields": schemas[name].to_json()["fields"]} for name in sorted(schemas)}}
