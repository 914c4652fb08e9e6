"""Who is calling: every facade call carries a :class:`Principal`."""

from __future__ import annotations

from typing import Any, Literal

import msgspec

from docbase.core.auth.scopes import Scope


class Principal(msgspec.Struct, frozen=True):
    """The caller of a facade method.

    ``author`` is written into ``_createdby``/``_changedby`` (``"api"`` for API keys,
    the user's email for JWT callers). ``full_access`` allows destructive bulk
    operations such as delete-by-query. ``scope`` limits a scoped credential to some
    paths, methods and origins (``None``: no limit); :func:`~docbase.core.auth.authorize`
    reads it.

    ``roles`` are what a collection's access rules (``docs/access.md``) grant
    operations to: a user's roles as stored (read when the request arrives, so a
    change applies at once), an external token's roles claim, a scoped key's
    ``--role``s. ``claims`` are the values a rule's ``where`` may name as
    ``$user.<claim>`` (a token's claims; ``email`` and ``roles`` are always
    ``author`` and ``roles``).
    """

    author: str = "api"
    kind: Literal["system", "key", "user", "hook"] = "system"
    full_access: bool = True
    key_id: str | None = None
    scope: Scope | None = None
    roles: tuple[str, ...] = ()
    claims: tuple[tuple[str, Any], ...] = ()


SYSTEM = Principal()
"""The embedding application itself: full access, writes as ``"api"``."""


def on_behalf_of(requester: Principal) -> Principal:
    """A full-access system principal that writes as ``requester``'s author.

    A feature whose records live in a system collection (the outbound mail log, media
    metadata) first asks :func:`~docbase.core.auth.authorize` whether ``requester`` may
    use the feature (``POST /mail``, ``GET /media/ID/meta``), then reads and writes the
    collection as this principal: the requester may use the feature without being
    allowed the collection itself.
    """
    return Principal(author=requester.author, kind="system", full_access=True)

