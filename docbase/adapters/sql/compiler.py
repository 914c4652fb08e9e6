"""The query AST compiled to SQLAlchemy Core: WHERE conditions and ORDER BY keys.

Every field condition has the same shape, which keeps the common case fast and indexed
while staying exact (``docs/query.md``, "Semantics")::

    test(key(value at path))  OR  (fanout(path) AND EXISTS (reached values passing test))

The first branch reads the one value reached through objects only; it is what an
expression index on the path serves. ``fanout`` is true only for documents in which
walking the path meets an array, and only for those are the reached values listed (by
the adapter's path functions) and tested one by one; it has an index too, so an OR of
both branches stays an index lookup. Values are compared through their order keys
(:mod:`.keys`), which put every type class in its own range: a range test is a key
range within the class, and equality of numbers, strings, objects and arrays is key
equality. Conditions on objects or arrays use the column that keeps key order.
Negations use ``IS NOT TRUE`` so that SQL NULLs never leak into the result.
"""

from __future__ import annotations

import itertools
from collections.abc import Callable, Sequence
from typing import Any, NamedTuple

import sqlalchemy as sa
from sqlalchemy.sql.elements import UnaryExpression

from docbase.adapters.sql.dialects import Dialect, RowKind
from docbase.adapters.sql.values import Condition, Expr, JsonValue, sql_string
from docbase.core.errors import InvalidQuery
from docbase.core.field_name_encoding import encode_names
from docbase.core.ordering import type_class
from docbase.core.query import (
    JSON,
    And,
    Between,
    ElemMatch,
    Eq,
    Exists,
    Filter,
    Gt,
    Gte,
    In,
    Lt,
    Lte,
    Ne,
    Nin,
    Not,
    Or,
    Path,
    Regex,
    SortKey,
    Text,
)

_SCALARS = frozenset({"number", "string", "boolean"})


class Scope(NamedTuple):
    """The value conditions are relative to: the document, or an array element."""

    fast: JsonValue
    exact: JsonValue
    document: bool


def _not(condition: Condition) -> Condition:
    return condition.is_not(sa.true())


def needs_exact(filter: Filter) -> bool:
    """Whether ``filter`` compares an object or array (so needs stored key order)."""
    match filter:
        case Eq(value=v) | Ne(value=v) | Gt(value=v) | Gte(value=v) | Lt(value=v) | Lte(value=v):
            return isinstance(v, dict | list)
        case In(values=values) | Nin(values=values):
            return any(isinstance(v, dict | list) for v in values)
        case Between(low=low, high=high):
            return isinstance(low, dict | list) or isinstance(high, dict | list)
        case ElemMatch(query=query) | Not(operand=query):
            return needs_exact(query)
        case And(operands=operands) | Or(operands=operands):
            return any(needs_exact(operand) for operand in operands)
    return False


