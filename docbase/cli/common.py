"""What every ``docbase`` command shares.

The deployment options, opening a database, messages on stderr, tables, and the usage
error.
"""

from __future__ import annotations

import argparse
import asyncio
import functools
import os
import sys
from collections.abc import Awaitable, Callable, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any, TypeVar
from urllib.parse import urlsplit, urlunsplit

import msgspec

from docbase.bootstrap import open_database
from docbase.config import PRIMARY, DatabaseEntry, Deployment, add_options, load_config, resolve
from docbase.config.sources import OptionContainer
from docbase.core.database import Database
from docbase.core.schemes import scheme_of

if TYPE_CHECKING:
    from docbase.client import RemoteDatabase

T = TypeVar("T")


class UsageError(Exception):
    """Bad command-line usage (exit status 2)."""


APIKEY_VARIABLE = "DOCBASE_APIKEY"
"""Where ``--apikey`` is read from when omitted (with ``--url``)."""

DEPLOYMENT_SETTINGS = ("data_dir", "storage")
"""Settings every command takes (the rest are options of ``docbase serve`` only)."""


def add_deployment_options(parser: argparse.ArgumentParser, *,
                           storage_help: str | None = None) -> OptionContainer:
    """Add ``--data-dir``, ``--storage`` and ``--config`` to a command."""
    group = parser.add_argument_group("deployment")
    add_options(group, DEPLOYMENT_SETTINGS,
                helps={"storage": storage_help} if storage_help else None)
    group.add_argument("--config", metavar="FILE", help="TOML config file")
    return group


def add_database_options(parser: argparse.ArgumentParser, *,
                         storage_help: str | None = None) -> None:
    """Add the deployment options, ``--db`` and ``--url``/``--apikey``/``--cacert``."""
    add_deployment_options(parser, storage_help=storage_help).add_argument(
        "--db", metavar="NAME", help=f"database to act on (default: the primary, {PRIMARY!r})")
    remote = parser.add_argument_group("remote server (instead of --data-dir/--storage)")
    remote.add_argument("--url", dest="remote_url", metavar="URL", help="a served database, "
                        "https://host:8443 or https://host:8443/db/NAME")
    remote.add_argument("--apikey", metavar="KEY", help=f"its full-access key (else "
                        f"${APIKEY_VARIABLE})")
    remote.add_argument("--cacert", metavar="FILE", help="the certificate to trust, e.g. "
                        "the server's self-signed docbase-data/cert.pem")


def command_group(commands: Any, name: str, *, help: str) -> Any:
    """Add the command ``name`` whose actions are added to what this returns."""
    parser = commands.add_parser(name, help=help)
    return parser.add_subparsers(dest=f"{name}_command", required=True, metavar="ACTION")


def add_action(
    actions: Any,
    name: str,
    handler: Callable[[argparse.Namespace], int],
    *,
    help: str,
    description: str | None = None,
    json_output: bool = False,
    storage_help: str | None = None,
) -> argparse.ArgumentParser:
    """Add one action of a command group, acting on one database (``--db``).

    ``json_output`` adds ``--json`` (JSON lines instead of a table).
    """
    parser: argparse.ArgumentParser = actions.add_parser(name, help=help,
                                                          description=description)
    add_database_options(parser, storage_help=storage_help)
    if json_output:
        parser.add_argument("--json", action="store_true", help="JSON lines instead of a table")
    parser.set_defaults(handler=handler)
    return parser


def add_repeatable(parser: argparse.ArgumentParser, flag: str, *, metavar: str,
                   help: str) -> None:
    """Add an option taking one or more values, given once or repeated (a list)."""
    parser.add_argument(flag, action="extend", nargs="+", default=[], metavar=metavar,
                        help=help)


def say(message: str) -> None:
    """Tell the operator something, on stderr (stdout is kept for what scripts read)."""
    print(f"docbase: {message}", file=sys.stderr)


def deployment_from(args: argparse.Namespace, **options: Any) -> Deployment:
    """Resolve the deployment the options, the environment and the config file describe.

    Raises:
        ConfigurationError: a setting is invalid, in any of them; it is named.

    """
    config = load_config(args.config) if args.config else None
    return resolve(config, environ=os.environ, **({"data_dir": args.data_dir} | options))


