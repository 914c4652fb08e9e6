"""Serving a media file's bytes: validators, one byte range, and safe dispositions.

- ``ETag`` is the content's hash (a derivative's is marked with its size); an
  ``If-None-Match`` naming it answers 304 without a body.
- ``Cache-Control``: content addressed by id never changes (a new upload gets a new
  id), so it may be cached for a year; content addressed by name may become another
  upload of that name, so caches revalidate it every time (cheaply, by ``ETag``).
- ``Range: bytes=a-b``, ``a-`` or ``-n`` answers 206 with that range; a range outside
  the content 416. Several ranges, or an ``If-Range`` that no longer matches, get the
  whole content (which RFC 9110 allows).
- Every answer carries ``X-Content-Type-Options: nosniff``; types a browser may not
  show in place (``sniffing.served_inline``: HTML, SVG, XML, ...) are attachments,
  as is everything asked for with ``download=true``. ``Content-Disposition`` names
  the original file as RFC 6266 says: an ASCII ``filename`` and, for other names,
  ``filename*`` in UTF-8.
"""

from __future__ import annotations

import email.utils
import functools
import re
from typing import Any

from litestar import Request, Response
from litestar.response import Stream

from docbase.core.errors import RangeNotSatisfiable
from docbase.core.media import MediaFile, served_inline
from docbase.http.headers import header

_IMMUTABLE = "public, max-age=31536000, immutable"
_REVALIDATE = "public, no-cache"
_RANGE = re.compile(r"bytes=(\d*)-(\d*)")
_UNSAFE_IN_QUOTES = re.compile(r'[\x00-\x1f\x7f"\\%]')


@functools.lru_cache(maxsize=1024)
def content_disposition(kind: str, filename: str) -> str:
    """``kind; filename="..."`` plus ``filename*`` when the name is not plain ASCII."""
    fallback = _UNSAFE_IN_QUOTES.sub("_", filename.encode("ascii", "replace").decode()
                                     .replace("?", "_"))
    value = f'{kind}; filename="{fallback}"'
    if fallback != filename:
        value += f"; filename*={email.utils.encode_rfc2231(filename, 'utf-8')}"
    return value


def _tags(text: str) -> set[str]:
    return {tag.strip().removeprefix("W/") for tag in text.split(",")}


def _not_modified(request: Request[Any, Any, Any], etag: str) -> bool:
    tags = header(request, "if-none-match")
    return tags is not None and bool(_tags(tags) & {etag, "*"})


def byte_range(request: Request[Any, Any, Any], size: int, etag: str) -> tuple[int, int] | None:
    """The one range ``[start, end)`` a request asks for, or ``None`` for everything.

    Raises:
        RangeNotSatisfiable: the range starts beyond the content, or is empty.

    """
    asked = header(request, "range")
    if asked is None or "," in asked:
        return None
    if_range = header(request, "if-range")
    if if_range is not None and if_range.strip() != etag:
        return None
    match = _RANGE.fullmatch(asked.strip())
    if match is None or not (match.group(1) or match.group(2)):
        return None  # not a bytes range we read: ignored, as RFC 9110 allows
    first, last = match.groups()
    if first:
        start = int(first)
        end = min(int(last) + 1, size) if last else size
        if last and int(last) < start:
            return None
    else:
        start, end = max(size - int(last), 0), size
    if start >= size or end <= start:
        raise RangeNotSatisfiable(f"the range {asked!r} lies outside the {size} bytes "
                                  "of this file", size)
    return start, end


async def content_response(request: Request[Any, Any, Any], file: MediaFile, *,
                           download: bool, by_name: bool) -> Response[Any]:
    """The answer to ``GET /media/ID`` (or ``HEAD``: no body): 200, 206 or 304.

    Raises:
        RangeNotSatisfiable: the ``Range`` lies outside the content (answered 416).
        NotFound: the file was deleted before its first byte was read (answered 404).

    """
    headers = {"etag": file.etag, "cache-control": _REVALIDATE if by_name else _IMMUTABLE,
               "accept-ranges": "bytes", "x-content-type-options": "nosniff"}
    inline = served_inline(file.content_type) and not download
    headers["content-disposition"] = content_disposition(
        "inline" if inline else "attachment", file.filename)
    if _not_modified(request, file.etag):
        return Response(b"", status_code=304, headers=headers)
    span = byte_range(request, file.size, file.etag)
    status = 200
    start, end = 0, file.size
    if span is not None:
        status, (start, end) = 206, span
        headers["content-range"] = f"bytes {start}-{end - 1}/{file.size}"
    if request.method == "HEAD":
        headers["content-length"] = str(end - start)
        headers["content-type"] = file.content_type + (
            "; charset=utf-8" if file.content_type.startswith("text/") else "")
        return Response(None, status_code=status, headers=headers)
    if file.data is not None:  # small content, kept in memory: no streaming needed
        return Response(file.data[start:end], status_code=status,
                        media_type=file.content_type, headers=headers)
    headers["content-length"] = str(end - start)
    return Stream(await file.started(start, end), status_code=status,
                  media_type=file.content_type, headers=headers)
