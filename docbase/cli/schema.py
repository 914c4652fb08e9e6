"""``docbase schema apply FILE`` and ``docbase schema show``: a database's schemas.

``apply`` reads a JSON or TOML schema file (``docs/schema.md``), prints on stdout what
differs from the stored schemas (one ``+``, ``-`` or ``~`` line per change) and applies
it; applying the same file again prints ``no changes``. Destructive changes (a schema or
a field removed, a field's type changed) are refused, with exit status 1 and nothing
changed, unless ``--force`` is given; ``--dry-run`` only prints. ``show`` prints the
stored schemas as a JSON schema file that ``apply`` takes back.
"""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import Any

import msgspec

from docbase.cli.common import add_action, on_database, say
from docbase.config import DatabaseEntry
from docbase.core.database import Database
from docbase.core.schema.files import apply_plan, plan, read_schema_file


def register(commands: Any) -> None:
    """Add the ``schema`` command and its actions."""
    parser = commands.add_parser("schema", help="manage the schemas of a database")
    actions = parser.add_subparsers(dest="schema_command", required=True, metavar="ACTION")
    apply = add_action(actions, "apply", apply_file,
                       help="make the stored schemas what FILE (JSON or TOML) declares")
    apply.add_argument("file", metavar="FILE")
    apply.add_argument("--force", action="store_true",
                       help="also apply destructive changes (removed schemas or fields, "
                            "changed types)")
    apply.add_argument("--dry-run", action="store_true", help="print the changes only")
    add_action(actions, "show", show, help="print the stored schemas as a JSON schema file")


@on_database
async def apply_file(args: argparse.Namespace, db: Database, entry: DatabaseEntry) -> int:
    """``schema apply FILE [--force] [--dry-run]``."""
    wanted = read_schema_file(Path(args.file))
    changes = plan(await db.schemas.all(), await db.schemas.mode(), wanted)
    if not changes:
        print("no changes")
        return 0
    for change in changes:
        print(change.line())
    if args.dry_run:
        return 0
    if any(change.destructive for change in changes) and not args.force:
        say("error: refusing destructive changes; nothing was changed (use --force)")
        return 1
    await apply_plan(db, wanted, changes)
    say(f"applied {len(changes)} change(s) to database {entry.name!r}")
    return 0


@on_database
async def show(args: argparse.Namespace, db: Database, entry: DatabaseEntry) -> int:
    """``schema show``: the stored schemas and mode, as a schema file."""
    schemas = await db.schemas.all()
    document = {"mode": await db.schemas.mode(), "collections": {
        name: {"fields": schemas[name].to_json()["fields"]} for name in sorted(schemas)}}
    print(msgspec.json.format(msgspec.json.encode(document), indent=2).decode())
    return 0
