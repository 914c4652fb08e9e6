"""What a file is, told from its first bytes: never from the name or type a client sends.

:func:`sniff` asks ``puremagic`` (magic numbers) about the head of the content. A
magic number of three bytes or fewer says little, so a head that decodes as text
wins over such a weak match; text no magic number names is ``text/plain``; anything
else unknown is ``application/octet-stream``. An XML document whose root is ``<svg`` is
``image/svg+xml``.

:func:`served_inline` names the types a browser may show in place: raster images,
audio, video, PDF and plain text. Everything else (HTML, SVG, XML, scripts, unknown
binaries) is served as an attachment, so an uploaded file never runs script on the
service's origin.
"""

from __future__ import annotations

import codecs
import re

import puremagic

HEAD_BYTES = 64 * 1024
"""How much of the start of a file sniffing (and a small file's image reading) sees."""
OCTET_STREAM = "application/octet-stream"
TEXT = "text/plain"

RASTER_TYPES = frozenset({"image/png", "image/jpeg", "image/gif", "image/webp",
                          "image/bmp", "image/tiff"})
"""The image types derivatives (``s=t``, ``s=w``) are made of."""

_INLINE_TYPES = RASTER_TYPES | {"application/pdf", TEXT}
_INLINE_FAMILIES = ("audio/", "video/")
_WEAK_MATCH = 0.4  # puremagic's confidence of a match on 3 bytes or fewer
_XML_TYPES = frozenset({"application/xml", "text/xml"})
_SVG_ROOT = re.compile(rb"<svg[\s>/]", re.IGNORECASE)
_CONTROL = re.compile(r"[\x00-\x08\x0b\x0e-\x1f\x7f]")


def sniff(head: bytes) -> str:
    """The MIME type of content that starts with ``head``."""
    if not head:
        return OCTET_STREAM
    try:
        matches = [m for m in puremagic.magic_string(head) if m.mime_type]
    except (puremagic.PureError, ValueError):
        matches = []
    text = _is_text(head)
    if not matches or (text and matches[0].confidence < _WEAK_MATCH):
        return TEXT if text else OCTET_STREAM
    found = str(matches[0].mime_type)
    if found in _XML_TYPES and _SVG_ROOT.search(head):
        return "image/svg+xml"
    return found


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
