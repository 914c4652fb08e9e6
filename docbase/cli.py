"""The ``docbase`` command: serve, and manage API keys and databases.

Every command acts on a deployment named by ``--data-dir`` (default
``./docbase-data``), ``--storage`` and ``--config``, and on one of its databases with
``--db`` (default: the primary, ``docbase``). ``docs/cli.md`` documents each command;
the spellings are relied on by scripts (API.md, "Operator interface").

Output meant for scripts (a new key) goes to stdout alone; everything else to stderr.
Exit status: 0 done, 1 the operation failed (e.g. no such key), 2 bad usage or
configuration.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import sys
from collections.abc import Awaitable, Callable, Sequence
from pathlib import Path
from typing import Any, NoReturn
from urllib.parse import urlsplit, urlunsplit

import msgspec

from docbase.bootstrap import ensure_admin_key, open_database
from docbase.config import (
    PID_FILE,
    PRIMARY,
    DatabaseEntry,
    Deployment,
    add_options,
    add_to_catalog,
    load_config,
    options_from,
    resolve,
)
from docbase.config.sources import OptionContainer, command_line_names
from docbase.core import auth
from docbase.core.database import Database
from docbase.core.errors import ConfigurationError, DocbaseError
from docbase.core.registry import scheme_of


class UsageError(Exception):
    """Bad command-line usage (exit status 2)."""


_DEPLOYMENT_SETTINGS = ("data_dir", "storage")
"""Settings every command takes (the rest are options of ``docbase serve`` only)."""


def _common(parser: argparse.ArgumentParser, *,
            storage_help: str | None = None) -> OptionContainer:
    group = parser.add_argument_group("deployment")
    add_options(group, _DEPLOYMENT_SETTINGS,
                helps={"storage": storage_help} if storage_help else None)
    group.add_argument("--config", metavar="FILE", help="TOML config file")
    return group


def _common_with_db(parser: argparse.ArgumentParser, *,
                    storage_help: str | None = None) -> None:
    _common(parser, storage_help=storage_help).add_argument(
        "--db", metavar="NAME", help=f"database to act on (default: the primary, {PRIMARY!r})")


def build_parser() -> argparse.ArgumentParser:
    """Build the argument parser of the ``docbase`` command."""
    parser = argparse.ArgumentParser(
        prog="docbase",
        description="A self-hosted document database REST service (restdb.io compatible).",
    )
    commands = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")

    serve = commands.add_parser("serve", help="run the HTTPS server",
                                description="Run the HTTPS server until SIGTERM/SIGINT.")
    add_options(_common(serve), ["default_database"])
    add_options(serve, [name for name in command_line_names()
                        if name not in (*_DEPLOYMENT_SETTINGS, "default_database")])
    serve.set_defaults(handler=_serve)

    keys_parser = commands.add_parser("keys", help="manage API keys of a database")
    keys_commands = keys_parser.add_subparsers(dest="keys_command", required=True,
                                               metavar="ACTION")
    create = keys_commands.add_parser(
        "create", help="create a key and print it",
        description="Create an API key and print it (alone) on stdout. Without --path "
                    "or --method the key has full access.")
    _common_with_db(create)
    create.add_argument("--full", action="store_true", help="full access (the default "
                        "unless --path or --method is given)")
    create.add_argument("--path", action="extend", nargs="+", default=[], metavar="GLOB",
                        help="allowed path glob, e.g. '/rest/customers/**' (repeatable)")
    create.add_argument("--method", action="extend", nargs="+", default=[], metavar="M",
                        help="allowed HTTP method (repeatable)")
    create.add_argument("--origin", action="extend", nargs="+", default=[], metavar="O",
                        help="allowed CORS origin, e.g. https://app.example.com, or '*'")
    create.add_argument("--expires", metavar="ISO8601", help="expiry date or time (UTC "
                        "unless an offset is given)")
    create.add_argument("--description", default="", help="a note shown by 'keys list'")
    create.set_defaults(handler=_keys_create)

    listing = keys_commands.add_parser("list", help="list the keys (never their values)")
    _common_with_db(listing)
    listing.add_argument("--json", action="store_true", help="JSON lines instead of a table")
    listing.set_defaults(handler=_keys_list)

    revoke = keys_commands.add_parser("revoke", help="revoke a key")
    _common_with_db(revoke)
    revoke.add_argument("key", metavar="KEY", help="the key, its id, or a unique prefix")
    revoke.set_defaults(handler=_keys_revoke)

    db_parser = commands.add_parser("db", help="manage the databases of a deployment")
    db_commands = db_parser.add_subparsers(dest="db_command", required=True, metavar="ACTION")
    db_create = db_commands.add_parser(
        "create", help="add a database",
        description="Add a database to the catalog in the data directory, create it with "
                    "a full-access key, and print that key on stdout.")
    _common_with_db(db_create, storage_help="storage URL of the new database "
                                    "(default sqlite:///DIR/NAME.db)")
    db_create.add_argument("name", metavar="NAME")
    db_create.set_defaults(handler=_db_create)
    db_list = db_commands.add_parser("list", help="list the databases")
    _common_with_db(db_list)
    db_list.add_argument("--json", action="store_true", help="JSON lines instead of a table")
    db_list.set_defaults(handler=_db_list)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    """Run the ``docbase`` command; return its exit status."""
    args = build_parser().parse_args(argv)
    handler: Callable[[argparse.Namespace], int] = args.handler
    try:
        return handler(args)
    except (ConfigurationError, UsageError) as exc:
        _say(f"error: {exc}")
        return 2
    except DocbaseError as exc:
        _say(f"error: {exc.message}")
        return 1
    except KeyboardInterrupt:
        return 130


def _say(message: str) -> None:
    print(f"docbase: {message}", file=sys.stderr)


def deployment_from(args: argparse.Namespace, **options: Any) -> Deployment:
    """Resolve the deployment the options, the environment and the config file describe.

    Raises:
        ConfigurationError: a setting is invalid, in any of them; it is named.

    """
    config = load_config(args.config) if args.config else None
    return resolve(config, environ=os.environ, **({"data_dir": args.data_dir} | options))


# ---------------------------------------------------------------- serve


def _serve(args: argparse.Namespace) -> int:
    deployment = deployment_from(args, **options_from(args))
    try:
        from docbase.http import serve  # noqa: PLC0415 (needs the optional server extra)
    except ImportError as exc:
        raise ConfigurationError(
            f"the server needs the {exc.name!r} package: pip install 'docbase[server]'"
        ) from None
    serve.run(deployment)
    return 0


# ---------------------------------------------------------------- keys


def _open_database(args: argparse.Namespace) -> tuple[Deployment, DatabaseEntry]:
    deployment = deployment_from(args, storage=args.storage)
    entry = deployment.database(args.db)
    scheme = scheme_of(entry.storage)
    if scheme == "memory":
        raise UsageError(f"database {entry.name!r} is in memory, inside the server process: "
                         "its keys cannot be managed from the command line")
    if scheme == "sqlite":
        path = _sqlite_file(entry.storage)
        if path is not None and not path.exists():
            raise UsageError(f"database {entry.name!r} does not exist yet ({path}): start "
                             "'docbase serve' once, or check --data-dir")
    return deployment, entry


def _sqlite_file(url: str) -> Path | None:
    path = url.partition("://")[2].partition("?")[0]
    if not path.startswith("/") or path in ("/", "/:memory:"):
        return None
    return Path(path[1:])


def _with_database(entry: DatabaseEntry, deployment: Deployment,
                   action: Callable[[Database], Awaitable[int]]) -> int:
    async def go() -> int:
        async with open_database(deployment, entry) as db:
            return await action(db)

    return asyncio.run(go())


def _keys_create(args: argparse.Namespace) -> int:
    if args.full and (args.path or args.method):
        raise UsageError("--full cannot be combined with --path or --method")
    deployment, entry = _open_database(args)

    async def create(db: Database) -> int:
        raw, key = await auth.create_key(
            db, full_access=True if args.full else None, paths=args.path,
            methods=args.method, origins=args.origin, expires=args.expires,
            description=args.description,
        )
        print(raw, flush=True)
        kind = "full-access" if key.full_access else "scoped"
        _say(f"created {kind} key {key.id} in database {entry.name!r}")
        return 0

    return _with_database(entry, deployment, create)


def _key_status(key: auth.ApiKey) -> str:
    if key.revoked:
        return "revoked"
    return "expired" if key.is_expired() else "active"


def _keys_list(args: argparse.Namespace) -> int:
    deployment, entry = _open_database(args)

    async def listing(db: Database) -> int:
        found = await auth.list_keys(db)
        if args.json:
            for key in found:
                row = msgspec.to_builtins(key) | {"status": _key_status(key)}
                print(msgspec.json.encode(row).decode())
            return 0
        rows = [("ID", "PREFIX", "STATUS", "ACCESS", "EXPIRES", "LAST USED", "DESCRIPTION")]
        for key in found:
            access = "full" if key.full_access else " ".join(
                [*key.methods, *key.paths] + [f"origin={o}" for o in key.origins])
            rows.append((key.id, key.prefix + "…", _key_status(key), access or "-",
                         key.expires or "-", key.last_used or "-", key.description))
        _print_table(rows)
        return 0

    return _with_database(entry, deployment, listing)


def _keys_revoke(args: argparse.Namespace) -> int:
    deployment, entry = _open_database(args)

    async def revoke(db: Database) -> int:
        key = await auth.revoke_key(db, args.key)
        _say(f"revoked key {key.id} ({key.prefix}…) of database {entry.name!r} "
             f"at {key.revoked}")
        return 0

    return _with_database(entry, deployment, revoke)


# ---------------------------------------------------------------- db


def _db_create(args: argparse.Namespace) -> int:
    deployment = deployment_from(args)
    entry = add_to_catalog(deployment, args.name, args.storage)

    async def bootstrap(db: Database) -> int:
        admin = await ensure_admin_key(db, deployment.data_path, new=True)
        path = admin.path
        print(admin.key, flush=True)
        _say(f"created database {entry.name!r} on {redact(entry.storage)}; its full-access "
             f"key is also in {path}")
        pid_file = deployment.data_path / PID_FILE
        if pid_file.exists():
            _say(f"a running server serves it after: kill -HUP $(cat {pid_file})")
        return 0

    return _with_database(entry, deployment, bootstrap)


def _db_list(args: argparse.Namespace) -> int:
    deployment = deployment_from(args, storage=args.storage)
    databases = deployment.all_databases()
    if args.json:
        for entry in databases:
            print(msgspec.json.encode({"name": entry.name,
                                       "storage": redact(entry.storage)}).decode())
        return 0
    _print_table([("NAME", "STORAGE", "BASE URL")] + [
        (e.name, redact(e.storage), "/" if e.name == PRIMARY else f"/db/{e.name}")
        for e in databases
    ])
    return 0


def redact(url: str) -> str:
    """Hide the password of a storage URL."""
    parts = urlsplit(url)
    if parts.password is None:
        return url
    netloc = parts.netloc.replace(f":{parts.password}@", ":***@", 1)
    return urlunsplit(parts._replace(netloc=netloc))


def _print_table(rows: Sequence[Sequence[str]]) -> None:
    widths = [max(len(row[i]) for row in rows) for i in range(len(rows[0]))]
    for row in rows:
        print("  ".join(cell.ljust(width) for cell, width in zip(row, widths, strict=True))
              .rstrip())


def entry_point() -> NoReturn:
    """Exit with the status of :func:`main` (for ``python -m docbase.cli``)."""
    sys.exit(main())


if __name__ == "__main__":
    entry_point()
