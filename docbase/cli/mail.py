"""``docbase mail retry``: send again the messages of the outbound log that failed.

``retry`` takes every ``failed`` message of ``email_outbound`` (oldest first) through
the transport the database's settings choose now, and prints one line per message:
its record id, its new status and the error if any. ``--queued`` also takes messages
left ``queued`` (a server resumes those itself when it starts), ``--sending`` those
left ``sending`` by a process stopped in the middle of a send, which may have been
delivered already. Exit status 1 when a message failed again.
"""

from __future__ import annotations

import argparse
from typing import Any

from docbase.cli.common import add_database_options, command_group, on_database, say
from docbase.config import DatabaseEntry
from docbase.core.database import Database
from docbase.core.mail import Status


def register(commands: Any) -> None:
    """Add the ``mail`` command and its actions."""
    actions = command_group(commands, "mail", help="the outbound mail of a database")
    retry = actions.add_parser("retry", help="send the failed messages again")
    add_database_options(retry)
    retry.add_argument("--queued", action="store_true",
                       help="also send messages left queued by a stopped server")
    retry.add_argument("--sending", action="store_true",
                       help="also send messages a stopped server was sending (they may "
                            "have been delivered already)")
    retry.set_defaults(handler=retry_failed)


@on_database
async def retry_failed(args: argparse.Namespace, db: Database, entry: DatabaseEntry) -> int:
    """``mail retry [--queued] [--sending]``."""
    statuses = [Status.FAILED]
    if args.queued:
        statuses.append(Status.QUEUED)
    if args.sending:
        statuses.append(Status.SENDING)
    outcomes = await db.mail.retry(statuses)
    for outcome in outcomes:
        print("\t".join(part for part in (outcome.email_outbound_id, outcome.status,
                                          outcome.error) if part))
    failed = sum(o.status == Status.FAILED for o in outcomes)
    sent = sum(o.status == Status.SENT for o in outcomes)
    say(f"database {entry.name!r}: {len(outcomes)} message(s) retried, {sent} sent, "
        f"{failed} failed")
    return 1 if failed else 0
