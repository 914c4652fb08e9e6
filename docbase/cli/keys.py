"""``docbase keys create|list|revoke``: the API keys of one database."""

from __future__ import annotations

import argparse
from typing import TYPE_CHECKING, Any

import msgspec

from docbase.cli.common import (
    UsageError,
    add_action,
    add_repeatable,
    command_group,
    on_database,
    print_records,
    say,
)
from docbase.config import DatabaseEntry
from docbase.core import auth
from docbase.core.database import Database

if TYPE_CHECKING:
    from docbase.client import RemoteDatabase


def register(commands: Any) -> None:
    """Add the ``keys`` command and its actions."""
    actions = command_group(commands, "keys", help="manage API keys of a database")
    create = add_action(
        actions, "create", create_key, help="create a key and print it",
        description="Create an API key and print it (alone) on stdout. Without --path, "
                    "--method or --role the key has full access.")
    create.add_argument("--full", action="store_true", help="full access (the default "
                        "unless --path or --method is given)")
    add_repeatable(create, "--path", metavar="GLOB",
                   help="allowed path glob, e.g. '/rest/customers/**' (repeatable)")
    add_repeatable(create, "--method", metavar="M", help="allowed HTTP method (repeatable)")
    add_repeatable(create, "--origin", metavar="O",
                   help="allowed CORS origin, e.g. https://app.example.com, or '*'")
    add_repeatable(create, "--role", metavar="R",
                   help="a role for collection access rules (repeatable; scoped keys only)")
    create.add_argument("--expires", metavar="ISO8601", help="expiry date or time (UTC "
                        "unless an offset is given)")
    create.add_argument("--description", default="", help="a note shown by 'keys list'")
    create.add_argument("--owner", help="the name a scoped key writes as _createdby and "
                        "owns documents by (default: key:<serial>, its own; an old key's "
                        "owner takes over its documents)")
    add_action(actions, "list", list_keys, help="list the keys (never their values)",
               json_output=True)
    revoke = add_action(actions, "revoke", revoke_key, help="revoke a key")
    revoke.add_argument("key", metavar="KEY", help="the key, its id, or a unique prefix")


def _check_scopes(args: argparse.Namespace) -> None:
    if args.full and (args.path or args.method or args.role):
        raise UsageError("--full cannot be combined with --path, --method or --role")


async def _create_key(args: argparse.Namespace, db: Database, entry: DatabaseEntry) -> int:
    raw, key = await auth.create_key(
        db, full_access=True if args.full else None, paths=args.path,
        methods=args.method, origins=args.origin, expires=args.expires,
        description=args.description, roles=args.role, owner=args.owner,
    )
    print(raw, flush=True)
    kind = "full-access" if key.full_access else "scoped"
    say(f"created {kind} key {key.id} in database {entry.name!r}")
    return 0


async def _create_remote(args: argparse.Namespace, remote: RemoteDatabase) -> int:
    raw, key = await remote.operator.create_key(
        full=args.full, paths=args.path, methods=args.method, origins=args.origin,
        expires=args.expires, description=args.description, roles=args.role,
        owner=args.owner)
    print(raw, flush=True)
    kind = "full-access" if key.full_access else "scoped"
    say(f"created {kind} key {key.id} in database {remote.name!r} at {args.remote_url}")
    return 0


create_key = on_database(_create_key, check=_check_scopes, remote=_create_remote)
"""``keys create``: print the new key alone on stdout."""


def _status(key: auth.ApiKey) -> str:
    if key.revoked:
        return "revoked"
    return "expired" if key.is_expired() else "active"


async def _list_remote(args: argparse.Namespace, remote: RemoteDatabase) -> int:
    return _print_keys(args, await remote.operator.list_keys())


async def _list_keys(args: argparse.Namespace, db: Database, entry: DatabaseEntry) -> int:
    return _print_keys(args, await auth.list_keys(db))


list_keys = on_database(_list_keys, remote=_list_remote)
"""``keys list``: a table, or JSON lines with ``--json``; never a key's value."""


def _print_keys(args: argparse.Namespace, keys: list[auth.ApiKey]) -> int:
    return print_records(
        keys, as_json=args.json,
        json_row=lambda key: msgspec.to_builtins(key) | {"status": _status(key)},
        header=("ID", "PREFIX", "STATUS", "ACCESS", "EXPIRES", "LAST USED", "DESCRIPTION"),
        table_row=lambda key: (key.id, key.prefix + "…", _status(key), _access(key),
                               key.expires or "-", key.last_used or "-", key.description),
    )


def _access(key: auth.ApiKey) -> str:
    if key.full_access:
        return "full"
    return " ".join([*key.methods, *key.paths] + [f"origin={o}" for o in key.origins]
                    + [f"role={r}" for r in key.roles]) or "-"


async def _revoke_key(args: argparse.Namespace, db: Database, entry: DatabaseEntry) -> int:
    key = await auth.revoke_key(db, args.key)
    say(f"revoked key {key.id} ({key.prefix}…) of database {entry.name!r} at {key.revoked}")
    return 0


async def _revoke_remote(args: argparse.Namespace, remote: RemoteDatabase) -> int:
    key = await remote.operator.revoke_key(args.key)
    say(f"revoked key {key.id} ({key.prefix}…) of database {remote.name!r} at {key.revoked}")
    return 0


revoke_key = on_database(_revoke_key, remote=_revoke_remote)
"""``keys revoke KEY``."""
