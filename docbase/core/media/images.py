"""Reading images and making their derivatives with Pillow, off the event loop, in time.

Only the raster formats of :data:`FORMATS` are ever opened (Pillow is never asked to
guess among all its decoders). An image's size is checked against
``limits.max_image_pixels`` from its header, before any pixel is decoded; Pillow's own
decompression-bomb guard answers the same. An upload's image is then decoded whole (a
JPEG at an eighth of its size, which reads every byte but holds 1/64 of the pixels), so
a truncated or corrupt image is refused when it is stored, not each time a thumbnail
is asked for. Truncated and corrupt images, and work that overruns
``limits.image_timeout``, raise :class:`~docbase.core.errors.InvalidImage`.

The work runs in a small pool of threads of its own, so decoding never blocks the
event loop and at most :data:`THREADS` images are decoded at once per process.
"""

from __future__ import annotations

import asyncio
import io
import logging
import time
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from typing import IO, TYPE_CHECKING, Any, TypeVar

import msgspec

from docbase.core.errors import DocbaseError, InvalidImage
from docbase.core.media.exif import exif_of, orientation_of, turns_sideways
from docbase.core.plugins import lazy_module

if TYPE_CHECKING:
    from PIL import Image, ImageOps
else:  # imported with the first image: most workers never read one
    Image = lazy_module("PIL.Image")
    ImageOps = lazy_module("PIL.ImageOps")

logger = logging.getLogger("docbase.media")

T = TypeVar("T")

FORMATS = ("PNG", "JPEG", "GIF", "WEBP", "BMP", "TIFF")
"""The formats Pillow may open here: those of ``sniffing.RASTER_TYPES``."""
THREADS = 2
_BOUNDLESS = 1 << 30  # a side thumbnail() never constrains
_KEEP_MODES = frozenset({"1", "L", "LA", "RGB", "RGBA", "I;16"})
_executor: ThreadPoolExecutor | None = None


class ImageFacts(msgspec.Struct, frozen=True):
    """What an image's header tells: its MIME type, size as displayed, EXIF tags."""

    mimetype: str
    width: int
    height: int
    exif: dict[str, Any]


class Derivative(msgspec.Struct, frozen=True):
    """An encoded derivative: its bytes and their MIME type."""

    data: bytes
    mimetype: str


def _pool() -> ThreadPoolExecutor:
    global _executor  # noqa: PLW0603 - one pool per process, made after any fork
    if _executor is None:
        _executor = ThreadPoolExecutor(THREADS, thread_name_prefix="docbase-images")
    return _executor


async def in_image_thread(work: Callable[[float], T], name: str, seconds: float) -> T:
    """Run ``work(deadline)`` in the image threads; refuse it when it overruns ``seconds``.

    Raises:
        InvalidImage: the work failed on the image ``name``, or took too long.

    """
    deadline = time.monotonic() + seconds
    future = asyncio.get_running_loop().run_in_executor(_pool(), _guarded, work, name,
                                                        deadline)
    try:
        return await asyncio.wait_for(future, seconds)
    except TimeoutError:
        raise InvalidImage(f"image {name!r}: processing took longer than {seconds:g} s "
                           "(limits.image_timeout)") from None


def _guarded(work: Callable[[float], T], name: str, deadline: float) -> T:
    try:
        return work(deadline)
    except InvalidImage as exc:
        raise InvalidImage(f"image {name!r}: {exc.message}") from None
    except DocbaseError:  # the blob went away, the backend failed: said as it is
        raise
    except Exception as exc:  # Pillow raises many kinds for broken input
        logger.info("image %r cannot be read: %r", name, exc)
        raise InvalidImage(f"image {name!r} cannot be read: it is corrupt, truncated or "
                           "not an image of its type") from exc


def _open(source: IO[bytes], max_pixels: int) -> Image.Image:
    try:
        image = Image.open(source, formats=FORMATS)
    except (Image.DecompressionBombError, Image.DecompressionBombWarning) as exc:
        raise InvalidImage(f"it has more pixels than allowed: {exc}") from None
    width, height = image.size
    if width * height > max_pixels:
        image.close()
        raise InvalidImage(f"it is {width}x{height} pixels, more than "
                           f"{max_pixels} (limits.max_image_pixels)")
    return image


def describe(source: IO[bytes], max_pixels: int) -> ImageFacts:
    """Read an image: type, size as displayed (EXIF orientation applied), EXIF.

    The whole image is decoded (the first frame of an animation), so one that is
    truncated or corrupt past its header is refused here.
    """
    with _open(source, max_pixels) as image:
        width, height = image.size
        if turns_sideways(orientation_of(image)):
            width, height = height, width
        mimetype = Image.MIME.get(image.format or "", "application/octet-stream")
        facts = ImageFacts(mimetype, width, height, exif_of(image))
        if image.format == "JPEG":  # libjpeg scales while decoding: every byte, few pixels
            image.draft(image.mode, (max(1, image.width // 8), max(1, image.height // 8)))
        image.load()
        return facts


def derive(source: IO[bytes], width: int, max_pixels: int) -> Derivative:
    """Make an image at most ``width`` pixels wide as displayed, never larger.

    The aspect ratio is kept and the EXIF orientation applied; JPEG and WebP stay
    JPEG and WebP, other formats become PNG (a GIF its first frame).
    """
    with _open(source, max_pixels) as opened:
        image = opened
        if image.mode in ("P", "PA", "1"):  # resample colours, not palette indexes
            image = image.convert("RGBA" if _has_alpha(image) else "RGB")
        sideways = turns_sideways(orientation_of(opened))
        image.thumbnail((_BOUNDLESS, width) if sideways else (width, _BOUNDLESS),
                        Image.Resampling.LANCZOS)
        image = ImageOps.exif_transpose(image)
        return _encode(image, opened.format or "PNG")


def _has_alpha(image: Image.Image) -> bool:
    return "transparency" in image.info or image.mode.endswith("A")


def _encode(image: Image.Image, source_format: str) -> Derivative:
    out = io.BytesIO()
    if source_format == "JPEG":
        image.convert("RGB").save(out, "JPEG", quality=85)
        return Derivative(out.getvalue(), "image/jpeg")
    if source_format == "WEBP":
        image.convert("RGBA" if _has_alpha(image) else "RGB").save(out, "WEBP", quality=80)
        return Derivative(out.getvalue(), "image/webp")
    if image.mode not in _KEEP_MODES:
        image = image.convert("RGBA" if _has_alpha(image) else "RGB")
    image.save(out, "PNG")
    return Derivative(out.getvalue(), "image/png")
