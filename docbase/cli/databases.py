"""``docbase serve`` and ``docbase db create|list``: running and adding databases."""

from __future__ import annotations

import argparse
from typing import Any

from docbase.bootstrap import ensure_admin_key
from docbase.cli.common import (
    DEPLOYMENT_SETTINGS,
    add_action,
    add_deployment_options,
    command_group,
    deployment_from,
    print_records,
    redact,
    say,
    with_database,
)
from docbase.config import PID_FILE, PRIMARY, add_options, add_to_catalog, options_from
from docbase.config.sources import command_line_names
from docbase.core.database import Database
from docbase.core.errors import ConfigurationError


def register(commands: Any) -> None:
    """Add the ``serve`` and ``db`` commands."""
    serve_parser = commands.add_parser(
        "serve", help="run the HTTPS server",
        description="Run the HTTPS server until SIGTERM/SIGINT.")
    add_options(add_deployment_options(serve_parser), ["default_database"])
    add_options(serve_parser, [name for name in command_line_names()
                               if name not in (*DEPLOYMENT_SETTINGS, "default_database")])
    serve_parser.set_defaults(handler=serve)

    actions = command_group(commands, "db", help="manage the databases of a deployment")
    create = add_action(
        actions, "create", create_database, help="add a database",
        description="Add a database to the catalog in the data directory, create it with "
                    "a full-access key, and print that key on stdout.",
        storage_help="storage URL of the new database (default sqlite:///DIR/NAME.db)")
    create.add_argument("name", metavar="NAME")
    add_action(actions, "list", list_databases, help="list the databases", json_output=True)


def serve(args: argparse.Namespace) -> int:
    """``serve``: run the server until SIGTERM/SIGINT."""
    deployment = deployment_from(args, **options_from(args))
    try:
        from docbase.http import serve as server  # noqa: PLC0415 (the optional server extra)
    except ImportError as exc:
        raise ConfigurationError(
            f"the server needs the {exc.name!r} package: pip install 'docbase[server]'"
        ) from None
    server.run(deployment)
    return 0


def create_database(args: argparse.Namespace) -> int:
    """``db create NAME``: print the new database's full-access key on stdout."""
    deployment = deployment_from(args)
    entry = add_to_catalog(deployment, args.name, args.storage)

    async def bootstrap(db: Database) -> int:
        admin = await ensure_admin_key(db, deployment.data_path, new=True)
        print(admin.key, flush=True)
        say(f"created database {entry.name!r} on {redact(entry.storage)}; its full-access "
            f"key is also in {admin.path}")
        pid_file = deployment.data_path / PID_FILE
        if pid_file.exists():
            say(f"a running server serves it after: kill -HUP $(cat {pid_file})")
        return 0

    return with_database(entry, deployment, bootstrap)


def list_databases(args: argparse.Namespace) -> int:
    """``db list``: a table, or JSON lines with ``--json``; passwords hidden."""
    deployment = deployment_from(args, storage=args.storage)
    return print_records(
        deployment.all_databases(), as_json=args.json,
        json_row=lambda e: {"name": e.name, "storage": redact(e.storage)},
        header=("NAME", "STORAGE", "BASE URL"),
        table_row=lambda e: (e.name, redact(e.storage),
                             "/" if e.name == PRIMARY else f"/db/{e.name}"),
    )
