"""The media archive in the console: a grid of thumbnails, uploads, metadata, delete.

- ``GET /_/media``: the newest files (thumbnails from ``GET /media/ID?s=t``, which needs
  no credential) with their name, type and size.
- ``POST /_/media``: a ``multipart/form-data`` upload of one or more files, streamed to
  ``db.media.upload`` as ``POST /media`` does. The script of the page sends it (files
  picked or dropped, with a progress bar); as the body is a stream of files, the CSRF
  token travels in the ``X-CSRF-Token`` header. Answers ``{"ids": [...]}``.
- ``POST /_/media/delete``: delete the file whose id the form names.
"""

from __future__ import annotations

from typing import Any

import msgspec
from litestar import Response, get, post

from docbase.http.console.flash import go
from docbase.http.console.guard import HttpRequest, console_paths, signed_in
from docbase.http.console.rendering import CONSOLE_HEADERS, render
from docbase.http.uploads import uploaded_files

SHOWN_FILES = 60
"""How many of the newest files the grid shows."""


@get(console_paths("/media"))
async def media_page(request: HttpRequest) -> Response[str]:
    """``GET /_/media``: the newest files, newest first."""
    console = await signed_in(request)
    records = await console.database.media.find(
        None, {"$orderby": {"_created": -1}, "$max": SHOWN_FILES},
        principal=console.principal)
    return render("media.html", **console.page(
        title="Media", files=records, media_base=console.base[:-2] + "/media"))


@post(console_paths("/media"), status_code=201, request_max_body_size=None)
async def upload(request: HttpRequest) -> Response[bytes]:
    """``POST /_/media``: store the uploaded files (limits.max_upload_* apply)."""
    console = await signed_in(request)
    files = uploaded_files(request, console.database.limits)
    uploaded = await console.database.media.upload(files, principal=console.principal)
    return Response(msgspec.json.encode({"ids": uploaded.ids}), status_code=201,
                    media_type="application/json", headers=dict(CONSOLE_HEADERS))


@post(console_paths("/media/delete"), status_code=303)
async def delete_media(request: HttpRequest) -> Response[Any]:
    """``POST /_/media/delete``: delete one file and its thumbnails."""
    form: dict[str, Any] = dict(await request.form())
    console = await signed_in(request, form=form)
    media_id = str(form.get("id", ""))
    await console.database.media.delete(media_id, principal=console.principal)
    return go(console.base, console.base + "/media", f"Deleted file {media_id}.")


MEDIA_HANDLERS = [media_page, upload, delete_media]
