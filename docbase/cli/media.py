"""``docbase media sweep``: delete the stored bytes no media metadata owns, once.

``sweep`` does what ``docbase serve`` does hourly (``docs/media.md``): every blob
begun more than the grace ago (``--grace``, default the ``media.orphan_grace``
setting) whose media id has no ``_media`` record is deleted, with its derivatives, and
so are the chunks of puts a killed process left unfinished. It prints each deleted
blob key, one a line, then a summary on stderr. Safe while servers run.
"""

from __future__ import annotations

import argparse
from datetime import timedelta
from typing import Any

from docbase.cli.common import UsageError, add_action, command_group, on_database, say
from docbase.config import DatabaseEntry
from docbase.core.auth.signing import parse_duration
from docbase.core.database import Database
from docbase.core.errors import InvalidQuery


def register(commands: Any) -> None:
    """Add the ``media`` command and its actions."""
    actions = command_group(commands, "media", help="the media archive of a database")
    sweeper = add_action(actions, "sweep", sweep_orphans,
                         help="delete stored bytes that no media metadata owns")
    sweeper.add_argument("--grace", metavar="DURATION",
                         help="only bytes begun longer ago than this (seconds, 30m, 1h; "
                              "default: the media.orphan_grace setting)")


def _grace(args: argparse.Namespace) -> timedelta | None:
    if args.grace is None:
        return None
    try:
        return timedelta(seconds=parse_duration(args.grace, "--grace"))
    except InvalidQuery as exc:
        raise UsageError(exc.message) from None


@on_database
async def sweep_orphans(args: argparse.Namespace, db: Database, entry: DatabaseEntry) -> int:
    """``media sweep [--grace DURATION]``."""
    swept = await db.media.sweep(_grace(args))
    for key in swept.blobs:
        print(key)
    say(f"database {entry.name!r}: deleted {len(swept.blobs)} orphaned blob(s) and the "
        f"leftovers of {swept.unfinished} unfinished upload(s)")
    return 0
