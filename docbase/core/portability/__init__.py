"""Data portability: the archive format, export, import, migration between stores.

``docs/portability.md`` describes the commands and the format. :mod:`.format` is the
archive layout, :mod:`.archive` reads and writes it, :mod:`.exporting` and
:mod:`.importing` move a database in and out, :mod:`.migrating` verifies and follows,
:mod:`.capture` keeps the change log on while an export needs it.
"""

from docbase.core.portability.archive import InvalidArchive
from docbase.core.portability.exporting import export_archive
from docbase.core.portability.format import FORMAT_VERSION, Manifest
from docbase.core.portability.importing import ImportMode, ImportRefused, import_archive
from docbase.core.portability.progress import Progress, QuietProgress, Summary

__all__ = ["FORMAT_VERSION", "ImportMode", "ImportRefused", "InvalidArchive", "Manifest",
           "Progress", "QuietProgress", "Summary", "export_archive", "import_archive"]
