"""The collection handles of one database, handed out by the part that can build them.

:class:`CollectionViews` holds what a :class:`~docbase.core.collection.Collection`
acts through (the
:class:`~docbase.core.collection_reads.CollectionServices`: no raw store) and makes
handles acting as a principal. The database builds it once its pipeline is assembled
and gives it to the services that write through collections (mail's outbound log,
media's ``_media`` records), so none of them is handed a database still being built.
"""

from __future__ import annotations

from dataclasses import dataclass

from docbase.core.auth.principal import SYSTEM, Principal
from docbase.core.changes.feed import ChangeFeed
from docbase.core.changes.readable import ReadableFeed
from docbase.core.collection import Collection
from docbase.core.names import check_collection_name
from docbase.core.pipeline import Pipeline
from docbase.core.reads import ReadRoad
from docbase.core.schema.enforcing import SchemaEnforcingStore
from docbase.core.settings.in_force import LimitsInForce, ReadsLimits


@dataclass(frozen=True)
class CollectionViews(ReadsLimits):
    """The parts collections act through, and the handles on them."""

    name: str
    """The database's name."""
    limits_in_force: LimitsInForce
    """The database's limits (:attr:`limits`: the ones in force now)."""
    documents: SchemaEnforcingStore
    """The store as user collections see it (unique values held, passwords withheld)."""
    pipeline: Pipeline
    reads: ReadRoad
    """The read stages of the documents an answer embeds."""
    feed: ChangeFeed
    """The unscoped change feed; handles read it through :meth:`changes_for` only."""

    def changes_for(self, principal: Principal, *, origin: str | None = None) -> ReadableFeed:
        """The change feed as ``principal`` may see it (from browser ``origin``, if any)."""
        return ReadableFeed(self.feed, self.reads, principal, origin)

    def collection(self, name: str, principal: Principal = SYSTEM) -> Collection:
        """A view of the user collection ``name`` acting as ``principal``.

        Raises:
            InvalidQuery: ``name`` is not a valid collection name.

        """
        return Collection(self, check_collection_name(name), principal)

    def system_collection(self, name: str, principal: Principal = SYSTEM) -> Collection:
        """A view of a reserved system collection (keys, tokens, outbound mail, ...)."""
        return Collection(self, name, principal)
