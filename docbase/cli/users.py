"""``docbase users create|list|delete|set-admin|set-password|set-roles``: a database's users."""

from __future__ import annotations

import argparse
import getpass
import os
from typing import TYPE_CHECKING, Any

import msgspec

from docbase.cli.common import add_database_options, command_group, on_database, print_records, say
from docbase.config import DatabaseEntry
from docbase.core import auth
from docbase.core.auth.principal import split_roles
from docbase.core.database import Database

if TYPE_CHECKING:
    from docbase.client import RemoteDatabase

PASSWORD_VARIABLE = "DOCBASE_USER_PASSWORD"
"""Where ``--password`` is read from when omitted (else it is asked for on a terminal)."""


def register(commands: Any) -> None:
    """Add the ``users`` command and its actions."""
    actions = command_group(commands, "users", help="manage users who log in with a password")
    create = actions.add_parser("create", help="create a user")
    add_database_options(create)
    create.add_argument("--email", required=True, help="the user's email (unique, any case)")
    _password_option(create)
    create.add_argument("--displayname", default="", help="the name shown for the user")
    create.add_argument("--image", default="", metavar="URL", help="the user's picture")
    create.add_argument("--admin", action="store_true",
                        help="an administrator, who may sign in to the console at /_/")
    _roles_option(create, default="")
    create.set_defaults(handler=create_user)

    listing = actions.add_parser("list", help="list the users (never their passwords)")
    add_database_options(listing)
    listing.add_argument("--json", action="store_true", help="JSON lines instead of a table")
    listing.set_defaults(handler=list_users)

    delete = actions.add_parser("delete", help="delete a user; its tokens stop working")
    add_database_options(delete)
    delete.add_argument("--email", required=True)
    delete.set_defaults(handler=delete_user)

    admin = actions.add_parser("set-admin", help="make a user an administrator (or not)")
    add_database_options(admin)
    admin.add_argument("--email", required=True)
    admin.add_argument("--off", action="store_true", help="no longer an administrator")
    admin.set_defaults(handler=set_admin)

    password = actions.add_parser("set-password", help="give a user a new password")
    add_database_options(password)
    password.add_argument("--email", required=True)
    _password_option(password)
    password.set_defaults(handler=set_password)

    roles = actions.add_parser("set-roles", help="give a user roles for access rules "
                               "(replacing theirs; their tokens have them at once)")
    add_database_options(roles)
    roles.add_argument("--email", required=True)
    _roles_option(roles, default=None)
    roles.set_defaults(handler=set_roles)


def _roles_option(parser: argparse.ArgumentParser, *, default: str | None) -> None:
    parser.add_argument("--roles", default=default, required=default is None,
                        metavar="A,B", help="roles for collection access rules, comma "
                        "separated ('' for none)")


def _roles(args: argparse.Namespace) -> list[str]:
    return split_roles(str(args.roles))


def _password_option(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--password", help=f"the password (at least 8 characters); else "
                        f"${PASSWORD_VARIABLE}, else asked for on the terminal")


def _password(args: argparse.Namespace) -> str:
    given: str | None = args.password or os.environ.get(PASSWORD_VARIABLE)
    return given if given is not None else getpass.getpass("password: ")


async def _create_user(args: argparse.Namespace, db: Database, entry: DatabaseEntry) -> int:
    user = await auth.create_user(db, args.email, _password(args),
                                  displayname=args.displayname, image=args.image,
                                  admin=args.admin, roles=_roles(args))
    return _created(user, entry.name)


async def _create_remote(args: argparse.Namespace, remote: RemoteDatabase) -> int:
    user = await remote.operator.create_user(args.email, _password(args),
                                             displayname=args.displayname, image=args.image,
                                             admin=args.admin, roles=_roles(args))
    return _created(user, remote.name)


def _created(user: auth.User, database: str) -> int:
    role = "administrator" if user.admin else "user"
    say(f"created {role} {user.email} in database {database!r}")
    return 0


create_user = on_database(_create_user, remote=_create_remote)
"""``users create``."""


async def _list_users(args: argparse.Namespace, db: Database, entry: DatabaseEntry) -> int:
    return _print_users(args, await auth.list_users(db))


async def _list_remote(args: argparse.Namespace, remote: RemoteDatabase) -> int:
    return _print_users(args, await remote.operator.list_users())


def _print_users(args: argparse.Namespace, users: list[auth.User]) -> int:
    return print_records(
        users, as_json=args.json, json_row=_shown,
        header=("EMAIL", "DISPLAY NAME", "ADMIN", "ROLES", "CREATED"),
        table_row=lambda u: (u.email, u.displayname, "yes" if u.admin else "",
                             ",".join(u.roles), u.created),
    )


def _shown(user: auth.User) -> dict[str, Any]:
    shown: dict[str, Any] = msgspec.to_builtins(user)
    del shown["epoch"]
    return shown


list_users = on_database(_list_users, remote=_list_remote)
"""``users list``: a table, or JSON lines with ``--json``."""


async def _delete_user(args: argparse.Namespace, db: Database, entry: DatabaseEntry) -> int:
    user = await auth.delete_user(db, args.email)
    say(f"deleted user {user.email} of database {entry.name!r}")
    return 0


async def _delete_remote(args: argparse.Namespace, remote: RemoteDatabase) -> int:
    user = await remote.operator.delete_user(args.email)
    say(f"deleted user {user.email} of database {remote.name!r}")
    return 0


delete_user = on_database(_delete_user, remote=_delete_remote)
"""``users delete``."""


@on_database
async def set_admin(args: argparse.Namespace, db: Database, entry: DatabaseEntry) -> int:
    """``users set-admin``."""
    user = await auth.set_admin(db, args.email, not args.off)
    state = "an administrator" if user.admin else "no longer an administrator"
    say(f"{user.email} is {state} of database {entry.name!r}")
    return 0


@on_database
async def set_password(args: argparse.Namespace, db: Database, entry: DatabaseEntry) -> int:
    """``users set-password``."""
    user = await auth.set_password(db, args.email, _password(args))
    say(f"changed the password of {user.email} in database {entry.name!r}")
    return 0


@on_database
async def set_roles(args: argparse.Namespace, db: Database, entry: DatabaseEntry) -> int:
    """``users set-roles``."""
    user = await auth.set_roles(db, args.email, _roles(args))
    say(f"{user.email} has roles [{', '.join(user.roles)}] in database {entry.name!r}")
    return 0
