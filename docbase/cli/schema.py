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
from typing import TYPE_CHECKING, Any

import msgspec

from docbase.cli.common import add_action, on_database, say
from docbase.config import DatabaseEntry
from docbase.core.database import Database
from docbase.core.schema.file_runs import SchemaRun, apply_schema_file, stored_schema_file
from docbase.core.schema.files import read_raw_schema_file, read_schema_file

if TYPE_CHECKING:
    from docbase.client import RemoteDatabase


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


async def _apply_file(args: argparse.Namespace, db: Database, entry: DatabaseEntry) -> int:
    run = await apply_schema_file(db, read_schema_file(Path(args.file)), force=args.force,
                                  dry_run=args.dry_run)
    return _report(args, run, entry.name)


async def _apply_remote(args: argparse.Namespace, remote: RemoteDatabase) -> int:
    read_schema_file(Path(args.file))  # checked here, where its errors can name the file
    run = await remote.operator.apply_schemas(read_raw_schema_file(Path(args.file)),
                                              force=args.force, dry_run=args.dry_run)
    return _report(args, run, remote.name)


def _report(args: argparse.Namespace, run: SchemaRun, database: str) -> int:
    if not run.changes:
        print("no changes")
        return 0
    for change in run.changes:
        print(change)
    if run.refused:
        say("error: refusing destructive changes; nothing was changed (use --force)")
        return 1
    if run.applied:
        say(f"applied {len(run.changes)} change(s) to database {database!r}")
    return 0


apply_file = on_database(_apply_file, remote=_apply_remote)
"""``schema apply FILE [--force] [--dry-run]``."""


def _print_file(document: dict[str, Any]) -> int:
    print(msgspec.json.format(msgspec.json.encode(document), indent=2).decode())
    return 0


async def _show(args: argparse.Namespace, db: Database, entry: DatabaseEntry) -> int:
    return _print_file(await stored_schema_file(db))


async def _show_remote(args: argparse.Namespace, remote: RemoteDatabase) -> int:
    return _print_file(await remote.operator.schemas())


show = on_database(_show, remote=_show_remote)
"""``schema show``: the stored schemas and mode, as a schema file."""
