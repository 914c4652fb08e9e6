"""The media archive: ``/media`` uploads, content, derivatives and metadata queries.

``docs/media.md`` describes the feature. The modules: ``receiving`` (a file's name,
size limits, hash and head), ``sniffing`` (what the content is), ``images`` and
``exif`` (Pillow, off the event loop), ``blobfile`` (a blob as a file for Pillow),
``derivatives`` (sizes and making each once), ``records`` (the ``_media`` documents),
``uploading`` (one upload, all or nothing), ``files`` (what ``open`` returns),
``sweeping`` (deleting bytes no record owns) and ``service`` (``db.media``).
"""

from __future__ import annotations

from docbase.core.media.derivatives import ORIGINAL, WIDTHS, parse_size
from docbase.core.media.files import MediaFile
from docbase.core.media.receiving import Upload, clean_filename
from docbase.core.media.records import MEDIA_COLLECTION
from docbase.core.media.service import Media
from docbase.core.media.sniffing import served_inline, sniff
from docbase.core.media.uploading import Uploaded

__all__ = [
    "MEDIA_COLLECTION",
    "ORIGINAL",
    "WIDTHS",
    "Media",
    "MediaFile",
    "Upload",
    "Uploaded",
    "clean_filename",
    "parse_size",
    "served_inline",
    "sniff",
]
