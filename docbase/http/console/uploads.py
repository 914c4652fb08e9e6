"""Files uploaded to the console's Data page: checked before the body is read, then held.

An archive, a backup to restore or a CSV/NDJSON file comes as ``multipart/form-data``.
:func:`session_first` refuses a request without a live session before its body is
read, :func:`within_limit` one whose declared ``Content-Length`` is over the limit
(``limits.max_upload_bytes``, like ``POST /media``), and :func:`held_upload` writes the
file into a temporary folder, as the import code reads files.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import anyio
from litestar import Request
from litestar.datastructures import UploadFile

from docbase.core.auth.sessions import find_session
from docbase.core.errors import PayloadTooLarge
from docbase.http.console.backups import CHUNK
from docbase.http.console.guard import (
    SESSION_COOKIE,
    Console,
    SignInRequired,
    locate,
    signed_in,
)
from docbase.http.headers import header

HttpRequest = Request[Any, Any, Any]


async def session_first(request: HttpRequest) -> None:
    """Refuse a request without a live session before its body is read."""
    console = locate(request)
    if await find_session(console.database, request.cookies.get(SESSION_COOKIE)) is None:
        raise SignInRequired(console.base + "/signin")


def within_limit(request: HttpRequest, limit: int) -> None:
    """Refuse an upload whose ``Content-Length`` is missing or over ``limit`` (413).

    Raises:
        PayloadTooLarge: no declared length, or more than ``limit`` bytes.

    """
    declared = header(request, "content-length", "")
    if not declared.isdigit():
        raise PayloadTooLarge("send the file with a Content-Length (as a browser does)")
    if int(declared) > limit:
        raise PayloadTooLarge(f"the upload is {declared} bytes; the limit is {limit} "
                              "(limits.max_upload_bytes)")


async def upload_form(request: HttpRequest) -> tuple[Console, Any]:
    """The console request and the form of an upload, checked in that order.

    The session before the body is read, the declared length against
    ``limits.max_upload_bytes``, then the CSRF token of the parsed form.
    """
    await session_first(request)
    within_limit(request, locate(request).database.limits.max_upload_bytes)
    form = await request.form()
    return await signed_in(request, form=dict(form)), form


def chosen_file(upload: object) -> UploadFile | None:
    """The form's file, or ``None`` when the form came without one."""
    return upload if isinstance(upload, UploadFile) and upload.filename else None


async def held_upload(upload: UploadFile, folder: Path) -> Path:
    """The uploaded archive as a file of ``folder`` (the import reads a file)."""
    suffix = ".tar.gz" if (upload.filename or "").endswith(".gz") else ".tar"
    path = folder / f"upload{suffix}"
    async with await anyio.open_file(path, "wb") as out:
        while chunk := await upload.read(CHUNK):
            await out.write(chunk)
    return path
