"""A ``multipart/form-data`` upload read as it streams in, one file after another.

Litestar's own form parsing spools every file to a temporary file before the handler
runs; an upload here goes straight to the blob store instead. The request stream is fed
to the push parser of ``multipart`` (the library Litestar's parsing is built on), and
each file part becomes an :class:`~docbase.core.media.Upload` whose content is the
part's body as it arrives: the consumer stores one file before the next is read, so at
most a parser buffer of the body is in memory. Parts without a file name (plain form
fields) are skipped.
"""

from __future__ import annotations

import email.utils
import re
import urllib.parse
from collections.abc import AsyncIterator
from typing import Any

from litestar import Request
from multipart import (  # type: ignore[import-untyped]
    MultipartError,
    MultipartSegment,
    ParserLimitReached,
    PushMultipartParser,
    parse_options_header,
)

from docbase.core.errors import InvalidQuery, PayloadTooLarge, UnsupportedMediaType
from docbase.core.media import Upload
from docbase.core.media.receiving import Budget
from docbase.core.settings import Limits
from docbase.http.headers import header

_EXTENDED_NAME = re.compile(r"""filename\*\s*=\s*([^;\s]+)""", re.IGNORECASE)
_FORM_FIELDS = 100  # plain fields a form may send beside its files


class MultipartReader:
    """The parts of one multipart body: their headers, then their bodies, in order."""

    def __init__(self, request: Request[Any, Any, Any], boundary: str, limits: Limits) -> None:
        self._budget = Budget(limits.max_upload_bytes)
        self._parser = PushMultipartParser(
            boundary, max_segment_count=limits.max_upload_files + _FORM_FIELDS,
            max_header_count=16)
        self._events = self._parse(request.stream())
        self._in_body = False

    async def _parse(self, stream: AsyncIterator[bytes]) -> AsyncIterator[Any]:
        with self._parser:
            async for chunk in stream:
                self._budget.spend(len(chunk))
                for event in self._parser.parse(chunk):
                    yield event
                if self._parser.closed:
                    return
            for event in self._parser.parse(b""):  # the end: complains if cut short
                yield event

    async def _next(self) -> Any:
        try:
            return await anext(self._events)
        except ParserLimitReached as exc:
            raise PayloadTooLarge(f"the upload has too many parts: {exc}") from None
        except MultipartError as exc:
            raise InvalidQuery(f"the multipart/form-data body is malformed: {exc}") from None

    async def segment(self) -> MultipartSegment | None:
        """The headers of the next part, past what is left of this one; ``None`` at the end."""
        while True:
            try:
                event = await self._next()
            except StopAsyncIteration:
                return None
            if isinstance(event, MultipartSegment):
                self._in_body = True
                return event
            if event is None:
                self._in_body = False

    async def body(self) -> AsyncIterator[bytes]:
        """The body of the current part, chunk by chunk as it arrives."""
        while self._in_body:
            event = await self._next()
            if event is None:
                self._in_body = False
                return
            yield event


def _filename(segment: MultipartSegment) -> str | None:
    extended = _EXTENDED_NAME.search(segment.header("Content-Disposition", "") or "")
    if extended:  # RFC 5987: filename*=UTF-8''Gr%C3%BC%C3%9Fe.txt
        charset, _, encoded = email.utils.decode_rfc2231(extended.group(1).strip('"'))
        try:
            return urllib.parse.unquote(encoded, encoding=charset or "utf-8", errors="strict")
        except (LookupError, UnicodeDecodeError):
            pass
    name = segment.filename
    return None if name is None else str(name)


async def uploaded_files(request: Request[Any, Any, Any], limits: Limits,
                         ) -> AsyncIterator[Upload]:
    """The files of a ``multipart/form-data`` request, each streamed as it arrives.

    Raises:
        UnsupportedMediaType: the body is not ``multipart/form-data``.
        InvalidQuery: the body has no boundary or is malformed.
        PayloadTooLarge: the body is over ``limits.max_upload_bytes`` (by its
            ``Content-Length`` or as it streams) or has too many parts.

    """
    media_type, options = parse_options_header(header(request, "content-type", ""))
    if media_type != "multipart/form-data":
        raise UnsupportedMediaType(f"POST /media takes multipart/form-data, not "
                                   f"{media_type or 'an untyped body'!r}")
    boundary = options.get("boundary")
    if not boundary:
        raise InvalidQuery("the multipart/form-data content type has no boundary")
    declared = header(request, "content-length", "")
    if declared.isdigit() and int(declared) > limits.max_upload_bytes:
        raise PayloadTooLarge(f"the upload is {declared} bytes; the limit is "
                              f"{limits.max_upload_bytes} (limits.max_upload_bytes)")
    reader = MultipartReader(request, boundary, limits)
    while (segment := await reader.segment()) is not None:
        filename = _filename(segment)
        if filename:  # a part without a file name is a plain form field
            yield Upload(filename, reader.body(), field=str(segment.name or ""))
