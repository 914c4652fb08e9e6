"""What of a collection one principal may read: the rules' read scope and hidden fields.

:func:`read_view` is the one place a principal's view of a collection is worked out
from its access rules. The read stage (:mod:`.reading`) ANDs its scope into the query
and projects its hidden fields away; the answer to a write
(:meth:`~docbase.core.reads.road.ReadRoad.shaped`) holds the written documents up to
the same view, so a writer is answered only what its reads would show it.
"""

from __future__ import annotations

from typing import NamedTuple

from docbase.core.access.rules import AccessRules
from docbase.core.access.scope import limited, read_scope
from docbase.core.auth.principal import Principal
from docbase.core.names import is_user_collection
from docbase.core.query import Filter
from docbase.core.schema.stored_schemas import SchemaRegistry


class ReadView(NamedTuple):
    """The documents (``scope``) and the fields (all but ``hidden``) a principal reads."""

    scope: Filter
    hidden: tuple[str, ...]


async def rules_of(schemas: SchemaRegistry, collection: str) -> AccessRules | None:
    """The access rules of ``collection`` (``None`` when it has none)."""
    if not is_user_collection(collection):
        return None
    schema = await schemas.get(collection)
    return None if schema is None else schema.access


async def read_view(schemas: SchemaRegistry, principal: Principal,
                    collection: str) -> ReadView | None:
    """What ``principal`` may read of ``collection`` (``None``: rules do not limit it).

    Raises:
        Forbidden: the principal may not read the collection at all.

    """
    if not limited(principal):
        return None
    rules = await rules_of(schemas, collection)
    if rules is None:
        return None
    return ReadView(read_scope(rules, principal, collection),
                    rules.hidden(principal.roles, "read"))
