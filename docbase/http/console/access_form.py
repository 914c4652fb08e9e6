"""The schema designer's access-rules inputs: a collection's ``access`` as typed inputs.

The inputs are the keys of ``docs/access.md``: a comma-separated list of roles per
operation (``editor, @owner``, ``*``), a box for ``private``, the ``where.read`` and
``where.write`` filters as JSON, and a row per field with the roles that may read and
write it. :func:`access_json` turns what was submitted into the ``access`` object of the
schema, which the designer then writes through its one path (``parse_schema`` checks
it, as ``PUT /rest/<collection>/_meta`` does); :func:`by_input` places each problem of
that check (``access.read``, ``access.where.read``, ``access.fields.salary``) next to
its input. With "Limit token holders with these rules" unticked the collection has no
rules, whatever the other inputs hold.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import msgspec

from docbase.core.access.rules import OPERATIONS, AccessRules
from docbase.core.auth.principal import split_roles
from docbase.core.errors import FieldError

WHERE = ("read", "write")
MAX_ROWS = 500
"""The most field rows a submitted form is read for."""


def _roles_text(roles: tuple[str, ...] | None) -> str:
    return ", ".join(roles or ())


def _rows(field_names: list[str], rules: dict[str, tuple[str, str]]) -> list[dict[str, str]]:
    """A row per declared field, then per other field with a rule, then a blank one."""
    names = list(dict.fromkeys([*field_names, *rules]))
    rows = [{"field": n, "read": rules.get(n, ("", ""))[0],
             "write": rules.get(n, ("", ""))[1]} for n in names]
    return [*rows, {"field": "", "read": "", "write": ""}]


def stored(access: AccessRules | None, field_names: list[str]) -> dict[str, Any]:
    """The inputs' values for the stored rules (``None``: the collection has none)."""
    rules = access or AccessRules()
    where = msgspec.to_builtins(rules.where)
    return {"on": access is not None,
            **{op: _roles_text(rules.roles(op)) for op in OPERATIONS},
            "private": rules.private,
            **{f"where_{k}": _json_text(where[k]) if k in where else "" for k in WHERE},
            "rows": _rows(field_names, {
                name: (_roles_text(rule.read), _roles_text(rule.write))
                for name, rule in rules.fields.items()})}


def _json_text(value: Any) -> str:
    return msgspec.json.encode(value).decode()


def submitted(form: Mapping[str, Any], field_names: list[str]) -> dict[str, Any]:
    """The inputs' values as the form sent them (to show again, and to read)."""
    def text(key: str) -> str:
        value = form.get(key, "")
        return value.strip() if isinstance(value, str) else ""

    rules: dict[str, tuple[str, str]] = {}
    for index in range(MAX_ROWS):
        if f"rule-{index}-field" not in form:
            break
        name = text(f"rule-{index}-field")
        if name:
            rules[name] = (text(f"rule-{index}-read"), text(f"rule-{index}-write"))
    return {"on": form.get("access_on") == "on",
            **{op: text(f"access_{op}") for op in OPERATIONS},
            "private": form.get("access_private") == "on",
            **{f"where_{k}": text(f"access_where_{k}") for k in WHERE},
            "rows": _rows(field_names, rules)}


def access_json(values: dict[str, Any]) -> tuple[dict[str, Any] | None, list[FieldError]]:
    """``(the schema's "access" object or None, problems found before checking it)``.

    An operation whose box is empty is left out (allowed to no token holder), as is a
    field whose read and write boxes are both empty. A ``where`` box that is not JSON is
    a problem of its key and is left out, so that the check names the other problems too.
    """
    if not values["on"]:
        return None, []
    access: dict[str, Any] = {op: split_roles(values[op]) for op in OPERATIONS
                              if values[op]}
    if values["private"]:
        access["private"] = True
    problems: list[FieldError] = []
    where: dict[str, Any] = {}
    for key in WHERE:
        text = values[f"where_{key}"]
        if not text:
            continue
        try:
            where[key] = msgspec.json.decode(text.encode())
        except msgspec.DecodeError as exc:
            problems.append(FieldError(f"access.where.{key}", (f"not valid JSON: {exc}",)))
    if where:
        access["where"] = where
    fields: dict[str, Any] = {}
    for row in values["rows"]:
        rule = {kind: split_roles(row[kind]) for kind in WHERE if row[kind]}
        if row["field"] and rule:
            fields[row["field"]] = rule
    if fields:
        access["fields"] = fields
    return access, problems


def by_input(problems: list[FieldError]) -> tuple[dict[str, list[str]], list[FieldError]]:
    """``({input: messages}, the problems of no access input)``.

    Inputs are named ``read`` ... ``delete``, ``private``, ``where_read``,
    ``where_write`` and ``field:<name>`` for a field's row.
    """
    placed: dict[str, list[str]] = {}
    others: list[FieldError] = []
    for problem in problems:
        parts = problem.field.split(".", 2)
        if parts[0] != "access" or len(parts) == 1:
            others.append(problem)
            continue
        key = parts[1]
        if key == "where":
            key = f"where_{parts[2]}" if len(parts) == 3 and parts[2] in WHERE else "where_read"
        elif key == "fields" and len(parts) == 3:
            key = f"field:{parts[2]}"
        elif key not in (*OPERATIONS, "private"):
            others.append(problem)
            continue
        placed.setdefault(key, []).extend(problem.message)
    return placed, others
