"""A rule's ``where`` filter, with the principal's ``$user`` values put in.

``where`` is written in the query language (``docs/query.md``); a string value
``"$user.email"``, ``"$user.roles"`` or ``"$user.<claim>"`` stands for that value of the
principal asking. The values are substituted into the JSON before it is parsed, so the
principal's values are data inside the :class:`~docbase.core.query.Filter` and never
query syntax: a claim holding ``{"$ne": null}`` is compared as that object.
"""

from __future__ import annotations

from typing import Any

from docbase.core.auth.principal import Principal
from docbase.core.query import Filter, parse_filter

USER = "$user."
"""The prefix of a string value that names a value of the principal."""
LIST_OPERATORS = frozenset({"$in", "$nin"})
"""Operators whose operand is an array: a ``$user`` value there becomes one."""


def user_value(principal: Principal | None, name: str) -> Any:
    """The value ``$user.<name>`` stands for (``None`` for a claim the principal lacks).

    Without a principal (checking a rule when it is defined) every value is ``""``.
    """
    if principal is None:
        return ""
    if name == "email":
        return principal.author
    if name == "roles":
        return list(principal.roles)
    return dict(principal.claims).get(name)


def substituted(value: Any, principal: Principal | None, *, listed: bool = False) -> Any:
    """``value`` with each ``"$user.<name>"`` string replaced by the principal's value.

    ``listed``: the value is the operand of ``$in``/``$nin``, so a single value or a
    missing one becomes an array (``[value]``, ``[]``).
    """
    if isinstance(value, str) and value.startswith(USER):
        found = user_value(principal, value[len(USER):])
        if listed and not isinstance(found, list):
            return [] if found is None else [found]
        return found
    if isinstance(value, dict):
        return {key: substituted(item, principal, listed=key in LIST_OPERATORS)
                for key, item in value.items()}
    if isinstance(value, list):
        return [substituted(item, principal) for item in value]
    return value


def where_filter(where: dict[str, Any], principal: Principal | None) -> Filter:
    """The :class:`Filter` of ``where`` for ``principal``.

    Raises:
        InvalidQuery: ``where`` is not a valid query.

    """
    return parse_filter(substituted(where, principal))
