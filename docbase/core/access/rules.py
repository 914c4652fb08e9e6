"""The access rules of one collection, as its schema declares them under ``access``.

``{"read": [...], "create": [...], "update": [...], "delete": [...], "private": true,
"where": {"read": {...}, "write": {...}}, "fields": {"salary": {"read": [...],
"write": [...]}}}``: each operation lists the roles allowed it (``"*"``: any signed-in
principal, ``"@owner"``: the document's creator); an operation left out is allowed to
no token holder. :func:`parse_access` reads and checks the JSON, naming the key of each
problem; the rules round-trip through ``_meta`` as given (``docs/access.md``).
"""

from __future__ import annotations

from typing import Any

import msgspec

from docbase.core.access.where import where_filter
from docbase.core.errors import FieldError, InvalidQuery, ValidationFailed

OPERATIONS = ("read", "create", "update", "delete")
"""The operations a rule set grants to roles."""
ANYONE = "*"
"""The role every signed-in principal (user token or scoped key) has."""
OWNER = "@owner"
"""The pseudo-role of a document's creator (``_createdby``)."""

Roles = tuple[str, ...]


class FieldAccess(msgspec.Struct, frozen=True, forbid_unknown_fields=True,
                  omit_defaults=True):
    """Who may read and write one field (``None``: no limit beyond the operation's)."""

    read: Roles | None = None
    write: Roles | None = None


class WhereRules(msgspec.Struct, frozen=True, forbid_unknown_fields=True,
                 omit_defaults=True):
    """Query-language filters (``$user.*`` values allowed) a document must match.

    ``read`` draws the read scope; ``write`` is what a created or updated document must
    match.
    """

    read: dict[str, Any] | None = None
    write: dict[str, Any] | None = None


class AccessRules(msgspec.Struct, frozen=True, forbid_unknown_fields=True,
                  omit_defaults=True):
    """The access rules of one collection (``docs/access.md``)."""

    read: Roles | None = None
    create: Roles | None = None
    update: Roles | None = None
    delete: Roles | None = None
    private: bool = False
    where: WhereRules = WhereRules()
    fields: dict[str, FieldAccess] = msgspec.field(default_factory=dict)

    def roles(self, operation: str) -> Roles:
        """The roles listed for ``operation`` (empty when it is left out)."""
        listed: Roles | None = getattr(self, operation)
        return listed or ()

    def hidden(self, roles: Roles, kind: str) -> tuple[str, ...]:
        """The fields that principals with ``roles`` may not ``kind`` (read or write)."""
        held = {ANYONE, *roles}
        return tuple(name for name, rule in sorted(self.fields.items())
                     if (allowed := getattr(rule, kind)) is not None
                     and not held.intersection(allowed))


def parse_access(body: Any) -> AccessRules:
    """Read the ``access`` object of a schema.

    Raises:
        ValidationFailed: a key is unknown or a value has the wrong shape; each problem
            is listed under ``access.<key>``.

    """
    if not isinstance(body, dict):
        raise InvalidQuery("\"access\" is a JSON object of operations, private, where "
                           "and fields")
    problems: list[FieldError] = []
    known = {*OPERATIONS, "private", "where", "fields"}
    for key in sorted(set(body) - known):
        problems.append(FieldError(f"access.{key}", (
            f"is not an access rule (known: {', '.join(sorted(known))})",)))
    for key in OPERATIONS:
        if key in body and not _roles(body[key]):
            problems.append(FieldError(f"access.{key}", ("must be an array of role names",)))
    if "private" in body and not isinstance(body["private"], bool):
        problems.append(FieldError("access.private", ("must be true or false",)))
    problems.extend(_where_problems(body.get("where", {})))
    problems.extend(_field_problems(body.get("fields", {})))
    if problems:
        raise ValidationFailed("the access rules are invalid", problems)
    return msgspec.convert(body, AccessRules)


def _roles(value: Any) -> bool:
    return isinstance(value, list) and all(isinstance(r, str) and r for r in value)


def _where_problems(where: Any) -> list[FieldError]:
    if not isinstance(where, dict):
        return [FieldError("access.where", ("must be an object with read and/or write",))]
    problems = [FieldError(f"access.where.{key}", ("is not read or write",))
                for key in sorted(set(where) - {"read", "write"})]
    for key in ("read", "write"):
        if key not in where:
            continue
        if not isinstance(where[key], dict):
            problems.append(FieldError(f"access.where.{key}", ("must be a query object",)))
            continue
        try:
            where_filter(where[key], None)
        except InvalidQuery as exc:
            problems.append(FieldError(f"access.where.{key}", (exc.message,)))
    return problems


def _field_problems(fields: Any) -> list[FieldError]:
    if not isinstance(fields, dict):
        return [FieldError("access.fields", ("must map field names to read/write roles",))]
    problems = []
    for name, rule in fields.items():
        label = f"access.fields.{name}"
        if not isinstance(rule, dict) or set(rule) - {"read", "write"}:
            problems.append(FieldError(label, ("must be an object with read and/or write",)))
        elif not all(_roles(roles) for roles in rule.values()):
            problems.append(FieldError(label, ("read and write are arrays of role names",)))
        elif name.startswith(("_", "$")) or "." in name:
            problems.append(FieldError(label, ("names no user field",)))
    return problems
