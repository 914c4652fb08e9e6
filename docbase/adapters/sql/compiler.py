"""The query AST compiled to SQLAlchemy Core: WHERE conditions and ORDER BY parts.

Every field condition has the same shape (``docs/sql-adapter.md``)::

    test(value at path)  OR  (fanout(path) AND EXISTS (reached values passing test))

The first branch reads the one value reached through objects only, in the database's
own values for scalars (:meth:`.Dialect.compare`); it is what an expression index on
the path serves. ``fanout`` is true only for documents in which walking the path meets
an array, and only for those are the reached values listed and tested one by one.
Objects and arrays compare through their order keys (:mod:`.order_keys`) on the column
that keeps key order. Negations use ``IS NOT TRUE`` so that SQL NULLs never leak.
"""

from __future__ import annotations

import itertools
from collections.abc import Callable, Sequence
from typing import Any, NamedTuple

import sqlalchemy as sa
from sqlalchemy.sql.elements import False_, UnaryExpression

from docbase.adapters.sql.dialects import OPERATORS, Dialect, RowKind
from docbase.adapters.sql.values import Condition, Expr, JsonValue
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
from docbase.core.query.regex import prefix_bounds

_SCALARS = frozenset({"number", "string", "boolean"})


class Scope(NamedTuple):
    """The value conditions are relative to: the document, or an array element."""

    fast: JsonValue
    exact: JsonValue
    document: bool


