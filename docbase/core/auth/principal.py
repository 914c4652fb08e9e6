"""Who is calling: every facade call carries a :class:`Principal`."""

from __future__ import annotations

import re
from collections.abc import Iterable
from typing import Any, Literal

import msgspec

from docbase.core.auth.scopes import Scope
from docbase.core.errors import InvalidQuery

_ROLE = re.compile(r"[A-Za-z0-9_][A-Za-z0-9_.:/-]{0,63}")


class Principal(msgspec.Struct, frozen=True):
    """The caller of a facade method.

    ``author`` is written into ``_createdby``/``_changedby`` and is who ``@owner``
    rules compare: the user's email for JWT callers, a scoped API key's owner
    (``key:<serial>`` unless created with another), ``"api"`` for full-access keys.
    ``full_access`` allows destructive bulk operations such as delete-by-query.
    ``scope`` limits a scoped credential to some paths, methods and origins (``None``:
    no limit); :func:`~docbase.core.auth.authorize`
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


def check_roles(roles: Iterable[str]) -> tuple[str, ...]:
    """Return ``roles`` without duplicates, in their order, each checked.

    A role is 1 to 64 letters, digits and ``_ . : / -``, not starting with a
    punctuation mark other than ``_``: so never ``*`` nor ``@owner``, which a rule
    uses for "any signed-in user" and "the document's creator".

    Raises:
        InvalidQuery: a role that is not such a string.

    """
    checked: list[str] = []
    for role in roles:
        if not isinstance(role, str) or not _ROLE.fullmatch(role):
            raise InvalidQuery(f"role {role!r} is not 1 to 64 letters, digits and "
                               "'_.:/-' starting with a letter, digit or '_'")
        if role not in checked:
            checked.append(role)
    return tuple(checked)


def split_roles(text: str) -> list[str]:
    """The roles of a comma-separated list as an operator types it (``editor, hr``)."""
    return [role.strip() for role in text.split(",") if role.strip()]


def claimed_roles(claims: dict[str, Any], claim: str) -> tuple[str, ...]:
    """The roles an identity provider's token grants through its ``claim``.

    ``claim`` names a top-level claim (``roles``, or a namespaced one such as
    ``https://example.com/roles``), else a dotted path into nested objects
    (``realm_access.roles``). A list of strings gives those roles, one string gives
    one role; anything else (absent, a number, an object, a list holding a non-string)
    gives none. Strings that are not valid role names (``*``, ``@owner``, ...) are
    left out, so a token can never claim what a rule means by them.
    """
    value: Any = claims.get(claim)
    if claim not in claims:
        value = claims
        for part in claim.split("."):
            value = value.get(part) if isinstance(value, dict) else None
    if isinstance(value, str):
        value = [value]
    if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
        return ()
    return tuple(dict.fromkeys(v for v in value if _ROLE.fullmatch(v)))


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

