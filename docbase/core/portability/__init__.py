"""Data portability: the archive format, export, import, migration between stores.

``docs/portability.md`` describes the commands and the format. :mod:`.format` is the
archive layout, :mod:`.archive` reads and writes it, :mod:`.exporting` and
:mod:`.importing` move a database in and out, :mod:`.migrating` verifies and follows,
:mod:`.capture` keeps the change log on while an export needs it.

The names below are imported on first use: every database imports :mod:`.capture`, and
with it this package, while only an export, an import or a backup needs the rest
(``tarfile``, the archive code).
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from docbase.core.portability.archive import InvalidArchive
    from docbase.core.portability.exporting import export_archive
    from docbase.core.portability.format import FORMAT_VERSION, Manifest
    from docbase.core.portability.importing import ImportMode, ImportRefused, import_archive
    from docbase.core.portability.progress import Progress, QuietProgress, Summary

_LAZY = {
    "InvalidArchive": "archive", "export_archive": "exporting", "FORMAT_VERSION": "format",
    "Manifest": "format", "ImportMode": "importing", "ImportRefused": "importing",
    "import_archive": "importing", "Progress": "progress", "QuietProgress": "progress",
    "Summary": "progress",
}


def __getattr__(name: str) -> Any:
    module = _LAZY.get(name)
    if module is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    value = getattr(importlib.import_module(f"{__name__}.{module}"), name)
    globals()[name] = value
    return value


__all__ = ["FORMAT_VERSION", "ImportMode", "ImportRefused", "InvalidArchive", "Manifest",
           "Progress", "QuietProgress", "Summary", "export_archive", "import_archive"]
