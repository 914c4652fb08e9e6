"""Files the media tests upload, made here with Pillow (no binary fixtures in the tree)."""

from __future__ import annotations

import io
import struct
import zlib

from PIL import Image

ORIENTATION = 0x0112


def encode(image: Image.Image, fmt: str, **options: object) -> bytes:
    out = io.BytesIO()
    image.save(out, fmt, **options)
    return out.getvalue()


def gradient(width: int, height: int) -> Image.Image:
    """An RGB image whose left half is red and right half blue (to see orientation)."""
    image = Image.new("RGB", (width, height), (220, 20, 20))
    image.paste((20, 20, 220), (width // 2, 0, width, height))
    return image


def png(width: int = 300, height: int = 200) -> bytes:
    return encode(gradient(width, height), "PNG")


def jpeg_rotated(width: int = 800, height: int = 400) -> bytes:
    """A JPEG stored ``width`` x ``height`` whose EXIF says: turn 90° clockwise (6)."""
    image = gradient(width, height)
    exif = image.getexif()
    exif[ORIENTATION] = 6
    exif[0x010F] = "Acme Cameras"  # Make
    return encode(image, "JPEG", exif=exif, quality=90)


def gif(width: int = 200, height: int = 100) -> bytes:
    return encode(gradient(width, height).convert("P"), "GIF")


def webp(width: int = 1000, height: int = 500) -> bytes:
    return encode(gradient(width, height), "WEBP", quality=80)


def pdf() -> bytes:
    return encode(gradient(60, 40), "PDF")


TEXT = "Grüße aus dem Lager.\nSecond line.\n".encode()
SVG = (b'<?xml version="1.0"?>\n<svg xmlns="http://www.w3.org/2000/svg" width="10" '
       b'height="10"><script>alert(document.domain)</script></svg>\n')
HTML = b"<!DOCTYPE html><html><body><script>alert(document.cookie)</script></body></html>"


def truncated_jpeg() -> bytes:
    """A JPEG whose header reads fine but whose data stops half way."""
    whole = encode(gradient(400, 300), "JPEG", quality=95)
    return whole[: len(whole) // 2]


def truncated_png() -> bytes:
    """A PNG whose header (and first image data) reads fine but which stops half way."""
    whole = encode(gradient(400, 300), "PNG")
    return whole[: len(whole) // 2]


def corrupt_png() -> bytes:
    """PNG magic followed by garbage: no readable header."""
    return b"\x89PNG\r\n\x1a\n" + b"\x00\x00\x00\x0dIHDR" + b"garbage!" * 40


def bomb_png(width: int = 40_000, height: int = 40_000) -> bytes:
    """A tiny PNG whose header claims ``width`` x ``height`` pixels (a decompression bomb)."""
    small = encode(Image.new("1", (8, 8)), "PNG")
    ihdr_at = 8
    length = struct.unpack(">I", small[ihdr_at:ihdr_at + 4])[0]
    body = bytearray(small[ihdr_at + 4:ihdr_at + 8 + length])  # type + data
    body[4:12] = struct.pack(">II", width, height)
    crc = struct.pack(">I", zlib.crc32(bytes(body)) & 0xFFFFFFFF)
    return small[:ihdr_at + 4] + bytes(body) + crc + small[ihdr_at + 12 + length:]


def colour_at(data: bytes, x: float, y: float) -> str:
    """``red`` or ``blue``: the colour at a fraction ``x``, ``y`` of an image's size."""
    with Image.open(io.BytesIO(data)) as image:
        rgb = image.convert("RGB")
        pixel = rgb.getpixel((int(rgb.width * x), int(rgb.height * y)))
        assert isinstance(pixel, tuple)
        return "red" if pixel[0] > pixel[2] else "blue"


def size_of(data: bytes) -> tuple[int, int]:
    with Image.open(io.BytesIO(data)) as image:
        return image.size
