"""An image's EXIF tags as plain JSON: names for numbers, numbers for rationals.

The main directory and the Exif sub-directory are merged into one object keyed by tag
name (``Make``, ``Orientation``, ``DateTimeOriginal``, ...); the GPS directory, when
present, is the object ``GPSInfo``. Binary blobs (maker notes, thumbnails) and tags
Pillow has no name for are left out, and long values are cut, so the metadata stays
small and storable in every adapter.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

from PIL import ExifTags

from docbase.core.plugins import lazy_module

if TYPE_CHECKING:
    from PIL import Image, TiffImagePlugin
else:  # imported with the first image: most workers never read one
    TiffImagePlugin = lazy_module("PIL.TiffImagePlugin")


ORIENTATION = ExifTags.Base.Orientation.value
_POINTERS = frozenset({ExifTags.Base.ExifOffset.value, ExifTags.Base.GPSInfo.value,
                       ExifTags.Base.ExifInteroperabilityOffset.value})
_SKIPPED = frozenset({ExifTags.Base.MakerNote.value, ExifTags.Base.UserComment.value,
                      ExifTags.Base.PrintImageMatching.value})
_MAX_TEXT = 512
_MAX_ITEMS = 64


def exif_of(image: Image.Image) -> dict[str, Any]:
    """The EXIF tags of an opened image as a JSON object (empty when it has none)."""
    exif = image.getexif()
    found = _named(exif, ExifTags.TAGS)
    found.update(_named(exif.get_ifd(ExifTags.IFD.Exif), ExifTags.TAGS))
    gps = _named(exif.get_ifd(ExifTags.IFD.GPSInfo), ExifTags.GPSTAGS)
    if gps:
        found["GPSInfo"] = gps
    return found


def orientation_of(image: Image.Image) -> int:
    """The EXIF orientation (1 to 8) of an opened image; 1 when absent or invalid."""
    value = image.getexif().get(ORIENTATION, 1)
    return value if isinstance(value, int) and 1 <= value <= 8 else 1


def turns_sideways(orientation: int) -> bool:
    """Tell whether an EXIF orientation swaps width and height when applied."""
    return orientation in (5, 6, 7, 8)


def _named(tags: Mapping[int, Any], names: Mapping[int, str]) -> dict[str, Any]:
    result: dict[str, Any] = {}
    for tag, raw in tags.items():
        name = names.get(tag)
        if name is None or tag in _POINTERS or tag in _SKIPPED:
            continue
        value = _plain(raw)
        if value is not None:
            result[name] = value
    return result


def _plain(value: Any) -> Any:
    if isinstance(value, bool | int | str):
        return value.replace("\x00", "").strip()[:_MAX_TEXT] if isinstance(value, str) else value
    if isinstance(value, TiffImagePlugin.IFDRational | float):
        number = float(value)
        return number if math.isfinite(number) else None
    if isinstance(value, bytes):
        text = value.rstrip(b"\x00")
        if len(text) > _MAX_TEXT or not text.isascii() or not text.decode().isprintable():
            return None
        return text.decode()
    if isinstance(value, tuple | list) and len(value) <= _MAX_ITEMS:
        items = [_plain(item) for item in value]
        return None if any(item is None for item in items) else items
    return None
