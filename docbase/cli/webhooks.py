"""``docbase webhooks add|list|enable|remove``: the webhooks of one database.

``add`` prints the webhook's id and, on the next line, its signing secret (generated
unless ``--secret`` is given); ``list`` shows each webhook's state (never its secret).
"""

from __future__ import annotations

import argparse
from typing import Any

import msgspec

from docbase.cli.common import (
    add_action,
    add_repeatable,
    command_group,
    on_database,
    print_records,
    say,
)
from docbase.config import DatabaseEntry
from docbase.core.database import Database
from docbase.core.errors import NotFound
from docbase.core.webhooks import Webhook


def register(commands: Any) -> None:
    """Add the ``webhooks`` command and its actions."""
    actions = command_group(commands, "webhooks", help="manage the webhooks of a database")
    add = add_action(
        actions, "add", add_webhook, help="add a webhook; print its id and secret",
        description="Add a webhook called for the changes from now on. Prints its id, "
                    "then its signing secret, on stdout. URLs reaching loopback or "
                    "private addresses are refused unless [limits] "
                    "webhook_private_targets = true.")
    add.add_argument("url", metavar="URL")
    add_repeatable(add, "--collection", metavar="C",
                   help="a collection it is called for (repeatable; default: all)")
    add_repeatable(add, "--method", metavar="M",
                   help="POST, PUT, PATCH or DELETE (repeatable; default: all)")
    add.add_argument("--secret", help="the signing secret (default: a random one)")
    add_action(actions, "list", list_webhooks, help="list the webhooks and their state",
               json_output=True)
    enable = add_action(actions, "enable", enable_webhook,
                        help="enable a (disabled) webhook again")
    enable.add_argument("id", metavar="ID")
    remove = add_action(actions, "remove", remove_webhook, help="remove a webhook")
    remove.add_argument("id", metavar="ID")


@on_database
async def add_webhook(args: argparse.Namespace, db: Database, entry: DatabaseEntry) -> int:
    """``webhooks add URL``: the id and the secret on stdout."""
    webhook = await db.webhooks.add(args.url, collections=args.collection,
                                    methods=args.method, secret=args.secret)
    print(webhook.id)
    print(webhook.secret, flush=True)
    say(f"added webhook {webhook.id} to database {entry.name!r}")
    return 0


def _state(webhook: Webhook) -> str:
    if not webhook.enabled:
        return f"disabled {webhook.disabled or ''}".strip()
    return f"failing ({webhook.failures})" if webhook.failures else "enabled"


@on_database
async def list_webhooks(args: argparse.Namespace, db: Database, entry: DatabaseEntry) -> int:
    """``webhooks list``: a table, or JSON lines with ``--json``; never a secret."""
    return print_records(
        await db.webhooks.find(), as_json=args.json,
        json_row=lambda webhook: {k: v for k, v in msgspec.to_builtins(webhook).items()
                                  if k != "secret"},
        header=("ID", "URL", "STATE", "COLLECTIONS", "METHODS", "CURSOR", "LAST ERROR"),
        table_row=lambda webhook: (
            webhook.id, webhook.url, _state(webhook), " ".join(webhook.collections) or "*",
            " ".join(webhook.methods), str(webhook.cursor), webhook.last_error or "-"),
    )


@on_database
async def enable_webhook(args: argparse.Namespace, db: Database, entry: DatabaseEntry) -> int:
    """``webhooks enable ID``."""
    webhook = await db.webhooks.enable(args.id)
    say(f"enabled webhook {webhook.id}; deliveries resume after change {webhook.cursor}")
    return 0


@on_database
async def remove_webhook(args: argparse.Namespace, db: Database, entry: DatabaseEntry) -> int:
    """``webhooks remove ID``."""
    if not await db.webhooks.remove(args.id):
        raise NotFound(f"no webhook {args.id} in database {entry.name!r}")
    say(f"removed webhook {args.id} from database {entry.name!r}")
    return 0
