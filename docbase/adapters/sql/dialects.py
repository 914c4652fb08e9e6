"""What differs between SQLite and PostgreSQL: the :class:`Dialect` interface.

The store and the query compiler are written once against :class:`Dialect`; each
database declares its storage types and capabilities and answers the few questions
whose SQL differs (how to walk a path through arrays, list array elements, write an
order key as a literal, search text, insert many rows). The answers live in the engine
packages (``sqlite/dialect.py``, ``postgresql/dialect.py``), one small class each; the
engine object of each package extends it with its operations (:mod:`.engine_operations`).
"""

from __future__ import annotations

import abc
from collections.abc import Sequence
from typing import Any, Literal

import sqlalchemy as sa

from docbase.adapters.sql.engine_operations import EngineOperations
from docbase.adapters.sql.engines import EngineTraits
from docbase.adapters.sql.order_keys import RANKS
from docbase.adapters.sql.values import Condition, Expr, JsonValue
from docbase.core.ordering import TypeClass, type_class
from docbase.core.query import JSON, Path

COLUMNS = ("id", "body", "parent_id", "version", "created", "changed", "search")
"""The columns of a collection row, in the order of :data:`Row`."""

Row = tuple[str, str, str | None, int, str | None, str | None, str]
"""A collection row: id, body and search as JSON text, parent id, version, timestamps."""

OPERATORS: dict[str, Any] = {
    ">": sa.sql.operators.gt, ">=": sa.sql.operators.ge,
    "<": sa.sql.operators.lt, "<=": sa.sql.operators.le, "=": sa.sql.operators.eq,
}


def swap_sql(table: str, mark: str, json: str = "", jsonb: str = "") -> str:
    """The compare-and-swap ``UPDATE`` of one row of ``table``.

    Its parameters are a :data:`Row` followed by the version the row must still be at,
    numbered ``<mark>1`` to ``<mark>8`` (``?`` on SQLite, ``$`` on PostgreSQL); ``json``
    and ``jsonb`` are the casts of the body's and the search column's text.
    """
    return (f"UPDATE {table} SET body = {mark}2{json}, parent_id = {mark}3, "
            f"version = {mark}4, created = {mark}5, changed = {mark}6, "
            f"search = {mark}7{jsonb} WHERE id = {mark}1 AND version = {mark}8")


RowKind = Literal["values", "reached", "items"]
"""Which rows of a path: its values, those plus array elements, or elements for arrays."""



