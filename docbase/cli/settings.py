"""``docbase settings set|set-file|unset|list``: the stored settings of one database.

Paths are dotted (``mail.smtp.host``). ``set`` parses VALUE as JSON when it is valid
JSON (``2525``, ``true``, ``{"a": 1}``) and takes it as a string otherwise; ``set-file``
stores a file's text (a PEM key). ``list`` prints every path, with the values of the
plain settings and ``***`` for passwords and secrets.
"""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import Any

from docbase.cli.common import UsageError, add_action, command_group, on_database, say
from docbase.config import DatabaseEntry
from docbase.core.database import Database
from docbase.core.settings.display import parse_value, shown_settings


def register(commands: Any) -> None:
    """Add the ``settings`` command and its actions."""
    actions = command_group(commands, "settings", help="manage the stored settings of a database")
    setter = add_action(actions, "set", set_value,
                        help="set PATH to VALUE (JSON if valid, else a string)")
    setter.add_argument("path", metavar="PATH")
    setter.add_argument("value", metavar="VALUE")
    from_file = add_action(actions, "set-file", set_file, help="set PATH to the text of FILE")
    from_file.add_argument("path", metavar="PATH")
    from_file.add_argument("file", metavar="FILE")
    unset = add_action(actions, "unset", unset_value, help="remove the setting at PATH")
    unset.add_argument("path", metavar="PATH")
    add_action(actions, "list", list_settings, help="list the settings (secrets hidden)")


async def _store(entry: DatabaseEntry, db: Database, path: str, value: Any) -> int:
    await db.settings.set(path, value)
    say(f"set {path} of database {entry.name!r}")
    return 0


@on_database
async def set_value(args: argparse.Namespace, db: Database, entry: DatabaseEntry) -> int:
    """``settings set PATH VALUE``."""
    return await _store(entry, db, args.path, parse_value(args.value))


def _file_text(path: str) -> str:
    try:
        return Path(path).read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        raise UsageError(f"cannot read {path}: {exc}") from None


@on_database
async def set_file(args: argparse.Namespace, db: Database, entry: DatabaseEntry) -> int:
    """``settings set-file PATH FILE``."""
    return await _store(entry, db, args.path, _file_text(args.file))


@on_database
async def unset_value(args: argparse.Namespace, db: Database, entry: DatabaseEntry) -> int:
    """``settings unset PATH``: exit status 1 when nothing was set there."""
    if await db.settings.unset(args.path):
        say(f"removed {args.path} of database {entry.name!r}")
        return 0
    say(f"error: no setting {args.path} in database {entry.name!r}")
    return 1


@on_database
async def list_settings(args: argparse.Namespace, db: Database, entry: DatabaseEntry) -> int:
    """``settings list``: ``path = value`` lines, secrets as ``***``."""
    for path, shown in shown_settings(await db.settings.tree()):
        print(f"{path} = {shown}")
    return 0