def _not(condition: Condition) -> Condition:
    return sa.true() if isinstance(condition, False_) else condition.is_not(sa.true())


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

    def __init__(self, dialect: Dialect, table: sa.TableClause,
                 flat: Sequence[Path] = (), items: Sequence[tuple[Path, int]] = ()) -> None:
        """Compile for ``table``; ``flat`` paths are known to meet no array (names encoded).

        Conditions on a flat path (or a prefix of one) compile to their first branch
        only, an expression index's expression; ``items``: paths with an item index,
        and its registry id (:mod:`.item_indexes`).
        """
        self.dialect = dialect
        self.table = table
        self.flat = tuple(flat)
        self.items = dict(items)
        self.root = Scope(dialect.root(table, exact=False), dialect.root(table, exact=True),
                          document=True)
        self._names = itertools.count()

    def where(self, filter: Filter) -> Condition:
        """Compile ``filter`` on whole documents to a WHERE condition."""
        return self.compile(encode_names(filter), self.root)

    def order_by(self, sort: Sequence[SortKey]) -> list[UnaryExpression[Any]]:
        """Compile ``sort`` then ``_id`` ascending to ORDER BY expressions."""
        return [*(part for key in sort for part in self.sort_key(key)), self.table.c.id.asc()]

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
                bounds = prefix_bounds(pattern, options)  # ^abc: a range, to seek
                def matches(value: JsonValue) -> Condition:
                    found = self.dialect.regex(value.text(), pattern, options)
                    return sa.and_(self.dialect.within(value, *bounds, "<"), found
                                   ) if bounds else found
                return self._any_value(scope, path, matches)
            case Exists(path=path, present=present):
                found = self._plain_or_walked(scope, path, scope.fast.walk(path).is_present(),
                                              lambda: self._any_row(scope, path, "values", None))
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
        if scope is self.root and path == ("_id",):  # one string, in the id column
            ids: list[str | None] = [v for v in values if isinstance(v, str)] or [None]
            return self.table.c.id == ids[0] if len(ids) == 1 else self.table.c.id.in_(ids)
        parts = []
        if any(v is None for v in values):
            parts.append(self._null_or_missing(scope, path))
        scalars = [v for v in values if type_class(v) in _SCALARS]
        if scalars:
            exact = self._any_value(scope, path, lambda v: self.dialect.equals_any(v, scalars))
            index = self.items.get(path) if scope is self.root else None
            parts.append(exact if index is None else self.dialect.items_match(
                self.table, path, index, scalars, exact))
        containers = [self.dialect.literal_key(v) for v in values if isinstance(v, dict | list)]
        if containers:
            parts.append(self._any_container(scope, path, lambda v: self._key_in(v, containers)))
        return sa.or_(*parts) if parts else sa.false()

    def _null_or_missing(self, scope: Scope, path: Path) -> Condition:
        plain = sa.and_(self.dialect.is_null(scope.fast.walk(path)),
                        _not(self._fanout(scope, path)))
        return self._plain_or_walked(scope, path, plain, lambda: sa.or_(
            ~self._any_row(scope, path, "values", None),
            self._any_row(scope, path, "reached", lambda v: v.is_type("null"))))

    def _ordered(self, scope: Scope, path: Path, operand: JSON, op: str) -> Condition:
        if scope is self.root and path == ("_id",) and isinstance(operand, str):
            return self.table.c.id.operate(OPERATORS[op], operand)  # the indexed id column
        if operand is None:
            return self._null_or_missing(scope, path) if op in (">=", "<=") else sa.false()
        if type_class(operand) in _SCALARS:
            return self._any_value(scope, path,
                                   lambda value: self.dialect.compare(value, op, operand))
        return self._any_container(
            scope, path, lambda value: self.dialect.key_within_class(self.key(value), op, operand))

    def _between(self, scope: Scope, path: Path, low: JSON, high: JSON) -> Condition:
        if low is None or high is None:
            both_null = low is None and high is None
            return self._null_or_missing(scope, path) if both_null else sa.false()
        cls = type_class(low)
        if type_class(high) != cls:
            return sa.false()
        if cls in _SCALARS:
            return self._any_value(scope, path,
                                   lambda value: self.dialect.within(value, low, high, "<="))
        keys = self.dialect.literal_key(low), self.dialect.literal_key(high)

        return self._any_container(scope, path, lambda value: sa.and_(
            self.key(value) >= keys[0], self.key(value) <= keys[1]))

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
        return self._plain_or_walked(scope, path, test(scope.fast.walk(path)),
                                     lambda: self._any_row(scope, path, "reached", test))

    def _plain_or_walked(self, scope: Scope, path: Path, plain: Condition,
                         walked: Callable[[], Condition]) -> Condition:
        """``plain OR (fanout AND walked)``; ``plain`` alone where the path is flat."""
        fanout = self._fanout(scope, path)
        if isinstance(fanout, False_):  # not OR 0 = 1 (SQLite would no longer seek)
            return plain
        return sa.or_(plain, sa.and_(fanout, walked()))

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
        if scope.document and any(path == flat[:len(path)] for flat in self.flat):
            return sa.false()  # the caller selects only documents where it meets no array
        return self.dialect.fanout(scope.fast, path)

    def key(self, value: JsonValue) -> Expr:
        """Return the order key of ``value``, ready to compare and sort."""
        return self.dialect.order(value.key())

    def _key_in(self, value: JsonValue, keys: list[Any]) -> Condition:
        # one bind per key: keys of different classes have different SQL types
        key = self.key(value)
        return key == keys[0] if len(keys) == 1 else key.in_([sa.literal(k) for k in keys])

    def _name(self) -> str:
        return f"j{next(self._names)}"

    # ------------------------------------------------------------------ sorting

    def sort_parts(self, path: Path, descending: bool) -> list[Expr]:
        """The SQL expressions a sort on ``path`` (names encoded) orders by, in turn.

        Every part goes in the sort's direction, then ``id`` ascending breaks ties. A
        document whose path meets an array sorts by its least (ascending) or greatest
        (descending) item, empty as missing; any other by the value, in the database's
        own values (:meth:`.Dialect.sort_parts`), which alone remain for a path of
        :attr:`flat`: the parts an expression index on the path holds.
        """
        fast, exact = self.root.fast.walk(path), self.root.exact.walk(path)
        plain = self.dialect.sort_parts(fast, exact)
        if path in self.flat:
            return plain
        chosen = self.dialect.chosen_item_parts(self.root.exact.member(path[0]), path[1:],
                                                descending, self._name())
        fanout = self.dialect.fanout(self.root.fast, path)
        return [sa.case((fanout, slow), else_=part) for slow, part in zip(chosen, plain,
                                                                         strict=True)]

    def sort_key(self, key: SortKey) -> list[UnaryExpression[Any]]:
        """ORDER BY expressions of one sort key (names not yet encoded)."""
        descending = key.direction == -1
        parts = self.sort_parts(encode_names(key).path, descending)
        return [part.desc() if descending else part.asc() for part in parts]
