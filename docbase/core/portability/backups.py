"""Backups: a dated archive in a directory, the oldest beyond a count deleted.

:func:`back_up` is ``docbase backup`` (one now); :func:`backup_job` is the same on a
schedule in ``docbase serve`` (``backup_dir``, ``backup_schedule``, ``backup_keep``), a
job with a lease per tick like the media sweep, so one process of many sharing the
storage writes each backup (``docs/hooks.md`` describes job leases). A backup is an
export (:mod:`.exporting`), secrets included, so it is consistent while servers write.
"""

from __future__ import annotations

import logging
from datetime import UTC, datetime
from pathlib import Path

from docbase.core.errors import ConfigurationError
from docbase.core.hooks.context import JobContext
from docbase.core.hooks.jobs import Job
from docbase.core.portability.exporting import export_archive
from docbase.core.portability.progress import Progress, Summary
from docbase.core.portability.source import PortableDatabase
from docbase.core.system_data import SettingsSource

logger = logging.getLogger("docbase.portability")

BACKUP_JOB = "docbase.portability.backup"
"""The name of the scheduled backup's job (its leases, its hook log entries)."""
SUFFIX = ".tar.gz"


def backup_path(directory: Path, database: str, now: datetime) -> Path:
    """Where the backup of ``database`` taken at ``now`` goes: names sort by time."""
    return directory / f"{database}-{now.astimezone(UTC):%Y%m%dT%H%M%S%fZ}{SUFFIX}"


def _prepare(directory: Path) -> None:
    directory.mkdir(parents=True, exist_ok=True)


def expire(directory: Path, database: str, keep: int) -> list[Path]:
    """Delete the backups of ``database`` beyond the newest ``keep``; return them."""
    doomed = sorted(directory.glob(f"{database}-*{SUFFIX}"))[:-keep]
    for old in doomed:
        old.unlink()
    return doomed


async def back_up(db: PortableDatabase, directory: Path, keep: int, *,
                  progress: Progress | None = None) -> tuple[Path, Summary, list[Path]]:
    """Write a backup of ``db`` into ``directory``, then keep only the newest ``keep``.

    Returns:
        The new archive, the export's summary and the backups deleted.

    Raises:
        ValueError: ``keep`` is below one.
        BackendError: a store failed (no archive is written, none is deleted).

    """
    if keep < 1:
        raise ValueError("a backup directory keeps at least one backup")
    _prepare(directory)
    out = backup_path(directory, db.name, datetime.now(UTC))
    _, summary = await export_archive(db, out, secrets=True, progress=progress)
    return out, summary, expire(directory, db.name, keep)


async def backups_kept(settings: SettingsSource, server: int) -> int:
    """How many backups of a database to keep: its stored ``backups.keep``, else ``server``.

    Raises:
        ConfigurationError: the stored settings do not fit their types.
        BackendError: the store failed.

    """
    return (await settings.load()).backups.keep or server


def backup_job(db: PortableDatabase, directory: Path, keep: int, schedule: str,
               settings: SettingsSource) -> Job:
    """The job backing ``db`` up into ``directory`` on ``schedule`` (cron, UTC).

    ``keep`` and ``schedule`` are the server's; the database's stored ``backups.keep``
    and ``backups.schedule`` (``settings``) take their place when set, read at each
    backup and, for the schedule, at least once a minute (``docs/portability.md``).

    Raises:
        ConfigurationError: ``schedule`` is not a cron expression, or ``keep`` below one.

    """
    if keep < 1:
        raise ConfigurationError("backup_keep must be at least 1")

    async def stored_schedule() -> str | None:
        return (await settings.load()).backups.schedule

    async def back_up_database(_context: JobContext) -> None:
        out, summary, expired = await back_up(db, directory, await backups_kept(settings, keep))
        logger.info("backup of %r: %s; deleted %d old backup(s)", db.name,
                    summary.line(f"wrote {out}:"), len(expired))

    return Job(schedule, back_up_database, name=BACKUP_JOB, follow=stored_schedule)
