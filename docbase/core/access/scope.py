"""What a collection's rules allow one principal: grants, the read scope, hidden fields.

Only token holders and scoped keys are limited by rules (:func:`limited`): full-access
keys, the system principal and hooks never are. For a limited principal an operation is
granted to all documents (one of its roles is listed, or ``"*"``), to the documents it
created (only ``"@owner"`` is listed), or not at all. The read scope is ONE
:class:`~docbase.core.query.Filter` (``private``/``@owner`` as ``_createdby`` equal to
the principal's author, ANDed with ``where.read``) that the read stage ANDs into the
query, so each store applies it itself.
"""

from __future__ import annotations

import enum

from docbase.core.access.rules import ANYONE, OWNER, AccessRules
from docbase.core.access.where import where_filter
from docbase.core.auth.principal import Principal
from docbase.core.errors import Forbidden
from docbase.core.query import And, Eq, Filter

CREATOR = ("_createdby",)
"""The system field holding a document's creator (the author of its insert)."""


class Grant(enum.Enum):
    """How much of a collection an operation is granted on."""

    NONE = "none"
    OWNED = "owned"
    ALL = "all"


def limited(principal: Principal) -> bool:
    """Whether rules limit ``principal``: a token holder or a scoped key."""
    return not principal.full_access and principal.kind in ("user", "key")


def grant(rules: AccessRules, principal: Principal, operation: str) -> Grant:
    """How far ``operation`` is granted to ``principal`` by ``rules``."""
    listed = rules.roles(operation)
    if ANYONE in listed or set(principal.roles).intersection(listed):
        return Grant.ALL
    return Grant.OWNED if OWNER in listed else Grant.NONE


def granted(rules: AccessRules, principal: Principal, operation: str,
            collection: str) -> Grant:
    """:func:`grant`, refusing an operation granted on nothing.

    Raises:
        Forbidden: none of the principal's roles is listed for ``operation``.

    """
    found = grant(rules, principal, operation)
    if found is Grant.NONE:
        raise Forbidden(f"the access rules of {collection!r} do not allow {operation} "
                        f"to this principal")
    return found


def owned(principal: Principal) -> Filter:
    """The documents ``principal`` created."""
    return Eq(CREATOR, principal.author)


def read_scope(rules: AccessRules, principal: Principal, collection: str) -> Filter:
    """The one filter of the documents ``principal`` may read (``MATCH_ALL``: all).

    Raises:
        Forbidden: the principal may not read the collection at all.

    """
    parts: list[Filter] = []
    if granted(rules, principal, "read", collection) is Grant.OWNED or rules.private:
        parts.append(owned(principal))
    if rules.where.read is not None:
        parts.append(where_filter(rules.where.read, principal))
    return parts[0] if len(parts) == 1 else And(tuple(parts))

