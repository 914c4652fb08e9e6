"""``docbase export``, ``import``, ``restore``, ``backup`` and ``migrate``.

They move a database's content in and out as one archive file (``docs/portability.md``
documents the format) and between stores. Progress goes to stderr (a bar on a
terminal, plain lines otherwise), then a summary line; nothing goes to stdout but
``migrate``'s verification table.
"""

from __future__ import annotations

import argparse
import asyncio
import signal
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any, get_args

from docbase.bootstrap import open_database
from docbase.cli.common import (
    DatabaseAction,
    RemoteAction,
    UsageError,
    add_action,
    database_of,
    deployment_from,
    on_database,
    print_table,
    redact,
    say,
    with_database,
    with_remote,
)
from docbase.cli.progress import BarProgress, progress_for_stderr
from docbase.cli.remote_archives import chosen_collections, export_remote, import_remote
from docbase.config import DatabaseEntry
from docbase.core.database import Database
from docbase.core.portability import ImportMode, export_archive, import_archive
from docbase.core.portability.backups import back_up, backups_kept
from docbase.core.portability.capture import capturing
from docbase.core.portability.following import follow
from docbase.core.portability.importing import restore_blockers
from docbase.core.portability.migrating import migrate
from docbase.core.schemes import scheme_of


def register(commands: Any) -> None:
    """Add the portability commands."""
    exporter = add_action(commands, "export", export_command,
                          help="write the database into one archive file")
    exporter.add_argument("--out", required=True, metavar="FILE",
                          help="the archive to write (.tar, or .tar.gz to compress)")
    exporter.add_argument("--collections", metavar="A,B",
                          help="only these collections (comma-separated), no system data")
    exporter.add_argument("--include-secrets", action="store_true",
                          help="keep secrets in the settings (SMTP password, token secrets)")
    importer = add_action(commands, "import", import_command,
                          help="read an archive into the database")
    importer.add_argument("file", metavar="FILE", help="the archive")
    importer.add_argument("--mode", choices=get_args(ImportMode), default="insert",
                          help="a document whose _id is stored already with other content: "
                               "refuse it (insert, the default), keep the stored one (skip) "
                               "or replace it (upsert)")
    importer.add_argument("--no-validate", action="store_true",
                          help="skip the schemas' field checks")
    restorer = add_action(commands, "restore", restore_command,
                          help="read an archive into an empty database")
    restorer.add_argument("file", metavar="FILE", help="the archive")
    backer = add_action(commands, "backup", backup_command,
                        help="write a dated archive into a directory, keeping the newest N")
    backer.add_argument("--dir", metavar="DIR",
                        help="the backup directory (default: the backup_dir setting)")
    backer.add_argument("--keep", type=int, metavar="N",
                        help="archives to keep (default: the database's stored backups.keep, "
                             "else the backup_keep setting, 7)")
    migrator = add_action(commands, "migrate", migrate_command,
                          help="copy the database into another store and verify it")
    migrator.add_argument("--to", required=True, metavar="STORAGE_URL",
                          help="the target store (sqlite:///..., postgresql://..., "
                               "mongodb://...)")
    migrator.add_argument("--follow", action="store_true",
                          help="then keep applying the source's writes until Ctrl-C")


def _finish(progress: Any) -> None:
    if isinstance(progress, BarProgress):
        progress.stop()


async def _export_action(args: argparse.Namespace, db: Database, entry: DatabaseEntry) -> int:
    chosen = chosen_collections(args)
    progress = progress_for_stderr()
    try:
        _, summary = await export_archive(db, Path(args.out), collections=chosen,
                                          secrets=args.include_secrets, progress=progress)
    finally:
        _finish(progress)
    say(summary.line(f"database {entry.name!r}: exported"))
    return 0


export_command = on_database(_export_action, remote=export_remote)
"""``export --out FILE [--collections A,B] [--include-secrets]``."""


async def _import(db: Database, path: Path, mode: ImportMode, validate: bool,
                  name: str) -> int:
    progress = progress_for_stderr()
    try:
        _, summary = await import_archive(db, path, mode=mode, validate=validate,
                                          progress=progress)
    finally:
        _finish(progress)
    say(summary.line(f"database {name!r}: imported"))
    return 0


def _archive(args: argparse.Namespace) -> None:
    if not Path(args.file).is_file():
        raise UsageError(f"no archive file {args.file!r}")


async def _import_action(args: argparse.Namespace, db: Database, entry: DatabaseEntry) -> int:
    return await _import(db, Path(args.file), args.mode, not args.no_validate, entry.name)


def into_database(action: DatabaseAction, remote: RemoteAction | None = None,
                  ) -> Callable[[argparse.Namespace], int]:
    """A handler running ``action`` on the database of ``--db``, created if it is new.

    Unlike the other commands, an import or restore may target a SQLite file that does
    not exist yet: it is where the data is going. With ``--url``, ``remote`` runs on the
    served database instead.
    """
    def handler(args: argparse.Namespace) -> int:
        _archive(args)
        if getattr(args, "remote_url", None):
            return with_remote(args, remote)
        deployment = deployment_from(args, storage=args.storage)
        entry = deployment.database(args.db)
        if scheme_of(entry.storage) == "memory":
            raise UsageError(f"database {entry.name!r} is in memory, inside the server "
                             "process: nothing can be imported into it from here")
        return with_database(entry, deployment, lambda db: action(args, db, entry))

    return handler


