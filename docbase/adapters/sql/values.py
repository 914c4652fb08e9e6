"""SQL views of JSON values: what the query compiler asks of one value, per dialect.

A :class:`JsonValue` is an SQL expression standing for a JSON value (or for nothing,
when a path is missing). The compiler never writes dialect JSON functions itself; it
asks for a type test, the order key (see :mod:`.order_keys`), the string, a member. On
SQLite a value is a JSON text plus a JSON path (``json_type(body, '$."a"."b"')``) or a
row of ``json_each``; on PostgreSQL it is a ``jsonb`` or ``json`` expression
(``doc -> 'a' -> 'b'``). Object steps are rendered as SQL literals, never as bound
parameters, so that an expression index on the same path is recognised by the planner.
"""

from __future__ import annotations

import abc
from typing import Any, Literal

import sqlalchemy as sa
from sqlalchemy.sql.elements import ColumnElement
from typing_extensions import override

from docbase.adapters.sql.order_keys import FALSE_KEY, TRUE_KEY
from docbase.core.errors import InvalidQuery
from docbase.core.ordering import TypeClass

Expr = ColumnElement[Any]
Condition = ColumnElement[bool]


def sql_string(text: str) -> Expr:
    """Render a string as an SQL literal (quotes doubled), for paths indexes must match."""
    if "\x00" in text:
        raise InvalidQuery("field names cannot contain the character U+0000")
    return sa.literal_column("'" + text.replace("'", "''") + "'", sa.Text)


class JsonValue(abc.ABC):
    """One JSON value (possibly missing) as SQL expressions."""

    @abc.abstractmethod
    def is_type(self, *classes: TypeClass) -> Condition:
        """Test that the value exists and belongs to one of ``classes``."""

    @abc.abstractmethod
    def is_present(self) -> Condition:
        """Test that the value exists (a stored null counts as present)."""

    @abc.abstractmethod
    def key(self) -> Expr:
        """Return the order key; null and missing give the dialect's null key."""

    @abc.abstractmethod
    def text(self) -> Expr:
        """Return the value when it is a string, else SQL NULL."""

    @abc.abstractmethod
    def number(self) -> Expr:
        """Return the value when it is a number (exactly as stored), else SQL NULL."""

    @abc.abstractmethod
    def is_float(self) -> Condition:
        """Test that the value is a number written with a fraction or an exponent."""

    @abc.abstractmethod
    def member(self, step: str) -> JsonValue:
        """Return the value under key ``step`` when this value is an object."""

    @abc.abstractmethod
    def json(self) -> Expr:
        """Return the value as the dialect's JSON, for the adapter's SQL functions."""

    def walk(self, path: tuple[str, ...]) -> JsonValue:
        """Follow ``path`` through objects only (no array is entered)."""
        value = self
        for step in path:
            value = value.member(step)
        return value


# ---------------------------------------------------------------------------- SQLite

_SQLITE_TYPES: dict[str, tuple[str, ...]] = {
    "null": ("null",), "number": ("integer", "real"), "string": ("text",),
    "boolean": ("true", "false"), "object": ("object",), "array": ("array",),
}
_SQLITE_TRUE: Expr = sa.literal_column(f"x'{TRUE_KEY.encode().hex()}'")
_SQLITE_FALSE: Expr = sa.literal_column(f"x'{FALSE_KEY.encode().hex()}'")


def _one_of(expr: Expr, names: list[str]) -> Condition:
    if len(names) == 1:
        return expr == sql_string(names[0])
    return expr.in_([sql_string(name) for name in names])


def _sqlite_names(classes: tuple[TypeClass, ...]) -> list[str]:
    return [name for cls in classes for name in _SQLITE_TYPES[cls]]


def _sqlite_key(type_: Expr, scalar: Expr, json: Expr) -> Expr:
    container = sa.func.docbase_key(json)
    whens = [("integer", scalar), ("real", scalar), ("text", scalar), ("true", _SQLITE_TRUE),
             ("false", _SQLITE_FALSE), ("object", container), ("array", container)]
    return sa.case(*((sql_string(name), result) for name, result in whens), value=type_)


def _plain_step(step: str) -> bool:
    # SQLite's JSON path syntax has no escape inside a quoted label
    return not any(ch in '"\\' or ch < " " for ch in step)


