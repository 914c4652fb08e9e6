"""Typed limits and settings of a database, validated when built."""

from __future__ import annotations

import msgspec

from docbase.core.errors import ConfigurationError


class Limits(msgspec.Struct, frozen=True, forbid_unknown_fields=True):
    """Per-database limits; every one of them gives a clear error when exceeded."""

    max_page: int = 10_000
    """Largest ``max``/``$max`` a list read may ask for (400 above it)."""
    max_bulk: int = 1_000
    """Most documents one bulk insert may carry (413 above it)."""
    max_body_bytes: int = 10 * 1024 * 1024
    """Largest request body the HTTP layer accepts (413 above it)."""
    max_query_depth: int = 32
    """Deepest nesting of a ``q`` object."""
    hook_timeout: float = 10.0
    """Seconds a server-side hook may take before its request answers 504."""
    job_timeout: float = 300.0
    """Seconds a scheduled job may take before it is cancelled and logged as timed out."""
    max_mail: int = 1_000
    """Most messages one ``POST /mail`` may carry (413 above it)."""
    max_upload_file_bytes: int = 256 * 1024 * 1024
    """Largest file of a ``POST /media`` upload (413 naming the file above it)."""
    max_upload_bytes: int = 1024 * 1024 * 1024
    """Largest ``POST /media`` request: all its files together (413 above it)."""
    max_upload_files: int = 100
    """Most files one ``POST /media`` may carry (413 above it)."""
    max_image_pixels: int = 80_000_000
    """Most pixels (width times height) an uploaded image may have (422 above it)."""
    image_timeout: float = 30.0
    """Seconds reading an image or making one derivative may take (422 beyond it)."""

    def __post_init__(self) -> None:
        for field in self.__struct_fields__:
            value = getattr(self, field)
            if value <= 0:
                kind = "number" if isinstance(value, float) else "integer"
                raise ConfigurationError(f"limits.{field} must be a positive {kind}")
