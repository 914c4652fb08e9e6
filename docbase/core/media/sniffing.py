"""What a file is, told from its first bytes: never from the name or type a client sends.

:func:`sniff` asks ``puremagic`` (magic numbers) about the head of the content. For
binary content its best match is the answer (``application/octet-stream`` without
one). Content that decodes as text is ``text/plain`` unless the match is one of the
text formats of :data:`TEXT_FORMATS` (HTML, XML, SVG, JSON, PDF, ...): magic numbers
of a few printable bytes say little about text. An XML document whose root is
``<svg`` is ``image/svg+xml``.

:func:`served_inline` names the types a browser may show in place: raster images,
audio, video, PDF and plain text. Everything else (HTML, SVG, XML, scripts, unknown
binaries) is served as an attachment, so an uploaded file never runs script on the
service's origin.
"""

from __future__ import annotations

import codecs
import re
from typing import TYPE_CHECKING

from docbase.core.plugins import lazy_module

if TYPE_CHECKING:
    import puremagic
else:  # imported with the first upload
    puremagic = lazy_module("puremagic")


HEAD_BYTES = 64 * 1024
"""How much of the start of a file sniffing (and a small file's image reading) sees."""
OCTET_STREAM = "application/octet-stream"
TEXT = "text/plain"

RASTER_TYPES = frozenset({"image/png", "image/jpeg", "image/gif", "image/webp",
                          "image/bmp", "image/tiff"})
"""The image types derivatives (``s=t``, ``s=w``) are made of."""

_INLINE_TYPES = RASTER_TYPES | {"application/pdf", TEXT}
_INLINE_FAMILIES = ("audio/", "video/")
_XML_TYPES = frozenset({"application/xml", "text/xml"})
TEXT_FORMATS = _XML_TYPES | {"text/html", "image/svg+xml", "application/json", "text/csv",
                             "application/pdf", "application/postscript", "application/rtf",
                             "text/calendar", "text/vcard"}
"""Types of content that is text throughout which sniffing reports as such."""
_SVG_ROOT = re.compile(rb"<svg[\s>/]", re.IGNORECASE)
_CONTROL = re.compile(r"[\x00-\x08\x0b\x0e-\x1f\x7f]")


def sniff(head: bytes) -> str:
    """The MIME type of content that starts with ``head``."""
    if not head:
        return OCTET_STREAM
    try:
        matches = [str(m.mime_type) for m in puremagic.magic_string(head) if m.mime_type]
    except (puremagic.PureError, ValueError):
        matches = []
    found = matches[0] if matches else ""
    if found in _XML_TYPES and _SVG_ROOT.search(head):
        return "image/svg+xml"
    if _is_text(head):
        return found if found in TEXT_FORMATS else TEXT
    return found or OCTET_STREAM


def media_family(mimetype: str) -> str:
    """The ``mediatype`` of a MIME type: its top-level type (``image``, ``text``, ...)."""
    return mimetype.partition("/")[0]


def served_inline(mimetype: str) -> bool:
    """Tell whether a browser may show content of this type in place."""
    return mimetype in _INLINE_TYPES or mimetype.startswith(_INLINE_FAMILIES)


def _is_text(head: bytes) -> bool:
    try:  # a multi-byte character cut at the end of the head is fine
        decoded = codecs.getincrementaldecoder("utf-8")().decode(head, final=False)
    except UnicodeDecodeError:
        return False
    return _CONTROL.search(decoded) is None