import_command = into_database(_import_action, import_remote)
"""``import FILE [--mode insert|upsert|skip] [--no-validate]``."""


async def _restore_action(args: argparse.Namespace, db: Database, entry: DatabaseEntry) -> int:
    held = await restore_blockers(db)
    if held:
        say(f"error: database {entry.name!r} is not empty (it holds {', '.join(held)}); "
            "restore only into an empty store, or use 'docbase import'")
        return 1
    return await _import(db, Path(args.file), "upsert", True, entry.name)


restore_command = into_database(_restore_action)
"""``restore FILE``: import into an empty database (a fresh server's key and settings
do not count)."""


def _backup_options(args: argparse.Namespace) -> None:
    deployment, _ = database_of(args)
    args.dir = args.dir or deployment.backup_dir
    args.server_keep = deployment.backup_keep  # unless the database stores its own
    if args.dir is None:
        raise UsageError("give --dir, or set backup_dir in the config file")
    if args.keep is not None and args.keep < 1:
        raise UsageError("--keep must be at least 1")


async def _backup_action(args: argparse.Namespace, db: Database, entry: DatabaseEntry) -> int:
    progress = progress_for_stderr()
    try:
        keep = args.keep or await backups_kept(db.settings, args.server_keep)
        out, summary, expired = await back_up(db, Path(args.dir), keep, progress=progress)
    finally:
        _finish(progress)
    say(summary.line(f"database {entry.name!r}: backed up to {out}:"))
    for old in expired:
        say(f"deleted the old backup {old}")
    return 0


backup_command = on_database(_backup_action, check=_backup_options)
"""``backup [--dir DIR] [--keep N]``: one archive now, the oldest beyond N deleted."""


def migrate_command(args: argparse.Namespace) -> int:
    """``migrate --to STORAGE_URL [--follow]``."""
    deployment, entry = database_of(args)
    target_entry = DatabaseEntry(entry.name, args.to)

    async def go() -> int:
        async with open_database(deployment, entry) as source, \
                open_database(deployment, target_entry) as target:
            return await _migrate(args, source, target)

    return asyncio.run(go())


async def _migrate(args: argparse.Namespace, source: Database, target: Database) -> int:
    if not args.follow:
        return await _copy_and_follow(args, source, target)
    # the source's writes must be logged from before the export until following ends
    async with capturing(source.store, source.auth_cache):
        return await _copy_and_follow(args, source, target)


async def _copy_and_follow(args: argparse.Namespace, source: Database,
                           target: Database) -> int:
    progress = progress_for_stderr()
    try:
        migration = await migrate(source, target, progress=progress)
    finally:
        _finish(progress)
    manifest = migration.manifest
    print_table([["collection", "source", "target", "checksum"]] + [
        [c.name, str(c.expected), str(c.found), "ok" if c.ok else "DIFFERS"]
        for c in migration.checks])
    say(migration.summary.line(f"migrated to {redact(args.to)}:"))
    if not migration.ok:
        say("error: the target differs from the source (see the table)")
        return 1
    if args.follow:
        return await _follow(source, target, manifest.position)
    return 0


FOLLOW_SAY_EVERY = 10.0
"""Seconds between repeated ``caught up`` lines while the position does not move."""


class _FollowReport:
    """Says how far following got.

    Each new position caught up with is said at most once a second, and the same one
    again every :data:`FOLLOW_SAY_EVERY` seconds.
    """

    def __init__(self) -> None:
        self.applied = 0
        self.position = -1
        self._said = 0.0

    def count(self, _entry: object) -> None:
        self.applied += 1

    def caught_up(self, position: int, read_at: str) -> None:
        now = time.monotonic()
        since = now - self._said
        if since >= FOLLOW_SAY_EVERY or (position != self.position and since >= 1.0):
            self._said, self.position = now, position
            say(f"caught up with the source at position {position} (its log as of "
                f"{read_at}); {self.applied} write(s) applied")


async def _follow(source: Database, target: Database, position: int) -> int:
    """Follow until SIGINT or SIGTERM, then catch up with the log as it is and stop.

    A second signal stops at once.
    """
    say(f"following the source's writes from position {position}; Ctrl-C stops after "
        "applying what the source has logged by then")
    report = _FollowReport()
    stop = asyncio.Event()
    following = asyncio.current_task()
    assert following is not None

    def interrupted() -> None:
        if stop.is_set():
            following.cancel()
            return
        stop.set()
        say("stopping: applying the writes the source has logged so far "
            "(Ctrl-C again stops at once)")

    loop = asyncio.get_running_loop()
    for number in (signal.SIGINT, signal.SIGTERM):
        loop.add_signal_handler(number, interrupted)
    try:
        reached = await follow(source, target, position, stop=stop, applied=report.count,
                               caught_up=report.caught_up)
    except asyncio.CancelledError:
        say(f"stopped at once, not caught up; {report.applied} write(s) applied "
            "(run the migration again to resume)")
        return 1
    finally:
        for number in (signal.SIGINT, signal.SIGTERM):
            loop.remove_signal_handler(number)
    say(f"stopped at position {reached}, caught up with the source; "
        f"{report.applied} write(s) applied")
    return 0