class SqlitePath(JsonValue):
    """The value at a JSON path (a literal, or an expression for array elements)."""

    def __init__(self, base: Expr, path: str | Expr = "$") -> None:
        self.base = base
        self.path = path

    def _path(self) -> Expr:
        return sql_string(self.path) if isinstance(self.path, str) else self.path

    def _type(self) -> Expr:
        return sa.func.json_type(self.base, self._path())

    def _extract(self) -> Expr:
        return sa.func.json_extract(self.base, self._path())

    @override
    def is_type(self, *classes: TypeClass) -> Condition:
        return _one_of(self._type(), _sqlite_names(classes))

    @override
    def is_present(self) -> Condition:
        return self._type().is_not(None)

    @override
    def key(self) -> Expr:
        return _sqlite_key(self._type(), self._extract(), self.json())

    @override
    def text(self) -> Expr:
        return sa.case((self._type() == sql_string("text"), self._extract()))

    @override
    def number(self) -> Expr:
        return sa.case((self.is_type("number"), self._extract()))

    @override
    def is_float(self) -> Condition:
        return self._type() == sql_string("real")

    @override
    def json(self) -> Expr:
        return self.base.op("->")(self._path())

    @override
    def member(self, step: str) -> JsonValue:
        if not _plain_step(step):
            return SqlitePath(sa.func.docbase_member(self.json(), sql_string(step)))
        label = '."' + step + '"'
        if isinstance(self.path, str):
            return SqlitePath(self.base, self.path + label)
        return SqlitePath(self.base, self.path.concat(sql_string(label)))


class SqliteItem(JsonValue):
    """A row of ``json_each``: its SQL ``value`` and its JSON ``type``."""

    def __init__(self, value: Expr, type_: Expr) -> None:
        self.value = value
        self.type = type_

    @override
    def is_type(self, *classes: TypeClass) -> Condition:
        return _one_of(self.type, _sqlite_names(classes))

    @override
    def is_present(self) -> Condition:
        return self.type.is_not(None)

    @override
    def key(self) -> Expr:
        return _sqlite_key(self.type, self.value, self.value)

    @override
    def text(self) -> Expr:
        return sa.case((self.type == sql_string("text"), self.value))

    @override
    def number(self) -> Expr:
        return sa.case((self.is_type("number"), self.value))

    @override
    def is_float(self) -> Condition:
        return self.type == sql_string("real")

    @override
    def json(self) -> Expr:
        # only containers are ever walked further; scalars are written out for safety
        whens = [("object", self.value), ("array", self.value), ("true", sql_string("true")),
                 ("false", sql_string("false")), ("null", sql_string("null")),
                 ("text", sa.func.json_quote(self.value)),
                 ("integer", sa.cast(self.value, sa.Text))]
        return sa.case(*((sql_string(name), result) for name, result in whens),
                       value=self.type, else_=sa.func.printf("%!.17g", self.value))

    @override
    def member(self, step: str) -> JsonValue:
        return SqlitePath(sa.case((self.type == sql_string("object"), self.value))).member(step)


# ---------------------------------------------------------------------------- PostgreSQL

Family = Literal["json", "jsonb"]


class PgValue(JsonValue):
    """A ``jsonb`` (fast, for scalar tests) or ``json`` (key order kept) expression."""

    def __init__(self, expr: Expr, family: Family) -> None:
        self.expr = expr
        self.family = family

    def _typeof(self) -> Expr:
        typeof: Expr = getattr(sa.func, f"{self.family}_typeof")(self.expr)
        return typeof

    @override
    def is_type(self, *classes: TypeClass) -> Condition:
        return _one_of(self._typeof(), list(classes))

    @override
    def is_present(self) -> Condition:
        return self.expr.is_not(None)

    @override
    def key(self) -> Expr:
        # jsonb loses object key order, so it only ever orders scalars (containers
        # get their bare rank); full keys come from the json column
        function = sa.func.docbase_scalar_key if self.family == "jsonb" else sa.func.docbase_key
        key: Expr = function(self.expr, type_=sa.Text)
        return key

    @override
    def text(self) -> Expr:
        return sa.case((self._typeof() == sql_string("string"),
                        self.expr.op("#>>")(sql_string("{}"))))

    @override
    def number(self) -> Expr:
        return sa.case((self.is_type("number"), sa.cast(self._scalar_text(), sa.Numeric)))

    @override
    def is_float(self) -> Condition:
        return self.is_type("number") & self._scalar_text().op("~")(sql_string("[.eE]"))

    def _scalar_text(self) -> Expr:
        return self.expr.op("#>>")(sql_string("{}"))

    @override
    def json(self) -> Expr:
        return self.expr

    @override
    def member(self, step: str) -> JsonValue:
        return PgValue(self.expr.op("->")(sql_string(step)), self.family)