class Dialect(EngineOperations):
    """The SQL that differs per database; one instance per engine (the engine object)."""

    name: str
    traits: EngineTraits
    """Everything else that differs on this database, declared (:mod:`.engines`)."""
    body_type: Any
    search_type: Any
    read_options: dict[str, Any]
    """Execution options of read-only connections (no BEGIN/COMMIT round trips)."""
    null_key: str | None
    """The order key of null/missing as an SQL value (``None``: SQL NULL)."""

    @abc.abstractmethod
    def root(self, table: sa.TableClause, *, exact: bool) -> JsonValue:
        """Return the stored document; ``exact`` asks for the column keeping key order."""

    @abc.abstractmethod
    def path_rows(self, value: JsonValue, path: Path, kind: RowKind,
                  name: str) -> tuple[sa.FromClause, JsonValue]:
        """List the rows of ``path`` walked from ``value``: a FROM item and its value."""

    @abc.abstractmethod
    def elements(self, value: JsonValue, name: str) -> tuple[sa.FromClause, JsonValue]:
        """List the elements of ``value`` when it is an array: a FROM item and its value."""

    @abc.abstractmethod
    def literal_key(self, value: JSON) -> Any:
        """Return the order key of a Python value, as a bind value comparable to keys."""

    @abc.abstractmethod
    def regex(self, text: Expr, pattern: str, options: str) -> Condition:
        """Test that ``text`` matches ``pattern`` exactly as Python's ``re.search`` does."""

    @abc.abstractmethod
    def text_search(self, search: Expr, needle: str, name: str) -> Condition:
        """Test that a lower-cased string of the ``search`` column contains ``needle``."""

    @abc.abstractmethod
    def fanout_index(self, value: JsonValue, path: Path) -> Expr:
        """Return the indexable expression behind :meth:`fanout`."""

    @abc.abstractmethod
    def fanout(self, value: JsonValue, path: Path) -> Condition:
        """Test that walking ``path`` meets an array (at any step, or at its end)."""

    @abc.abstractmethod
    def key_is_null(self, key: Expr) -> Condition:
        """Test that a key is the key of null or missing."""

    @abc.abstractmethod
    def order(self, key: Expr) -> Expr:
        """Prepare a key expression for ORDER BY and comparisons."""

    @abc.abstractmethod
    def json_text(self, value: JsonValue) -> Expr:
        """Return the value as JSON text (for results computed in SQL)."""

    @abc.abstractmethod
    def body_text(self, body: Expr) -> Expr:
        """Return the stored document as JSON text (never decoded by the driver)."""

    @abc.abstractmethod
    def unique_key(self, value: JsonValue) -> Expr:
        """Return what a unique index on a path holds: the key, NULL for null/missing."""

    @abc.abstractmethod
    def json_param(self, name: str) -> Expr:
        """Return the bind parameter of a document's JSON text in INSERT and UPDATE."""

    @abc.abstractmethod
    def search_param(self, name: str) -> Expr:
        """Return the bind parameter of the ``search`` column (a JSON array as text)."""

    @abc.abstractmethod
    def insert(self, conn: sa.Connection, table: sa.TableClause, rows: Sequence[Row]) -> None:
        """Insert many rows, fast for one row and for big batches alike."""

    @abc.abstractmethod
    def float_sum(self, number: Expr) -> Expr:
        """Aggregate a group's doubles for :meth:`float_total` (NULLs are skipped)."""

    @abc.abstractmethod
    def float_total(self, aggregated: Any) -> float:
        """The correctly rounded sum (``math.fsum``) of what :meth:`float_sum` returned."""

    def without_fields(self, body: Expr, fields: Sequence[str]) -> Expr | None:
        """Return the stored JSON text without these top-level fields.

        The rest of the text is unchanged (key order, number spelling); ``None`` when
        the database cannot do that.
        """
        return None

    @property
    def drops_fields(self) -> bool:
        """Whether :meth:`without_fields` drops fields in SQL; if not, the worker drops them.

        Asked of :meth:`without_fields` itself, so the capability is stated once.
        """
        return self.without_fields(sa.column("body"), ("_id",)) is not None

    # ---------------------------------------------------------- item indexes (item_indexes.py)

    @abc.abstractmethod
    def items_statements(self, conn: sa.Connection, table: sa.TableClause, path: Path,
                         index: int) -> list[str]:
        """The DDL of item index ``index`` on ``path`` (names encoded) of ``table``."""

    @abc.abstractmethod
    def drop_items_statements(self, table: str) -> list[str]:
        """What dropping collection table ``table`` leaves of its item indexes, dropped."""

    def unindexed_fanout(self, value: JsonValue, path: Path) -> Condition:
        """:meth:`fanout`, written so that no index serves it (another term drives)."""
        return self.fanout(value, path)

    @abc.abstractmethod
    def items_match(self, table: sa.TableClause, path: Path, index: int,
                    operands: Sequence[JSON], exact: Condition) -> Condition:
        """``exact`` (a scalar equality on ``path``) served by item index ``index``."""

    # ---------------------------------------------------------- native order (see docs)

    def sort_parts(self, fast: JsonValue, exact: JsonValue) -> list[Expr]:
        """The order of a value as SQL expressions compared in turn, all ascending.

        ``fast`` and ``exact`` are the same value (the exact one keeps object key order).
        A scalar's parts are the database's own values, so ordering by them needs no
        function of the adapter; an expression index on :meth:`index_parts` serves them.
        The default is the one order key (SQLite: the value itself for numbers and
        strings, a blob for the rest).
        """
        return [self.order(exact.key())]

    nulls_follow_class: bool = False
    """Whether a sort part is NULL only where every value of its class has it NULL.

    Then NULL parts never decide an order (PostgreSQL's native parts); else a NULL part
    sorts first ascending and last descending (SQLite's null key).
    """

    def literal_parts(self, value: JSON) -> list[Any]:
        """What :meth:`sort_parts` computes for ``value``, as bind values (``None``: NULL).

        Keyset paging (:mod:`.keyset`) compares a cursor's sort values part by part.
        """
        return [None if value is None and self.null_key is None else self.literal_key(value)]

    def index_parts(self, fast: JsonValue) -> list[Expr]:
        """The leading :meth:`sort_parts` of a value that an expression index holds."""
        return [self.order(fast.key())]

    def chosen_item_parts(self, value: JsonValue, path: Path, descending: bool,
                          name: str) -> list[Expr]:
        """The :meth:`sort_parts` of the least (greatest) item reached by ``path``.

        The slow road, taken only for documents whose sorted path meets an array; no
        item at all sorts as null. ``value`` is exact, ``name`` names a FROM item.
        """
        rows, item = self.path_rows(value, path, "items", name)
        key = self.order(item.key())
        first: Expr = (sa.select(key).select_from(rows)
                       .order_by(key.desc() if descending else key.asc())
                       .limit(1).scalar_subquery())
        if self.null_key is not None:
            first = sa.func.coalesce(first, sa.literal(self.null_key))
        return [self.order(first)]

    def compare(self, value: JsonValue, op: str, operand: JSON) -> Condition:
        """Test ``value <op> operand`` (``=``, ``<``, ...) within a scalar operand's class."""
        key = self.order(value.key())
        if op == "=":
            equal: Condition = key == self.literal_key(operand)
            return equal
        return self.key_within_class(key, op, operand)

    def key_within_class(self, key: Expr, op: str, operand: JSON) -> Condition:
        """Test the order ``key <op> operand``'s key, only among keys of its type class."""
        low, high = self.class_bounds(type_class(operand))
        parts = [key.operate(OPERATORS[op], self.literal_key(operand))]
        if op[0] == ">" and high is not None:
            parts.append(key < high)
        if op[0] == "<" and low is not None:
            parts.append(key >= low)
        return sa.and_(*parts)

    def within(self, value: JsonValue, low: JSON, high: JSON, high_op: str) -> Condition:
        """``low <= value <high_op> high``, both bounds scalars of one type class.

        One lower and one upper bound on the key, which an index seeks to; two
        :meth:`compare` would each add their class's bound, and SQLite may seek with those.
        """
        key = self.order(value.key())
        return sa.and_(key >= self.literal_key(low),
                       key.operate(OPERATORS[high_op], self.literal_key(high)))

    def equals_any(self, value: JsonValue, operands: Sequence[JSON]) -> Condition:
        """Test that ``value`` equals one of the scalar ``operands`` (1 = 1.0, true != 1)."""
        if len(operands) == 1:
            return self.compare(value, "=", operands[0])
        # one bind per key: keys of different classes have different SQL types
        return self.order(value.key()).in_([sa.literal(self.literal_key(v)) for v in operands])

    def is_null(self, value: JsonValue) -> Condition:
        """Test that ``value`` is null or missing."""
        return self.key_is_null(self.order(value.key()))

    def class_bounds(self, cls: TypeClass) -> tuple[Any, Any]:
        """Return keys ``(low, high)``: a key of class ``cls`` is ``>= low``, ``< high``."""
        return RANKS[cls], chr(ord(RANKS[cls]) + 1)

    def prefixes(self, value: JsonValue, path: Path) -> list[JsonValue]:
        """Return the values at each prefix of ``path`` (the value itself if empty)."""
        steps = [value.walk(path[:i]) for i in range(1, len(path) + 1)]
        return steps or [value]