class QueryCompiler:
    """Compiles filters and sort keys against one collection table."""

    def __init__(self, dialect: Dialect, table: sa.TableClause) -> None:
        self.dialect = dialect
        self.table = table
        self.root = Scope(dialect.root(table, exact=False), dialect.root(table, exact=True),
                          document=True)
        self._names = itertools.count()

    def where(self, filter: Filter) -> Condition:
        """Compile ``filter`` on whole documents to a WHERE condition."""
        return self.compile(encode_names(filter), self.root)

    def order_by(self, sort: Sequence[SortKey]) -> list[UnaryExpression[Any]]:
        """Compile ``sort`` then ``_id`` ascending to ORDER BY expressions."""
        return [*(self.sort_key(encode_names(key)) for key in sort), self.table.c.id.asc()]

    # ------------------------------------------------------------------ conditions

    def compile(self, filter: Filter, scope: Scope) -> Condition:
        """Compile ``filter`` relative to ``scope`` (a document or an array element)."""
        match filter:
            case Eq(path=path, value=value):
                return self._any_equal(scope, path, (value,))
            case Ne(path=path, value=value):
                return _not(self._any_equal(scope, path, (value,)))
            case In(path=path, values=values):
                return self._any_equal(scope, path, values)
            case Nin(path=path, values=values):
                return _not(self._any_equal(scope, path, values))
            case Gt(path=path, value=value):
                return self._ordered(scope, path, value, ">")
            case Gte(path=path, value=value):
                return self._ordered(scope, path, value, ">=")
            case Lt(path=path, value=value):
                return self._ordered(scope, path, value, "<")
            case Lte(path=path, value=value):
                return self._ordered(scope, path, value, "<=")
            case Between(path=path, low=low, high=high):
                return self._between(scope, path, low, high)
            case Regex(path=path, pattern=pattern, options=options):
                def matches(value: JsonValue) -> Condition:
                    return self.dialect.regex(value.text(), pattern, options)
                return self._any_value(scope, path, matches)
            case Exists(path=path, present=present):
                found = sa.or_(scope.fast.walk(path).is_present(),
                               sa.and_(self._fanout(scope, path),
                                       self._any_row(scope, path, "values", None)))
                return found if present else _not(found)
            case ElemMatch(path=path, query=query, objects=objects):
                return self._elem_match(scope, path, query, objects=objects)
            case Text(text=text):
                if not scope.document:
                    raise InvalidQuery("a text filter applies to whole documents only")
                return self.dialect.text_search(self.table.c.search, text.lower(), self._name())
            case Not(operand=operand):
                return _not(self.compile(operand, scope))
            case And(operands=operands):
                parts = [self.compile(operand, scope) for operand in operands]
                return sa.and_(*parts) if parts else sa.true()
            case Or(operands=operands):
                parts = [self.compile(operand, scope) for operand in operands]
                return sa.or_(*parts) if parts else sa.false()
        raise InvalidQuery(f"unsupported filter {filter!r}")

    def _any_equal(self, scope: Scope, path: Path, values: Sequence[JSON]) -> Condition:
        parts = []
        if any(v is None for v in values):
            parts.append(self._null_or_missing(scope, path))
        scalars = [self.dialect.literal_key(v) for v in values if type_class(v) in _SCALARS]
        if scalars:
            parts.append(self._any_value(scope, path, lambda v: self._key_in(v, scalars)))
        containers = [self.dialect.literal_key(v) for v in values if isinstance(v, dict | list)]
        if containers:
            parts.append(self._any_container(scope, path, lambda v: self._key_in(v, containers)))
        return sa.or_(*parts) if parts else sa.false()

    def _null_or_missing(self, scope: Scope, path: Path) -> Condition:
        fanout = self._fanout(scope, path)
        plain = sa.and_(self.dialect.key_is_null(self.key(scope.fast.walk(path))), _not(fanout))
        walked = sa.and_(fanout, sa.or_(
            ~self._any_row(scope, path, "values", None),
            self._any_row(scope, path, "reached", lambda v: v.is_type("null"))))
        return sa.or_(plain, walked)

    def _ordered(self, scope: Scope, path: Path, operand: JSON, op: str) -> Condition:
        if operand is None:
            return self._null_or_missing(scope, path) if op in (">=", "<=") else sa.false()
        cls = type_class(operand)
        bound = self.dialect.literal_key(operand)
        low, high = self.dialect.class_bounds(cls)

        def test(value: JsonValue) -> Condition:
            key = self.key(value)
            parts = [key.operate(_OPERATORS[op], bound)]
            if op[0] == ">" and high is not None:
                parts.append(key < high)
            if op[0] == "<" and low is not None:
                parts.append(key >= low)
            return sa.and_(*parts)

        if cls in _SCALARS:
            return self._any_value(scope, path, test)
        return self._any_container(scope, path, test)

    def _between(self, scope: Scope, path: Path, low: JSON, high: JSON) -> Condition:
        if low is None or high is None:
            both_null = low is None and high is None
            return self._null_or_missing(scope, path) if both_null else sa.false()
        cls = type_class(low)
        if type_class(high) != cls:
            return sa.false()
        keys = self.dialect.literal_key(low), self.dialect.literal_key(high)

        def test(value: JsonValue) -> Condition:
            key = self.key(value)
            return sa.and_(key >= keys[0], key <= keys[1])

        if cls in _SCALARS:
            return self._any_value(scope, path, test)
        return self._any_container(scope, path, test)

    def _elem_match(self, scope: Scope, path: Path, query: Filter, *, objects: bool) -> Condition:
        rows, array = self._rows(scope, path, "values", exact=needs_exact(query))
        elements, element = self.dialect.elements(array, self._name())
        kind = element.is_type("object") if objects else element.is_type(
            "null", "number", "string", "boolean")
        inner = self.compile(query, Scope(element, element, document=False))
        found: sa.Select[Any] = sa.select(sa.literal_column("1")).select_from(rows, elements)
        return sa.and_(self._fanout(scope, path),
                       found.where(array.is_type("array"), kind, inner).exists())

    # ------------------------------------------------------------------ building blocks

    def _any_value(self, scope: Scope, path: Path,
                  test: Callable[[JsonValue], Condition]) -> Condition:
        """``test`` holds for a reached value (the plain one first, indexable)."""
        return sa.or_(test(scope.fast.walk(path)),
                      sa.and_(self._fanout(scope, path),
                              self._any_row(scope, path, "reached", test)))

    def _any_container(self, scope: Scope, path: Path,
                      test: Callable[[JsonValue], Condition]) -> Condition:
        """``test`` holds for a reached object or array, compared with key order kept."""
        guard = sa.or_(self._fanout(scope, path), scope.exact.walk(path).is_type("object"))
        return sa.and_(guard, self._any_row(scope, path, "reached", test, exact=True))

    def _any_row(self, scope: Scope, path: Path, kind: RowKind,
                test: Callable[[JsonValue], Condition] | None, *, exact: bool = False
                ) -> Condition:
        rows, value = self._rows(scope, path, kind, exact=exact)
        query: sa.Select[Any] = sa.select(sa.literal_column("1")).select_from(rows)
        return (query.where(test(value)) if test else query).exists()

    def _rows(self, scope: Scope, path: Path, kind: RowKind,
             *, exact: bool) -> tuple[sa.FromClause, JsonValue]:
        base = scope.exact if exact else scope.fast
        if scope.document and path:  # a document is an object: take the first step in SQL
            base, path = base.member(path[0]), path[1:]
        return self.dialect.path_rows(base, path, kind, self._name())

    def _fanout(self, scope: Scope, path: Path) -> Condition:
        return self.dialect.fanout(scope.fast, path)

    def key(self, value: JsonValue) -> Expr:
        """Return the order key of ``value``, ready to compare and sort."""
        return self.dialect.order(value.key())

    def _key_in(self, value: JsonValue, keys: list[Any]) -> Condition:
        key = self.key(value)
        if len(keys) == 1:
            equal: Condition = key == keys[0]
            return equal
        # one bind per key: keys of different classes have different SQL types
        return key.in_([sa.literal(k) for k in keys])

    def _name(self) -> str:
        return f"j{next(self._names)}"

    # ------------------------------------------------------------------ sorting

    def sort_key(self, key: SortKey) -> UnaryExpression[Any]:
        """Order by the smallest (ascending) or largest (descending) reached item."""
        descending = key.direction == -1
        rows, item = self._rows(self.root, key.path, "items", exact=True)
        item_key = self.key(item)
        first: Expr = (sa.select(item_key).select_from(rows)
                       .order_by(item_key.desc() if descending else item_key.asc())
                       .limit(1).scalar_subquery())
        if self.dialect.null_key is not None:  # no item at all sorts as null
            first = sa.func.coalesce(first, sql_string(self.dialect.null_key))
        plain = self.root.exact.walk(key.path).key()
        expr = self.dialect.order(sa.case((self.dialect.fanout(self.root.exact, key.path), first),
                                          else_=plain))
        return expr.desc() if descending else expr.asc()


_OPERATORS: dict[str, Any] = {
    ">": sa.sql.operators.gt, ">=": sa.sql.operators.ge,
    "<": sa.sql.operators.lt, "<=": sa.sql.operators.le,
}
