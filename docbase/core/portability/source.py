"""The parts of a database that portability reads and writes: a narrow protocol.

Export, import and migration need the raw document store (system fields and password
hashes as stored), the store user collections are written through (unique values
claimed), the blob store of the media archive, the schemas, the change log and the
cache the capture lease is read through. A :class:`~docbase.core.database.Database`
has them all; core code here depends only on this protocol.
"""

from __future__ import annotations

from typing import Protocol

from docbase.core.auth.cache import SystemCache
from docbase.core.changes.log import ChangeLog
from docbase.core.ports import BlobStore, DocumentStore
from docbase.core.schema.stored_schemas import SchemaRegistry
from docbase.core.settings.limits import Limits


class ChangeSource(Protocol):
    """Where the change log is (``db.changes``)."""

    @property
    def log(self) -> ChangeLog:
        """The durable change log."""
        ...


class PortableDatabase(Protocol):
    """A database as export, import and migration see it."""

    @property
    def name(self) -> str:
        """The database's name."""
        ...

    @property
    def store(self) -> DocumentStore:
        """The raw store: everything as stored, hashes included."""
        ...

    @property
    def documents(self) -> DocumentStore:
        """The store user collections are written through (unique values claimed)."""
        ...

    @property
    def blobs(self) -> BlobStore | None:
        """The media archive's bytes."""
        ...

    @property
    def schemas(self) -> SchemaRegistry:
        """The collections' schemas."""
        ...

    @property
    def changes(self) -> ChangeSource:
        """The change feed (its log)."""
        ...

    @property
    def auth_cache(self) -> SystemCache:
        """The cache of system-collection lookups."""
        ...

    @property
    def limits(self) -> Limits:
        """The database's limits (the change log's gap grace)."""
        ...