def database_of(args: argparse.Namespace) -> tuple[Deployment, DatabaseEntry]:
    """The deployment and the database (``--db``) a command acts on.

    Raises:
        UsageError: the database is in memory (inside a server process), or its SQLite
            file does not exist yet.

    """
    deployment = deployment_from(args, storage=args.storage)
    entry = deployment.database(args.db)
    scheme = scheme_of(entry.storage)
    if scheme == "memory":
        raise UsageError(f"database {entry.name!r} is in memory, inside the server process: "
                         "it cannot be managed from the command line")
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


def with_database(entry: DatabaseEntry, deployment: Deployment,
                  action: Callable[[Database], Awaitable[int]]) -> int:
    """Open the database, run ``action`` on it, close it; return the exit status."""
    async def go() -> int:
        async with open_database(deployment, entry) as db:
            return await action(db)

    return asyncio.run(go())


DatabaseAction = Callable[[argparse.Namespace, Database, DatabaseEntry], Awaitable[int]]
"""An action on the database ``--db`` names: ``async def action(args, db, entry)``."""
RemoteAction = Callable[[argparse.Namespace, "RemoteDatabase"], Awaitable[int]]
"""The same action on a served database (``--url``): ``async def action(args, remote)``."""


def with_remote(args: argparse.Namespace, action: RemoteAction | None) -> int:
    """Run ``action`` on the database ``--url`` names, with ``--apikey`` and ``--cacert``.

    Raises:
        UsageError: the command cannot act on a served database, or has no key.

    """
    if action is None:
        raise UsageError("this command does not take --url: run it where the data is")
    apikey = args.apikey or os.environ.get(APIKEY_VARIABLE)
    if not apikey:
        raise UsageError(f"--url needs --apikey (or ${APIKEY_VARIABLE}): a full-access key")
    from docbase.client import connect_remote  # noqa: PLC0415 (httpx: the client extra)

    async def go() -> int:
        async with await connect_remote(args.remote_url, apikey=apikey,
                                        verify=args.cacert or True) as remote:
            return await action(args, remote)

    return asyncio.run(go())


def on_database(
    action: DatabaseAction, *, check: Callable[[argparse.Namespace], None] | None = None,
    remote: RemoteAction | None = None,
) -> Callable[[argparse.Namespace], int]:
    """Make ``action`` a command handler that opens the database of ``--db`` around it.

    ``check`` runs first, before any database is looked for (usage errors). With
    ``--url``, ``remote`` runs instead, on the served database.
    """
    @functools.wraps(action)
    def handler(args: argparse.Namespace) -> int:
        if check is not None:
            check(args)
        if getattr(args, "remote_url", None):
            return with_remote(args, remote)
        deployment, entry = database_of(args)
        return with_database(entry, deployment, lambda db: action(args, db, entry))

    return handler


def redact(url: str) -> str:
    """Hide the password of a storage URL."""
    parts = urlsplit(url)
    if parts.password is None:
        return url
    netloc = parts.netloc.replace(f":{parts.password}@", ":***@", 1)
    return urlunsplit(parts._replace(netloc=netloc))


def print_records(
    records: Sequence[T],
    *,
    as_json: bool,
    json_row: Callable[[T], Any],
    header: Sequence[str],
    table_row: Callable[[T], Sequence[str]],
) -> int:
    """Print a listing as JSON lines (``--json``) or as a table; return exit status 0."""
    if as_json:
        for record in records:
            print(msgspec.json.encode(json_row(record)).decode())
    else:
        print_table([header, *(table_row(record) for record in records)])
    return 0


def print_table(rows: Sequence[Sequence[str]]) -> None:
    """Print rows as aligned columns, the first row being the header."""
    widths = [max(len(row[i]) for row in rows) for i in range(len(rows[0]))]
    for row in rows:
        print("  ".join(cell.ljust(width) for cell, width in zip(row, widths, strict=True))
              .rstrip())
