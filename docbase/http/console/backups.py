"""The server's backups on the console's Data page (``docs/portability.md#backup``).

When ``docbase serve`` has a backup directory (``--backup-dir``, the ``backup_dir``
setting), :func:`backup_place` puts it in the application's state and the Data page
lists this database's archives there:

- ``GET /_/data/backups/<name>``: download one of them (a name the listing holds, never
  a path);
- ``POST /_/data/backups``: back up now, through
  :func:`~docbase.core.portability.backups.back_up`, the code of the scheduled job and
  ``docbase backup`` (secrets included, the oldest beyond ``backup_keep`` deleted).

Without a backup directory neither route has anything to do and both answer 404.
"""

from __future__ import annotations

import shutil
from collections.abc import AsyncIterator
from datetime import UTC, datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any

import anyio
import msgspec
from litestar import Response, get, post
from litestar.params import FromPath
from litestar.response import Stream

from docbase.core.errors import NotFound
from docbase.core.plugins import lazy_module
from docbase.http.console.flash import go
from docbase.http.console.guard import Console, HttpRequest, console_paths, signed_in
from docbase.http.console.rendering import CONSOLE_HEADERS

if TYPE_CHECKING:
    from docbase.core.portability import backups
else:  # imported on the first use: it brings the archive code and tarfile
    backups = lazy_module("docbase.core.portability.backups")

BACKUPS_STATE = "docbase_backups"
"""Where the application's state holds the :class:`BackupPlace`, when there is one."""
CHUNK = 256 * 1024


class BackupPlace(msgspec.Struct, frozen=True):
    """The server's backup directory and settings: archives kept, schedule (cron)."""

    directory: str
    keep: int
    schedule: str


class Backup(msgspec.Struct, frozen=True):
    """One archive of the backup directory, as the page lists it."""

    name: str
    time: datetime
    size: int


def backup_place(directory: str | None, keep: int, schedule: str) -> dict[str, Any]:
    """The application state that shows the backups of ``directory`` (none: nothing)."""
    return {} if directory is None else {BACKUPS_STATE: BackupPlace(directory, keep, schedule)}


def place_of(request: HttpRequest) -> BackupPlace | None:
    """The server's backup directory and its settings; ``None`` without one."""
    place = request.app.state.get(BACKUPS_STATE)
    return place if isinstance(place, BackupPlace) else None


def _archives(place: BackupPlace, database: str) -> list[Path]:
    return sorted(Path(place.directory).glob(f"{database}-*{backups.SUFFIX}"), reverse=True)


def backups_of(request: HttpRequest, console: Console) -> list[Backup] | None:
    """The backups of the console's database, newest first; ``None`` without a backup directory."""
    place = place_of(request)
    if place is None:
        return None
    found = []
    for path in _archives(place, console.database_name):
        stat = path.stat()
        found.append(Backup(path.name, datetime.fromtimestamp(stat.st_mtime, UTC),
                            stat.st_size))
    return found


def listed_backup(request: HttpRequest, console: Console, name: str) -> Path:
    """The backup of the console's database called ``name``, if the listing holds it.

    A path (``../x``) or another database's archive is no such name.

    Raises:
        NotFound: the server has no backup directory, or no such backup of this database.

    """
    place = place_of(request)
    chosen = [p for p in _archives(place, console.database_name) if p.name == name
              ] if place else []
    if not chosen:
        raise NotFound(f"no backup {name!r} of database {console.database_name!r}")
    return chosen[0]


async def _stream(path: Path, remove_folder: bool) -> AsyncIterator[bytes]:
    try:
        async with await anyio.open_file(path, "rb") as file:
            while chunk := await file.read(CHUNK):
                yield chunk
    finally:
        if remove_folder:
            shutil.rmtree(path.parent, ignore_errors=True)


def file_download(path: Path, name: str, *, remove_folder: bool = False) -> Stream:
    """Stream the file ``path`` as an attachment called ``name``.

    With ``remove_folder``, the file's folder (a temporary one) is deleted afterwards.
    """
    return Stream(_stream(path, remove_folder), media_type="application/gzip", headers={
        **CONSOLE_HEADERS, "content-disposition": f'attachment; filename="{name}"',
        "content-length": str(path.stat().st_size)})


@get(console_paths("/data/backups/{name:str}"))
async def download_backup(request: HttpRequest, name: FromPath[str]) -> Stream:
    """``GET /_/data/backups/<name>``: one backup of this database."""
    console = await signed_in(request)
    return file_download(listed_backup(request, console, name), name)


@post(console_paths("/data/backups"), status_code=303)
async def back_up_now(request: HttpRequest) -> Response[Any]:
    """``POST /_/data/backups``: write a backup now, as the scheduled job does."""
    console = await signed_in(request, form=dict(await request.form()))
    place = place_of(request)
    if place is None:
        raise NotFound("this server has no backup directory (docbase serve --backup-dir)")
    out, summary, expired = await backups.back_up(
        console.database, Path(place.directory),
        await backups.backups_kept(console.database.settings, place.keep))
    message = summary.line(f"Backed up to {out.name}:") + "."
    if expired:
        message += f" Deleted {len(expired)} old backup(s)."
    return go(console.base, console.base + "/data", message)


BACKUP_HANDLERS = [download_backup, back_up_now]
