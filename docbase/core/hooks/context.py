"""What a user's hook or job receives: a typed context of the operation in flight.

A before-hook may change what its context holds (the query of a read, the documents
of an insert, the body of a PUT or PATCH) and the change is what the pipeline goes
on with; an after-hook sees what was stored. Every context carries ``db``, the
database as hooks see it: a :class:`PrivilegedDatabase` whose collections act as the
principal of kind ``"hook"``, which may delete by query whatever key made the request
(``docbase/core/auth/decision.py``).
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping
from datetime import datetime
from typing import TYPE_CHECKING, Any, Protocol

import msgspec

from docbase.core.auth.principal import Principal
from docbase.core.errors import InvalidQuery
from docbase.core.hooks.points import Hook
from docbase.core.query import JSON, And, Filter, Query, parse_filter

if TYPE_CHECKING:
    from docbase.core.collection import Collection
    from docbase.core.ports import DocumentStore
    from docbase.core.settings.limits import Limits

HOOK_PRINCIPAL = Principal(author="hook", kind="hook", full_access=False)
"""Who writes through a hook's or job's ``db``: not full access, but may delete by query."""


class HookHost(Protocol):
    """What running a hook or job needs of its database (a ``Database`` has it)."""

    @property
    def name(self) -> str:
        """The database's name."""

    @property
    def store(self) -> DocumentStore:
        """The unscoped store, for the hook log and job leases (system records)."""

    @property
    def limits(self) -> Limits:
        """The database's limits (``hook_timeout``, ``job_timeout``)."""

    def collection(self, name: str, principal: Principal = ...) -> Collection:
        """The user collection ``name`` acting as ``principal``."""


class PrivilegedDatabase:
    """The database as hooks and jobs see it: collections acting as a hook."""

    def __init__(self, database: HookHost) -> None:
        self.database = database
        self.name = database.name

    def collection(self, name: str) -> Collection:
        """The user collection ``name``, acting as the hook principal.

        Raises:
            InvalidQuery: ``name`` is not a valid collection name.

        """
        return self.database.collection(name, HOOK_PRINCIPAL)


@dataclasses.dataclass(kw_only=True)
class ReadContext:
    """A read about to be answered (``beforeGET``).

    ``document_id`` is set for a read of one document, ``query`` (filter, order, page,
    fields, grouping: ``q``, ``h`` and the URL parameters parsed) for a list read; a
    hook may replace ``query`` or narrow it with :meth:`where`.
    """

    hook: Hook
    collection: str
    principal: Principal
    db: PrivilegedDatabase
    document_id: str | None = None
    query: Query | None = None

    def where(self, q: Filter | Mapping[str, JSON]) -> None:
        """Narrow a list read to documents also matching ``q`` (a ``q`` object or filter).

        Raises:
            InvalidQuery: ``q`` is not a valid query, or this is not a list read.

        """
        if self.query is None:
            raise InvalidQuery("where() narrows list reads only")
        extra = parse_filter(dict(q)) if isinstance(q, Mapping) else q
        self.query = msgspec.structs.replace(self.query, filter=And((self.query.filter, extra)))


@dataclasses.dataclass(kw_only=True)
class WriteContext:
    """A write before it is stored (``before*``) or after (``after*``).

    ``documents``: before a POST, the new documents (change them, or replace the list);
    after a POST, PUT or PATCH, the documents as stored. ``body``: the body of a PUT or
    PATCH (change it before the write). ``ids``: the document a PUT, PATCH or DELETE
    names, or the ids a bulk delete names; after a DELETE, the ids deleted. ``filter``:
    the query of a delete by query.
    """

    hook: Hook
    collection: str
    principal: Principal
    db: PrivilegedDatabase
    method: str
    documents: list[dict[str, Any]] = dataclasses.field(default_factory=list)
    body: dict[str, Any] | None = None
    ids: list[str] = dataclasses.field(default_factory=list)
    filter: Filter | None = None

    @property
    def result(self) -> list[dict[str, Any]] | list[str]:
        """What the write stored: the documents, or for a DELETE the ids deleted."""
        return self.ids if self.method == "DELETE" else self.documents


@dataclasses.dataclass(kw_only=True)
class JobContext:
    """One run of a scheduled job: its name, the tick it runs for, the database."""

    job: str
    tick: datetime
    db: PrivilegedDatabase
