"""The one allow/deny decision: whether a principal may do an action.

Every caller asks here: the HTTP layer for the request as it arrived, and the write
and read pipelines of core for the operation they are about to run (so the embedded
library refuses what HTTP refuses). Nothing else in docbase raises ``Forbidden`` for
a credential.
"""

from __future__ import annotations

import msgspec

from docbase.core.auth.principal import Principal
from docbase.core.errors import Forbidden

FULL_ACCESS_COLLECTIONS = frozenset({"email_outbound"})
"""Collections with user-collection names that only a full-access principal may read or
write, as a collection or as a subcollection (the outbound mail log)."""


class Action(msgspec.Struct, frozen=True):
    """One thing a principal asks to do.

    ``path`` is relative to the database's base URL (``/rest/people/ID``); ``origin`` is
    the browser origin of an HTTP request (``None`` elsewhere); ``by_query`` marks a
    delete by query, which needs a full-access principal or a server-side hook;
    ``system`` an operation on a system collection (the hook log), which needs a
    full-access principal. ``description`` marks reading the API's description
    (``/rest/_openapi``), which any valid credential may from an origin it allows:
    its paths and methods are not asked, the answer describes only the collections
    the principal may use (:func:`may_use`).
    """

    method: str
    path: str
    origin: str | None = None
    by_query: bool = False
    system: bool = False
    description: bool = False


def authorize(principal: Principal, action: Action) -> None:
    """Allow ``action`` or raise.

    Raises:
        Forbidden: the principal's scope does not cover the method, path or origin, or
            a delete by query comes from a principal that is neither full-access nor a
            hook, or a system collection (or one of :data:`FULL_ACCESS_COLLECTIONS`) is
            asked for by a principal that is not full-access.

    """
    if not principal.full_access and (action.system or _full_access_only(action.path)):
        raise Forbidden(f"{action.path} needs a full-access API key")
    if action.by_query and not (principal.full_access or principal.kind == "hook"):
        raise Forbidden("delete by query needs a full-access API key")
    scope = principal.scope
    if scope is None:
        return
    authorize_origin(principal, action.origin)
    if action.description:
        return
    if not principal.full_access and not scope.allows(action.method, action.path):
        raise Forbidden(f"this API key may not {action.method} {action.path}")


def authorize_origin(principal: Principal, origin: str | None) -> None:
    """Allow a request from browser origin ``origin`` (``None``: not from a browser) or raise.

    The HTTP layer asks only this for a request whose every operation passes the read or
    write pipeline: their authorize stages decide the method and the path, for the
    collection that holds the documents, so the request is decided once.

    Raises:
        Forbidden: the principal's scope limits the origins and ``origin`` is not one.

    """
    scope = principal.scope
    if origin and scope is not None and scope.origins and not scope.allows_origin(origin):
        raise Forbidden(f"this API key may not be used from origin {origin}")


def may_use(principal: Principal, collection: str) -> bool:
    """Tell whether ``principal`` may send some method to collection ``collection``."""
    for path in (f"/rest/{collection}", f"/rest/{collection}/{'0' * 24}"):
        for method in ("GET", "POST", "PUT", "PATCH", "DELETE"):
            try:
                authorize(principal, Action(method, path))
            except Forbidden:
                continue
            return True
    return False


def _full_access_only(path: str) -> bool:
    parts = path.split("/")  # "", "rest", collection, id, subcollection, ...
    return len(parts) > 2 and parts[1] == "rest" and any(
        name in FULL_ACCESS_COLLECTIONS for name in parts[2::2])
