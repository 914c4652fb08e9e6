"""Restoring an archive into an empty database from the console's Data page.

``POST /_/data/restore`` takes an uploaded archive (an export or a backup, within
``limits.max_upload_bytes``) and the database's name typed again as the confirmation;
``POST /_/data/backups/<name>/restore`` takes one of the backups the page lists (of
``serve --backup-dir``), by a name the listing holds (a path is no name), with the same
confirmation.
It does what ``docbase restore`` does, with the same code: it refuses a database that
holds data (:func:`~docbase.core.portability.importing.restore_blockers`), then
imports the archive with the ``upsert`` mode. A database made by ``docbase serve`` or
``docbase db create`` holds a key and maybe settings, which do not count; here its
users do not count either, since the console needs an administrator to sign in. The
archive's users are restored beside them, and one with the same email replaces the
stored one, password included.
"""

from __future__ import annotations

import shutil
import tempfile
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any

from litestar import Response, post
from litestar.params import FromPath

from docbase.core.auth.users import USERS_COLLECTION
from docbase.core.plugins import lazy_module
from docbase.http.console.backups import listed_backup
from docbase.http.console.data import BAD_ARCHIVE, REFUSED, StoredSoFar, data_page, refused_message
from docbase.http.console.flash import go
from docbase.http.console.guard import Console, HttpRequest, console_paths, signed_in
from docbase.http.console.uploads import chosen_file, held_upload, upload_form

if TYPE_CHECKING:
    from docbase.core import portability
    from docbase.core.portability import importing
else:  # imported on the first use: it brings the archive code and tarfile
    portability = lazy_module("docbase.core.portability")
    importing = lazy_module("docbase.core.portability.importing")

NOT_EMPTY = 409
"""The page's status when the database holds data already."""


async def _refusal(request: HttpRequest, console: Console, form: dict[str, Any]
                   ) -> Response[str] | None:
    """The page refusing the restore: the name not typed again, or data held already."""
    name = console.database_name
    if str(form.get("confirm", "")).strip() != name:
        return await data_page(request, console, status=400, error=(
            f"Type the database's name, {name}, to confirm the restore. Nothing was restored."))
    held = [n for n in await importing.restore_blockers(console.database)
            if n != USERS_COLLECTION]
    if held:
        return await data_page(request, console, status=NOT_EMPTY, error=(
            f"Restore refused: database {name!r} is not empty (it holds {', '.join(held)}). "
            "Restore only into an empty database, or use Import archive."))
    return None


async def _restored(request: HttpRequest, console: Console, archive: Callable[[], Awaitable[Path]]
                    ) -> Response[Any]:
    """Import the archive ``archive`` gives with the ``upsert`` mode; the page after it."""
    stored = StoredSoFar()
    try:
        manifest, summary = await portability.import_archive(
            console.database, await archive(), mode="upsert", progress=stored)
    except (portability.InvalidArchive, portability.ImportRefused) as exc:
        status = REFUSED if isinstance(exc, portability.ImportRefused) else BAD_ARCHIVE
        return await data_page(request, console, status=status,
                               error=refused_message(exc.message, stored))
    return go(console.base, console.base + "/data", (
        f"Restored the archive of database {manifest.database!r} into "
        f"{console.database_name!r}: {summary.collections} collection(s), "
        f"{summary.documents} document(s), {summary.media} media file(s)."))


@post(console_paths("/data/restore"), status_code=303, request_max_body_size=None)
async def restore(request: HttpRequest) -> Response[Any]:
    """``POST /_/data/restore``: the uploaded archive into this database, if it is empty."""
    console, form = await upload_form(request)
    upload = chosen_file(form.get("archive"))
    if upload is None:
        return await data_page(request, console, error="Choose an archive to restore.",
                               status=400)
    folder = Path(tempfile.mkdtemp(prefix="docbase-console-restore-"))
    try:
        return await _refusal(request, console, form) or await _restored(
            request, console, lambda: held_upload(upload, folder))
    finally:
        shutil.rmtree(folder, ignore_errors=True)
        await upload.close()


@post(console_paths("/data/backups/{name:str}/restore"), status_code=303)
async def restore_backup(request: HttpRequest, name: FromPath[str]) -> Response[Any]:
    """``POST /_/data/backups/<name>/restore``: a listed backup into this empty database."""
    form = dict(await request.form())
    console = await signed_in(request, form=form)
    path = listed_backup(request, console, name)

    async def listed() -> Path:
        return path

    return await _refusal(request, console, form) or await _restored(request, console, listed)


RESTORE_HANDLERS = [restore, restore_backup]
