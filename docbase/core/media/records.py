"""Media metadata: one document per stored file in the system collection ``_media``.

A record's ``_id`` is the media id (also the key of the original's blob). Its fields::

    origname   the client's file name, without path components
    filesize   bytes
    mimetype   sniffed from the content (sniffing.py), never the client's word
    mediatype  the top-level type: image, text, application, video, audio
    width, height, exif   images only: size as displayed (EXIF orientation applied)
    sha256     hex digest of the content
    uploadid   the upload (POST /media) it came in
    _created, _createdby, ...   system fields, as every document has

Other features look media ids up here (a schema's image and file fields), so the
name and the shape are kept.

The orphan sweep (``sweeping.py``) claims the id of bytes it is about to delete with a
*tombstone*: a record holding only :data:`TOMBSTONE` and the system fields, which no
upload can then commit over. Readers treat a tombstone as no record
(:func:`is_tombstone`).
"""

from __future__ import annotations

from typing import Any

from docbase.core.documents import Document, new_document
from docbase.core.media.images import ImageFacts
from docbase.core.media.sniffing import media_family

MEDIA_COLLECTION = "_media"
"""The system collection of media metadata."""
TOMBSTONE = "sweeping"
"""The field of a sweep's tombstone: when the sweep claimed the id."""


def media_record(media_id: str, *, origname: str, size: int, mimetype: str, sha256: str,
                 uploadid: str, image: ImageFacts | None, author: str) -> Document:
    """The stamped metadata document of one stored file."""
    body: dict[str, Any] = {"origname": origname, "filesize": size, "mimetype": mimetype,
                            "mediatype": media_family(mimetype)}
    if image is not None:
        body.update(width=image.width, height=image.height, exif=image.exif)
    body.update(sha256=sha256, uploadid=uploadid)
    record = new_document(body, author)
    record["_id"] = media_id
    return record


def content_tag(record: Document, size: str) -> str:
    """The strong ``ETag`` of a media file's original (``o``) or of a derivative."""
    digest = str(record.get("sha256") or record["_id"])[:32]
    return f'"{digest}"' if size == "o" else f'"{digest}-{size}"'


def is_tombstone(record: Document) -> bool:
    """Tell whether ``record`` is a sweep's claim on an id rather than a file's metadata."""
    return TOMBSTONE in record and "origname" not in record
