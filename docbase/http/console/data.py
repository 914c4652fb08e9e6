"""Moving data in the console: export, import and backups (``docs/portability.md``).

- ``GET /_/data``: the page, with the import modes and, when the server has a backup
  directory (``serve --backup-dir``), its backups.
- ``POST /_/data/export``: the database's archive as a file download (``.tar.gz``),
  secrets left out unless the form's ``secrets`` box is ticked, as ``docbase export
  --include-secrets``.
- ``POST /_/data/import``: a ``multipart/form-data`` upload of an archive and a
  ``mode``; imported as ``docbase import`` does, then a message with the counts, or the
  refusal (``ImportRefused`` names the collection and line).

Each calls :func:`~docbase.core.portability.export_archive` or
:func:`~docbase.core.portability.import_archive`; the console adds no other way in or
out. An upload is held in a temporary file while it is imported (the import reads an
archive file), within ``limits.max_upload_bytes`` like ``POST /media``.
"""

from __future__ import annotations

import re
import shutil
import tempfile
from datetime import UTC, datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any, cast, get_args

from litestar import Response, get, post

from docbase.core.plugins import lazy_module
from docbase.http.console.backups import BACKUP_HANDLERS, backups_of, file_download
from docbase.http.console.flash import go
from docbase.http.console.guard import Console, HttpRequest, console_paths, signed_in
from docbase.http.console.rendering import render
from docbase.http.console.uploads import chosen_file, held_upload, upload_form

if TYPE_CHECKING:
    from docbase.core import portability
    from docbase.core.portability import ImportMode
else:  # imported on the first use: it brings the archive code and tarfile
    portability = lazy_module("docbase.core.portability")


def import_modes() -> tuple[str, ...]:
    """The modes ``import_archive`` offers (``ImportMode``), its default first."""
    return get_args(portability.ImportMode)


ROW_MODES = {"all": "all or nothing: one refused row stores none",
             "each": "store the rows that fit, list the lines refused"}
"""The modes of a row import (:mod:`~docbase.http.console.rows`), the default first."""
BAD_ARCHIVE, REFUSED = 400, 422
"""The page's status for a file that is no archive, and for a refused document."""


async def data_page(request: HttpRequest, console: Console, *, error: str = "",
                    status: int = 200) -> Response[str]:
    """The Data page of ``console``, with ``error`` above the forms when given."""
    return render("data.html", status, **console.page(
        title="Data", modes=import_modes(), backups=backups_of(request, console), error=error,
        collections=await console.database.collections(), row_modes=ROW_MODES))


@get(console_paths("/data"))
async def data(request: HttpRequest) -> Response[str]:
    """``GET /_/data``."""
    return await data_page(request, await signed_in(request))


def download_name(database: str, now: datetime) -> str:
    """The file name an export is offered under: the database and the UTC time."""
    safe = re.sub(r"[^A-Za-z0-9._-]", "_", database)  # a plain header value
    return f"{safe}-{now.astimezone(UTC):%Y%m%dT%H%M%SZ}.tar.gz"


@post(console_paths("/data/export"), status_code=200)
async def export(request: HttpRequest) -> Response[Any]:
    """``POST /_/data/export``: the archive, written to a temporary file, then streamed."""
    form = dict(await request.form())
    console = await signed_in(request, form=form)
    name = download_name(console.database_name, datetime.now(UTC))
    spool = Path(tempfile.mkdtemp(prefix="docbase-console-export-"))
    try:
        await portability.export_archive(console.database, spool / name,
                                         secrets=form.get("secrets") == "on")
    except BaseException:
        shutil.rmtree(spool, ignore_errors=True)
        raise
    return file_download(spool / name, name, remove_folder=True)


def imported_message(name: str, collections: int, documents: int, media: int) -> str:
    """What the page says after an import."""
    return (f"Imported the archive of database {name!r}: {collections} collection(s), "
            f"{documents} document(s), {media} media file(s).")


class StoredSoFar:
    """A :class:`~docbase.core.portability.Progress` that counts the documents done.

    The import advances it after each batch it stored (or found stored already), so
    after a refusal it says what the import left behind: the batches before it stay.
    """

    def __init__(self) -> None:
        self.documents = 0

    def begin(self, task: str, total: int | None) -> None:
        """Nothing to do as a collection starts."""

    def advance(self, documents: int, size: int = 0) -> None:
        """Count ``documents`` more."""
        self.documents += documents

    def end(self) -> None:
        """Nothing to do as a collection ends."""


def refused_message(message: str, stored: StoredSoFar) -> str:
    """What the page says after a refusal, and whether anything was stored before it."""
    if not stored.documents:
        return f"Import refused: {message}. Nothing was imported."
    return (f"Import refused: {message}. The {stored.documents} document(s) before it "
            "were imported (or were stored already) and stay; run the import again, "
            "once the archive or the database is fixed, to add the rest.")


@post(console_paths("/data/import"), status_code=303, request_max_body_size=None)
async def import_upload(request: HttpRequest) -> Response[Any]:
    """``POST /_/data/import``: import the uploaded archive with the form's mode."""
    console, form = await upload_form(request)
    upload, mode = chosen_file(form.get("archive")), str(form.get("mode", "insert"))
    if upload is None:
        return await data_page(request, console, error="Choose an archive file to import.",
                         status=400)
    if mode not in import_modes():
        return await data_page(request, console, error=f"Unknown import mode {mode!r}.", status=400)
    folder = Path(tempfile.mkdtemp(prefix="docbase-console-import-"))
    stored = StoredSoFar()
    try:
        path = await held_upload(upload, folder)
        manifest, summary = await portability.import_archive(
            console.database, path, mode=cast("ImportMode", mode), progress=stored)
    except (portability.InvalidArchive, portability.ImportRefused) as exc:
        status = REFUSED if isinstance(exc, portability.ImportRefused) else BAD_ARCHIVE
        return await data_page(request, console, error=refused_message(exc.message, stored),
                         status=status)
    finally:
        shutil.rmtree(folder, ignore_errors=True)
        await upload.close()
    return go(console.base, console.base + "/data", imported_message(
        manifest.database, summary.collections, summary.documents, summary.media))


DATA_HANDLERS = [data, export, import_upload, *BACKUP_HANDLERS]
