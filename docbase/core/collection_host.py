"""What a collection handle acts through, as a protocol.

A :class:`~docbase.core.collection.Collection` reads and writes through its
database's pipeline and stores; it depends on :class:`CollectionHost`, never on
:class:`~docbase.core.database.Database`. The host is
:class:`~docbase.core.collection_views.CollectionViews`, assembled before anything
that writes through collections (mail's outbound log, media's ``_media`` records,
hooks' ``db``).
"""

from __future__ import annotations

from typing import Protocol

from docbase.core.pipeline import Pipeline
from docbase.core.ports import DocumentStore
from docbase.core.relations import Relations
from docbase.core.settings.limits import Limits


class CollectionHost(Protocol):
    """The parts of a database a collection handle uses."""

    @property
    def limits(self) -> Limits:
        """The database's limits (page and bulk sizes, query depth)."""

    @property
    def store(self) -> DocumentStore:
        """The unscoped store (indexes, counts)."""

    @property
    def documents(self) -> DocumentStore:
        """The store as user collections see it (unique values held, passwords withheld)."""

    @property
    def relations(self) -> Relations:
        """The relation records (child views, embedding)."""

    @property
    def pipeline(self) -> Pipeline:
        """The write and read pipelines every operation passes."""
